#!/usr/bin/env python3
"""One chunk_linear_attn forward (bf16) per shape, for Nsight Compute.

    ncu --profile-from-start off --csv ... python3 ncu_fwd.py B4_T2048_H16_D64 ...

Run from (or with PYTHONPATH at) a flash-linear-attention tree.  Each shape
is warmed (three calls: compilation and autotuning happen outside the
profiled range), then exactly one forward runs between
cudaProfilerStart and cudaProfilerStop, so the profiled kernels are one
forward per shape, in the order given; each shape's launches are announced
on stderr before they run.
"""
import sys

import torch
from fla.ops.linear_attn import chunk_linear_attn

for key in sys.argv[1:]:
    B, T, H, D = (int(p[1:]) for p in key.split("_"))
    q, k, v = (torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    for _ in range(3):
        chunk_linear_attn(q, k, v)
    torch.cuda.synchronize()
    print(f"ncu_fwd: profiling {key} (one forward)", file=sys.stderr, flush=True)
    torch.cuda.profiler.start()
    chunk_linear_attn(q, k, v)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
print("ncu_fwd: done", file=sys.stderr)
