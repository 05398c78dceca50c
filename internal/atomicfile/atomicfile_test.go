package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteMode(t *testing.T) {
	for _, umask := range []int{0o000, 0o022, 0o077} {
		old := syscall.Umask(umask)
		dir := t.TempDir()
		p := filepath.Join(dir, "out.json")
		err := Write(p, []byte("x"))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("umask %03o: mode %v, want 0644", umask, st.Mode().Perm())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("umask %03o: %d files left, want 1", umask, len(entries))
		}
	}
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "runs.jsonl")
	keep := []string{"runs.jsonl", ".other.jsonl.tmp123", "runs.jsonl.tmp9"}
	stale := []string{".runs.jsonl.tmp123456", ".runs.jsonl.tmp7"}
	for _, n := range append(append([]string{}, keep...), stale...) {
		if err := os.WriteFile(filepath.Join(dir, n), make([]byte, 1<<20), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := RemoveStale(p)
	if err != nil || n != len(stale) {
		t.Fatalf("RemoveStale = %d, %v; want %d", n, err, len(stale))
	}
	for _, k := range keep {
		if _, err := os.Stat(filepath.Join(dir, k)); err != nil {
			t.Errorf("%s was removed", k)
		}
	}
	if n, err := RemoveStale(filepath.Join(dir, "missing", "x")); n != 0 || err != nil {
		t.Errorf("missing directory: %d, %v", n, err)
	}
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "out.json"), ""},
		{dir, "atomicfile: cannot write " + dir + ": it is a directory"},
		{filepath.Join(dir, "missing", "out.json"), "atomicfile: cannot write " + filepath.Join(dir, "missing", "out.json") + ": no directory " + filepath.Join(dir, "missing")},
	} {
		err := CheckWritable(tt.path)
		if got := ""; err != nil {
			got = err.Error()
			if got != tt.want {
				t.Errorf("%s: %q, want %q", tt.path, got, tt.want)
			}
		} else if tt.want != "" {
			t.Errorf("%s: no error, want %q", tt.path, tt.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left behind, want none", len(entries))
	}
}
