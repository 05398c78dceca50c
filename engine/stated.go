package engine

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Stated are the engine settings a user (or a result file) states, named
// as vLLM's flags name them; a zero field is not stated, and the engine
// version's default (or the calibrated deployment's setting) holds.
type Stated struct {
	MaxNumBatchedTokens  int     // --max-num-batched-tokens
	MaxNumSeqs           int     // --max-num-seqs
	MaxModelLen          int     // --max-model-len
	GPUMemoryUtilization float64 // --gpu-memory-utilization
	BlockSize            int     // --block-size
	PrefixCaching        *bool   // --enable-prefix-caching / --no-enable-prefix-caching
	EnforceEager         *bool   // --enforce-eager
	KVCacheDtype         string  // --kv-cache-dtype
	AsyncScheduling      *bool   // --async-scheduling / --no-async-scheduling (CheckAsyncScheduling)
	// ExpertParallel is --enable-expert-parallel: a mixture of experts'
	// experts spread whole over every GPU of a worker. Settings.Apply
	// leaves it to whoever knows the workers' TP (calibrate.Configure
	// sets Settings.ExpertParallel).
	ExpertParallel *bool
}

// The flag names of Stated's settings, in the order reports list them.
const (
	FlagMaxNumBatchedTokens  = "max-num-batched-tokens"
	FlagMaxNumSeqs           = "max-num-seqs"
	FlagMaxModelLen          = "max-model-len"
	FlagGPUMemoryUtilization = "gpu-memory-utilization"
	FlagBlockSize            = "block-size"
	FlagPrefixCaching        = "enable-prefix-caching"
	FlagEnforceEager         = "enforce-eager"
	FlagKVCacheDtype         = "kv-cache-dtype"
	FlagAsyncScheduling      = "async-scheduling"
	FlagExpertParallel       = "enable-expert-parallel"
)

// FlagNames are Stated's settings as vLLM's flags name them, in order.
var FlagNames = []string{FlagMaxNumBatchedTokens, FlagMaxNumSeqs, FlagMaxModelLen, FlagGPUMemoryUtilization,
	FlagBlockSize, FlagPrefixCaching, FlagEnforceEager, FlagKVCacheDtype, FlagAsyncScheduling, FlagExpertParallel}

// BlockSizes are the KV block sizes vLLM accepts (--block-size choices
// of its V1 CacheConfig; SGLang's page size 1 included).
var BlockSizes = []int{1, 8, 16, 32, 64, 128, 256}

// kvCacheBytes is the bytes per KV element of each --kv-cache-dtype
// (vLLM's CacheDType); "auto" is the checkpoint's own, 0 here.
var kvCacheBytes = map[string]float64{"auto": 0, "bfloat16": 2, "float16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1}

// KVCacheDtypes lists the --kv-cache-dtype values, as flag help and
// errors name them.
const KVCacheDtypes = "auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc"

// BlockSizesText lists BlockSizes, as flag help and errors name them.
func BlockSizesText() string { return joinInts(BlockSizes) }

// KVCacheBytes is the bytes per KV element a --kv-cache-dtype stores; 0
// for "auto" or none (the checkpoint's own).
func KVCacheBytes(dtype string) float64 { return kvCacheBytes[strings.ToLower(dtype)] }

// Validate checks the stated values as vLLM would, each error one line
// naming the flag.
func (s Stated) Validate() error {
	switch {
	case s.MaxNumBatchedTokens < 0:
		return fmt.Errorf("--%s must be positive, got %d", FlagMaxNumBatchedTokens, s.MaxNumBatchedTokens)
	case s.MaxNumSeqs < 0:
		return fmt.Errorf("--%s must be positive, got %d", FlagMaxNumSeqs, s.MaxNumSeqs)
	case s.MaxModelLen < 0:
		return fmt.Errorf("--%s must be positive, got %d", FlagMaxModelLen, s.MaxModelLen)
	case s.GPUMemoryUtilization < 0 || s.GPUMemoryUtilization > 1 || math.IsNaN(s.GPUMemoryUtilization):
		return fmt.Errorf("--%s must be a fraction in (0, 1], got %v", FlagGPUMemoryUtilization, s.GPUMemoryUtilization)
	case s.BlockSize != 0 && !slices.Contains(BlockSizes, s.BlockSize):
		return fmt.Errorf("--%s must be one of %s, got %d", FlagBlockSize, joinInts(BlockSizes), s.BlockSize)
	case s.MaxNumBatchedTokens > 0 && s.MaxNumSeqs > 0 && s.MaxNumBatchedTokens < s.MaxNumSeqs:
		return fmt.Errorf("--%s %d must be at least --%s %d, as vLLM requires", FlagMaxNumBatchedTokens, s.MaxNumBatchedTokens, FlagMaxNumSeqs, s.MaxNumSeqs)
	}
	if _, ok := kvCacheBytes[strings.ToLower(s.KVCacheDtype)]; s.KVCacheDtype != "" && !ok {
		return fmt.Errorf("--%s must be one of %s, got %q", FlagKVCacheDtype, KVCacheDtypes, s.KVCacheDtype)
	}
	return nil
}

// Names are the flags s states, in FlagNames order.
func (s Stated) Names() []string {
	var out []string
	for _, n := range FlagNames {
		if s.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// Has reports whether s states the setting of flag name (a FlagNames entry).
func (s Stated) Has(name string) bool {
	switch name {
	case FlagMaxNumBatchedTokens:
		return s.MaxNumBatchedTokens > 0
	case FlagMaxNumSeqs:
		return s.MaxNumSeqs > 0
	case FlagMaxModelLen:
		return s.MaxModelLen > 0
	case FlagGPUMemoryUtilization:
		return s.GPUMemoryUtilization > 0
	case FlagBlockSize:
		return s.BlockSize > 0
	case FlagPrefixCaching:
		return s.PrefixCaching != nil
	case FlagEnforceEager:
		return s.EnforceEager != nil
	case FlagKVCacheDtype:
		return s.KVCacheDtype != ""
	case FlagAsyncScheduling:
		return s.AsyncScheduling != nil
	case FlagExpertParallel:
		return s.ExpertParallel != nil
	}
	return false
}

// Flag is one engine setting a deployment ran with, as vLLM's flag names
// it, and where its value came from: From is FromStated (the user's),
// FromDefault (the engine version's default on the GPU) or FromCalibrated
// (the calibrated deployment's own setting).
type Flag struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	From  string `json:"from"`
}

// Flag.From's values.
const (
	FromStated     = "stated"
	FromDefault    = "default"
	FromCalibrated = "calibrated"
)

// String is the flag as a command line states it: "--max-num-seqs 256",
// "--enable-prefix-caching", "--no-enable-prefix-caching"; "" for
// --enforce-eager off, which a command line states by leaving it out.
func (f Flag) String() string {
	if v := f.Value; v == "true" || v == "false" {
		return f.Switch()
	}
	return "--" + f.Name + " " + f.Value
}

// Switch is the flag's name as a command line spells its value:
// "--no-enable-prefix-caching" or "--no-async-scheduling" when off, ""
// for --enforce-eager off, "--NAME" otherwise.
func (f Flag) Switch() string {
	switch {
	case f.Value != "false":
		return "--" + f.Name
	case Negatable(f.Name):
		return "--no-" + f.Name
	}
	return ""
}

// Negatable reports whether vLLM turns the setting name off with
// --no-NAME (--enable-prefix-caching, --async-scheduling).
func Negatable(name string) bool {
	return name == FlagPrefixCaching || name == FlagAsyncScheduling || name == FlagExpertParallel
}

// FormatInt and FormatFloat are a Flag's Value of a number.
func FormatInt(n int) string { return strconv.Itoa(n) }

// FormatFloat formats a fraction such as a memory utilization: 0.9, 0.835.
func FormatFloat(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
