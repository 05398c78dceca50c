package loadgen

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/capsim/capsim/model"
)

// RunPoints runs load points one after another with base's options (its
// Load replaced by each point's). progress, if set, gives each point's
// progress callback. After every point that produced a result (a partial
// one when interrupted included), done is called with the results so far.
// It stops at the first error, returning the results so far and the error
// as a *PointError; an interruption still wraps context.Canceled.
func RunPoints(ctx context.Context, base Options, loads []model.Load, progress func(i int, l model.Load) func(Progress),
	done func([]*Result) error) ([]*Result, error) {
	var out []*Result
	for i, l := range loads {
		opts := base
		opts.Load = l
		var p func(Progress)
		if progress != nil {
			p = progress(i, l)
		}
		r, err := Run(ctx, opts, p)
		if r != nil {
			out = append(out, r)
			if done != nil {
				if err := done(out); err != nil {
					return out, err
				}
			}
		}
		if err != nil {
			return out, &PointError{Load: l, Err: err}
		}
	}
	return out, nil
}

// PointError is RunPoints' error: the load point it stopped at and why.
type PointError struct {
	Load model.Load
	Err  error
}

func (e *PointError) Error() string { return fmt.Sprintf("loadgen: during %s: %v", e.Load, e.Err) }
func (e *PointError) Unwrap() error { return e.Err }

// FailureNote says why a point's requests failed or were cut short, for a
// summary line: " (http 500 2, timeout 1, 3 cut off)", or "" when none did.
func (r *Result) FailureNote() string {
	var parts []string
	reasons := make([]string, 0, len(r.Failures))
	for k := range r.Failures {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.Failures[k]))
	}
	if r.Canceled > 0 {
		parts = append(parts, fmt.Sprintf("%d cut off", r.Canceled))
	}
	if r.PromptTokenMismatches > 0 {
		parts = append(parts, fmt.Sprintf("%d prompt-length mismatches", r.PromptTokenMismatches))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
