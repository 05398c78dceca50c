package lint

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func block(n int) string {
	return strings.Repeat("// why\n", n)
}

func TestLongComments(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"package p\n\n" + block(MaxCommentLines) + "func f() {}\n", 0},
		{"package p\n\n" + block(MaxCommentLines+1) + "func f() {}\n", 1},
		{"package p\n\n/*\n" + block(MaxCommentLines) + "*/\nfunc f() {}\n", 1},
		// A blank line ends a block.
		{"package p\n\n" + block(10) + "\n" + block(10) + "func f() {}\n", 0},
	} {
		got, err := LongComments("p.go", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want {
			t.Errorf("%q: long blocks %v, want %d", tc.src, got, tc.want)
		}
	}
}

// TestNoLongCommentBlocks walks the repository's Go files (doc.go files,
// which hold package documentation, and testdata aside).
func TestNoLongCommentBlocks(t *testing.T) {
	root := filepath.Join("..", "..")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || name == "doc.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		long, err := LongComments(path, src)
		if err != nil {
			return err
		}
		n++
		for _, l := range long {
			t.Errorf("%s: a comment block over %d lines outside doc.go; say why in a few lines (move a log of experiments to docs/)", l, MaxCommentLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("checked %d Go files; the walk from %s missed the repository", n, root)
	}
}
