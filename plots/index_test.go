package plots

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/capsim/capsim/model"
)

func ExampleWriteIndex() {
	entries := []IndexEntry{
		{File: "h20-dynamo-3000-150.png", Title: "H20 Dynamo 12P1D 3000:150", GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "dynamo-0.3.0",
			Errors: map[string]float64{model.RequestThroughput: 4.2, model.MeanTTFT: 11.8}},
		{File: "summary.png", Title: "Predicted against measured"},
	}
	var page bytes.Buffer
	if err := WriteIndex(&page, "capsim figures", entries); err != nil {
		fmt.Println(err)
		return
	}
	// Print the group headings and table rows only; the page also has a
	// head, a style sheet and the sorting script.
	for _, line := range strings.Split(page.String(), "\n") {
		if strings.HasPrefix(line, "<tr>") || strings.HasPrefix(line, "<h2>") {
			fmt.Println(line)
		}
	}
	// Output:
	// <h2>H20 · Qwen/Qwen3-32B · dynamo-0.3.0</h2>
	// <tr><th>figure</th><th>title</th><th class="sort">request throughput</th><th class="sort">mean TTFT</th></tr>
	// <tr><td><a href="h20-dynamo-3000-150.png"><img src="h20-dynamo-3000-150.png" alt="H20 Dynamo 12P1D 3000:150"></a></td><td><a href="h20-dynamo-3000-150.png">H20 Dynamo 12P1D 3000:150</a></td><td class="num" data-v="4.2">4.2%</td><td class="num" data-v="11.8">11.8%</td></tr>
	// <h2>all series</h2>
	// <tr><th>figure</th><th>title</th><th class="sort">request throughput</th><th class="sort">mean TTFT</th></tr>
	// <tr><td><a href="summary.png"><img src="summary.png" alt="Predicted against measured"></a></td><td><a href="summary.png">Predicted against measured</a></td><td class="num" data-v="">–</td><td class="num" data-v="">–</td></tr>
}

func TestWriteIndex(t *testing.T) {
	var page bytes.Buffer
	err := WriteIndex(&page, `a <b> & "c"`, []IndexEntry{
		{File: "x y.svg", Title: "<script>", Errors: map[string]float64{model.P99TPOT: 50, model.MeanTPOT: math.NaN(), model.MeanTTFT: 10}},
	})
	if err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{
		"<title>a &lt;b&gt; &amp; &#34;c&#34;</title>",
		`<a href="x%20y.svg">`,
		"&lt;script&gt;",
		// columns: default panels first, then other latencies by family
		`<th class="sort">mean TTFT</th><th class="sort">mean TPOT</th><th class="sort">p99 TPOT</th>`,
		`<td class="num" data-v="10">10.0%</td><td class="num" data-v="">–</td><td class="num" data-v="50">50.0%</td>`,
		"1 figure(s)",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("index lacks %q:\n%s", want, html)
		}
	}
	if strings.Count(html, "<script>") != 1 { // the page's own sorting script only
		t.Error("title not escaped")
	}
	if err := WriteIndex(failingWriter{}, "t", nil); err == nil || !strings.HasPrefix(err.Error(), "plots: ") {
		t.Errorf("write error: got %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestWriteIndexGroups lists entries under their GPU · model · engine, in
// first-appearance order, each group in its own sortable table.
func TestWriteIndexGroups(t *testing.T) {
	var page bytes.Buffer
	err := WriteIndex(&page, "figures", []IndexEntry{
		{File: "a.png", Title: "a", GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "vllm-0.9.0.1", Errors: map[string]float64{model.MeanTTFT: 20}},
		{File: "b.png", Title: "b", GPU: "L40S", Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: "vllm-0.10.1", Errors: map[string]float64{model.MeanTTFT: 5}},
		{File: "c.png", Title: "c", GPU: "H20", Model: "Qwen/Qwen3-32B", Engine: "vllm-0.9.0.1", Errors: map[string]float64{model.MeanTTFT: 90}},
	})
	if err != nil {
		t.Fatal(err)
	}
	html := page.String()
	h20 := strings.Index(html, "<h2>H20 · Qwen/Qwen3-32B · vllm-0.9.0.1</h2>")
	l40s := strings.Index(html, "<h2>L40S · meta-llama/Llama-3.1-8B-Instruct · vllm-0.10.1</h2>")
	a, b, c := strings.Index(html, `href="a.png"`), strings.Index(html, `href="b.png"`), strings.Index(html, `href="c.png"`)
	if !(h20 >= 0 && h20 < a && a < c && c < l40s && l40s < b) {
		t.Errorf("groups out of order: h20 %d a %d c %d l40s %d b %d", h20, a, c, l40s, b)
	}
	if got := strings.Count(html, "<tbody>"); got != 2 {
		t.Errorf("%d tables, want one per group (2)", got)
	}
	if !strings.Contains(html, `data-v="90">90.0%</td>`) || !strings.Contains(html, "th.sort") {
		t.Error("cells lack sortable values or the page lacks its sorting script")
	}
}
