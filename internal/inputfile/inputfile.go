package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxSize is the most bytes read from one input file. The readers keep a
// tree of the document, several times its size, so this bounds their
// memory too.
const MaxSize = 256 << 20

// ErrTooLarge and ErrNotRegular are the refusals ReadFile wraps.
var (
	ErrTooLarge   = fmt.Errorf("larger than %d MiB, the most capsim reads from one file", MaxSize>>20)
	ErrNotRegular = errors.New("not a regular file")
)

// ReadFile reads the regular file at path, refusing a larger one than
// MaxSize and anything else (a directory, FIFO, device or socket) before
// opening it. Its errors are one line naming path; a missing file is
// fs.ErrNotExist, as from os.ReadFile.
func ReadFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	if st.Size() > MaxSize {
		return nil, fmt.Errorf("%s: %w", path, ErrTooLarge)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Stat again through the descriptor: path may have been replaced.
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: %w", path, ErrTooLarge)
	}
	return data, nil
}

func regular(path string, st fs.FileInfo) error {
	m := st.Mode()
	var what string
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	default:
		what = "a special file"
	}
	return fmt.Errorf("%s: %w (%s); name a file", path, ErrNotRegular, what)
}
