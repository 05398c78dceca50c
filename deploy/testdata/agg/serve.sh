#!/usr/bin/env bash
# 5xTP4 on 20× H200, vllm-0.9.0.1 — exported by capsim.
# Run one per replica: 5 replica(s), each on 4 GPU(s). vLLM 0.9.0.1.
# The prediction was priced with the round-robin router; k8s.yaml deploys an Envoy gateway routing each request round-robin; a Kubernetes Service alone spreads connections at random, which capsim prices as the random router.
vllm serve meta-llama/Llama-3.1-70B-Instruct \
  --tensor-parallel-size 4 \
  --max-num-seqs 256 \
  --max-num-batched-tokens 4096 \
  --max-model-len 131072 \
  --gpu-memory-utilization 0.9 \
  --block-size 16 \
  --port 8000
