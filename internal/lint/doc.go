// Package lint holds repository-wide checks that run as tests with the
// rest (`make test`), for rules gofmt and vet do not know: today, that no
// comment block outside a doc.go runs over MaxCommentLines lines. A long
// block is usually an experiment log or a restated algorithm; the why fits
// in a few lines, and the rest belongs in docs/ or in git history.
package lint
