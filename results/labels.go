package results

// DeploymentLabel tells apart deployments of the same topology in one
// source (llm-d's "base" and "no-features"): the record's "deployment"
// setting, else its "preset", else "".
func (r *Record) DeploymentLabel() string {
	for _, k := range []string{"deployment", "preset"} {
		if v := r.System.Settings[k]; v != "" {
			return v
		}
	}
	return ""
}
