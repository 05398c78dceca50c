#!/usr/bin/env bash
# golden.sh BINARY OUTDIR [--fit] runs a fixed set of capsim commands with
# BINARY and writes each one's stdout to OUTDIR, so that two builds can be
# compared with `diff -r` (a refactor must leave predictions byte-identical).
# --fit also runs `fit --quiet` (about a minute).
set -euo pipefail
bin=$1 out=$2 fit=${3:-}
mkdir -p "$out"
exp=$(mktemp -d)
trap 'rm -rf "$exp"' EXIT
run() { # name, args...
  local name=$1; shift
  "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err" || echo "exit $?" >>"$out/$name.err"
}
run predict-agg predict --gpu H100 --model Qwen3-32B --replicas 1xTP2 --isl 1024 --osl 256 --concurrency 1,16,64 --format json
run predict-agg-table predict --gpu H100 --model Qwen3-32B --replicas 1xTP2 --isl 1024 --osl 256 --concurrency 1,16,64
run predict-disagg predict --gpu H20 --prefill 6xTP2 --decode 1xTP4 --isl 1024 --osl 256 --concurrency 8,64 --format json
run predict-vllm09 predict --gpu H20 --model Qwen3-32B --engine vllm-0.9 --replicas 2xTP4 --isl 3000 --osl 150 --rate 2,8 --format json
run predict-llama predict --gpu A100 --model Llama-3.1-8B --replicas 2xTP1 --isl 512 --osl 128 --concurrency 4,32 --no-band --format csv
run predict-sglang predict --gpu H200 --model Qwen3-32B --engine sglang --replicas 1xTP4 --isl 1024 --osl 256 --concurrency 16 --no-band --format json
run predict-export predict --gpu H100 --model Qwen3-32B --replicas 2xTP2 --isl 1024 --osl 256 --concurrency 16 --no-band --export "$exp/predict"
run plan plan --quiet --model Qwen3-32B --isl 3000 --osl 150 --rate 8 --slo ttft_p99=2000ms,tpot_p99=50ms --gpu H20,H200 --max-gpus 24 --gpu-cost H20=1.9,H200=3.5 --top 3 --format json --export "$exp/plan"
(cd "$exp" && find . -type f | sort | while read -r f; do echo "== $f"; cat "$f"; done) >"$out/exports.out"
sed -i "s|$exp|EXPORTS|g" "$out"/*.err
if [ "$fit" = --fit ]; then
  run fit fit --quiet
fi
