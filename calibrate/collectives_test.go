package calibrate

import (
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

// The collectives line names the link, the latency a step's all-reduce
// pays in a graph and eager, the bus bandwidth a large one reaches at the
// pool's TP, and any figure the catalog assumed rather than measured.
func TestCollectivesNoteSaysWhatIsAssumed(t *testing.T) {
	for _, c := range []struct {
		gpu      string
		tp       int
		want     []string
		assumed  bool
		graphMax []int
	}{
		{"H100", 8, []string{"NVLink4 at TP8", "5.5 µs in a CUDA graph", "23.5 µs eager", "445 GB/s bus bandwidth"}, false, []int{1, 512}},
		{"L40S", 2, []string{"PCIe4 at TP2", "6.2 µs in a CUDA graph", "20 GB/s bus bandwidth"}, true, []int{1, 512}},
		{"MI300X", 4, []string{"InfinityFabric at TP4", "18.2 µs eager (no CUDA graphs)", "132 GB/s"}, true, nil},
	} {
		g, err := model.LookupGPU(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		got := collectivesNote(g, model.Pool{Count: 1, TP: c.tp}, c.graphMax, 1)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s TP%d: %q does not say %q", c.gpu, c.tp, got, w)
			}
		}
		if strings.Contains(got, "assumed") != c.assumed {
			t.Errorf("%s TP%d: %q: says assumed %v, want %v", c.gpu, c.tp, got, !c.assumed, c.assumed)
		}
	}
	if got := collectivesNote(model.GPU{}, model.Pool{Count: 1, TP: 1}, nil, 1); got != "" {
		t.Errorf("TP1 has no collectives, got %q", got)
	}
}
