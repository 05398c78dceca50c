package model

import "fmt"

// Notation formats the topology as the Dynamo write-ups and seed documents
// do: "6P(TP2) 1D(TP4)" when disaggregated, else as String ("4xTP4").
// ParseTopology reads it back.
func (t Topology) Notation() string {
	if !t.Disaggregated() {
		return t.Replicas.String()
	}
	return fmt.Sprintf("%dP(TP%d) %dD(TP%d)", t.Prefill.Count, t.Prefill.TP, t.Decode.Count, t.Decode.TP)
}
