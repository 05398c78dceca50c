package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// node is one value of a JSON or YAML document, with the line it starts on,
// so the peer readers can name the line of a bad field. Objects keep their
// key order.
type node struct {
	kind  nodeKind
	str   string  // kindString; the literal of a kindNumber
	num   float64 // kindNumber
	b     bool    // kindBool
	keys  []string
	vals  []*node // kindObject, parallel to keys
	items []*node // kindArray
	line  int
}

type nodeKind int

const (
	kindNull nodeKind = iota
	kindString
	kindNumber
	kindBool
	kindObject
	kindArray
)

func (k nodeKind) String() string {
	return [...]string{"null", "a string", "a number", "a boolean", "an object", "an array"}[k]
}

// get returns the member key of an object node, or nil when n is nil, not an
// object, or has no such member.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// at follows a path of object keys.
func (n *node) at(keys ...string) *node {
	for _, k := range keys {
		n = n.get(k)
	}
	return n
}

// absent reports a missing or null value: the file does not say.
func (n *node) absent() bool { return n == nil || n.kind == kindNull }

// text returns a string node's value ("" otherwise).
func (n *node) text() string {
	if n == nil || n.kind != kindString {
		return ""
	}
	return n.str
}

// lineOr returns the node's line, or def for an absent node.
func (n *node) lineOr(def int) int {
	if n == nil {
		return def
	}
	return n.line
}

// maxTreeNodes bounds the nodes one document may expand to (YAML aliases can
// repeat a subtree many times); it keeps memory linear in the input size.
func maxTreeNodes(data []byte) int { return 4*len(data) + 1024 }

// jsonTree reads the first JSON value of data into a node tree. Python's
// NaN and ±Infinity literals read as null (absent), as in ParseVLLMJSON.
func jsonTree(name string, data []byte) (*node, error) {
	buf := data
	if bytes.HasPrefix(buf, []byte("\ufeff")) {
		buf = append([]byte("   "), buf[3:]...)
	}
	buf = sanitizeNonFinite(buf)
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.UseNumber()
	lc := newLineCounter(buf) // offsets only grow: linear in the input
	budget := maxTreeNodes(data)
	var read func(tok json.Token, line int) (*node, error)
	// next reads the next value inside an object or array opened on line.
	next := func(line int) (*node, error) {
		vt, err := dec.Token()
		if err != nil {
			return nil, jsonError(name, buf, lc, dec, err, line)
		}
		return read(vt, tokenLine(lc, dec))
	}
	read = func(tok json.Token, line int) (*node, error) {
		budget--
		if budget < 0 {
			return nil, errorf(name, line, "", "document too large")
		}
		n := &node{line: line}
		switch v := tok.(type) {
		case nil:
		case bool:
			n.kind, n.b = kindBool, v
		case string:
			n.kind, n.str = kindString, v
		case json.Number:
			f, err := v.Float64()
			if err != nil || math.IsInf(f, 0) {
				return nil, errorf(name, line, "", "number %s out of range", v)
			}
			n.kind, n.num, n.str = kindNumber, f, v.String()
		case json.Delim:
			switch v {
			case '{':
				n.kind = kindObject
				for dec.More() {
					kt, err := dec.Token()
					if err != nil {
						return nil, jsonError(name, buf, lc, dec, err, line)
					}
					key, _ := kt.(string)
					child, err := next(line)
					if err != nil {
						return nil, err
					}
					n.keys = append(n.keys, key)
					n.vals = append(n.vals, child)
				}
			case '[':
				n.kind = kindArray
				for dec.More() {
					child, err := next(line)
					if err != nil {
						return nil, err
					}
					n.items = append(n.items, child)
				}
			}
			if _, err := dec.Token(); err != nil { // the closing delimiter
				return nil, jsonError(name, buf, lc, dec, err, line)
			}
		}
		return n, nil
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errorf(name, 0, "", "empty document")
		}
		return nil, jsonError(name, buf, lc, dec, err, 0)
	}
	return read(tok, tokenLine(lc, dec))
}

// tokenLine is the line of a just-read token: the decoder's offset is just
// past it, so step back one byte, into the token.
func tokenLine(lc *lineCounter, dec *json.Decoder) int {
	return lc.at(dec.InputOffset() - 1)
}

// yamlTree reads a YAML document (the first of a stream) into a node tree,
// with go.yaml.in/yaml/v3, the YAML organisation's maintained fork of
// gopkg.in/yaml.v3. Aliases are followed, within maxTreeNodes.
func yamlTree(name string, data []byte) (*node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errorf(name, 0, "", "empty document")
		}
		return nil, errorf(name, yamlErrorLine(err), "", "invalid YAML: %s", yamlErrorText(err))
	}
	budget := maxTreeNodes(data)
	var conv func(y *yaml.Node, depth int) (*node, error)
	conv = func(y *yaml.Node, depth int) (*node, error) {
		budget--
		if budget < 0 || depth > 10000 {
			return nil, errorf(name, y.Line, "", "document too large (aliases expand too far)")
		}
		n := &node{line: y.Line}
		switch y.Kind {
		case yaml.DocumentNode:
			if len(y.Content) == 0 {
				return n, nil
			}
			return conv(y.Content[0], depth+1)
		case yaml.AliasNode:
			if y.Alias == nil {
				return n, nil
			}
			c, err := conv(y.Alias, depth+1)
			if err != nil {
				return nil, err
			}
			c.line = y.Line
			return c, nil
		case yaml.MappingNode:
			n.kind = kindObject
			for i := 0; i+1 < len(y.Content); i += 2 {
				k, v := y.Content[i], y.Content[i+1]
				if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag == "!!merge" {
					continue // merge keys are not used by the formats read here
				}
				child, err := conv(v, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.Value)
				n.vals = append(n.vals, child)
			}
		case yaml.SequenceNode:
			n.kind = kindArray
			for _, c := range y.Content {
				child, err := conv(c, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, child)
			}
		case yaml.ScalarNode:
			switch y.ShortTag() {
			case "!!null":
			case "!!bool":
				n.kind, n.b = kindBool, strings.EqualFold(y.Value, "true") || y.Value == "yes" || y.Value == "on"
			case "!!int", "!!float":
				// .inf, -.inf and .nan are numbers, as YAML 1.2 defines them;
				// number says which fields take them.
				if v, ok := yamlNumber(y.Value); ok {
					n.kind, n.num, n.str = kindNumber, v, y.Value
				}
			default:
				n.kind, n.str = kindString, y.Value
			}
		}
		return n, nil
	}
	return conv(&doc, 0)
}

// yamlNumber parses a YAML 1.2 int or float literal.
func yamlNumber(s string) (float64, bool) {
	t := strings.ReplaceAll(s, "_", "")
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case ".inf":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case ".nan":
		return math.NaN(), true
	}
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		return v, true
	}
	if v, err := strconv.ParseInt(t, 0, 64); err == nil {
		return float64(v), true
	}
	return 0, false
}

func yamlErrorLine(err error) int {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return 0
	}
	// "yaml: line 3: did not find expected key"
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		var l int
		if _, e := fmt.Sscanf(msg[i:], "line %d", &l); e == nil {
			return l
		}
	}
	return 0
}

func yamlErrorText(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(msg, "line "); i == 0 {
		if j := strings.Index(msg, ": "); j > 0 {
			msg = msg[j+2:]
		}
	}
	return msg
}

// peer holds what every peer reader needs to report errors: the file name.
type peer struct {
	name   string
	format string // Source.Format of the records
	label  string // the format as users know it, for messages: "GuideLLM report"
}

// fail reports a problem at node n (or at line def when n is absent).
func (p *peer) fail(n *node, def int, field, format string, args ...any) error {
	return errorf(p.name, n.lineOr(def), field, format, args...)
}

// number reads an optional number; a numeric string is accepted (older
// genai-perf versions write numbers as strings).
func (p *peer) number(n *node, field string) (float64, bool, error) {
	if n.absent() {
		return 0, false, nil
	}
	switch n.kind {
	case kindNumber:
		switch {
		case math.IsNaN(n.num):
			return 0, false, nil // YAML's .nan: absent, as NaN in the JSON readers
		case math.IsInf(n.num, 0):
			return 0, false, p.fail(n, 0, field, "want a finite number, got %s", n.str)
		}
		return n.num, true, nil
	case kindString:
		if v, err := parseNumber(n.str); err == nil {
			return v, true, nil
		}
		return 0, false, p.fail(n, 0, field, "want a number, got %q", n.str)
	}
	return 0, false, p.fail(n, 0, field, "want a number, got %s", n.kind)
}

// numberOrInf reads an optional number that may be +infinity: YAML's .inf
// or the string "inf" (a closed loop's rate or an unlimited concurrency).
func (p *peer) numberOrInf(n *node, field string) (float64, bool, error) {
	switch {
	case n != nil && n.kind == kindNumber && math.IsInf(n.num, 1):
		return n.num, true, nil
	case n != nil && n.kind == kindString && isInfText(n.str):
		return math.Inf(1), true, nil
	}
	return p.number(n, field)
}

// isInfText reports "inf", "+inf", "infinity" or YAML's ".inf", any case.
func isInfText(s string) bool {
	switch strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "+")) {
	case "inf", "infinity", ".inf":
		return true
	}
	return false
}

// count reads an optional non-negative integer.
func (p *peer) count(n *node, field string) (int, bool, error) {
	v, ok, err := p.number(n, field)
	if err != nil || !ok {
		return 0, ok, err
	}
	if v < 0 || v != math.Trunc(v) || v > 1e12 {
		return 0, false, p.fail(n, 0, field, "want a non-negative integer, got %v", v)
	}
	return int(v), true, nil
}

// object checks that an optional value is an object.
func (p *peer) object(n *node, field string) error {
	if !n.absent() && n.kind != kindObject {
		return p.fail(n, 0, field, "want an object, got %s", n.kind)
	}
	return nil
}

// timeScale converts a time unit to milliseconds.
func timeScale(unit string) (float64, bool) {
	switch strings.ToLower(strings.TrimSpace(unit)) {
	case "ms", "msec", "milliseconds", "ms/token", "ms/tok":
		return 1, true
	case "s", "sec", "secs", "second", "seconds", "s/token", "s/tok":
		return 1000, true
	case "us", "µs", "usec", "microseconds":
		return 1e-3, true
	case "ns", "nsec", "nanoseconds":
		return 1e-6, true
	}
	return 0, false
}

// statName maps a peer's statistic key to vLLM's word for it ("" when vLLM
// has none, like min and max): avg → mean, p50 → median, std_dev → std,
// p999 and p99p9 → p99.9, p001 and p0p1 → p0.1.
func statName(key string) string {
	switch strings.ToLower(key) {
	case "mean", "avg", "average":
		return "mean"
	case "median", "p50":
		return "median"
	case "std", "std_dev", "stddev", "stdev":
		return "std"
	case "p999", "p99p9", "p99.9":
		return "p99.9"
	case "p001", "p0p1", "p0.1":
		return "p0.1"
	}
	k := strings.ToLower(key)
	if len(k) >= 2 && k[0] == 'p' {
		digits := k[1:]
		if _, err := strconv.Atoi(digits); err == nil && len(digits) <= 2 {
			if t := strings.TrimLeft(digits, "0"); t != "" {
				return "p" + t
			}
		}
	}
	return ""
}

// latencyStats copies the statistics of object st (mean, percentiles, …)
// into m under vLLM names for family fam (ttft, tpot, itl, e2el), each
// multiplied by scale to make milliseconds. Keys that are not statistics
// (unit, count, min, max, mode) are skipped; a null statistic stays absent.
func (p *peer) latencyStats(m map[string]float64, st *node, field, fam string, scale float64) error {
	if st.absent() {
		return nil
	}
	if st.kind != kindObject {
		return p.fail(st, 0, field, "want an object of statistics, got %s", st.kind)
	}
	for i, k := range st.keys {
		stat := statName(k)
		if stat == "" {
			continue
		}
		v, ok, err := p.number(st.vals[i], field+"."+k)
		if err != nil {
			return err
		}
		if ok {
			m[stat+"_"+fam+"_ms"] = v * scale
		}
	}
	return nil
}
