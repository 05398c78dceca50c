package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(ok); err != nil || string(data) != "{}" {
		t.Fatalf("ReadFile(ok) = %q, %v", data, err)
	}
	// A sparse file one byte over the cap: refused before it is read.
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
		is         error
	}{
		{big, big + ": larger than 256 MiB, the most capsim reads from one file", ErrTooLarge},
		{dir, dir + ": not a regular file (a directory); name a file", ErrNotRegular},
		{fifo, fifo + ": not a regular file (a named pipe); name a file", ErrNotRegular},
		{"/dev/zero", "/dev/zero: not a regular file (a device); name a file", ErrNotRegular},
		{filepath.Join(dir, "none"), "stat " + filepath.Join(dir, "none") + ": no such file or directory", fs.ErrNotExist},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(tc.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
				t.Errorf("ReadFile(%s) = %v\nwant %s", tc.path, err, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%s) blocked", tc.path)
		}
	}
}
