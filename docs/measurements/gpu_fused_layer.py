#!/usr/bin/env python3
"""A decode layer with its small kernels fused, as an engine fuses them.

    PYTHONUNBUFFERED=1 python3 docs/measurements/gpu_fused_layer.py OUT.json

torch.compile (Inductor) fuses the norms, residual adds, rotary stand-in
and SiLU-and-mul into Triton kernels and leaves the four linears to
cuBLAS and attention to SDPA, as vLLM's fused CUDA kernels do. Each layer
is timed in a CUDA graph over distinct weights; beside it, the same
layer's four linears alone and its attention alone, so that what the
small kernels add is the difference (kernel_floor in capsim's cost model:
model.SmallKernelUs per small kernel).
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, "docs/measurements")
from gpu_kernels import graph_us  # noqa: E402

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "gpu_fused_layer.json"
dev, BF = torch.device("cuda"), torch.bfloat16
h, inter, hq, hkv, d, nl = 5120, 25600, 64, 8, 128, 64  # Qwen3-32B
ctx = 1024
rows = []


def layer(y, n1, n2, wqkv, wo, wgu, wdn, K, V, q, kv, g, it):
    a = F.rms_norm(y, (h,), n1, 1e-6)
    t = F.linear(a, wqkv)
    qk = t[:, : (q + kv) * d] * 1.0001
    qq = qk[:, : q * d].reshape(-1, kv, g, d)
    o = F.scaled_dot_product_attention(qq, K, V).reshape(-1, q * d)
    y = y + F.linear(o, wo)
    a = F.rms_norm(y, (h,), n2, 1e-6)
    gu = F.linear(a, wgu)
    m = F.silu(gu[:, :it]) * gu[:, it:]
    return y + F.linear(m, wdn)


fused = torch.compile(layer, dynamic=False)
for tp in (1, 4, 8):
    q, kv = hq // tp, hkv // tp
    g, it = q // kv, inter // tp
    nd = 16 if tp == 1 else 48
    W = [dict(qkv=torch.randn((q + 2 * kv) * d, h, device=dev, dtype=BF) * .02, o=torch.randn(h, q * d, device=dev, dtype=BF) * .02,
              gu=torch.randn(2 * it, h, device=dev, dtype=BF) * .02, dn=torch.randn(h, it, device=dev, dtype=BF) * .02,
              n1=torch.ones(h, device=dev, dtype=BF), n2=torch.ones(h, device=dev, dtype=BF)) for _ in range(nd)]
    for B in (1, 32):
        if time.time() - T0 > 240:
            break
        K = [torch.randn(B, kv, ctx, d, device=dev, dtype=BF) for _ in range(nd)]
        V = [torch.randn(B, kv, ctx, d, device=dev, dtype=BF) for _ in range(nd)]
        x = torch.randn(B, h, device=dev, dtype=BF)
        qq = torch.randn(B, kv, g, d, device=dev, dtype=BF)
        xs = {"qkv": torch.randn(B, h, device=dev, dtype=BF), "o": torch.randn(B, q * d, device=dev, dtype=BF),
              "gu": torch.randn(B, h, device=dev, dtype=BF), "dn": torch.randn(B, it, device=dev, dtype=BF)}
        fused(x, W[0]["n1"], W[0]["n2"], W[0]["qkv"], W[0]["o"], W[0]["gu"], W[0]["dn"], K[0], V[0], q, kv, g, it)

        def whole():
            y = x
            for i in range(nd):
                w = W[i]
                y = fused(y, w["n1"], w["n2"], w["qkv"], w["o"], w["gu"], w["dn"], K[i], V[i], q, kv, g, it)

        def gemms():
            for i in range(nd):
                for k in ("qkv", "o", "gu", "dn"):
                    F.linear(xs[k], W[i][k])

        def attn():
            for i in range(nd):
                F.scaled_dot_product_attention(qq, K[i], V[i])
        r = {"model": "Qwen3-32B", "tp": tp, "batch": B, "ctx": ctx, "distinct_layers": nd,
             "layer_us": graph_us(whole, iters=10) / nd, "gemms_us": graph_us(gemms, iters=10) / nd,
             "attention_us": graph_us(attn, iters=10) / nd}
        r["rest_us"] = r["layer_us"] - r["gemms_us"] - r["attention_us"]
        rows.append(r)
        print(r, round(time.time() - T0, 1), flush=True)
        json.dump({"script": "docs/measurements/gpu_fused_layer.py", "torch": torch.__version__, "rows": rows}, open(OUT, "w"), indent=1)
        del K, V
    del W
    torch.cuda.empty_cache()
print("total", round(time.time() - T0, 1))
