#!/usr/bin/env python3
"""Microbenchmarks of the GPU facts capsim's cost model prices.

Run on one GPU with PyTorch (CUDA events, CUDA-graph replay):
    PYTHONUNBUFFERED=1 python3 docs/measurements/gpu_kernels.py OUT.json

What it measures, each section written to OUT.json as soon as it ends:
  bandwidth  device-to-device copy (bytes read + written per second)
  floor      the time of one tiny kernel replayed in a CUDA graph, and
             launched eagerly: the per-kernel latency no bandwidth hides
  layer      a decode layer as vLLM runs it (norm, QKV, rotary, KV write,
             attention, O, add, norm, gate-up, SiLU·mul, down, add; no
             all-reduce: one GPU), sliced as tensor parallelism slices it,
             captured in a CUDA graph over distinct weights: per-layer time
             against batch and TP degree
  gemm       decode-shaped linears (F.linear, bf16) against batch size M
  attention  decode attention over a contiguous KV cache, GQA packed as
             flash-decoding packs it (query heads of a KV head as rows)
  prefill    large-M linears and causal attention: achieved FLOP/s

Every kernel runs over buffers larger than L2 (rotating copies) so that
weights and KV stream from HBM as they do in serving.
"""
import json
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

T0 = time.time()
BUDGET_S = float(os.environ.get("BUDGET_S", "330"))
OUT = sys.argv[1] if len(sys.argv) > 1 else "gpu_kernels.json"
dev = torch.device("cuda")
BF = torch.bfloat16
res = {"script": "docs/measurements/gpu_kernels.py", "sections": {}}

# name: hidden, intermediate, q heads, kv heads, head dim, layers
MODELS = {
    "Llama-3.1-8B": (4096, 14336, 32, 8, 128, 32),
    "Qwen3-32B": (5120, 25600, 64, 8, 128, 64),
    "Llama-3.1-70B": (8192, 28672, 64, 8, 128, 80),
}
TPS = [1, 2, 4, 8]
L2_BYTES = 60e6


def save():
    res["elapsed_s"] = round(time.time() - T0, 1)
    with open(OUT, "w") as f:
        json.dump(res, f, indent=1)


def left():
    return BUDGET_S - (time.time() - T0)


def graph_us(fn, iters=20, warm=2):
    """Mean µs of one replay of fn captured in a CUDA graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        g.replay()
    b.record()
    torch.cuda.synchronize()
    us = a.elapsed_time(b) * 1e3 / iters
    del g
    return us


def eager_us(fn, iters=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) * 1e3 / iters


def section(name):
    def deco(f):
        def run():
            if left() < 20:
                res["sections"][name] = {"skipped": "time budget"}
                save()
                return
            t = time.time()
            try:
                out = f()
                out["wall_s"] = round(time.time() - t, 1)
                res["sections"][name] = out
            except Exception as e:  # keep the other sections
                res["sections"][name] = {"error": repr(e)[:500], "wall_s": round(time.time() - t, 1)}
            torch.cuda.empty_cache()
            save()
            print(name, "done", round(time.time() - T0, 1), "s", flush=True)
        return run
    return deco


@section("env")
def env():
    p = torch.cuda.get_device_properties(0)
    smi = ""
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:
        smi = repr(e)
    return {"torch": torch.__version__, "cuda": torch.version.cuda, "device": p.name,
            "sms": p.multi_processor_count, "memory_bytes": p.total_memory,
            "l2_bytes": getattr(p, "L2_cache_size", None), "nvidia_smi": smi,
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


@section("bandwidth")
def bandwidth():
    out = {}
    for gib in (1, 4):
        n = gib * (1 << 30) // 2
        a = torch.randn(n, device=dev, dtype=BF)
        b = torch.empty_like(a)
        us = eager_us(lambda: b.copy_(a), iters=10)
        out[f"copy_{gib}GiB_TBps"] = 2 * n * 2 / (us * 1e-6) / 1e12
        # read-only: a sum streams the buffer once
        us = eager_us(lambda: a.sum(dtype=torch.float32), iters=10)
        out[f"read_{gib}GiB_TBps"] = n * 2 / (us * 1e-6) / 1e12
        del a, b
    return out


@section("floor")
def floor():
    out = {}
    n_k = 400
    for shape in ((1024,), (128, 5120), (256, 8192)):
        x = torch.zeros(*shape, device=dev, dtype=BF)

        def many():
            for _ in range(n_k):
                x.add_(1.0)
        key = "x".join(map(str, shape))
        out[f"add_{key}_graph_us"] = graph_us(many, iters=5) / n_k
        out[f"add_{key}_eager_us"] = eager_us(many, iters=3) / n_k
    x = torch.randn(64, 5120, device=dev, dtype=BF)
    w = torch.ones(5120, device=dev, dtype=BF)

    def norms():
        for _ in range(n_k):
            F.rms_norm(x, (5120,), w, 1e-6)
    out["rms_norm_64x5120_graph_us"] = graph_us(norms, iters=5) / n_k
    return out


def packed_attn(q, k, v):
    # q [B, Hkv, G, d], k/v [B, Hkv, L, d]: flash-decoding's GQA packing.
    return F.scaled_dot_product_attention(q, k, v)


@section("layer")
def layer():
    rows = []
    ctx = 1024
    for name, (h, inter, hq, hkv, d, nl) in MODELS.items():
        for tp in TPS:
            if left() < 60:
                break
            q, kv = hq // tp, max(hkv // tp, 1)
            g = q // kv
            qkv_n = (q + 2 * kv) * d
            wbytes = 2 * (h * qkv_n + q * d * h + h * 2 * (inter // tp) + (inter // tp) * h)
            nd = int(min(nl, max(4, 30e9 // wbytes)))
            W = [dict(qkv=torch.randn(qkv_n, h, device=dev, dtype=BF) * 0.02,
                      o=torch.randn(h, q * d, device=dev, dtype=BF) * 0.02,
                      gu=torch.randn(2 * (inter // tp), h, device=dev, dtype=BF) * 0.02,
                      dn=torch.randn(h, inter // tp, device=dev, dtype=BF) * 0.02,
                      n1=torch.ones(h, device=dev, dtype=BF), n2=torch.ones(h, device=dev, dtype=BF))
                 for _ in range(nd)]
            for B in (1, 8, 32, 128):
                if left() < 45:
                    break
                kvb = B * ctx * kv * d * 2 * 2
                if kvb * nd > 40e9:
                    continue
                K = [torch.randn(B, kv, ctx, d, device=dev, dtype=BF) for _ in range(nd)]
                V = [torch.randn(B, kv, ctx, d, device=dev, dtype=BF) for _ in range(nd)]
                x = torch.randn(B, h, device=dev, dtype=BF)

                def fwd():
                    y = x
                    for i in range(nd):
                        w = W[i]
                        a = F.rms_norm(y, (h,), w["n1"], 1e-6)
                        t = F.linear(a, w["qkv"])
                        t[:, : (q + kv) * d].mul_(1.0001)  # rotary stand-in: one elementwise kernel
                        K[i][:, :, ctx - 1, :].copy_(t[:, (q) * d:(q + kv) * d].view(B, kv, d))  # KV write
                        qq = t[:, : q * d].view(B, kv, g, d)
                        o = packed_attn(qq, K[i], V[i]).reshape(B, q * d)
                        y = y + F.linear(o, w["o"])
                        a = F.rms_norm(y, (h,), w["n2"], 1e-6)
                        gu = F.linear(a, w["gu"])
                        m = F.silu(gu[:, : inter // tp]) * gu[:, inter // tp:]
                        y = y + F.linear(m, w["dn"])
                    return y
                us = graph_us(fwd, iters=10) / nd
                rows.append({"model": name, "tp": tp, "batch": B, "ctx": ctx, "layer_us": us,
                             "weight_bytes": wbytes, "kv_bytes": kvb, "distinct_layers": nd,
                             "kernels_per_layer": 14})
                print(name, tp, B, round(us, 1), flush=True)
                del K, V
            del W
            torch.cuda.empty_cache()
            res["sections"]["layer_partial"] = rows
            save()
    res["sections"].pop("layer_partial", None)
    return {"rows": rows}


@section("gemm")
def gemm():
    rows = []
    for name, (h, inter, hq, hkv, d, nl) in MODELS.items():
        for tp in TPS:
            if left() < 40:
                break
            q, kv = hq // tp, max(hkv // tp, 1)
            shapes = {"qkv": (h, (q + 2 * kv) * d), "o": (q * d, h), "gate_up": (h, 2 * inter // tp), "down": (inter // tp, h)}
            for gname, (k, n) in shapes.items():
                wb = 2 * k * n
                r = int(min(32, max(4, math.ceil(4 * L2_BYTES / wb))))
                Ws = [torch.randn(n, k, device=dev, dtype=BF) * 0.02 for _ in range(r)]
                for m in (1, 4, 16, 32, 64, 128, 256, 512):
                    x = torch.randn(m, k, device=dev, dtype=BF)

                    def f():
                        for w in Ws:
                            F.linear(x, w)
                    us = graph_us(f, iters=10) / r
                    rows.append({"model": name, "tp": tp, "gemm": gname, "m": m, "k": k, "n": n, "us": us,
                                 "bytes": wb + 2 * m * (k + n), "flops": 2 * m * k * n})
                del Ws
    return {"rows": rows}


@section("attention")
def attention():
    rows = []
    d = 128
    for kv in (8, 4, 2, 1):
        for g in (4, 8):
            for B in (1, 8, 32, 128):
                for L in (512, 2048, 8192):
                    if left() < 30:
                        break
                    kvb = B * kv * L * d * 2 * 2
                    if kvb > 8e9:
                        continue
                    r = int(min(16, max(2, math.ceil(4 * L2_BYTES / kvb))))
                    K = [torch.randn(B, kv, L, d, device=dev, dtype=BF) for _ in range(r)]
                    V = [torch.randn(B, kv, L, d, device=dev, dtype=BF) for _ in range(r)]
                    qq = torch.randn(B, kv, g, d, device=dev, dtype=BF)

                    def f():
                        for i in range(r):
                            packed_attn(qq, K[i], V[i])
                    us = graph_us(f, iters=10) / r
                    rows.append({"kv_heads": kv, "group": g, "batch": B, "ctx": L, "us": us, "kv_bytes": kvb})
                    del K, V
    return {"rows": rows}


@section("prefill")
def prefill():
    rows = []
    peak = None
    for m in (256, 1024, 2048, 4096, 8192):
        for (k, n) in ((5120, 2 * 25600 // 4), (8192, 2 * 28672 // 8), (4096, 14336)):
            x = torch.randn(m, k, device=dev, dtype=BF)
            w = torch.randn(n, k, device=dev, dtype=BF) * 0.02
            us = graph_us(lambda: F.linear(x, w), iters=10)
            rows.append({"kind": "linear", "m": m, "k": k, "n": n, "us": us, "tflops": 2 * m * k * n / (us * 1e-6) / 1e12})
    for s in (1024, 4096, 16384):
        for hq in (8, 32):
            qq = torch.randn(1, hq, s, 128, device=dev, dtype=BF)
            kk = torch.randn(1, hq, s, 128, device=dev, dtype=BF)
            vv = torch.randn(1, hq, s, 128, device=dev, dtype=BF)
            us = graph_us(lambda: F.scaled_dot_product_attention(qq, kk, vv, is_causal=True), iters=10)
            fl = 4 * s * s / 2 * hq * 128
            rows.append({"kind": "causal_attention", "seq": s, "heads": hq, "us": us, "tflops": fl / (us * 1e-6) / 1e12})
    a = torch.randn(8192, 8192, device=dev, dtype=BF)
    b = torch.randn(8192, 8192, device=dev, dtype=BF)
    us = graph_us(lambda: a @ b, iters=10)
    peak = 2 * 8192 ** 3 / (us * 1e-6) / 1e12
    return {"rows": rows, "mm_8192_tflops": peak}


if __name__ == "__main__":
    for s in (env, bandwidth, floor, layer, gemm, attention, prefill):
        s()
    print("total", round(time.time() - T0, 1), "s", flush=True)
