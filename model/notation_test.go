package model

import "testing"

func TestTopologyNotation(t *testing.T) {
	tests := []struct{ in, want string }{
		{"4xTP4", "4xTP4"},
		{"2xTP4PP2", "2xTP4PP2"},
		{"prefill 6xTP2 + decode 1xTP4", "6P(TP2) 1D(TP4)"},
		{"12P(TP1) 1D(TP4)", "12P(TP1) 1D(TP4)"},
		{"prefill 2xTP4PP2 + decode 1xTP8", "2P(TP4PP2) 1D(TP8)"}, // pipeline parallelism kept
		{"3P(TP2) 1D(TP4PP2)", "3P(TP2) 1D(TP4PP2)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			topo, err := ParseTopology(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got := topo.Notation()
			if got != tt.want {
				t.Errorf("Notation() = %q, want %q", got, tt.want)
			}
			back, err := ParseTopology(got)
			if err != nil || back != topo {
				t.Errorf("ParseTopology(%q) = %v, %v; want %v back", got, back, err, topo)
			}
		})
	}
}
