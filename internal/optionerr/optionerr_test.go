package optionerr

import (
	"fmt"
	"testing"
)

func TestText(t *testing.T) {
	e := New("plan: ", []Field{{"ISL", "ISL"}, {"OSL", "OSL"}}, "%s and %s must be positive, got %d", -1)
	if got := e.Error(); got != "plan: ISL and OSL must be positive, got -1" {
		t.Errorf("Error() = %q", got)
	}
	flags := map[string]string{"ISL": "--isl"}
	if got := e.Text(func(f string) string { return flags[f] }); got != "--isl and OSL must be positive, got -1" {
		t.Errorf("Text(flags) = %q", got)
	}
	wrapped := fmt.Errorf("outer: %w", e)
	if got, ok := As(wrapped); !ok || got != e {
		t.Errorf("As(%v) = %v, %v", wrapped, got, ok)
	}
}
