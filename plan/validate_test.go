package plan

import (
	"errors"
	"testing"

	"github.com/capsim/capsim/internal/optionerr"
	"github.com/capsim/capsim/model"
)

// Validate names the field at fault in a typed error, so that a command
// line calls it by its flag without editing the message.
func TestValidateNamesTheField(t *testing.T) {
	if err := h20Options(t, 4, "ttft_p99=2000ms").withDefaults().Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	tests := []struct {
		edit   func(*Options)
		fields []string
		msg    string
	}{
		{func(o *Options) { o.MaxGPUs = 0 }, []string{"MaxGPUs"}, "plan: max GPUs must be positive, got 0"},
		{func(o *Options) { o.TopK = MaxTopK + 1 }, []string{"TopK"}, "plan: top K must be from 1 to 100, got 101"},
		{func(o *Options) { o.TPs = []int{2, -1} }, []string{"TPs"}, "plan: TP degrees: -1 is not a positive integer"},
		{func(o *Options) { o.Workload.OSL = 0 }, []string{"ISL", "OSL"}, "plan: ISL and OSL are required and must be positive"},
		{func(o *Options) { o.Workload.Load = model.Load{} }, []string{"Rate", "Concurrency"}, "plan: give the target load: a rate R (req/s) or a concurrency N"},
		{func(o *Options) { o.Confidence = 1 }, []string{"Confidence"}, "plan: confidence must be between 0 and 1 (exclusive), got 1"},
		{func(o *Options) { o.SLOs = nil }, []string{"SLOs"}, "plan: an SLO is required, e.g. ttft_p99=2000ms,tpot_p99=50ms"},
		{func(o *Options) { o.KVLink = "NVLink3" }, []string{"KVLink"}, "plan: KV link: NVLink3 is not H20's link (NVLink4 within a server; RDMA400, RDMA200 or Ethernet between servers)"},
		{func(o *Options) { o.KVLink = "ib" }, []string{"KVLink"}, "plan: KV link: unknown link \"ib\" (want a GPU's own link such as NVLink4, or RDMA400, RDMA200 or Ethernet)"},
		{func(o *Options) { o.KVLink, o.Aggregated, o.Disaggregated = "RDMA400", true, false }, []string{"KVLink"}, "plan: KV link applies to disaggregated deployments, and the search is of aggregated ones only"},
	}
	for _, tc := range tests {
		o := h20Options(t, 4, "ttft_p99=2000ms").withDefaults()
		tc.edit(&o)
		err := o.Validate()
		e, ok := optionerr.As(err)
		if !ok || err.Error() != tc.msg {
			t.Errorf("error %v (typed %v), want %q", err, ok, tc.msg)
			continue
		}
		var got []string
		for _, f := range e.Fields {
			got = append(got, f.Name)
		}
		if len(got) != len(tc.fields) || got[0] != tc.fields[0] || got[len(got)-1] != tc.fields[len(tc.fields)-1] {
			t.Errorf("%q names %v, want %v", tc.msg, got, tc.fields)
		}
	}
	if err := (Options{MaxGPUs: MaxGPUsLimit + 1}); err.Validate() == nil {
		t.Error("no model, too many GPUs: no error")
	}
	o := h20Options(t, 4, "ttft_p99=2000ms").withDefaults()
	o.MaxGPUs = MaxGPUsLimit + 1
	if err := o.Validate(); !errors.Is(err, ErrTooManyGPUs) {
		t.Errorf("MaxGPUs above the limit: %v, want ErrTooManyGPUs", err)
	}
	if _, err := ParseGPUCosts("H20"); err == nil {
		t.Error("GPU cost without a price: no error")
	} else if e, ok := optionerr.As(err); !ok || e.Fields[0].Name != "GPUCost" {
		t.Errorf("GPU cost without a price: %v, want a typed error naming GPUCost", err)
	}
}
