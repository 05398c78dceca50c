package figures

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/plots"
	"github.com/capsim/capsim/predict"
	"github.com/capsim/capsim/results"
)

// WritePrediction draws predicted curves in the format path's extension
// names (.png or .svg): the band shaded, the knee and TTFT blow-up marked,
// and the records of recs with the same GPU, model, engine, topology and
// shape overlaid; from says where recs come from ("the fixtures and the
// profile's sources"), for the figure to name when none matches. Several
// shapes give one file each, path with "-islI-oslO" before the extension.
func WritePrediction(path string, preds []predict.Prediction, recs []results.Record, from string) error {
	if len(preds) == 0 {
		return fmt.Errorf("figures: no prediction to plot")
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("figures: %s: want a .png or .svg file name", path)
	}
	for _, p := range preds {
		file := path
		if len(preds) > 1 {
			file = strings.TrimSuffix(path, filepath.Ext(path)) + fmt.Sprintf("-isl%d-osl%d", p.ISL, p.OSL) + filepath.Ext(path)
		}
		if err := plots.PredictionFigure(predictionInput(p, recs, from)).Save(file); err != nil {
			return err
		}
	}
	return nil
}

// predictionInput turns a prediction into the plots package's input, with
// the measured records that match it as an overlay.
func predictionInput(p predict.Prediction, recs []results.Record, from string) plots.Prediction {
	kind := model.ClosedLoop
	if len(p.Points) > 0 {
		kind = p.Points[0].Load.Kind
	}
	out := plots.Prediction{
		Title:  fmt.Sprintf("%s on %d× %s · %s · %s — ISL %d / OSL %d", model.ShortName(p.Model), p.GPUs, p.GPU, p.Engine, p.Topology, p.ISL, p.OSL),
		XLabel: plots.XLabelFor(kind),
		P99:    true,
	}
	for _, pt := range p.Points {
		x, ok := plots.LoadX(pt.Load)
		if !ok {
			continue // a burst has no place on a log axis
		}
		out.Points = append(out.Points, plots.PredPoint{X: x, Metrics: pt.Metrics, Lo: pt.Lo, Hi: pt.Hi})
	}
	if x, ok := plots.LoadX(p.Knee.Load); ok {
		out.Knee = &plots.Marker{X: x, Label: fmt.Sprintf("knee: %s (%.2f req/s)", p.Knee.Load.Label(), p.Knee.RequestThroughput)}
	}
	if x, ok := plots.LoadX(p.Blowup.Load); ok && p.Blowup.Found {
		out.TTFTBlowup = &plots.Marker{X: x, Label: fmt.Sprintf("TTFT blow-up: %s (%.0f ms)", p.Blowup.Load.Label(), p.Blowup.MeanTTFTms)}
	}
	sub := []string{"bottleneck: " + p.Bottleneck.Resource}
	if len(p.Points) > 0 && p.Points[0].Lo != nil {
		sub = append(sub, "band: costs ±1σ")
	}
	var sources []string
	for _, r := range predict.Matching(p, recs) {
		if pt, ok := plots.PointFromRecord(r); ok {
			out.Measured = append(out.Measured, pt)
			if name := filepath.Base(r.Source.File); !slices.Contains(sources, name) {
				sources = append(sources, name)
			}
		}
	}
	if len(sources) > 0 {
		sub = append(sub, fmt.Sprintf("measured: %d points from %s", len(out.Measured), strings.Join(sources, ", ")))
	} else {
		sub = append(sub, "no measurements of this configuration in "+from)
	}
	out.Subtitle = strings.Join(sub, " · ")
	return out
}
