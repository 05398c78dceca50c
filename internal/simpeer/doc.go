// Package simpeer starts llm-d-inference-sim (the llm-d project's vLLM
// simulator) for end-to-end tests. The binary is built by `make tools` into
// tools/bin/ from capsim's separate tools module; CAPSIM_INFERENCE_SIM
// overrides its path. Without the binary the tests skip, except under CI
// (CI=true), where they fail.
//
// The simulator listens on every interface and has no host flag; tests send
// traffic only to 127.0.0.1 and the process is killed when the test ends.
package simpeer
