package plan

import (
	"math"
	"strconv"
	"strings"

	"github.com/capsim/capsim/internal/optionerr"
	"github.com/capsim/capsim/model"
)

// ParseGPUCosts reads GPU prices per GPU-hour, "H20=1.9,H200=3.5", keyed by
// the catalog's GPU names.
func ParseGPUCosts(list string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		name, price, ok := strings.Cut(f, "=")
		p, err := strconv.ParseFloat(strings.TrimSpace(price), 64)
		if !ok || err != nil || !(p > 0) || math.IsInf(p, 0) {
			return nil, invalid("%s %q: want GPU=PRICE with a positive price per GPU-hour, e.g. H20=1.9", []optionerr.Field{fieldGPUCost}, f)
		}
		g, err := model.LookupGPU(name)
		if err != nil {
			return nil, err
		}
		out[g.Name] = p
	}
	return out, nil
}
