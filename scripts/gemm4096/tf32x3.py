"""Accuracy and the peers for scripts/gemm4096/tf32x3.cu: reads DIR/A.bin, DIR/B.bin and every
DIR/C_*.bin that tf32x3 wrote, compares each with a float64 product of the same inputs, then times
torch.matmul with TF32 off (cuBLAS's FMA kernel) and on, with the method tf32x3 uses (L2 flushed,
CUDA events, median of 22 after 3 warm-ups: torch_matmul.median_ms), and checks their answers the same way.

Errors: "max rel" is max |C - C64| / max |C64|; "frob" is ||C - C64|| / ||C64||; "max vs bound" is
max |C - C64| / (|A| |B|)_ij, the per-element error relative to what float32 rounding scales with.
"""
import glob
import os
import sys

import numpy as np
import torch

from torch_matmul import median_ms  # the same timing as the other gemm-4096 experiments

d = sys.argv[1]
n = 4096
a = torch.from_numpy(np.fromfile(os.path.join(d, "A.bin"), dtype=np.float32).reshape(n, n)).cuda()
b = torch.from_numpy(np.fromfile(os.path.join(d, "B.bin"), dtype=np.float32).reshape(n, n)).cuda()
ref = a.double() @ b.double()
bound = a.double().abs() @ b.double().abs()
scale, norm = ref.abs().max().item(), ref.norm().item()


def errors(c):
    diff = (c.double() - ref).abs()
    return diff.max().item() / scale, diff.norm().item() / norm, (diff / bound).max().item()


def report(name, c, ms=None):
    mx, fro, vb = errors(c)
    t = f"median {ms:.4f} ms  {2 * n**3 / ms / 1e9:6.1f} TFLOP/s  " if ms else ""
    print(f"{name:34s} {t}max rel {mx:.2e}  frob {fro:.2e}  max vs bound {vb:.2e}")


for f in sorted(glob.glob(os.path.join(d, "C_*.bin"))):
    c = torch.from_numpy(np.fromfile(f, dtype=np.float32).reshape(n, n)).cuda()
    report(os.path.basename(f), c)

flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
for tf32 in (False, True):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    ms = median_ms(lambda: torch.matmul(a, b), flush)
    report(f"torch.matmul, TF32 {'on' if tf32 else 'off'}", torch.matmul(a, b), ms)
