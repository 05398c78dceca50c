package plots

import (
	"bytes"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// renderSVG renders f twice and fails unless both renderings are identical.
func renderSVG(t *testing.T, f *Figure) string {
	t.Helper()
	var a, b bytes.Buffer
	if err := f.Render(&a, "svg"); err != nil {
		t.Fatal(err)
	}
	if err := f.Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	if a.Len() == 0 {
		t.Fatal("empty SVG")
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two renderings of the same figure differ")
	}
	return a.String()
}

func hex(c color.RGBA) string { return fmt.Sprintf("%02X%02X%02X", c.R, c.G, c.B) }

// filledCircles counts filled circles of the given radius and colour: vgsvg
// writes each as one path of two half-circle arcs.
func filledCircles(svg, radius string, c color.RGBA) int {
	arc := `A` + radius + `,` + radius + ` 0 1 1 [0-9.,-]+`
	re := regexp.MustCompile(arc + arc + `Z" style="fill:#` + hex(c) + `"`)
	return len(re.FindAllString(svg, -1))
}

// rings counts hollow circles of the given radius and colour.
func rings(svg, radius string, c color.RGBA) int {
	arc := `A` + radius + `,` + radius + ` 0 1 1 [0-9.,-]+`
	re := regexp.MustCompile(arc + arc + `Z" style="fill:none;stroke:#` + hex(c) + `;stroke-width:0.5"`)
	return len(re.FindAllString(svg, -1))
}

// crosses counts flagged markers (two strokes each), legend icon included.
func crosses(svg string) int {
	return strings.Count(svg, "stroke:#"+hex(flagColor)+";stroke-width:1.6\"") / 2
}

// texts returns every text element's content.
func texts(svg string) []string {
	re := regexp.MustCompile(`(?s)<text[^>]*>([^<]*)</text>`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

func countText(svg, s string) int {
	n := 0
	for _, t := range texts(svg) {
		if t == s {
			n++
		}
	}
	return n
}

func all4(thr, ttft, tpot, e2e float64) map[string]float64 {
	return map[string]float64{model.RequestThroughput: thr, model.MeanTTFT: ttft, model.MeanTPOT: tpot, model.MeanE2EL: e2e}
}

func TestSeriesFigure(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	real := realisticSeries()
	tests := []struct {
		name string
		s    Series
		// circles are the measured markers expected per panel metric.
		circles map[string]int
		crosses int // flagged markers, legend icon included
		rings   int // single-point fitted curves
		noData  int
		present []string // texts that must appear
		absent  []string // texts that must not
	}{
		{
			name:    "seed series",
			s:       real[0],
			circles: map[string]int{model.RequestThroughput: 8, model.MeanTTFT: 8, model.MeanTPOT: 8, model.MeanE2EL: 8},
			present: []string{real[0].Title, real[0].Subtitle, "concurrency", "request throughput (req/s)", "mean TTFT (ms)", "mean TPOT (ms)", "mean E2E latency (ms)", "measured", "calibrated simulation", "128"},
			absent:  []string{"flagged (kept in the fit, down-weighted)", "no data"},
		},
		{
			name:    "flagged points drawn as crosses",
			s:       real[1],
			circles: map[string]int{model.RequestThroughput: 6, model.MeanTTFT: 6, model.MeanTPOT: 6, model.MeanE2EL: 6},
			crosses: 2*4 + 1,
			present: []string{"flagged (kept in the fit, down-weighted)", "flagged: x=2, 4 (throughput dip)"},
		},
		{
			name:    "single point",
			s:       Series{Title: "one", Points: []Point{{X: 8, Measured: all4(1.5, 300, 20, 3300), Fitted: all4(1.4, 310, 21, 3400)}}},
			circles: map[string]int{model.RequestThroughput: 1, model.MeanTTFT: 1, model.MeanTPOT: 1, model.MeanE2EL: 1},
			rings:   4,
			present: []string{"8"},
		},
		{
			name: "zero values still plot",
			s: Series{Title: "zeros", Points: []Point{
				{X: 1, Measured: all4(0, 0, 0, 0), Fitted: all4(0, 0, 0, 0)},
				{X: 2, Measured: all4(0, 0, 0, 0)},
			}},
			circles: map[string]int{model.RequestThroughput: 2, model.MeanTTFT: 2, model.MeanTPOT: 2, model.MeanE2EL: 2},
			rings:   4,
		},
		{
			name: "NaN, Inf and non-positive loads skipped",
			s: Series{Title: "bad values", Points: []Point{
				{X: 1, Measured: all4(nan, inf, 20, 3000)},
				{X: 2, Measured: all4(0.5, 400, math.Inf(-1), 3100), Fitted: all4(nan, 410, 21, 3050)},
				{X: 4, Measured: all4(0.9, 420, 22, nan), Fitted: all4(0.95, 430, 22, 3200)},
				{X: nan, Measured: all4(1, 1, 1, 1)},
				{X: 0, Measured: all4(1, 1, 1, 1)},
				{X: -4, Measured: all4(1, 1, 1, 1), Flagged: true},
				{X: inf, Measured: all4(1, 1, 1, 1)},
			}},
			circles: map[string]int{model.RequestThroughput: 2, model.MeanTTFT: 2, model.MeanTPOT: 2, model.MeanE2EL: 2},
			rings:   1, // request throughput has one valid fitted value
			absent:  []string{"no data", "flagged (kept in the fit, down-weighted)"},
		},
		{
			name:   "no points: every panel says no data",
			s:      Series{Title: "empty"},
			noData: 4,
			absent: []string{"measured", "calibrated simulation"},
		},
		{
			name: "missing metrics leave their panels empty",
			s: Series{Title: "throughput only", Points: []Point{
				{X: 1, Measured: map[string]float64{model.RequestThroughput: 1}},
				{X: 2, Measured: map[string]float64{model.RequestThroughput: 1.9}},
			}},
			circles: map[string]int{model.RequestThroughput: 2},
			noData:  3,
		},
		{
			name: "fractional request rates",
			s: Series{Title: "open loop", XLabel: XRequestRate, Points: []Point{
				{X: 0.25, Measured: all4(0.25, 200, 20, 3000)},
				{X: 0.5, Measured: all4(0.5, 210, 20, 3010)},
				{X: 1.5, Measured: all4(1.45, 260, 23, 3500)},
				{X: 6, Measured: all4(3.9, 900, 30, 5000)},
			}},
			circles: map[string]int{model.RequestThroughput: 4, model.MeanTTFT: 4, model.MeanTPOT: 4, model.MeanE2EL: 4},
			present: []string{"request rate (req/s)", "0.25", "0.5", "1", "2", "4"},
			absent:  []string{"concurrency"},
		},
		{
			name: "narrow load range",
			s: Series{Title: "3 to 5", Points: []Point{
				{X: 3, Measured: all4(1, 200, 20, 3000)},
				{X: 5, Measured: all4(1.6, 230, 21, 3100)},
			}},
			circles: map[string]int{model.RequestThroughput: 2, model.MeanTTFT: 2, model.MeanTPOT: 2, model.MeanE2EL: 2},
		},
		{
			name: "chosen metrics",
			s: Series{Title: "p99", Metrics: []string{model.P99TTFT}, Points: []Point{
				{X: 1, Measured: map[string]float64{model.P99TTFT: 500}},
				{X: 2, Measured: map[string]float64{model.P99TTFT: 650}},
			}},
			circles: map[string]int{model.P99TTFT: 2},
			present: []string{"p99 TTFT", "p99 TTFT (ms)"},
			absent:  []string{"mean TTFT"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svg := renderSVG(t, SeriesFigure(tc.s))
			metrics := tc.s.Metrics
			if metrics == nil {
				metrics = DefaultPanels
			}
			for _, m := range metrics {
				if got, want := filledCircles(svg, "3", MetricColor(m)), tc.circles[m]; got != want {
					t.Errorf("%s: %d measured markers, want %d", m, got, want)
				}
			}
			if got := crosses(svg); got != tc.crosses {
				t.Errorf("%d flagged markers, want %d", got, tc.crosses)
			}
			gotRings := 0
			for _, m := range metrics {
				gotRings += rings(svg, "5", MetricColor(m))
			}
			if gotRings != tc.rings {
				t.Errorf("%d single-point curves, want %d", gotRings, tc.rings)
			}
			if got := countText(svg, "no data"); got != tc.noData {
				t.Errorf("%d empty panels, want %d", got, tc.noData)
			}
			if tc.s.Title != "" && countText(svg, tc.s.Title) != 1 {
				t.Errorf("title %q not drawn once", tc.s.Title)
			}
			for _, s := range tc.present {
				if countText(svg, s) == 0 {
					t.Errorf("text %q missing; texts: %q", s, texts(svg))
				}
			}
			for _, s := range tc.absent {
				if countText(svg, s) != 0 {
					t.Errorf("text %q should not be drawn", s)
				}
			}
		})
	}
}

// TestSeriesFigureGolden pins the whole SVG of the seed series; run with
// -update after an intended change and look at the figure.
func TestSeriesFigureGolden(t *testing.T) {
	svg := renderSVG(t, SeriesFigure(realisticSeries()[1]))
	path := filepath.Join("testdata", "series_vllm_v0.svg")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(svg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if svg != string(want) {
		t.Errorf("SVG differs from %s; rerun with -update if the change is intended", path)
	}
}

func TestRenderFormats(t *testing.T) {
	f := SeriesFigure(realisticSeries()[0])
	var png bytes.Buffer
	if err := f.Render(&png, "png"); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG\r\n\x1a\n")) || png.Len() < 10000 {
		t.Errorf("PNG output is %d bytes starting %q", png.Len(), png.Bytes()[:min(8, png.Len())])
	}
	var svg bytes.Buffer
	if err := f.Render(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svg.String(), "<?xml") || !strings.Contains(svg.String(), "</svg>") {
		t.Error("SVG output is not a complete SVG document")
	}
	if err := f.Render(&svg, "pdf"); err == nil || !strings.HasPrefix(err.Error(), "plots: ") {
		t.Errorf("pdf: got error %v, want a plots: unsupported format error", err)
	}

	dir := t.TempDir()
	for _, name := range []string{"a.png", "b.SVG"} {
		if err := f.Save(filepath.Join(dir, name)); err != nil {
			t.Errorf("Save(%s): %v", name, err)
		}
	}
	if err := f.Save(filepath.Join(dir, "c.gif")); err == nil || !strings.Contains(err.Error(), "c.gif") {
		t.Errorf("Save(c.gif): got %v, want an error naming the file", err)
	}
	if err := f.Save(filepath.Join(dir, "missing", "d.png")); err == nil {
		t.Error("Save into a missing directory: no error")
	}
}

func BenchmarkSeriesFigureSVG(b *testing.B) {
	s := realisticSeries()[1]
	for b.Loop() {
		var buf bytes.Buffer
		if err := SeriesFigure(s).Render(&buf, "svg"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSeriesFigurePNG(b *testing.B) {
	s := realisticSeries()[1]
	for b.Loop() {
		var buf bytes.Buffer
		if err := SeriesFigure(s).Render(&buf, "png"); err != nil {
			b.Fatal(err)
		}
	}
}
