package model

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/capsim/capsim/internal/optionerr"
)

// Pool is a group of identical workers: Count workers, each spanning TP×PP GPUs.
type Pool struct {
	Count int `json:"count"`
	TP    int `json:"tp"`
	PP    int `json:"pp,omitempty"` // 0 means 1
}

// Stages returns the pipeline-parallel degree, treating 0 as 1.
func (p Pool) Stages() int {
	if p.PP <= 0 {
		return 1
	}
	return p.PP
}

// GPUsPerWorker is TP × PP.
func (p Pool) GPUsPerWorker() int { return p.TP * p.Stages() }

// GPUs is the number of GPUs the pool occupies.
func (p Pool) GPUs() int { return p.Count * p.GPUsPerWorker() }

// IsZero reports whether the pool is absent.
func (p Pool) IsZero() bool { return p.Count == 0 }

// String formats the pool as NxTPk, with PPj when pipeline parallel.
func (p Pool) String() string {
	if p.Stages() > 1 {
		return fmt.Sprintf("%dxTP%dPP%d", p.Count, p.TP, p.Stages())
	}
	return fmt.Sprintf("%dxTP%d", p.Count, p.TP)
}

// Worker returns the same pool shape with a single worker.
func (p Pool) Worker() Pool { p.Count = 1; return p }

var poolRE = regexp.MustCompile(`^(?i)(\d+)xTP(\d+)(?:PP(\d+))?$`)

// MaxWorkers bounds a pool's worker count, and MaxParallel its TP and PP
// degrees: far beyond any deployment, they keep a typo such as 100000xTP1
// from reaching the simulator's own limits.
const (
	MaxWorkers  = 1 << 16
	MaxParallel = 1024
)

// ParsePool parses "6xTP2" or "2xTP4PP2". Counts and degrees must be positive,
// at most MaxWorkers and MaxParallel.
func ParsePool(s string) (Pool, error) {
	m := poolRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Pool{}, optionerr.New("model: ", nil, "topology %q: want NxTPk or NxTPkPPj, e.g. 6xTP2", s)
	}
	var p Pool
	var err error
	if p.Count, err = strconv.Atoi(m[1]); err != nil || p.Count <= 0 {
		return Pool{}, optionerr.New("model: ", nil, "topology %q: worker count must be a positive integer", s)
	}
	if p.TP, err = strconv.Atoi(m[2]); err != nil || p.TP <= 0 {
		return Pool{}, optionerr.New("model: ", nil, "topology %q: TP must be a positive integer", s)
	}
	p.PP = 1
	if m[3] != "" {
		if p.PP, err = strconv.Atoi(m[3]); err != nil || p.PP <= 0 {
			return Pool{}, optionerr.New("model: ", nil, "topology %q: PP must be a positive integer", s)
		}
	}
	switch {
	case p.Count > MaxWorkers:
		return Pool{}, optionerr.New("model: ", nil, "topology %q: %d workers are more than %d", s, p.Count, MaxWorkers)
	case p.TP > MaxParallel || p.PP > MaxParallel:
		return Pool{}, optionerr.New("model: ", nil, "topology %q: TP and PP must be at most %d", s, MaxParallel)
	}
	return p, nil
}

// Topology is a deployment: either aggregated replicas (each serving prefill
// and decode with chunked prefill) or disaggregated prefill and decode pools.
type Topology struct {
	Replicas Pool `json:"replicas,omitzero"`
	Prefill  Pool `json:"prefill,omitzero"`
	Decode   Pool `json:"decode,omitzero"`
}

// Aggregated returns an aggregated topology of the given replicas.
func Aggregated(replicas Pool) Topology { return Topology{Replicas: replicas} }

// Disaggregated returns a prefill/decode topology.
func Disaggregated(prefill, decode Pool) Topology { return Topology{Prefill: prefill, Decode: decode} }

// Disaggregated reports whether the deployment has separate prefill and decode pools.
func (t Topology) Disaggregated() bool { return !t.Prefill.IsZero() || !t.Decode.IsZero() }

// GPUs is the total number of GPUs of the deployment.
func (t Topology) GPUs() int { return t.Replicas.GPUs() + t.Prefill.GPUs() + t.Decode.GPUs() }

// WidestTP is the largest TP degree of the topology's pools: the degree a
// setting that spans every GPU of a worker (vLLM's
// --enable-expert-parallel) states for the widest, and, capped at their
// own TP, for the others (LLM.ExpertParallelAt).
func (t Topology) WidestTP() int { return max(t.Replicas.TP, t.Prefill.TP, t.Decode.TP) }

// String formats the topology as "4xTP4" (aggregated) or "prefill 6xTP2 + decode 1xTP4".
func (t Topology) String() string {
	if t.Disaggregated() {
		return fmt.Sprintf("prefill %s + decode %s", t.Prefill, t.Decode)
	}
	return t.Replicas.String()
}

// Validate checks that the topology is either aggregated or disaggregated, with positive counts.
func (t Topology) Validate() error {
	switch {
	case t.Disaggregated() && !t.Replicas.IsZero():
		return fmt.Errorf("model: topology has both replicas and prefill/decode pools")
	case t.Disaggregated() && (t.Prefill.IsZero() || t.Decode.IsZero()):
		return fmt.Errorf("model: disaggregated topology needs both a prefill and a decode pool")
	case !t.Disaggregated() && t.Replicas.IsZero():
		return fmt.Errorf("model: topology is empty")
	}
	for _, p := range []Pool{t.Replicas, t.Prefill, t.Decode} {
		if p.IsZero() {
			continue
		}
		if p.Count < 0 || p.TP <= 0 || p.Stages() <= 0 {
			return fmt.Errorf("model: pool %s: counts and degrees must be positive", p)
		}
	}
	return nil
}

var disaggRE = regexp.MustCompile(`^(?i)prefill\s+(\S+)\s*\+\s*decode\s+(\S+)$`)
var dynamoRE = regexp.MustCompile(`^(?i)(\d+)P\((TP\d+(?:PP\d+)?)\)\s*\+?\s*(\d+)D\((TP\d+(?:PP\d+)?)\)$`)

// shortRE is the form capsim data prints: "P 3xTP4 D 1xTP4".
var shortRE = regexp.MustCompile(`^(?i)P\s+(\S+)\s+D\s+(\S+)$`)

// ParseTopology parses "4xTP4", "prefill 6xTP2 + decode 1xTP4", the
// Dynamo write-up form "3P(TP4) 1D(TP4)" or the form capsim data prints,
// "P 3xTP4 D 1xTP4".
func ParseTopology(s string) (Topology, error) {
	s = strings.TrimSpace(s)
	if m := disaggRE.FindStringSubmatch(s); m != nil {
		p, err := ParsePool(m[1])
		if err != nil {
			return Topology{}, err
		}
		d, err := ParsePool(m[2])
		if err != nil {
			return Topology{}, err
		}
		return Disaggregated(p, d), nil
	}
	if m := dynamoRE.FindStringSubmatch(s); m != nil {
		return ParseTopology(fmt.Sprintf("prefill %sx%s + decode %sx%s", m[1], m[2], m[3], m[4]))
	}
	if m := shortRE.FindStringSubmatch(s); m != nil {
		return ParseTopology(fmt.Sprintf("prefill %s + decode %s", m[1], m[2]))
	}
	if strings.ContainsAny(s, " \t") {
		return Topology{}, optionerr.New("model: ", nil, `topology %q: want NxTPk or NxTPkPPj (e.g. 6xTP2), or prefill and decode pools as "prefill 6xTP2 + decode 1xTP4", "6P(TP2) 1D(TP4)" or "P 6xTP2 D 1xTP4"`, s)
	}
	p, err := ParsePool(s)
	if err != nil {
		return Topology{}, err
	}
	return Aggregated(p), nil
}

// CheckTP reports whether the model can be split across tp GPUs by tensor
// parallelism, as vLLM checks it: the attention heads must divide evenly
// (ModelConfig.verify_with_parallel_config), and the KV heads must either
// divide evenly or, when fewer than tp, be replicated an integer number of
// times (QKVParallelLinear). Qwen3-32B's 64 heads refuse TP3 and TP6.
func (m LLM) CheckTP(tp int) error {
	switch {
	case tp <= 0:
		return fmt.Errorf("model: TP must be positive, got %d", tp)
	case m.Heads > 0 && m.Heads%tp != 0:
		return fmt.Errorf("model: %s cannot run at TP%d: its %d attention heads do not divide by %d%s", ShortName(m.Name), tp, m.Heads, tp, m.validTPHint())
	case m.KVHeads > 0 && m.KVHeads%tp != 0 && tp%m.KVHeads != 0:
		return fmt.Errorf("model: %s cannot run at TP%d: its %d KV heads neither divide by %d nor replicate evenly across it%s", ShortName(m.Name), tp, m.KVHeads, tp, m.validTPHint())
	}
	return nil
}

func (m LLM) tpOK(tp int) bool {
	return tp > 0 && (m.Heads <= 0 || m.Heads%tp == 0) && (m.KVHeads <= 0 || m.KVHeads%tp == 0 || tp%m.KVHeads == 0)
}

// ValidTPs lists the TP degrees up to max the model can use (CheckTP).
func (m LLM) ValidTPs(max int) []int {
	var out []int
	for tp := 1; tp <= max; tp++ {
		if m.tpOK(tp) {
			out = append(out, tp)
		}
	}
	return out
}

func (m LLM) validTPHint() string {
	var s []string
	for _, tp := range m.ValidTPs(16) {
		s = append(s, strconv.Itoa(tp))
	}
	return " (valid up to 16: " + strings.Join(s, ", ") + ")"
}

// CheckModel checks every pool's TP degree against the model (CheckTP).
func (t Topology) CheckModel(m LLM) error {
	for _, p := range []Pool{t.Replicas, t.Prefill, t.Decode} {
		if p.IsZero() {
			continue
		}
		if err := m.CheckTP(p.TP); err != nil {
			return err
		}
	}
	return nil
}
