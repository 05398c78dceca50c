package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mode is the permission of every file written: readable by all, writable
// by the owner, as a file a user shares with colleagues should be.
const Mode os.FileMode = 0o644

// tempPrefix is the name of path's temporaries up to their random part.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// Write replaces path with data atomically, with mode 0644.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), Mode) // CreateTemp makes 0600; the umask does not apply to chmod
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	return nil
}

// CheckWritable reports whether Write could write path now: its directory
// exists and takes a new file, and path is not a directory. Call it before
// work whose result goes to path, so that the work is not lost.
func CheckWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("atomicfile: cannot write %s: it is a directory", path)
	}
	dir := filepath.Dir(path)
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("atomicfile: cannot write %s: no directory %s", path, dir)
	case err != nil:
		return fmt.Errorf("atomicfile: cannot write %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("atomicfile: cannot write %s: %s is not a directory", path, dir)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary's name would only confuse
		}
		return fmt.Errorf("atomicfile: cannot write %s: %w", path, err)
	}
	tmp.Close()
	if err := os.Remove(tmp.Name()); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	return nil
}

// RemoveStale deletes the temporaries of path that Write left behind when
// its process was killed, and returns how many it removed. Call it when a
// run that will write path starts: one writer per file is assumed.
func RemoveStale(path string) (int, error) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("atomicfile: %w", err)
	}
	prefix, n := tempPrefix(path), 0
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return n, fmt.Errorf("atomicfile: %w", err)
			}
			n++
		}
	}
	return n, nil
}
