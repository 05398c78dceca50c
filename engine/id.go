package engine

import (
	"math"
	"strconv"
	"strings"
)

// ID is a serving engine label split into family and version:
// "vllm-0.9.0.1" is family "vllm", version [0 9 0 1]. A label without a
// version ("vllm") has a nil Version: the source did not say which release ran.
type ID struct {
	Family  string // lower case: "vllm", "dynamo", "sglang", …
	Version []int  // release numbers, most significant first; nil when unknown
	Label   string // the label as written
}

// Parse splits an engine label into family and version: the
// version is the dot-separated numbers after the first '-', '_' or space
// that a digit (or "v" and a digit) follows ("vllm-v0.8.4",
// "llm-d-inference-sim-0.10.2"), the family the lower-cased text before it,
// one spelling per engine ("tensorrt-llm-1.0" is family "trtllm").
func Parse(label string) ID {
	label = strings.TrimSpace(label)
	e := ID{Label: label, Family: canonicalFamily(strings.ToLower(label))}
	low := strings.ToLower(label)
	for i := 0; i < len(low); i++ {
		if !strings.ContainsRune("-_ ", rune(low[i])) {
			continue
		}
		rest := strings.TrimPrefix(low[i+1:], "v")
		if rest == "" || rest[0] < '0' || rest[0] > '9' {
			continue
		}
		e.Family = canonicalFamily(low[:i])
		for _, f := range strings.Split(rest, ".") {
			n, err := strconv.Atoi(f)
			if err != nil {
				break
			}
			e.Version = append(e.Version, n)
		}
		break
	}
	return e
}

// String formats the engine as a label: "vllm-0.9.0.1", or the family alone.
func (e ID) String() string {
	if len(e.Version) == 0 {
		return e.Family
	}
	return e.Family + "-" + e.VersionString()
}

// VersionString is the version as dotted numbers ("0.9.0.1"); "" when unknown.
func (e ID) VersionString() string {
	parts := make([]string, len(e.Version))
	for i, n := range e.Version {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ".")
}

// Minor is the version's major.minor ("0.9"), the release line whose
// flags and defaults a patch release shares; "" when unknown.
func (e ID) Minor() string {
	switch len(e.Version) {
	case 0:
		return ""
	case 1:
		return strconv.Itoa(e.Version[0])
	}
	return strconv.Itoa(e.Version[0]) + "." + strconv.Itoa(e.Version[1])
}

// Family is the family of a label: "vllm-0.9.0.1" → "vllm".
func Family(label string) string { return Parse(label).Family }

// The engine families with rules of their own.
const (
	VLLM   = "vllm"
	Dynamo = "dynamo"
	SGLang = "sglang"
	TRTLLM = "trtllm"
)

// DefaultLabel is the engine a deployment that names none runs: vLLM
// aggregated, Dynamo disaggregated (the engines the corpus measured each
// topology on).
func DefaultLabel(disaggregated bool) string {
	if disaggregated {
		return Dynamo
	}
	return VLLM
}

// canonicalFamily folds the spellings of one engine family into the
// tables' name ("tensorrt-llm" → "trtllm").
func canonicalFamily(family string) string {
	switch family {
	case "trt-llm", "tensorrt", "tensorrt-llm", "trt":
		return TRTLLM
	}
	return family
}

// Older reports whether e's version is older than o's; a missing version
// is older than any, and a prefix older than its extensions (0.9 < 0.9.0.1).
func (e ID) Older(o ID) bool { return Less(e.Version, o.Version) }

// AtLeast reports whether e's version is v or newer; an unknown version is not.
func (e ID) AtLeast(v ...int) bool { return len(e.Version) > 0 && !Less(e.Version, v) }

// pickRow is the one rule both engine tables (defaults, overheads) are
// read by: of n rows, row(i) giving a row's family and first version (nil
// for the family's unversioned row), the newest row of e's family whose
// version e has reached, else the family's unversioned row (a label with
// no version, or one older than every row); -1 when the family has none.
func pickRow(n int, row func(i int) (family string, since []int), e ID) int {
	best, unversioned := -1, -1
	var bestSince []int
	for i := 0; i < n; i++ {
		fam, since := row(i)
		switch {
		case fam != e.Family:
		case since == nil:
			unversioned = i
		case e.AtLeast(since...) && (best < 0 || Less(bestSince, since)):
			best, bestSince = i, since
		}
	}
	if best < 0 {
		return unversioned
	}
	return best
}

// Less orders versions: number by number, a prefix before its extensions.
func Less(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// Distance is how far version v lies from want, major first: a major
// version apart outweighs any minor difference, a minor any patch (the
// fourth number and beyond are ignored). Two unknown versions are 0 apart,
// an unknown and a known one farther than any two known.
func Distance(v, want []int) float64 {
	if len(v) == 0 || len(want) == 0 {
		if len(v) == len(want) {
			return 0
		}
		return 1e9
	}
	d, w := 0.0, 1e6
	for i := 0; i < 3; i++ {
		a, b := 0, 0
		if i < len(v) {
			a = v[i]
		}
		if i < len(want) {
			b = want[i]
		}
		d += w * math.Abs(float64(a-b))
		w /= 1000
	}
	return d
}

// SGLangAutoDP reports an SGLang release that set dp_size to tp_size
// itself under --enable-dp-attention (0.4.0 to 0.4.3; 0.4.4 made --dp an
// explicit setting). An unversioned SGLang label is taken as a later one.
func (e ID) SGLangAutoDP() bool {
	return e.Family == SGLang && len(e.Version) > 0 && e.AtLeast(0, 4) && !e.AtLeast(0, 4, 4)
}

// PrefillBudgetCoversContext reports an engine whose disaggregated workers
// run without chunked prefill, so that vLLM refuses a max-num-batched-tokens
// below max-model-len: Dynamo before 0.4, whose vLLM V0 workers turn
// chunked prefill off for remote prefill (its PrefillWorker, and its
// VllmWorker with remote-prefill on).
func (e ID) PrefillBudgetCoversContext() bool {
	return e.Family == Dynamo && (len(e.Version) == 0 || Less(e.Version, []int{0, 4}))
}
