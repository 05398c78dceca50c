package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/capsim/capsim/internal/atomicfile"
	"github.com/capsim/capsim/loadgen"
	"github.com/capsim/capsim/model"
)

// benchOptions are capsim bench's flags.
type benchOptions struct {
	serverFlags
	modelName     string
	concurrency   []int
	rates         []string
	burstiness    float64
	label, format string
	metadata      []string
}

// benchContext benchmarks a live endpoint; Ctrl-C (ctx) stops it after
// writing what was measured.
func benchContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o benchOptions
	fs := newFlagSet("bench", stderr)
	addServerFlags(fs, &o.serverFlags, "prompts and arrival times", 0)
	fs.StringVar(&o.modelName, "model", "", "model name to request (required)")
	fs.IntSliceVar(&o.concurrency, "concurrency", nil, "closed-loop load points: concurrent clients, e.g. 1,4,16,64")
	fs.StringSliceVar(&o.rates, "rate", nil, "open-loop load points: requests per second, e.g. 2,4 (inf sends every prompt at once)")
	addBurstinessFlag(fs, &o.burstiness)
	fs.StringVar(&o.label, "label", "", "label stored in each result")
	fs.StringArrayVar(&o.metadata, "metadata", nil, "KEY=VALUE stored in each result, like vLLM's --metadata (repeatable)")
	format := formatFlag(fs)
	if err := parseFlags(fs, args, format, ""); err != nil {
		return err
	}
	o.format = *format
	base, loads, metadata, err := o.resolve()
	if err != nil {
		return err
	}

	if o.out != "" {
		// A run killed while writing leaves its temporary next to --out.
		if n, err := atomicfile.RemoveStale(o.out); err != nil {
			return fmt.Errorf("bench: %w", err)
		} else if n > 0 {
			fmt.Fprintf(stderr, "bench: removed %d temporary file(s) an interrupted run left next to %s\n", n, o.out)
		}
	}
	if base.Endpoint == loadgen.Chat {
		fmt.Fprintln(stderr, "bench: chat prompts are text, a word per requested token; input lengths are approximate (input_lens records the server's counts)")
	}
	var allFailed []string // load points where no request completed
	done, err := o.measure(ctx, "bench", base, loads, stderr, func(r *loadgen.Result) error {
		r.Label, r.Metadata = o.label, metadata
		fmt.Fprintf(progressTo(stderr, o.quiet), "bench: %s: %d completed, %d failed%s in %.1f s\n", r.Load, r.Completed, r.Failed, r.FailureNote(), r.Duration)
		if r.Completed == 0 && r.Failed > 0 {
			allFailed = append(allFailed, r.Load.String()+r.FailureNote())
		}
		return nil
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		where := ""
		if o.out != "" {
			where = fmt.Sprintf("; %d load point(s) written to %s, the last one marked partial", len(done), o.out)
		}
		writeBenchSummary(stdout, o.format, done)
		during := "" // the user knows they interrupted it: where, not why
		if p := (*loadgen.PointError)(nil); errors.As(err, &p) {
			during = " during " + p.Load.String()
		}
		return fmt.Errorf("bench: interrupted%s%s", during, where)
	} else if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := writeBenchSummary(stdout, o.format, done); err != nil {
		return err
	}
	if len(allFailed) > 0 {
		return fmt.Errorf("bench: every request failed at %d of %d load point(s): %s", len(allFailed), len(loads), strings.Join(allFailed, "; "))
	}
	return nil
}

// resolve checks the flags and turns them into load-point options.
func (o *benchOptions) resolve() (loadgen.Options, []model.Load, map[string]string, error) {
	var base loadgen.Options
	switch {
	case o.url == "":
		return base, nil, nil, errors.New("bench: --url is required")
	case o.modelName == "":
		return base, nil, nil, errors.New("bench: --model is required")
	}
	if err := model.CheckBurstiness(o.burstiness); err != nil {
		return base, nil, nil, fmt.Errorf("bench: %w", flagError("--burstiness", err))
	}
	var closed []model.Load
	for _, c := range o.concurrency {
		if c <= 0 {
			return base, nil, nil, fmt.Errorf("bench: --concurrency values must be positive, got %d", c)
		}
		closed = append(closed, model.Closed(c))
	}
	base, loads, err := o.options("bench", o.modelName, closed, strings.Join(o.rates, ","), o.burstiness)
	if err != nil {
		return base, nil, nil, err
	}
	metadata, err := loadgen.ParseMetadata(o.metadata)
	return base, loads, metadata, flagError("bench: --metadata", err)
}

// benchProgress announces each load point and prints its progress on
// stderr at most once a second, and at the end.
func benchProgress(w io.Writer, cmd string, prompts, points int) func(int, model.Load) func(loadgen.Progress) {
	return func(i int, load model.Load) func(loadgen.Progress) {
		fmt.Fprintf(w, "%s: load point %d/%d: %s, %d prompts\n", cmd, i+1, points, load, prompts)
		var last time.Time
		return func(p loadgen.Progress) {
			if p.Done < p.Total && time.Since(last) < time.Second {
				return
			}
			last = time.Now()
			eta := ""
			if left := p.Left(); left > 0 {
				eta = fmt.Sprintf(", about %s left", left.Round(time.Second))
			}
			fmt.Fprintf(w, "%s: %s: %d/%d done, %d failed, %.2f req/s, %.1f output tok/s, %.1f s%s\n",
				cmd, load, p.Done, p.Total, p.Failed, p.RequestThroughput(), p.OutputThroughput(), p.Elapsed.Seconds(), eta)
		}
	}
}

// writeBenchSummary prints one row per load point (table) or the results
// without their per-request lists (json).
func writeBenchSummary(w io.Writer, format string, results []*loadgen.Result) error {
	brief := make([]*loadgen.Result, len(results))
	for i, r := range results {
		brief[i] = r.WithoutDetails()
	}
	return writeOutput(w, format, brief, func(w io.Writer) error { return loadgen.WriteTable(w, results) })
}
