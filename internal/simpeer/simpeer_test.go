package simpeer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleRootFindsCapsim(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "simpeer", "simpeer.go")); err != nil {
		t.Errorf("module root %s does not hold this package: %v", root, err)
	}
}

func TestBinaryHonoursEnvironment(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "sim")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvBinary, fake)
	if got, why := Binary(); got != fake || why != "" {
		t.Errorf("Binary() = %q, %q; want %q", got, why, fake)
	}
	t.Setenv(EnvBinary, fake+".missing")
	if got, why := Binary(); got != "" || !strings.Contains(why, EnvBinary) {
		t.Errorf("Binary() = %q, %q; want no binary and a reason naming %s", got, why, EnvBinary)
	}
}
