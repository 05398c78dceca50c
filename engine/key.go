package engine

import "strings"

// SettingKey is the one spelling of an engine-setting key as result files
// state it: lower case, trimmed, words joined by dashes as the engines'
// command lines spell them ("Max_Num_Seqs" → "max-num-seqs"). A role
// prefix stays ("decode.enforce-eager"); SplitRole takes it off.
func SettingKey(k string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "_", "-")
}

// SplitRole splits a normalised key into the worker role it is stated for
// and the setting: "prefill.block-size" → "prefill", "block-size"; a key
// without a role prefix has role "".
func SplitRole(k string) (role, name string) {
	if i := strings.IndexByte(k, '.'); i >= 0 {
		return k[:i], k[i+1:]
	}
	return "", k
}
