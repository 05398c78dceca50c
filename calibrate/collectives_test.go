package calibrate

import (
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

// The collectives line names the link, the latency a step's all-reduce
// pays in a graph and eager, the bus bandwidth a large one reaches at the
// pool's TP, the fitted multiplier on both, and what the catalog assumed
// rather than measured: of the link, or of the GPU borrowing it.
func TestCollectivesNoteSaysWhatIsAssumed(t *testing.T) {
	for _, c := range []struct {
		gpu     string
		tp      int
		graphs  []int
		comm    float64
		want    []string
		assumed []string // "" entries: nothing assumed
	}{
		{"H100", 8, []int{1, 512}, 1, []string{"NVLink4 at TP8", "5.5 µs in a CUDA graph", "23.5 µs eager", "vLLM's measured curve to 4 MB", "445 GB/s bus bandwidth (interconnect catalog)"}, nil},
		{"H100", 4, nil, 1.08, []string{"23.3 µs eager (no CUDA graphs)", "350 GB/s bus bandwidth; all × 1.08 fitted"}, nil},
		{"H20", 4, []int{1, 128}, 1, []string{"NVLink4 at TP4"}, []string{"measured on H100s"}},
		{"L40S", 2, []int{1, 512}, 1, []string{"PCIe4 at TP2", "6.2 µs in a CUDA graph", "20.1 GB/s bus bandwidth"}, []string{"peer-to-peer", "sglang#39605"}},
		{"MI300X", 4, nil, 1, []string{"InfinityFabricMesh at TP4", "18.2 µs eager (no CUDA graphs)", "132 GB/s"}, []string{"measured at TP4 only"}},
		{"MI210", 2, nil, 1, []string{"InfinityFabric at TP2", "25.0 µs eager", " 35 GB/s"}, []string{"no MI210 or MI100 all-reduce measurement"}},
		{"V100", 4, nil, 1, []string{"PCIe3 at TP4", "19.2 µs eager", "9.4 GB/s"}, []string{"no 8-GPU PCIe 3.0 measurement"}},
	} {
		g, err := model.LookupGPU(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		got := collectivesNote(g, model.Pool{Count: 1, TP: c.tp}, c.graphs, c.comm)
		// NVLink 4 has a measured graph curve; PCIe and AMD's links do not.
		if strings.Contains(got, "measured curve") != (len(c.graphs) > 0 && (c.gpu == "H100" || c.gpu == "H20")) {
			t.Errorf("%s TP%d: %q: the graph curve said where the link has none, or not where it has", c.gpu, c.tp, got)
		}
		for _, w := range append(c.want, c.assumed...) {
			if !strings.Contains(got, w) {
				t.Errorf("%s TP%d: %q does not say %q", c.gpu, c.tp, got, w)
			}
		}
		if strings.Contains(got, "assumed") != (len(c.assumed) > 0) {
			t.Errorf("%s TP%d: %q: says assumed %v, want %v", c.gpu, c.tp, got, !(len(c.assumed) > 0), len(c.assumed) > 0)
		}
	}
	// A worker spanning servers all-reduces on the node network: the GPU's
	// note about its own link does not apply there.
	h20, _ := model.LookupGPU("H20")
	if got := collectivesNote(h20.AcrossNodes(2), model.Pool{Count: 1, TP: 16}, nil, 1); !strings.Contains(got, model.NodeNetwork) || strings.Contains(got, "H100s") {
		t.Errorf("H20 TP16 across two servers: %q", got)
	}
	if got := collectivesNote(model.GPU{}, model.Pool{Count: 1, TP: 1}, nil, 1); got != "" {
		t.Errorf("TP1 has no collectives, got %q", got)
	}
}
