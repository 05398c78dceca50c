#!/usr/bin/env bash
# 6P(TP2) 1D(TP4) on 16× H20, dynamo-0.3.0 — exported by capsim.
# Dynamo 0.3.0 (vLLM 0.8.4 inside): run from the repository's examples/llm directory at tag v0.3.0,
# with NATS_SERVER and ETCD_ENDPOINTS set on every node.
# Node with the frontend, processor and 1 decode worker(s) of TP4 (4 GPUs):
dynamo serve graphs.agg:Frontend -f ./dynamo.yaml
# Prefill: 6 worker(s) of TP2 in all; on each prefill node start as many as its GPUs hold
# (K = GPUs on the node / 2), K summing to 6 over the nodes:
dynamo serve components.prefill_worker:PrefillWorker -f ./dynamo.yaml --PrefillWorker.ServiceArgs.workers=K
