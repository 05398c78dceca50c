package lint

import (
	"fmt"
	"go/parser"
	"go/token"
)

// MaxCommentLines is the longest comment block allowed outside a doc.go.
const MaxCommentLines = 15

// LongComments lists the comment blocks (go/ast comment groups) of one Go
// source over MaxCommentLines lines, as "file:line: N lines".
func LongComments(filename string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("lint: %w", err)
	}
	var long []string
	for _, g := range f.Comments {
		from, to := fset.Position(g.Pos()), fset.Position(g.End())
		if n := to.Line - from.Line + 1; n > MaxCommentLines {
			long = append(long, fmt.Sprintf("%s:%d: %d lines", filename, from.Line, n))
		}
	}
	return long, nil
}
