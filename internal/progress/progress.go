package progress

import (
	"fmt"
	"io"
	"time"
)

// Meter prints progress lines to W. The zero Interval means one second.
type Meter struct {
	W        io.Writer
	Quiet    bool
	Interval time.Duration
	Now      func() time.Time // nil means time.Now

	label      string
	stageStart time.Time
	lastPrint  time.Time
	lastDone   int
}

// New returns a meter writing to w, silent when quiet.
func New(w io.Writer, quiet bool) *Meter { return &Meter{W: w, Quiet: quiet} }

func (m *Meter) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Update reports done of total steps of the stage named label. A new label
// starts a new stage (and its clock). Lines come at most every Interval,
// and always when done reaches total. The estimate of the time left is the
// stage's elapsed time per step times the steps left; it is shown once a
// step is done. total ≤ 0 means unknown: only the count and elapsed time.
func (m *Meter) Update(label string, done, total int) {
	if m == nil || m.Quiet || m.W == nil {
		return
	}
	now := m.now()
	if label != m.label {
		m.label, m.stageStart, m.lastPrint, m.lastDone = label, now, time.Time{}, -1
	}
	interval := m.Interval
	if interval <= 0 {
		interval = time.Second
	}
	final := total > 0 && done >= total
	if !final && !m.lastPrint.IsZero() && now.Sub(m.lastPrint) < interval {
		return
	}
	if done == m.lastDone && !m.lastPrint.IsZero() {
		return
	}
	m.lastPrint, m.lastDone = now, done
	fmt.Fprintln(m.W, Line(label, done, total, now.Sub(m.stageStart)))
}

// Printf writes a free-form line unless quiet.
func (m *Meter) Printf(format string, args ...any) {
	if m == nil || m.Quiet || m.W == nil {
		return
	}
	fmt.Fprintf(m.W, format+"\n", args...)
}

// Line formats one progress line: "fit H20 / Qwen3-32B: 3/12 (25%), 0:09
// elapsed, about 0:27 left".
func Line(label string, done, total int, elapsed time.Duration) string {
	if total <= 0 {
		return fmt.Sprintf("%s: %d done, %s elapsed", label, done, clock(elapsed))
	}
	total = max(total, done) // a total that was an upper bound, exceeded
	s := fmt.Sprintf("%s: %d/%d (%d%%), %s elapsed", label, done, total, 100*done/total, clock(elapsed))
	switch {
	case done >= total:
		s += ", done"
	case done > 0:
		left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
		s += ", about " + clock(left) + " left"
	}
	return s
}

// clock formats a duration as m:ss, or h:mm:ss from an hour up.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
