package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/stats"
	"github.com/capsim/capsim/model"
)

// ParseVLLMJSON reads vLLM bench serve result JSON: a file as
// `vllm bench serve --save-result` writes it, several such objects
// concatenated ("}{", as JSON lines, or in a JSON array), or the same inside
// {% highlight json %} / ```json blocks of a page. Each object is one record.
//
// Fields follow vllm/benchmarks/serve.py. request_rate may be a number or
// "inf"; a null (or NaN, which Python writes for empty statistics) is an
// absent value, never zero. Unknown numeric fields are kept as metrics,
// unknown string fields (--metadata KEY=VALUE) as System.Settings, and so
// are the serve settings a sweep writes as numbers or booleans
// (engineSettingFields).
func ParseVLLMJSON(name string, data []byte) ([]Record, error) {
	buf := data
	if !isJSONDocument(data) {
		var err error
		if buf, err = jsonBlocks(name, data); err != nil {
			return nil, err
		}
	}
	if bytes.HasPrefix(buf, []byte("\ufeff")) { // a byte-order mark; keep offsets
		buf = append([]byte("   "), buf[3:]...)
	}
	// Python writes an infinite request rate (SGLang's default, a burst)
	// and burstiness (vLLM's evenly spaced arrivals) as the bare literal
	// Infinity, which is not JSON: read them as the "inf" vLLM's own
	// writer uses, before every other non-finite literal becomes null.
	buf = infiniteLoadRE.ReplaceAll(buf, []byte(`${1}"inf"`))
	buf = sanitizeNonFinite(buf)
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.UseNumber()
	lc := newLineCounter(buf)
	doc := DocID(name)
	var recs []Record
	perLine := map[int]int{} // objects starting on each line, for unique IDs
	add := func(r Record) error {
		if len(recs) == MaxRecords {
			return tooManyRecords(name, r.Source.Line)
		}
		perLine[r.Source.Line]++
		if n := perLine[r.Source.Line]; n > 1 {
			r.ID = recordID(doc, r.Source.Line, n, "")
		}
		recs = append(recs, r)
		return nil
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, jsonError(name, buf, lc, dec, err, 0)
		}
		switch tok {
		case json.Delim('{'):
			r, err := readResultObject(name, doc, buf, lc, dec, lc.at(dec.InputOffset()-1))
			if err != nil {
				return nil, err
			}
			if err := add(r); err != nil {
				return nil, err
			}
		case json.Delim('['):
			arrLine := lc.at(dec.InputOffset() - 1)
			for dec.More() {
				t, err := dec.Token()
				if err != nil {
					return nil, jsonError(name, buf, lc, dec, err, arrLine)
				}
				if t != json.Delim('{') {
					return nil, errorf(name, lc.at(dec.InputOffset()), "", "want a JSON object in the result array, got %v", describeToken(t))
				}
				r, err := readResultObject(name, doc, buf, lc, dec, lc.at(dec.InputOffset()-1))
				if err != nil {
					return nil, err
				}
				if err := add(r); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonError(name, buf, lc, dec, err, arrLine)
			}
		default:
			return nil, errorf(name, lc.at(dec.InputOffset()), "", "want a JSON object, got %v", describeToken(tok))
		}
	}
	if len(recs) == 0 {
		return nil, errorf(name, 0, "", "no JSON result objects found")
	}
	return recs, nil
}

func describeToken(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", t)
}

// jsonError turns a decoder error into a one-line Error with the line it happened on.
func jsonError(name string, buf []byte, lc *lineCounter, dec *json.Decoder, err error, openLine int) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return errorf(name, lc.at(se.Offset), "", "invalid JSON: %v", se)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		msg := "truncated JSON: unexpected end of input"
		if openLine > 0 {
			msg += fmt.Sprintf(" (value opened at line %d is not closed)", openLine)
		}
		return errorf(name, lc.at(int64(len(bytes.TrimRight(buf, " \t\r\n")))), "", "%s", msg)
	}
	return errorf(name, lc.at(dec.InputOffset()), "", "invalid JSON: %v", err)
}

type jsonField struct {
	raw  json.RawMessage
	line int
}

// readResultObject reads the members of an object whose '{' was just consumed.
func readResultObject(name, doc string, buf []byte, lc *lineCounter, dec *json.Decoder, line int) (Record, error) {
	fields := map[string]jsonField{}
	var order []string
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return Record{}, jsonError(name, buf, lc, dec, err, line)
		}
		key, ok := kt.(string)
		if !ok {
			return Record{}, errorf(name, lc.at(dec.InputOffset()), "", "invalid JSON: object key is not a string")
		}
		kline := lc.at(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Record{}, jsonError(name, buf, lc, dec, err, line)
		}
		if prev, dup := fields[key]; dup {
			return Record{}, errorf(name, kline, key, "duplicate key (also at line %d)", prev.line)
		}
		order = append(order, key)
		fields[key] = jsonField{raw: raw, line: kline}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return Record{}, jsonError(name, buf, lc, dec, err, line)
	}
	return buildJSONRecord(name, doc, line, fields, order)
}

// engineBackends are bench serve backends that name the serving engine itself.
var engineBackends = map[string]bool{"vllm": true, "sglang": true, "tgi": true, "lmdeploy": true,
	"deepspeed-mii": true, "tensorrt-llm": true, "scalellm": true, "llama.cpp": true}

// jsonConfigFields are read into the workload and system, not kept as metrics or settings.
var jsonConfigFields = map[string]bool{
	"date": true, "endpoint_type": true, "backend": true, "label": true, "model_id": true, "tokenizer_id": true,
	"num_prompts": true, "request_rate": true, "burstiness": true, "max_concurrency": true,
	"completed": true, "failed": true, "input_len": true, "output_len": true,
	"input_lens": true, "output_lens": true, "ttfts": true, "itls": true, "latencies": true,
	"start_times": true, "queue_times": true, "generated_texts": true, "errors": true,
	"rps_change_events": true, "ramp_up_strategy": true, "ramp_up_start_rps": true, "ramp_up_end_rps": true,
	"capsim_dataset": true,
}

// engineSettingFields are engine settings a result may carry as numbers or
// booleans (vllm bench sweep's serve parameters): settings, not metrics.
// Other booleans (capsim bench's capsim_partial, …) are not settings.
// Keys are engine.SettingKey's spelling.
var engineSettingFields = map[string]bool{
	"max-num-seqs": true, "max-num-batched-tokens": true, "max-model-len": true, "block-size": true,
	"gpu-memory-utilization": true, "tensor-parallel-size": true, "pipeline-parallel-size": true, "data-parallel-size": true,
	"max-num-partial-prefills": true, "long-prefill-token-threshold": true, "swap-space": true,
	"enable-chunked-prefill": true, "enable-prefix-caching": true, "enforce-eager": true, "async-scheduling": true,
}

// infiniteLoadRE finds request_rate and burstiness written as Infinity.
var infiniteLoadRE = regexp.MustCompile(`("(?:request_rate|burstiness)"\s*:\s*)Infinity\b`)

// sglangE2E renames SGLang bench_serving's E2E statistics
// (mean_e2e_latency_ms, …) to vLLM's (mean_e2el_ms, …).
var sglangE2E = strings.NewReplacer("_e2e_latency_ms", "_e2el_ms")

// statMetricRE matches vLLM's statistic fields: mean_ttft_ms, p99.9_itl_ms, std_e2el_ms, …
var statMetricRE = regexp.MustCompile(`^(mean|median|std|p\d+(\.\d+)?)_[a-z0-9_]+_ms$`)

// knownNumericFields must be numbers (or null) when present.
var knownNumericFields = map[string]bool{
	model.Duration: true, model.TotalInputTokens: true, model.TotalOutputTokens: true,
	model.RequestThroughput: true, "request_goodput": true, model.OutputThroughput: true,
	model.TotalTokenThroughput: true, "max_output_tokens_per_s": true, "max_concurrent_requests": true, "rtfx": true,
}

func buildJSONRecord(name, doc string, line int, f map[string]jsonField, order []string) (Record, error) {
	// vLLM 0.6–0.8's benchmark_serving.py wrote the key "request_goodput:".
	for i, k := range order {
		if t := strings.TrimSuffix(k, ":"); t != k {
			if _, dup := f[t]; !dup {
				f[t], order[i] = f[k], t
			}
		}
	}
	r := Record{
		ID:      recordID(doc, line, 0, ""),
		Source:  Source{File: name, Line: line, Format: FormatVLLMJSON},
		Metrics: map[string]float64{},
	}
	bad := func(key, format string, args ...any) error {
		return errorf(name, f[key].line, key, format, args...)
	}
	str := func(key string) (string, error) {
		fv, ok := f[key]
		if !ok || isNull(fv.raw) {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(fv.raw, &s); err != nil {
			return "", bad(key, "want a string, got %s", jsonKind(fv.raw))
		}
		return s, nil
	}
	num := func(key string) (float64, bool, error) {
		fv, ok := f[key]
		if !ok || isNull(fv.raw) {
			return 0, false, nil
		}
		var n json.Number
		if jsonKind(fv.raw) != "a number" || json.Unmarshal(fv.raw, &n) != nil {
			return 0, false, bad(key, "want a number, got %s", jsonKind(fv.raw))
		}
		v, err := n.Float64()
		if err != nil || math.IsInf(v, 0) {
			return 0, false, bad(key, "number %s out of range", n)
		}
		return v, true, nil
	}
	integer := func(key string) (int, bool, error) {
		v, ok, err := num(key)
		if err != nil || !ok {
			return 0, ok, err
		}
		if v != math.Trunc(v) || v < 0 || v > 1e12 {
			return 0, false, bad(key, "want a non-negative integer, got %v", v)
		}
		return int(v), true, nil
	}
	// lenField reads input_len/output_len, which --metadata writes as strings.
	lenField := func(key string) (int, error) {
		fv, ok := f[key]
		if !ok || isNull(fv.raw) {
			return 0, nil
		}
		var s string
		if json.Unmarshal(fv.raw, &s) == nil {
			s = strings.TrimSpace(s)
			if s == "" {
				return 0, nil
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return 0, bad(key, "want a token count, got %q", s)
			}
			return n, nil
		}
		n, _, err := integer(key)
		return n, err
	}

	var err error
	if r.System.Model, err = str("model_id"); err != nil {
		return r, err
	}
	backend, err := str("backend")
	if err != nil {
		return r, err
	}
	if backend == "" {
		if backend, err = str("endpoint_type"); err != nil {
			return r, err
		}
	}
	if engineBackends[strings.ToLower(backend)] {
		r.System.Engine = strings.ToLower(backend)
	}
	if r.Source.Section, err = str("label"); err != nil {
		return r, err
	}
	for _, k := range []string{"date", "tokenizer_id"} {
		if _, err := str(k); err != nil {
			return r, err
		}
	}

	numPrompts, _, err := integer("num_prompts")
	if err != nil {
		return r, err
	}
	r.Workload.NumPrompts = numPrompts
	completed, hasCompleted, err := integer("completed")
	if err != nil {
		return r, err
	}
	r.Completed = completed
	failed, hasFailed, err := integer("failed")
	if err != nil {
		return r, err
	}
	if r.Workload.ISLMax, err = lenField("input_len"); err != nil {
		return r, err
	}
	if r.Workload.OSLMax, err = lenField("output_len"); err != nil {
		return r, err
	}

	// Load: request_rate (number or "inf"), burstiness, max_concurrency.
	rate, hasRate := math.NaN(), false
	if fv, ok := f["request_rate"]; ok && !isNull(fv.raw) {
		var s string
		if json.Unmarshal(fv.raw, &s) == nil {
			switch {
			case isInfString(fv.raw):
				rate, hasRate = math.Inf(1), true
			default:
				v, perr := parseNumber(s)
				if perr != nil || v <= 0 {
					return r, bad("request_rate", "want a positive number or \"inf\", got %q", s)
				}
				rate, hasRate = v, true
			}
		} else {
			v, _, err := num("request_rate")
			if err != nil {
				return r, bad("request_rate", "want a number or \"inf\", got %s", jsonKind(fv.raw))
			}
			if v <= 0 {
				return r, bad("request_rate", "want a positive rate, got %v", v)
			}
			rate, hasRate = v, true
		}
	}
	var burst float64
	var hasBurst bool
	if fv, ok := f["burstiness"]; ok && isInfString(fv.raw) {
		// vLLM's --burstiness inf sends at exactly the rate: evenly spaced.
		burst, hasBurst = constantArrivalShape, true
	} else if burst, hasBurst, err = num("burstiness"); err != nil {
		return r, err
	}
	if fv, ok := f["ramp_up_strategy"]; ok && !isNull(fv.raw) {
		return r, bad("ramp_up_strategy", "a ramp-up run (vllm bench serve --ramp-up-strategy %s) changes its request rate as it goes: it has no one load to fit or predict; benchmark each rate apart", strings.Trim(string(fv.raw), `"`))
	}
	if hasBurst && burst <= 0 {
		return r, bad("burstiness", "want a positive gamma shape, got %v", burst)
	}
	maxConc, hasConc, err := integer("max_concurrency")
	if err != nil {
		return r, err
	}
	if hasConc && maxConc == 0 {
		return r, bad("max_concurrency", "want a positive integer, got 0")
	}
	switch {
	case hasConc && (!hasRate || math.IsInf(rate, 1)):
		r.Workload.Load = model.Closed(maxConc)
	case hasRate:
		r.Workload.Load = model.Open(rate, burst)
		r.Workload.Load.Concurrency = maxConc
	}

	// Per-request arrays (--save-detailed): type-check them and use what they tell.
	inputLens, err := numArray(name, f, "input_lens")
	if err != nil {
		return r, err
	}
	outputLens, err := numArray(name, f, "output_lens")
	if err != nil {
		return r, err
	}
	for _, k := range []string{"ttfts", "start_times", "queue_times"} {
		if _, err := numArray(name, f, k); err != nil {
			return r, err
		}
	}
	latencies, err := numArray(name, f, "latencies")
	if err != nil {
		return r, err
	}
	if fv, ok := f["itls"]; ok && !isNull(fv.raw) {
		var v [][]*float64
		if json.Unmarshal(fv.raw, &v) != nil {
			return r, bad("itls", "want an array of arrays of numbers, got %s", jsonKind(fv.raw))
		}
	}
	errCount, hasErrList := 0, false
	var errList []*string
	if fv, ok := f["errors"]; ok && !isNull(fv.raw) {
		if json.Unmarshal(fv.raw, &errList) != nil {
			return r, bad("errors", "want an array of strings, got %s", jsonKind(fv.raw))
		}
		hasErrList = true
		for _, e := range errList {
			if e != nil && *e != "" {
				errCount++
			}
		}
	}
	if fv, ok := f["capsim_partial"]; ok && !isNull(fv.raw) {
		if json.Unmarshal(fv.raw, &r.Partial) != nil {
			return r, bad("capsim_partial", "want true or false, got %s", jsonKind(fv.raw))
		}
	}
	if fv, ok := f["generated_texts"]; ok && !isNull(fv.raw) {
		var v []*string
		if json.Unmarshal(fv.raw, &v) != nil {
			return r, bad("generated_texts", "want an array of strings, got %s", jsonKind(fv.raw))
		}
	}
	switch {
	case hasFailed:
		r.Errors = failed
	case hasErrList:
		r.Errors = errCount
	case hasCompleted && numPrompts > completed:
		r.Errors = numPrompts - completed
	}

	// Metrics: every other number; strings are --metadata settings.
	for _, k := range order {
		if jsonConfigFields[k] || strings.TrimSpace(k) == "" {
			continue
		}
		fv := f[k]
		if isNull(fv.raw) {
			continue // absent, never zero
		}
		if knownNumericFields[k] || statMetricRE.MatchString(k) {
			v, ok, err := num(k)
			if err != nil {
				return r, err
			}
			if v < 0 {
				return r, bad(k, "want a non-negative number, got %v", v)
			}
			if ok && !(k == "rtfx" && v == 0) {
				r.Metrics[sglangE2E.Replace(k)] = v
			}
			continue
		}
		var s string
		var n json.Number
		var flag bool
		setting := func(v string) {
			if r.System.Settings == nil {
				r.System.Settings = map[string]string{}
			}
			r.System.Settings[k] = v
		}
		switch {
		case jsonKind(fv.raw) == "a number" && json.Unmarshal(fv.raw, &n) == nil:
			if engineSettingFields[engine.SettingKey(k)] {
				setting(n.String()) // vllm bench sweep writes the serve settings it varied as numbers
			} else if v, err := n.Float64(); err == nil && !math.IsInf(v, 0) {
				r.Metrics[k] = v
			}
		case json.Unmarshal(fv.raw, &flag) == nil:
			if engineSettingFields[engine.SettingKey(k)] {
				setting(strconv.FormatBool(flag)) // a serve flag a sweep varied, such as enable_chunked_prefill
			}
		case json.Unmarshal(fv.raw, &s) == nil:
			setting(s)
		}
	}

	_, capsimDataset := f["capsim_dataset"]
	if err := readDataset(&r, capsimDataset, bad, str); err != nil {
		return r, err
	}
	if osl, ok := r.Metrics["capsim_osl"]; ok && r.Workload.OSLMax == 0 && osl >= 1 && osl == math.Trunc(osl) && !statesDataset(r.System.Settings) {
		// capsim bench without a dataset (capsim_dataset null, or absent
		// in files from before it had one) asked every request for
		// max_tokens capsim_osl with ignore_eos: that is the output cap
		// (vLLM's output_len), and its counted total says whether every
		// output ran to it.
		r.Workload.OSLMax = int(osl)
	}

	// Lengths: totals over successful requests are authoritative; outputs stop early.
	tin, hasTin := r.Metrics[model.TotalInputTokens]
	tout, hasTout := r.Metrics[model.TotalOutputTokens]
	switch {
	case hasTin && completed > 0:
		r.Workload.ISL = tin / float64(completed)
	case len(inputLens) > 0:
		r.Workload.ISL = stats.Mean(inputLens)
	}
	switch {
	case hasTout && completed > 0:
		r.Workload.OSL = tout / float64(completed)
	case len(outputLens) > 0:
		r.Workload.OSL = stats.Mean(outputLens)
	}
	for _, t := range []struct {
		key, what string
		mean      float64
		has       bool
	}{{model.TotalInputTokens, "prompt", r.Workload.ISL, hasTin}, {model.TotalOutputTokens, "output", r.Workload.OSL, hasTout}} {
		if t.has && completed > 0 && t.mean > model.MaxSequenceTokens {
			return r, bad(t.key, "%.4g tokens over %d completed requests is a mean %s of %.4g tokens, more than %d",
				r.Metrics[t.key], completed, t.what, t.mean, model.MaxSequenceTokens)
		}
	}
	if _, ok := r.Metrics[model.MeanE2EL]; !ok {
		e2elFromLatencies(r.Metrics, latencies, errList)
	}
	if kv := systemSettings(r.System.Settings); kv != nil {
		if err := applySystem(name, line, &r, kv); err != nil {
			return r, err
		}
		if len(r.System.Settings) == 0 {
			r.System.Settings = nil
		}
	}
	if len(r.Metrics) == 0 {
		return r, errorf(name, line, "", "object has no metrics: not a vLLM bench serve result")
	}
	return r, nil
}

// statesDataset reports whether settings name a dataset.
func statesDataset(settings map[string]string) bool {
	_, v := StatedDataset(settings)
	return v != ""
}

// readDataset reads capsim bench's capsim_dataset (the dataset whose
// lengths the requests took; null for fixed lengths) into the
// DatasetSetting, which --metadata may also state: stating two datasets,
// or one where capsim bench wrote that it sent fixed lengths, is an error.
// present says the file has the key (a capsim bench file).
func readDataset(r *Record, present bool, bad func(key, format string, args ...any) error, str func(string) (string, error)) error {
	ds, err := str("capsim_dataset")
	if err != nil {
		return err
	}
	if strings.TrimSpace(ds) == "" {
		if k, _ := StatedDataset(r.System.Settings); present && k != "" {
			return bad("capsim_dataset", "is null (capsim bench sent fixed lengths), but the setting %s names %q", k, r.System.Settings[k])
		}
		return nil
	}
	if k, v := StatedDataset(r.System.Settings); k != "" && !strings.EqualFold(v, strings.TrimSpace(ds)) {
		return bad("capsim_dataset", "names dataset %q, but the setting %s names %q", ds, k, r.System.Settings[k])
	}
	if r.System.Settings == nil {
		r.System.Settings = map[string]string{}
	}
	r.System.Settings[DatasetSetting] = ds
	return nil
}

// e2elFromLatencies fills vLLM's E2E statistics (mean, median, std, p99:
// the statistics vLLM writes by default) from the per-request latencies
// (seconds) that vLLM's result carries even without --save-detailed, as
// vLLM computes them: over successful requests only. With the errors list,
// a request failed when its error is non-empty; without it (the list is
// dropped without --save-detailed), a failed request is one whose latency
// is 0, which vLLM leaves unset on failure.
func e2elFromLatencies(m map[string]float64, latencies []float64, errs []*string) {
	var ok []float64
	for i, l := range latencies {
		failed := l <= 0
		if len(errs) == len(latencies) {
			failed = errs[i] != nil && *errs[i] != ""
		}
		if !failed && !math.IsNaN(l) && !math.IsInf(l, 0) {
			ok = append(ok, l*1000)
		}
	}
	if len(ok) == 0 {
		return
	}
	m[model.MeanE2EL] = stats.Mean(ok)
	m[model.MedianE2EL] = stats.Median(ok)
	m[model.StdE2EL] = stats.Std(ok)
	m[model.P99E2EL] = stats.Percentile(ok, 99)
}

func numArray(name string, f map[string]jsonField, key string) ([]float64, error) {
	fv, ok := f[key]
	if !ok || isNull(fv.raw) {
		return nil, nil
	}
	// The embeddings variant writes a single 0 for output_lens.
	if key == "output_lens" && jsonKind(fv.raw) == "a number" {
		return nil, nil
	}
	var elems []json.RawMessage
	if jsonKind(fv.raw) != "an array" || json.Unmarshal(fv.raw, &elems) != nil {
		return nil, errorf(name, fv.line, key, "want an array of numbers, got %s", jsonKind(fv.raw))
	}
	out := make([]float64, 0, len(elems))
	for i, e := range elems {
		var x float64
		switch {
		case isNull(e):
		case jsonKind(e) == "a number" && json.Unmarshal(e, &x) == nil:
			if x < 0 {
				return nil, errorf(name, fv.line, key, "element %d is %v, want a non-negative number", i, x)
			}
			out = append(out, x)
		default:
			return nil, errorf(name, fv.line, key, "element %d is %s, want a number", i, jsonKind(e))
		}
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// sanitizeNonFinite replaces the NaN / Infinity / -Infinity literals Python's
// json module writes (outside strings) with null, keeping line structure.
func sanitizeNonFinite(buf []byte) []byte {
	if !bytes.Contains(buf, []byte("NaN")) && !bytes.Contains(buf, []byte("Infinity")) {
		return buf
	}
	out := make([]byte, 0, len(buf))
	inStr, esc := false, false
	for i := 0; i < len(buf); i++ {
		c := buf[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case bytes.HasPrefix(buf[i:], []byte("NaN")):
			out = append(out, "null"...)
			i += 2
			continue
		case bytes.HasPrefix(buf[i:], []byte("-Infinity")):
			out = append(out, "null"...)
			i += 8
			continue
		case bytes.HasPrefix(buf[i:], []byte("Infinity")):
			out = append(out, "null"...)
			i += 7
			continue
		}
		out = append(out, c)
	}
	return out
}

func hasEmbeddedJSON(data []byte) bool {
	return bytes.Contains(data, []byte("highlight")) && liquidJSONOpen.Match(data) ||
		bytes.Contains(data, []byte("```")) && fenceJSONOpen.Match(data)
}

var (
	liquidJSONOpen  = regexp.MustCompile(`(?m)^\s*\{%-?\s*highlight\s+json\b[^%]*-?%\}\s*$`)
	liquidJSONClose = regexp.MustCompile(`^\s*\{%-?\s*endhighlight\s*-?%\}\s*$`)
	fenceJSONOpen   = regexp.MustCompile("(?m)^\\s*```\\s*json\\s*$")
)

// jsonBlocks returns data with every byte outside JSON code blocks blanked
// (newlines kept), so decoder offsets still map to the page's lines.
func jsonBlocks(name string, data []byte) ([]byte, error) {
	out := bytes.Repeat([]byte{' '}, len(data))
	lines := bytes.SplitAfter(data, []byte{'\n'})
	off, inBlock, fence, openLine := 0, false, false, 0
	for i, ln := range lines {
		trimmed := bytes.TrimRight(ln, "\r\n")
		maybeMarker := bytes.Contains(trimmed, []byte("highlight")) || bytes.Contains(trimmed, []byte("```"))
		switch {
		case !maybeMarker:
			if inBlock {
				copy(out[off:], ln)
			}
		case !inBlock && liquidJSONOpen.Match(trimmed):
			inBlock, fence, openLine = true, false, i+1
		case !inBlock && fenceJSONOpen.Match(trimmed):
			inBlock, fence, openLine = true, true, i+1
		case inBlock && !fence && liquidJSONClose.Match(trimmed):
			inBlock = false
		case inBlock && fence && strings.TrimSpace(string(trimmed)) == "```":
			inBlock = false
		case inBlock:
			copy(out[off:], ln)
		}
		if bytes.HasSuffix(ln, []byte{'\n'}) {
			out[off+len(ln)-1] = '\n'
		}
		off += len(ln)
	}
	if inBlock {
		return nil, errorf(name, openLine, "", "JSON block opened here is never closed")
	}
	return out, nil
}

// isInfString reports a JSON string "inf" (or "infinity"), any case.
func isInfString(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "inf" || s == "infinity"
}
