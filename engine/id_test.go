package engine

import "testing"

// Major differences outweigh minor ones, minor ones patches; an unknown
// version is far from any known one.
func TestDistance(t *testing.T) {
	v := func(s string) []int { return Parse("x-" + s).Version }
	if !(Distance(v("0.9.1"), v("0.9.0")) < Distance(v("0.8.0"), v("0.9.0")) &&
		Distance(v("0.8.0"), v("0.9.0")) < Distance(v("1.9.0"), v("0.9.0")) &&
		Distance(v("1.9.0"), v("0.9.0")) < Distance(nil, v("0.9.0"))) {
		t.Error("distance order wrong")
	}
	if Distance(nil, nil) != 0 || Distance(v("0.9.0.1"), v("0.9.0.2")) != 0 {
		t.Error("want 0 between two unknown versions and past the third number")
	}
}

func TestMinorAndDefaultLabel(t *testing.T) {
	for label, want := range map[string]string{"vllm-0.9.0.1": "0.9", "dynamo-0.3": "0.3", "vllm-1": "1", "vllm": ""} {
		if got := Parse(label).Minor(); got != want {
			t.Errorf("Minor(%s) = %q, want %q", label, got, want)
		}
	}
	if DefaultLabel(false) != VLLM || DefaultLabel(true) != Dynamo {
		t.Error("default engines: want vllm aggregated, dynamo disaggregated")
	}
}

func TestSGLangAutoDP(t *testing.T) {
	for label, want := range map[string]bool{"sglang-0.4.0": true, "sglang-0.4.3.post2": true, "sglang-0.4.4": false, "sglang": false, "vllm-0.4.1": false} {
		if got := Parse(label).SGLangAutoDP(); got != want {
			t.Errorf("%s: %v, want %v", label, got, want)
		}
	}
}

func TestAsGeneration(t *testing.T) {
	tests := []struct {
		label string
		gen   Generation
		want  string
		ok    bool
	}{
		{"vllm-0.9.0.1", "v0", "vllm-0.7.3", true},
		{"vllm-0.10.2", GenV0, "vllm-0.7.3", true},
		{"vllm-0.11.0", GenV0, "vllm-0.11.0", false}, // V0 was gone
		{"vllm-0.19.1", GenV0, "vllm-0.19.1", false},
		{"vllm-0.7.2", "v1", "vllm-0.8.0", true},
		{"vllm", "v0", "vllm-0.7.3", true},
		{"vllm-0.9.0.1", "v1", "vllm-0.9.0.1", false}, // its own generation
		{"vllm-0.9.0.1", "", "vllm-0.9.0.1", false},
		{"sglang-0.4.6", "v0", "sglang-0.4.6", false},
	}
	for _, tt := range tests {
		id, ok := Parse(tt.label).AsGeneration(tt.gen)
		if id.String() != tt.want || ok != tt.ok {
			t.Errorf("%s as %q: %s %v, want %s %v", tt.label, tt.gen, id, ok, tt.want, tt.ok)
		}
	}
}

func TestSettingKey(t *testing.T) {
	for in, want := range map[string]string{"Max_Num_Seqs": "max-num-seqs", " block-size ": "block-size", "decode.Enforce_Eager": "decode.enforce-eager"} {
		if got := SettingKey(in); got != want {
			t.Errorf("SettingKey(%q) = %q, want %q", in, got, want)
		}
	}
	if role, k := SplitRole("prefill.block-size"); role != "prefill" || k != "block-size" {
		t.Errorf("SplitRole: %q %q", role, k)
	}
	if role, k := SplitRole("block-size"); role != "" || k != "block-size" {
		t.Errorf("SplitRole: %q %q", role, k)
	}
}

// Dynamo 0.3 serves vLLM 0.8.4; a label without a version, an unknown
// family or a release without a flag table cannot be deployed.
func TestServe(t *testing.T) {
	s, err := Serve("dynamo-0.3.0")
	if err != nil || s.VLLM != "0.8.4" || s.Dynamo != "0.3.0" || s.Image() != "dynamo:v0.3.0-vllm" || !s.HasFlag("--kv-transfer-config") {
		t.Errorf("dynamo-0.3.0: %+v %v", s, err)
	}
	if s, err := Serve("vllm-0.9.0.1"); err != nil || s.Image() != "vllm/vllm-openai:v0.9.0.1" || s.HasFlag("--no-such-flag") {
		t.Errorf("vllm-0.9.0.1: %+v %v", s, err)
	}
	// --async-scheduling came with 0.10: a 0.9 export has neither form.
	if s, err := Serve("vllm-0.12.0"); err != nil || !s.HasFlag("--async-scheduling") || !s.HasFlag("--no-async-scheduling") || !s.HasFlag("--max-num-seqs") {
		t.Errorf("vllm-0.12.0: %+v %v", s, err)
	}
	if s, _ := Serve("vllm-0.9.0.1"); s.HasFlag("--async-scheduling") || s.HasFlag("--no-async-scheduling") {
		t.Error("vllm-0.9.0.1 has --async-scheduling")
	}
	for _, bad := range []string{"vllm", "sglang-0.4", "vllm-0.6.3", "dynamo-0.9.0", "vllm-0.15.0"} {
		if _, err := Serve(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// pickRow, the rule of both engine tables: the newest row reached, the
// family's unversioned row below every version or without one, -1 for
// a family with no row.
func TestPickRow(t *testing.T) {
	rows := []struct {
		family string
		since  []int
	}{{"a", nil}, {"a", []int{0, 6}}, {"a", []int{0, 8}}, {"b", []int{1}}}
	row := func(i int) (string, []int) { return rows[i].family, rows[i].since }
	for label, want := range map[string]int{"a": 0, "a-0.5": 0, "a-0.6": 1, "a-0.7.3": 1, "a-0.8.0": 2, "a-2": 2, "b-1.2": 3, "b": -1, "b-0.9": -1, "c-1": -1} {
		if got := pickRow(len(rows), row, Parse(label)); got != want {
			t.Errorf("pickRow(%q) = %d, want %d", label, got, want)
		}
	}
}

// A stated generation reads in any case, names how to start it, and
// refuses anything else.
func TestParseGeneration(t *testing.T) {
	for _, tt := range []struct {
		in, use, note string
		err           bool
	}{
		{"", "", "", false},
		{"V0", "0", "its V0 engine, VLLM_USE_V1=0", false},
		{" v1 ", "1", "its V1 engine, VLLM_USE_V1=1", false},
		{"v2", "", "", true},
	} {
		g, err := ParseGeneration(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParseGeneration(%q): %v, want error %v", tt.in, err, tt.err)
			continue
		}
		use, ok := g.UseV1()
		if use != tt.use || ok != (tt.use != "") || g.Note() != tt.note {
			t.Errorf("ParseGeneration(%q) = %q: VLLM_USE_V1=%q %v, note %q; want %q, %q", tt.in, g, use, ok, g.Note(), tt.use, tt.note)
		}
	}
}
