package model

// CanonicalGPU is the catalog name of a GPU name or alias ("NVIDIA H20" →
// "H20"), or s itself when the catalog does not know it. Resolve names
// once, where they enter (a record, a flag, a profile), and compare the
// canonical names afterwards.
func CanonicalGPU(s string) string {
	if g, err := LookupGPU(s); err == nil {
		return g.Name
	}
	return s
}

// CanonicalModel is the catalog's Hugging Face id of a model name
// ("qwen3-32b" → "Qwen/Qwen3-32B"), or s itself when the catalog does not
// know it.
func CanonicalModel(s string) string {
	if s == "" {
		return s
	}
	if m, err := LookupLLM(s); err == nil {
		return m.Name
	}
	return s
}
