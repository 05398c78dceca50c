package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	tests := []struct {
		done, total int
		elapsed     time.Duration
		want        string
	}{
		{0, 12, 0, "fit: 0/12 (0%), 0:00 elapsed"},
		{3, 12, 9 * time.Second, "fit: 3/12 (25%), 0:09 elapsed, about 0:27 left"},
		{12, 12, 40 * time.Second, "fit: 12/12 (100%), 0:40 elapsed, done"},
		{5, 0, 61 * time.Second, "fit: 5 done, 1:01 elapsed"},
		{1, 100, 40 * time.Second, "fit: 1/100 (1%), 0:40 elapsed, about 1:06:00 left"},
		{41, 40, time.Second, "fit: 41/41 (100%), 0:01 elapsed, done"},
	}
	for _, tt := range tests {
		if got := Line("fit", tt.done, tt.total, tt.elapsed); got != tt.want {
			t.Errorf("Line(%d, %d, %v) = %q, want %q", tt.done, tt.total, tt.elapsed, got, tt.want)
		}
	}
}

func TestMeterThrottlesAndQuiet(t *testing.T) {
	var buf bytes.Buffer
	clockNow := time.Unix(0, 0)
	m := &Meter{W: &buf, Interval: time.Second, Now: func() time.Time { return clockNow }}
	for i := 0; i <= 10; i++ {
		m.Update("simulate", i, 10)
		clockNow = clockNow.Add(300 * time.Millisecond)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// t=0 (0/10), t=1.2s (4/10), t=2.4s (8/10), and the final 10/10.
	if len(lines) != 4 || !strings.HasSuffix(lines[3], "done") || !strings.HasPrefix(lines[1], "simulate: 4/10") {
		t.Errorf("lines:\n%s", buf.String())
	}
	buf.Reset()
	q := &Meter{W: &buf, Quiet: true}
	q.Update("x", 1, 2)
	q.Printf("note %d", 1)
	if buf.Len() != 0 {
		t.Errorf("quiet meter wrote %q", buf.String())
	}
}
