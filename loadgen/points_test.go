package loadgen

import (
	"context"
	"errors"
	"testing"

	"github.com/capsim/capsim/model"
)

// RunPoints says which load point it stopped at in a typed error, so a
// caller can name it without reading the message.
func TestRunPointsNamesThePoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	loads := []model.Load{model.Closed(3), model.Closed(5)}
	_, err := RunPoints(ctx, Options{URL: "http://127.0.0.1:1", Model: "m", ISL: 4, OSL: 2, NumPrompts: 2}, loads, nil, nil)
	var p *PointError
	if !errors.As(err, &p) || p.Load != loads[0] || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v: want a *PointError at %s wrapping context.Canceled", err, loads[0])
	}
	if want := "loadgen: during concurrency 3: " + p.Err.Error(); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
