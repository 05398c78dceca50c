// Package deploy turns a planned or predicted deployment into what a team
// applies: the `vllm serve` command line of every worker with vLLM's real
// flag names for the engine version the prediction priced, a Dynamo
// configuration (the shape of Dynamo 0.3's example graphs and seed 004's
// YAML) for disaggregated deployments, Kubernetes manifests (a Deployment
// per pool with GPU requests and the same arguments, behind a balancer that
// routes as the prediction was priced: an Envoy gateway for round-robin or
// least-outstanding, the plain Service for random), Helm values of llm-d's
// modelservice and inferencepool charts for vLLM replicas, and a README with the
// predicted metrics, the SLO verdicts and the exact `capsim validate`
// command to check the deployment once it runs.
//
// FromPlan and FromPrediction turn a plan's recommendations or a
// prediction into Specs. Files builds every file in memory (deterministic
// bytes, golden-tested); Write puts them in a directory, and Export writes
// the specs that can be built and says which could not. YAML is produced by gopkg.in/yaml.v3 from
// ordered nodes, so it always parses and keeps its keys in the order
// people read them. Every vLLM flag emitted is checked against the flag
// table of the named vLLM version (Flags), so an export never names a flag
// the engine it targets does not have.
package deploy
