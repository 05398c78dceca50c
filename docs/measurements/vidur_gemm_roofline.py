#!/usr/bin/env python3
"""Which smooth roofline fits measured GEMM times (model.RooflineP).

Reads Vidur's public profiling of cuBLAS FP16 linears (microsoft/vidur,
data/profiling/compute/{h100,a100}/<model>/mlp.csv, commits of 2024-05;
snapshot 7d47513 of 2024-11-19), one CSV per model, each with the kernel
time of the four linears of a transformer layer (attn_pre_proj,
attn_post_proj, mlp_up_proj, mlp_down_proj) for num_tokens = M = 1..4096 at
tensor-parallel sizes 1, 2, 4, 8. For every GEMM of at least 4096x4096 it
takes the lower envelope over M (the fastest time at M or above: cuBLAS
tile and wave quantisation make single M values jump), and fits

    t = ((c / eta_c)^p + (m / eta_m)^p)^(1/p)

with c = 2MKN / peak FLOP/s and m = 2(MK + KN + MN) / bandwidth (spec
sheets: H100-SXM 989 TFLOP/s dense BF16/FP16, 3.35 TB/s; A100-80GB 312,
2.039), by grid search on the RMS of log(t_fit / t_measured), and prints
the best p and the RMS at fixed p (30 stands for the max). Result on
2026-11-23 over the four models' CSVs (13,209 points per GPU): p = 1.5 on
both GPUs, RMS 0.111 on H100 and 0.085 on A100 (p = 1: 0.117 and 0.094,
with memory at 96-98% of spec; p = 2: 0.118 and 0.090; p = 3: 0.132 and
0.104; the max: 0.159 and 0.126).

usage: vidur_gemm_roofline.py GPU CSV...   (GPU: h100 or a100)
"""
import csv, math, sys

SPEC = {"h100": (989e12, 3.35e12), "a100": (312e12, 2.039e12)}
OPS = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"]


def shapes(row, tp):
    e, f = int(row["n_embd"]), int(row["n_expanded_embd"])
    h, kv = int(row["n_head"]), int(row["n_kv_head"])
    gated = row["use_gated_mlp"] == "True"
    hd = e // h
    return {"attn_pre_proj": (e, (h + 2 * kv) * hd // tp), "attn_post_proj": (e // tp, e),
            "mlp_up_proj": (e, (2 if gated else 1) * f // tp), "mlp_down_proj": (f // tp, e)}


def points(gpu, paths):
    peak, bw = SPEC[gpu]
    out = []
    for path in paths:
        rows = list(csv.DictReader(open(path)))
        for tp in sorted({int(r["num_tensor_parallel_workers"]) for r in rows}):
            for op in OPS:
                times = {}
                for r in rows:
                    if int(r["num_tensor_parallel_workers"]) != tp:
                        continue
                    k, n = shapes(r, tp)[op]
                    m = int(r["num_tokens"])
                    t = float(r[f"time_stats.{op}.median"]) * 1e-3  # ms -> s
                    times[m] = min(t, times.get(m, t))
                if k * n < 4096 * 4096:
                    continue
                ms = sorted(times)
                env = [times[m] for m in ms]
                for i in range(len(env) - 2, -1, -1):
                    env[i] = min(env[i], env[i + 1])
                for m, t in zip(ms, env):
                    out.append((2 * m * k * n / peak, 2 * (m * k + k * n + m * n) / bw, t))
    return out


def rms(pts, p, ec, em):
    return math.sqrt(sum((math.log(((c / ec) ** p + (m / em) ** p) ** (1 / p)) - math.log(t)) ** 2
                         for c, m, t in pts) / len(pts))


def best(pts, ps):
    return min((rms(pts, p, ec / 100, em / 100), p, ec / 100, em / 100)
               for p in ps for ec in range(50, 101, 2) for em in range(60, 111, 2))


if __name__ == "__main__":
    gpu, paths = sys.argv[1], sys.argv[2:]
    pts = points(gpu, paths)
    e, p, ec, em = best(pts, [x / 4 for x in range(4, 41)])
    print(f"{gpu}: {len(pts)} points, best p {p} (eta_c {ec}, eta_m {em}), RMS log error {e:.3f}")
    for fixed in (1, 1.5, 2, 3, 30):
        e, _, ec, em = best(pts, [fixed])
        print(f"  p = {fixed}: eta_c {ec}, eta_m {em}, RMS {e:.3f}")
