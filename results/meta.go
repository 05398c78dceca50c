package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/capsim/capsim/internal/jsondup"
	"github.com/capsim/capsim/internal/jsonerr"
	"github.com/capsim/capsim/model"
)

// Meta is what a document's prose says and its parsers cannot read: the GPU,
// model, engine, topology, arrival process, lengths and engine settings.
// It is kept next to a data file as NAME.meta.json (the data file's name
// without its extension) and applied to the file's records by Apply.
//
// Patches apply in order: Defaults, then every Sections entry whose Match
// strings occur in the record's Source.Section, then Lines[Source.Line]
// (the line a record starts on, in decimal: one result block of a document
// that prints many under one heading), then Rows[Source.Row], then
// Columns[Source.Column]. System fields a patch gives replace what the
// parser found (the prose is more specific than the data); workload fields
// only fill what the parser left empty (the row's own values win).
type Meta struct {
	Document string   `json:"document"`           // the data file this describes
	Original string   `json:"original,omitempty"` // the published document it was carried from
	ID       string   `json:"id,omitempty"`       // record-ID prefix replacing the file's DocID, e.g. "004"
	Title    string   `json:"title,omitempty"`
	Notes    []string `json:"notes,omitempty"` // the prose's facts in words, including how things were measured
	// Provenance says where a published measurement came from: repository or
	// site, path or URL, date, commit, and what the source states about the
	// GPU, model, topology, engine and command line. It documents the data;
	// nothing reads it into records.
	Provenance map[string]string `json:"provenance,omitempty"`

	Defaults Patch            `json:"defaults"`
	Sections []SectionPatch   `json:"sections,omitempty"`
	Lines    map[string]Patch `json:"lines,omitempty"`
	Rows     map[string]Patch `json:"rows,omitempty"`
	Columns  map[string]Patch `json:"columns,omitempty"`
}

// SectionPatch is a Patch for the records whose section contains any of Match (case-insensitive).
type SectionPatch struct {
	Match []string `json:"match"`
	Patch
}

// Patch is one set of facts. Zero fields say nothing.
type Patch struct {
	GPU      string `json:"gpu,omitempty"`       // catalog name
	GPUCount int    `json:"gpu_count,omitempty"` // GPUs of the whole deployment
	Model    string `json:"model,omitempty"`     // Hugging Face id
	Engine   string `json:"engine,omitempty"`    // engine label with version
	// Topology is "4xTP4", "prefill 3xTP4 + decode 1xTP4" or "3P(TP4) 1D(TP4)".
	Topology string `json:"topology,omitempty"`
	// Parallelism "tensor" or "pipeline" means one worker spanning all
	// gpu_count GPUs with that parallelism, when no Topology is given.
	Parallelism string            `json:"parallelism,omitempty"`
	Settings    map[string]string `json:"settings,omitempty"` // merged into System.Settings

	ISL        float64   `json:"isl,omitempty"`
	ISLMax     int       `json:"isl_max,omitempty"`
	OSL        float64   `json:"osl,omitempty"`
	OSLMax     int       `json:"osl_max,omitempty"`
	NumPrompts int       `json:"num_prompts,omitempty"`
	Load       *LoadSpec `json:"load,omitempty"`
	// Sharing is how the prompts shared prefixes (vLLM bench's
	// prefix_repetition, a shared system prompt): Workload.Sharing.
	Sharing *model.Sharing `json:"sharing,omitempty"`
	// Arrival and Lengths describe, in words, how requests were offered and
	// how long they were; they document the numbers above.
	Arrival string `json:"arrival,omitempty"`
	Lengths string `json:"lengths,omitempty"`
}

// LoadSpec is an offered load in a metadata file.
type LoadSpec struct {
	Kind        model.LoadKind `json:"kind"`                      // "concurrency", "rate" or "burst"
	Concurrency int            `json:"max_concurrency,omitempty"` // closed loop, or an open loop's cap
	Rate        RateValue      `json:"request_rate,omitempty"`    // open loop; a number or "inf"
	Burstiness  float64        `json:"burstiness,omitempty"`
}

// RateValue is a request rate written as a number or "inf".
type RateValue float64

// UnmarshalJSON accepts a number or the string "inf".
func (r *RateValue) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if strings.EqualFold(s, "inf") {
			*r = RateValue(math.Inf(1))
			return nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("request_rate %q is not a number or \"inf\"", s)
		}
		*r = RateValue(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("request_rate must be a number or \"inf\"")
	}
	*r = RateValue(v)
	return nil
}

// MarshalJSON writes +Inf as "inf".
func (r RateValue) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(r), 1) {
		return []byte(`"inf"`), nil
	}
	return json.Marshal(float64(r))
}

func (l *LoadSpec) load() (model.Load, error) {
	var ld model.Load
	switch l.Kind {
	case model.ClosedLoop:
		ld = model.Closed(l.Concurrency)
	case model.OpenLoop, model.Burst:
		rate := float64(l.Rate)
		if l.Kind == model.Burst {
			rate = math.Inf(1)
		}
		ld = model.Open(rate, l.Burstiness)
		ld.Concurrency = l.Concurrency
	default:
		return ld, fmt.Errorf("load kind %q: want concurrency, rate or burst", l.Kind)
	}
	return ld, ld.Validate()
}

// ParseMeta reads a metadata file strictly: unknown fields, bad topologies
// and bad loads are errors naming the file.
func ParseMeta(name string, data []byte) (*Meta, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte-order mark
	if d := jsondup.Find(data); d != nil {
		field := d.Key
		if d.Path != "" {
			field = d.Path + "." + d.Key
		}
		return nil, errorf(name, lineAt(data, d.Offset), field, "metadata: duplicate key")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Meta
	if err := dec.Decode(&m); err != nil {
		p := jsonerr.Describe(data, err)
		return nil, errorf(name, p.Line, p.Field, "metadata: %s", p.Reason)
	}
	if tr := jsonerr.Trailing(data, dec); tr != nil {
		return nil, errorf(name, tr.Line, "", "metadata: %s", tr.Reason)
	}
	check := func(where string, p *Patch) error {
		for _, f := range []struct {
			key string
			v   float64
		}{
			{"gpu_count", float64(p.GPUCount)}, {"num_prompts", float64(p.NumPrompts)},
		} {
			if f.v < 0 || f.v > 1e12 {
				return errorf(name, 0, where+"."+f.key, "want a count from 0 to 1e12, got %v", f.v)
			}
		}
		for _, f := range []struct {
			key string
			v   float64
		}{{"isl", p.ISL}, {"isl_max", float64(p.ISLMax)}, {"osl", p.OSL}, {"osl_max", float64(p.OSLMax)}} {
			if !(f.v >= 0 && f.v <= model.MaxSequenceTokens) {
				return errorf(name, 0, where+"."+f.key, "want a token count from 0 to %d, got %v", model.MaxSequenceTokens, f.v)
			}
		}
		if p.Topology != "" {
			if _, err := model.ParseTopology(p.Topology); err != nil {
				return errorf(name, 0, where+".topology", "%v", err)
			}
		}
		switch p.Parallelism {
		case "", "tensor", "pipeline":
		default:
			return errorf(name, 0, where+".parallelism", "want tensor or pipeline, got %q", p.Parallelism)
		}
		if p.Load != nil {
			if _, err := p.Load.load(); err != nil {
				return errorf(name, 0, where+".load", "%v", err)
			}
		}
		if p.Sharing != nil {
			if err := p.Sharing.Validate(); err != nil {
				return errorf(name, 0, where+".sharing", "%v", err)
			}
		}
		return nil
	}
	if err := check("defaults", &m.Defaults); err != nil {
		return nil, err
	}
	for i := range m.Sections {
		if len(m.Sections[i].Match) == 0 {
			return nil, errorf(name, 0, fmt.Sprintf("sections[%d].match", i), "needs at least one string")
		}
		if err := check(fmt.Sprintf("sections[%d]", i), &m.Sections[i].Patch); err != nil {
			return nil, err
		}
	}
	for k, p := range m.Lines {
		// Apply matches a key against strconv.Itoa(line): "007" or "+7"
		// would parse but never match, so they are refused, not ignored.
		if n, err := strconv.Atoi(k); err != nil || n <= 0 || strconv.Itoa(n) != k {
			return nil, errorf(name, 0, "lines."+k, "want a line number written as a plain positive integer (\"7\"), got %q", k)
		}
		if err := check("lines."+k, &p); err != nil {
			return nil, err
		}
	}
	for k, p := range m.Rows {
		if err := check("rows."+k, &p); err != nil {
			return nil, err
		}
	}
	for k, p := range m.Columns {
		if err := check("columns."+k, &p); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// State writes what the user states about the system (from the command
// line: what files and their metadata do not say, or say wrongly) onto
// every record. The GPU is resolved to its catalog name; a stated topology
// replaces the GPU counts the files gave.
func State(recs []Record, stated Patch) error {
	if stated.GPU != "" {
		g, err := model.LookupGPU(stated.GPU)
		if err != nil {
			return fmt.Errorf("results: %w", err)
		}
		stated.GPU = g.Name
	}
	if stated.Topology != "" {
		t, err := model.ParseTopology(stated.Topology)
		if err != nil {
			return fmt.Errorf("results: %w", err)
		}
		stated.Topology = t.String()
		for i := range recs {
			recs[i].System.GPUCount = 0
		}
	}
	return (&Meta{Document: "the command line", Defaults: stated}).Apply(recs)
}

// Apply writes the metadata's facts onto recs (parsed from m.Document),
// derives topologies and GPU counts, checks they agree, and re-annotates.
func (m *Meta) Apply(recs []Record) error {
	for i := range recs {
		r := &recs[i]
		var parallelism string
		statedTopology, statedGPUs := false, false
		apply := func(p *Patch) {
			if p.GPU != "" {
				r.System.GPU = p.GPU
			}
			if p.GPUCount != 0 {
				r.System.GPUCount = p.GPUCount
				statedGPUs = true
			}
			if p.Model != "" {
				r.System.Model = p.Model
			}
			if p.Engine != "" {
				r.System.Engine = p.Engine
			}
			if p.Topology != "" {
				r.System.Topology, _ = model.ParseTopology(p.Topology) // checked by ParseMeta
				statedTopology = true
			}
			if p.Parallelism != "" {
				parallelism = p.Parallelism
			}
			if len(p.Settings) > 0 {
				if r.System.Settings == nil {
					r.System.Settings = map[string]string{}
				}
				for k, v := range p.Settings {
					r.System.Settings[k] = v
				}
			}
			w := &r.Workload
			if w.ISL == 0 && p.ISL != 0 {
				w.ISL = p.ISL
			}
			if w.ISLMax == 0 && p.ISLMax != 0 {
				w.ISLMax = p.ISLMax
			}
			if w.OSL == 0 && p.OSL != 0 {
				w.OSL = p.OSL
			}
			if w.OSLMax == 0 && p.OSLMax != 0 {
				w.OSLMax = p.OSLMax
			}
			if w.NumPrompts == 0 && p.NumPrompts != 0 {
				w.NumPrompts = p.NumPrompts
			}
			if w.Load.Kind == "" && p.Load != nil {
				w.Load, _ = p.Load.load() // checked by ParseMeta
			}
			if !w.Sharing.On() && p.Sharing != nil {
				w.Sharing = *p.Sharing
			}
		}
		apply(&m.Defaults)
		sec := strings.ToLower(r.Source.Section)
		for j := range m.Sections {
			for _, s := range m.Sections[j].Match {
				if strings.Contains(sec, strings.ToLower(s)) {
					apply(&m.Sections[j].Patch)
					break
				}
			}
		}
		if p, ok := m.Lines[strconv.Itoa(r.Source.Line)]; ok && r.Source.Line > 0 {
			apply(&p)
		}
		if p, ok := lookupFold(m.Rows, r.Source.Row); ok {
			apply(&p)
		}
		if p, ok := lookupFold(m.Columns, r.Source.Column); ok {
			apply(&p)
		}
		t := &r.System.Topology
		dp := r.dpReplicas
		r.dpReplicas = [2]string{} // decided once: a later Apply sees the topology as this one leaves it
		if dp[0] != "" && !statedTopology && !t.Disaggregated() && dpAttention(r.System.Settings) {
			// The file's own dp was read as replicas before this sidecar
			// turned on DP attention: it splits each server's attention.
			if n, err := strconv.Atoi(dp[1]); err == nil && t.Replicas.Count == n {
				before := t.GPUs()
				t.Replicas.Count = 1
				r.System.Settings[dp[0]] = dp[1]
				if !statedGPUs && r.System.GPUCount == before {
					r.System.GPUCount = t.GPUs() // else checked below
				}
			}
		}
		if t.Replicas.IsZero() && !t.Disaggregated() && parallelism != "" && r.System.GPUCount > 0 {
			pool := model.Pool{Count: 1, TP: r.System.GPUCount, PP: 1}
			if parallelism == "pipeline" {
				pool = model.Pool{Count: 1, TP: 1, PP: r.System.GPUCount}
			}
			*t = model.Aggregated(pool)
		}
		if g := t.GPUs(); g > 0 {
			if r.System.GPUCount == 0 {
				r.System.GPUCount = g
			} else if r.System.GPUCount != g {
				return fmt.Errorf("results: metadata for %s: record %s: gpu_count %d but topology %s uses %d GPUs", m.Document, r.ID, r.System.GPUCount, t, g)
			}
		}
		if m.ID != "" {
			if rest, ok := strings.CutPrefix(r.ID, DocID(r.Source.File)+":"); ok {
				r.ID = m.ID + ":" + rest
			}
		}
	}
	Annotate(recs)
	return nil
}

func lookupFold(m map[string]Patch, key string) (Patch, bool) {
	if key == "" {
		return Patch{}, false
	}
	if p, ok := m[key]; ok {
		return p, true
	}
	for k, p := range m {
		if strings.EqualFold(k, key) {
			return p, true
		}
	}
	return Patch{}, false
}

// MetaPath is where the metadata of data file p is looked for: p without
// its extension, plus ".meta.json" (runs.md → runs.meta.json).
func MetaPath(p string) string {
	ext := ""
	if i := strings.LastIndexByte(p, '.'); i > strings.LastIndexAny(p, `/\`) {
		ext = p[i:]
	}
	return strings.TrimSuffix(p, ext) + ".meta.json"
}
