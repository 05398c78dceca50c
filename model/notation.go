package model

import "fmt"

// Notation formats the topology as the Dynamo write-ups and seed documents
// do: "6P(TP2) 1D(TP4)" when disaggregated ("2P(TP4PP2) 1D(TP4)" with
// pipeline parallelism), else as String ("4xTP4", "1xTP4PP2").
// ParseTopology reads it back.
func (t Topology) Notation() string {
	if !t.Disaggregated() {
		return t.Replicas.String()
	}
	return fmt.Sprintf("%dP(%s) %dD(%s)", t.Prefill.Count, degrees(t.Prefill), t.Decode.Count, degrees(t.Decode))
}

// degrees is a pool's parallelism: "TP4", or "TP4PP2" when pipelined.
func degrees(p Pool) string {
	if p.Stages() > 1 {
		return fmt.Sprintf("TP%dPP%d", p.TP, p.Stages())
	}
	return fmt.Sprintf("TP%d", p.TP)
}
