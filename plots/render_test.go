package plots

import (
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/capsim/capsim/model"
)

var renderDir = flag.String("render", "", "write the realistic test figures as PNG and SVG into this directory, to look at them")

// TestRenderRealistic writes the realistic figures for a person to inspect;
// it is skipped unless -render is given.
func TestRenderRealistic(t *testing.T) {
	if *renderDir == "" {
		t.Skip("no -render directory")
	}
	figs := map[string]*Figure{"prediction": PredictionFigure(realisticPrediction())}
	var pairs []Pair
	for i, s := range realisticSeries() {
		figs[fmt.Sprintf("series%d", i)] = SeriesFigure(s)
		for _, p := range s.Points {
			for m, v := range p.Measured {
				pairs = append(pairs, Pair{Metric: m, Measured: v, Predicted: p.Fitted[m]})
			}
		}
	}
	pairs = append(pairs, Pair{Metric: model.P99TTFT, Measured: 3000, Predicted: 2600}, Pair{Metric: model.MeanTTFT, Measured: 0, Predicted: 10})
	figs["summary"] = SummaryFigure(Summary{Title: "Predicted against measured, all series", Pairs: pairs})
	figs["edge_single"] = SeriesFigure(Series{Title: "single point", Points: []Point{{X: 8, Measured: all4(1.5, 300, 20, 3300), Fitted: all4(1.4, 310, 21, 3400)}}})
	figs["edge_zero"] = SeriesFigure(Series{Title: "zero values", Points: []Point{{X: 1, Measured: all4(0, 0, 0, 0), Fitted: all4(0, 0, 0, 0)}, {X: 2, Measured: all4(0, 0, 0, 0)}}})
	figs["edge_partial"] = SeriesFigure(Series{Title: "throughput only, narrow range", Points: []Point{
		{X: 3, Measured: map[string]float64{model.RequestThroughput: 1}}, {X: 5, Measured: map[string]float64{model.RequestThroughput: 1.6}}}})
	figs["edge_rate"] = SeriesFigure(Series{Title: "open loop", XLabel: XRequestRate, Points: []Point{
		{X: 0.25, Measured: all4(0.25, 200, 20, 3000)}, {X: 0.5, Measured: all4(0.5, 210, 20, 3010)},
		{X: 1.5, Measured: all4(1.45, 260, 23, 3500)}, {X: 6, Measured: all4(3.9, 900, 30, 5000)}}})
	for name, f := range figs {
		for _, ext := range []string{"png", "svg"} {
			if err := f.Save(filepath.Join(*renderDir, name+"."+ext)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
