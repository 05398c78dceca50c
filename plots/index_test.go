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
		{File: "h20-dynamo-3000-150.png", Title: "H20 Dynamo 12P1D 3000:150",
			Errors: map[string]float64{model.RequestThroughput: 4.2, model.MeanTTFT: 11.8}},
		{File: "summary.png", Title: "Predicted against measured"},
	}
	var page bytes.Buffer
	if err := WriteIndex(&page, "capsim figures", entries); err != nil {
		fmt.Println(err)
		return
	}
	// Print the table rows only; the page also has a head and a style sheet.
	for _, line := range strings.Split(page.String(), "\n") {
		if strings.HasPrefix(line, "<tr>") {
			fmt.Println(line)
		}
	}
	// Output:
	// <tr><th>figure</th><th>title</th><th>request throughput</th><th>mean TTFT</th></tr>
	// <tr><td><a href="h20-dynamo-3000-150.png"><img src="h20-dynamo-3000-150.png" alt="H20 Dynamo 12P1D 3000:150"></a></td><td><a href="h20-dynamo-3000-150.png">H20 Dynamo 12P1D 3000:150</a></td><td class="num">4.2%</td><td class="num">11.8%</td></tr>
	// <tr><td><a href="summary.png"><img src="summary.png" alt="Predicted against measured"></a></td><td><a href="summary.png">Predicted against measured</a></td><td class="num">–</td><td class="num">–</td></tr>
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
		"<th>mean TTFT</th><th>mean TPOT</th><th>p99 TPOT</th>",
		`<td class="num">10.0%</td><td class="num">–</td><td class="num">50.0%</td>`,
		"1 figure(s)",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("index lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "<script>") {
		t.Error("title not escaped")
	}
	if err := WriteIndex(failingWriter{}, "t", nil); err == nil || !strings.HasPrefix(err.Error(), "plots: ") {
		t.Errorf("write error: got %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }
