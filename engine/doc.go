// Package engine is the serving engine's contract: which engine runs
// (ID, parsed once from a label such as "vllm-0.9.0.1"), the settings it
// runs with (Settings, whose only producer for an engine version on a GPU
// is Defaults), what its steps cost the CPU (Overhead, one cited row per
// family and version), what its API server adds to a request (Frontend),
// and how it is deployed (Serving: the vLLM a Dynamo release runs, the
// `vllm serve` flags a release has). Settings a user states are Stated,
// named as vLLM's flags name them and checked as vLLM checks them; a Flag
// reports one setting a deployment ran with and whether it was stated,
// the version's default or a calibrated deployment's.
//
// Versions are compared in one place (Less, Distance), setting names from
// result files are normalised in one place (SettingKey), and the default
// engine of a topology is named in one place (DefaultLabel). The package
// imports nothing of capsim's: model, calibrate, deploy and the readers
// of results build on it.
package engine
