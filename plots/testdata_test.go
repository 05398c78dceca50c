package plots

import (
	"math"

	"github.com/capsim/capsim/model"
)

// seedRow is one row of a benchmark table from
// /work/shared/seeds/004_40ae512a668d8e46.txt, typed in by hand: concurrency,
// request throughput (req/s), mean E2E, mean TTFT and mean TPOT (ms).
type seedRow struct{ conc, thr, e2e, ttft, tpot float64 }

// dynamo12P is "Dynamo 12P(TP1) 1D(TP4)", ISL:OSL=3000:150, on H20.
var dynamo12P = []seedRow{
	{1, 0.21, 4873.81, 1867.55, 20.18},
	{2, 0.4, 5046.74, 1738.9, 22.2},
	{4, 0.77, 5147.35, 1760.63, 22.73},
	{8, 1.48, 5374.36, 1774.09, 24.16},
	{16, 2.75, 5709.37, 1853.25, 25.88},
	{32, 4.36, 7139.62, 2703.36, 29.77},
	{64, 6.68, 9285.13, 4148.42, 34.49},
	{128, 6.91, 17832, 11960.22, 39.42},
}

// vllmV0 is "vLLM v0.8.4 V0 Engine", ISL:OSL=3000:150: concurrency 2 and 4
// are far below the trend, the kind of rows calibration flags.
var vllmV0 = []seedRow{
	{1, 0.22, 4535.58, 582.07, 26.53},
	{2, 0.33, 6044.37, 693.54, 35.91},
	{4, 0.35, 10466.54, 1339.94, 61.25},
	{8, 2.1, 3558.4, 527.28, 20.34},
	{16, 3.42, 4477.53, 671.45, 25.54},
	{32, 5.39, 5745.02, 837.37, 32.94},
	{64, 7.26, 8586.75, 1187.01, 49.66},
	{128, 9.15, 13690.92, 1617.73, 81.03},
}

// smoothFit is a made-up saturating curve standing in for the calibrated
// simulation: throughput levelling at maxThr, TTFT queueing beyond the knee.
func smoothFit(c, maxThr, ttft0, tpot0 float64) map[string]float64 {
	thr := maxThr * (1 - math.Exp(-c/(maxThr*3.2)))
	ttft := ttft0 * (1 + math.Pow(c/70, 3))
	tpot := tpot0 * (1 + c/200)
	return map[string]float64{
		model.RequestThroughput: thr,
		model.MeanTTFT:          ttft,
		model.MeanTPOT:          tpot,
		model.MeanE2EL:          ttft + 149*tpot,
	}
}

func measuredOf(r seedRow) map[string]float64 {
	return map[string]float64{
		model.RequestThroughput: r.thr,
		model.MeanTTFT:          r.ttft,
		model.MeanTPOT:          r.tpot,
		model.MeanE2EL:          r.e2e,
	}
}

// seedSeries turns rows into a series with the fitted curve at every
// measured point and, between them, at half-octave steps.
func seedSeries(title string, rows []seedRow, maxThr, ttft0, tpot0 float64, flagged map[float64]string) Series {
	s := Series{Title: title, Subtitle: "H20 · Qwen/Qwen3-32B · ISL:OSL = 3000:150", XLabel: XConcurrency}
	for _, r := range rows {
		reason, isFlagged := flagged[r.conc]
		s.Points = append(s.Points, Point{
			X: r.conc, Measured: measuredOf(r), Fitted: smoothFit(r.conc, maxThr, ttft0, tpot0),
			Flagged: isFlagged, FlagReason: reason,
		})
		mid := r.conc * math.Sqrt2
		if mid < rows[len(rows)-1].conc {
			s.Points = append(s.Points, Point{X: mid, Fitted: smoothFit(mid, maxThr, ttft0, tpot0)})
		}
	}
	return s
}

// realisticSeries are the two seed series, one with flagged points.
func realisticSeries() []Series {
	return []Series{
		seedSeries("Dynamo 12P(TP1) 1D(TP4) · 3000:150 · median error 6.2%", dynamo12P, 7.2, 1750, 20, nil),
		seedSeries("vLLM v0.8.4 V0 TP4 · 3000:150 · median error 9.8%", vllmV0, 9.8, 520, 19,
			map[float64]string{2: "throughput dip", 4: "throughput dip"}),
	}
}

// realisticPrediction is a prediction over concurrency 1…256 with a ±12%
// band on throughput and TTFT and the 12P seed overlaid as measurements.
func realisticPrediction() Prediction {
	pr := Prediction{
		Title:      "Dynamo 12P(TP1) 1D(TP4) on H20 · Qwen3-32B · 3000:150",
		Subtitle:   "predicted from calibrated prefill and decode costs",
		XLabel:     XConcurrency,
		Knee:       &Marker{X: 64, Label: "knee: 64 (6.5 req/s)"},
		TTFTBlowup: &Marker{X: 90, Label: "TTFT blow-up: 90"},
	}
	for c := 1.0; c <= 256; c *= math.Sqrt2 {
		m := smoothFit(c, 7.2, 1750, 20)
		lo, hi := map[string]float64{}, map[string]float64{}
		for _, k := range []string{model.RequestThroughput, model.MeanTTFT} {
			lo[k], hi[k] = m[k]*0.88, m[k]*1.12
		}
		pr.Points = append(pr.Points, PredPoint{X: c, Metrics: m, Lo: lo, Hi: hi})
	}
	for _, r := range dynamo12P {
		pr.Measured = append(pr.Measured, Point{X: r.conc, Measured: measuredOf(r)})
	}
	return pr
}
