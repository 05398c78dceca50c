package engine

import (
	"strings"
	"testing"
)

func TestStatedValidateAndNames(t *testing.T) {
	on := true
	ok := Stated{MaxNumBatchedTokens: 2048, MaxNumSeqs: 128, MaxModelLen: 4096, GPUMemoryUtilization: 0.85, BlockSize: 32,
		PrefixCaching: &on, EnforceEager: &on, KVCacheDtype: "fp8", AsyncScheduling: &on, ExpertParallel: &on}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ok.Names(), ","); got != strings.Join(FlagNames, ",") {
		t.Errorf("Names = %s", got)
	}
	if n := (Stated{}).Names(); len(n) != 0 {
		t.Errorf("nothing stated: %v", n)
	}
	for _, tt := range []struct {
		s    Stated
		flag string
	}{
		{Stated{MaxNumBatchedTokens: -1}, "--max-num-batched-tokens"},
		{Stated{MaxNumSeqs: -1}, "--max-num-seqs"},
		{Stated{MaxModelLen: -1}, "--max-model-len"},
		{Stated{GPUMemoryUtilization: 1.01}, "--gpu-memory-utilization"},
		{Stated{BlockSize: 24}, "--block-size"},
		{Stated{KVCacheDtype: "int8"}, "--kv-cache-dtype"},
		{Stated{MaxNumBatchedTokens: 64, MaxNumSeqs: 128}, "--max-num-batched-tokens 64 must be at least --max-num-seqs 128"},
	} {
		if err := tt.s.Validate(); err == nil || !strings.HasPrefix(err.Error(), tt.flag) {
			t.Errorf("%+v: %v, want an error naming %s", tt.s, err, tt.flag)
		}
	}
	if KVCacheBytes("FP8") != 1 || KVCacheBytes("bfloat16") != 2 || KVCacheBytes("auto") != 0 || KVCacheBytes("") != 0 {
		t.Error("KV-cache bytes per dtype wrong")
	}
}

func TestFlagString(t *testing.T) {
	for f, want := range map[Flag]string{
		{Name: FlagMaxNumSeqs, Value: "256"}:        "--max-num-seqs 256",
		{Name: FlagPrefixCaching, Value: "true"}:    "--enable-prefix-caching",
		{Name: FlagPrefixCaching, Value: "false"}:   "--no-enable-prefix-caching",
		{Name: FlagEnforceEager, Value: "true"}:     "--enforce-eager",
		{Name: FlagEnforceEager, Value: "false"}:    "",
		{Name: FlagAsyncScheduling, Value: "true"}:  "--async-scheduling",
		{Name: FlagAsyncScheduling, Value: "false"}: "--no-async-scheduling",
	} {
		if got := f.String(); got != want {
			t.Errorf("%+v: %q, want %q", f, got, want)
		}
	}
}
