package series

import (
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// Series is one configuration × workload shape of one source: records of
// one file and section, system (GPU, model, engine, topology, settings),
// nominal shape and kind of load, in the order the source gives them.
type Series struct {
	Key     string
	Kind    model.LoadKind
	Records []*results.Record
}

// First is the series' first record, which names its configuration.
func (s *Series) First() *results.Record { return s.Records[0] }

// Group groups records into series in first-seen order.
func Group(recs []results.Record) []*Series {
	var out []*Series
	idx := map[string]*Series{}
	for i := range recs {
		r := &recs[i]
		k := results.SeriesKey(r)
		s, ok := idx[k]
		if !ok {
			s = &Series{Key: k, Kind: r.Workload.Load.Kind}
			idx[k] = s
			out = append(out, s)
		}
		s.Records = append(s.Records, r)
	}
	return out
}

// Requested is the shape a user would ask for to repeat a record: capsim
// bench's own capsim_isl / capsim_osl fields, else the stated maxima, else
// the measured means.
func Requested(r *results.Record) (isl, osl float64) {
	isl, osl = r.Workload.ISL, r.Workload.OSL
	if r.Workload.ISLMax > 0 {
		isl = float64(r.Workload.ISLMax)
	}
	if r.Workload.OSLMax > 0 {
		osl = float64(r.Workload.OSLMax)
	}
	if v, ok := r.Metrics["capsim_isl"]; ok && v > 0 {
		isl = v
	}
	if v, ok := r.Metrics["capsim_osl"]; ok && v > 0 {
		osl = v
	}
	return isl, osl
}

// X is a record's place on the load axis: concurrency for closed loop,
// rate for open loop, the prompts sent at once for a burst (0 when the
// source does not say).
func X(r *results.Record) float64 {
	if r.Workload.Load.Kind == model.Burst {
		return float64(r.Workload.NumPrompts)
	}
	return r.Workload.Load.X()
}
