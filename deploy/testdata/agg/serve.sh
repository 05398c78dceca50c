#!/usr/bin/env bash
# 5xTP4 on 20× H200, vllm-0.9.0.1 — exported by capsim.
# Run one per replica: 5 replica(s), each on 4 GPU(s), behind a load balancer
# (round-robin, as simulated: a per-request balancer such as an HTTP gateway; the Kubernetes Service of k8s.yaml spreads connections at random instead, which capsim prices as the random router). vLLM 0.9.0.1.
vllm serve meta-llama/Llama-3.1-70B-Instruct \
  --tensor-parallel-size 4 \
  --max-num-seqs 256 \
  --max-num-batched-tokens 4096 \
  --max-model-len 131072 \
  --gpu-memory-utilization 0.9 \
  --block-size 16 \
  --port 8000
