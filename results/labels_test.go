package results

import "testing"

func TestDeploymentLabel(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		want     string
	}{
		{"none", nil, ""},
		{"deployment", map[string]string{"deployment": "no-features"}, "no-features"},
		{"preset", map[string]string{"preset": "gpu-small"}, "gpu-small"},
		{"deployment wins over preset", map[string]string{"preset": "gpu-small", "deployment": "base"}, "base"},
		{"empty deployment falls back", map[string]string{"deployment": "", "preset": "gpu-small"}, "gpu-small"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Record{System: System{Settings: tt.settings}}
			if got := r.DeploymentLabel(); got != tt.want {
				t.Errorf("DeploymentLabel() = %q, want %q", got, tt.want)
			}
		})
	}
}
