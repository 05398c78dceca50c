package results

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/capsim/capsim/model"
)

const textBanner = "Serving Benchmark Result"

// textScalars maps vLLM's printed labels to its JSON field names.
var textScalars = map[string]string{
	"benchmark duration (s)":               model.Duration,
	"total input tokens":                   model.TotalInputTokens,
	"total generated tokens":               model.TotalOutputTokens,
	"request throughput (req/s)":           model.RequestThroughput,
	"request goodput (req/s)":              "request_goodput",
	"output token throughput (tok/s)":      model.OutputThroughput,
	"peak output token throughput (tok/s)": "max_output_tokens_per_s",
	"peak concurrent requests":             "max_concurrent_requests",
	"total token throughput (tok/s)":       model.TotalTokenThroughput,
	"rtfx (inverse real-time factor)":      "rtfx",
}

// textFamilies maps the printed latency family to the JSON field's middle part.
var textFamilies = map[string]string{
	"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el",
	"client queue time": "client_queue_time", "e2el incl. client queue": "e2el_including_client_queue",
	"e2e latency": "e2el", // sglang.bench_serving prints "Mean E2E Latency (ms)"
}

var (
	textStatRE   = regexp.MustCompile(`^(?i)(mean|median|std|p\d+(?:\.\d+)?)\s+(.+?)\s+\(ms\)$`)
	textCountsRE = regexp.MustCompile(`^(?i)num_prompts?\s*[:=]\s*(.+)$`)
	progressRE   = regexp.MustCompile(`^\d+%\|`) // tqdm progress bars
)

// ParseVLLMText reads the plain-text "Serving Benchmark Result" blocks vLLM
// bench serve prints. Each block is one record. Non-empty lines between
// blocks are the section the following blocks belong to; a
// "num_prompts: 1, 2, 4" line there gives the blocks' prompt counts in order
// (one value applies to every block of the section).
func ParseVLLMText(name string, data []byte) ([]Record, error) {
	doc := DocID(name)
	var (
		recs         []Record
		pending      textContext // what the lines since the last block say
		traffic      textTraffic
		section      string
		counts       []int
		countsLine   int
		sectionStart int // index in recs of the section's first block
		cur          *textBlock
	)
	closeSection := func() error {
		n := len(recs) - sectionStart
		switch {
		case counts == nil || n == 0:
		case len(counts) == 1:
			for i := sectionStart; i < len(recs); i++ {
				recs[i].Workload.NumPrompts = counts[0]
			}
		case len(counts) == n:
			for i := sectionStart; i < len(recs); i++ {
				recs[i].Workload.NumPrompts = counts[i-sectionStart]
			}
		default:
			return errorf(name, countsLine, "num_prompts", "%d values for %d result blocks", len(counts), n)
		}
		return nil
	}
	lr := newLineReader(data)
	ln := 0
	for {
		raw, ok := lr.next()
		if !ok {
			break
		}
		ln = lr.line
		line := strings.TrimSpace(raw)
		if cur == nil {
			switch {
			case strings.HasPrefix(line, "=") && strings.Contains(line, textBanner):
				if pending.lines > 0 { // a new section starts
					if err := closeSection(); err != nil {
						return nil, err
					}
					if pending.err != nil {
						return nil, pending.err
					}
					section, counts, countsLine, sectionStart = sectionName(pending.tail), pending.counts, pending.countsLine, len(recs)
					traffic = pending.traffic
					pending = textContext{}
				}
				if len(recs) == MaxRecords {
					return nil, tooManyRecords(name, ln)
				}
				cur = &textBlock{line: ln, metrics: map[string]float64{}, seen: map[string]int{}, traffic: traffic}
			case line != "" && !progressRE.MatchString(line):
				pending.add(name, ln, line)
			}
			continue
		}
		switch {
		case line == "":
		case line[0] == '=' && strings.Trim(line, "=") == "":
			r, err := cur.record(name, doc, section)
			if err != nil {
				return nil, err
			}
			recs = append(recs, r)
			cur = nil
		case strings.Contains(line, textBanner):
			return nil, errorf(name, ln, "", "result block opened at line %d has no closing ==== line", cur.line)
		case strings.HasPrefix(line, "---") && strings.HasSuffix(line, "---") || strings.Trim(line, "-") == "":
		default:
			if err := cur.add(name, ln, line); err != nil {
				return nil, err
			}
		}
	}
	if cur != nil {
		return nil, errorf(name, ln, "", "truncated: result block opened at line %d has no closing ==== line", cur.line)
	}
	if err := closeSection(); err != nil {
		return nil, err
	}
	return recs, nil
}

// textContext accumulates the non-empty lines between two blocks as they
// are read: the last three name the section, a "num_prompts:" line gives
// the prompt counts, traffic lines the offered load. The first error is
// kept and reported only if a block follows, as the lines then describe it.
type textContext struct {
	lines      int
	tail       []string // the last three lines
	traffic    textTraffic
	counts     []int
	countsLine int
	err        error
}

func (c *textContext) add(name string, ln int, line string) {
	c.lines++
	if len(c.tail) == 3 {
		copy(c.tail, c.tail[1:])
		c.tail = c.tail[:2]
	}
	c.tail = append(c.tail, line)
	if c.err != nil {
		return
	}
	if m := textCountsRE.FindStringSubmatch(line); m != nil {
		counts, err := parseCountList(m[1])
		if err != nil {
			c.err = errorf(name, ln, "num_prompts", "%v", err)
			return
		}
		c.counts, c.countsLine = counts, ln
	}
	c.err = c.traffic.read(name, ln, line)
}

func parseCountList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", strings.TrimSpace(f))
		}
		out = append(out, n)
	}
	return out, nil
}

type textBlock struct {
	traffic                   textTraffic // what bench serve printed before the block
	line                      int
	metrics                   map[string]float64
	seen                      map[string]int // line of each label read, for duplicates
	completed, failed, maxCon int
	hasCompleted, hasFailed   bool
	rate                      float64
	hasRate                   bool
}

func (b *textBlock) add(name string, ln int, line string) error {
	label, value, ok := strings.Cut(line, ":")
	if !ok {
		return errorf(name, ln, "", "unexpected line %q in a result block", truncate(line, 60))
	}
	label, value = strings.TrimSpace(label), strings.TrimSpace(value)
	if value == "" {
		return nil // a sub-heading such as "Per-position acceptance (%):"
	}
	key := strings.ToLower(label)
	if prev, dup := b.seen[key]; dup {
		return errorf(name, ln, label, "duplicate line in the result block (also at line %d)", prev)
	}
	b.seen[key] = ln
	v, err := parseNumber(value)
	if err == nil && v < 0 {
		return errorf(name, ln, label, "want a non-negative number, got %q", value)
	}
	switch key {
	case "successful requests", "failed requests", "maximum request concurrency":
		if err != nil || v < 0 || v != math.Trunc(v) || v > 1e12 {
			return errorf(name, ln, label, "want a non-negative integer, got %q", value)
		}
		switch key {
		case "successful requests":
			b.completed, b.hasCompleted = int(v), true
		case "failed requests":
			b.failed, b.hasFailed = int(v), true
		default:
			b.maxCon = int(v)
		}
		return nil
	case "traffic request rate": // sglang.bench_serving prints the offered load inside its block
		return b.traffic.read(name, ln, line)
	case "max request concurrency": // sglang.bench_serving: an integer or "not set"
		if strings.EqualFold(value, "not set") {
			return nil
		}
		if err != nil || v < 1 || v != math.Trunc(v) {
			return errorf(name, ln, label, "want a positive integer or \"not set\", got %q", value)
		}
		b.maxCon = int(v)
		return nil
	case "request rate configured (rps)":
		if err != nil || v <= 0 {
			return errorf(name, ln, label, "want a positive number, got %q", value)
		}
		b.rate, b.hasRate = v, true
		return nil
	}
	if m, ok := textScalars[key]; ok {
		if err != nil {
			return errorf(name, ln, label, "%v", err)
		}
		b.metrics[m] = v
		return nil
	}
	if m := textStatRE.FindStringSubmatch(label); m != nil {
		fam := strings.ToLower(m[2])
		stat := strings.ToLower(m[1])
		var metric string
		if f, ok := textFamilies[fam]; ok {
			metric = model.MetricName(stat, f)
		} else if rest, ok := strings.CutPrefix(fam, "probe "); ok {
			metric = "probe_" + model.MetricName(stat, slug(rest))
		} else {
			metric = model.MetricName(stat, slug(fam))
		}
		if err != nil {
			return errorf(name, ln, label, "%v", err)
		}
		b.metrics[metric] = v
		return nil
	}
	// Other labelled lines (speculative decoding, accuracy, …) are not load-point metrics capsim uses.
	return nil
}

func (b *textBlock) record(name, doc, section string) (Record, error) {
	if !b.hasCompleted {
		return Record{}, errorf(name, b.line, "Successful requests", "missing from the result block")
	}
	if len(b.metrics) == 0 {
		return Record{}, errorf(name, b.line, "", "result block has no metrics")
	}
	r := Record{
		ID:        recordID(doc, b.line, 0, ""),
		Source:    Source{File: name, Section: section, Line: b.line, Format: FormatVLLMText},
		Metrics:   b.metrics,
		Completed: b.completed,
		Errors:    b.failed,
	}
	if b.hasFailed {
		r.Workload.NumPrompts = b.completed + b.failed
	}
	if b.completed > 0 {
		if v, ok := b.metrics[model.TotalInputTokens]; ok {
			r.Workload.ISL = v / float64(b.completed)
		}
		if v, ok := b.metrics[model.TotalOutputTokens]; ok {
			r.Workload.OSL = v / float64(b.completed)
		}
	}
	t := b.traffic
	if b.hasRate {
		t.rate, t.hasRate = b.rate, true
	}
	if b.maxCon > 0 {
		t.maxCon, t.hasMaxCon = b.maxCon, true
	}
	switch {
	case t.hasMaxCon && t.maxCon > 0 && (!t.hasRate || math.IsInf(t.rate, 1)):
		r.Workload.Load = model.Closed(t.maxCon)
	case t.hasRate:
		r.Workload.Load = model.Open(t.rate, t.burstiness)
		r.Workload.Load.Concurrency = t.maxCon
	}
	return r, nil
}

// textTraffic is the offered load bench serve prints before its result block:
// "Traffic request rate: inf", "Burstiness factor: 1.0 (Poisson process)",
// "Maximum request concurrency: None".
type textTraffic struct {
	rate, burstiness float64
	maxCon           int
	hasRate          bool
	hasMaxCon        bool
}

func (t *textTraffic) read(name string, ln int, line string) error {
	label, value, ok := strings.Cut(line, ":")
	if !ok {
		return nil
	}
	value = strings.TrimSpace(value)
	first := value
	if f := strings.Fields(value); len(f) > 0 {
		first = f[0]
	}
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "traffic request rate":
		if strings.EqualFold(first, "inf") {
			t.rate, t.hasRate = math.Inf(1), true
			return nil
		}
		v, err := parseNumber(first)
		if err != nil || v <= 0 {
			return errorf(name, ln, "Traffic request rate", "want a positive number or inf, got %q", value)
		}
		t.rate, t.hasRate = v, true
	case "burstiness factor":
		v, err := parseNumber(first)
		if err != nil || v <= 0 {
			return errorf(name, ln, "Burstiness factor", "want a positive number, got %q", value)
		}
		t.burstiness = v
	case "maximum request concurrency":
		t.hasMaxCon = true
		if strings.EqualFold(first, "none") {
			return nil
		}
		v, err := parseNumber(first)
		if err != nil || v < 1 || v != math.Trunc(v) {
			return errorf(name, ln, "Maximum request concurrency", "want a positive integer or None, got %q", value)
		}
		t.maxCon = int(v)
	}
	return nil
}

// sectionName keeps the last three lines before a block, shortened, so a
// pasted log does not become a page-long section.
func sectionName(context []string) string {
	if len(context) > 3 {
		context = context[len(context)-3:]
	}
	parts := make([]string, len(context))
	for i, c := range context {
		parts[i] = truncate(c, 100)
	}
	return strings.Join(parts, " | ")
}

func slug(s string) string {
	var b strings.Builder
	us := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			us = false
		} else if !us && b.Len() > 0 {
			b.WriteByte('_')
			us = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
