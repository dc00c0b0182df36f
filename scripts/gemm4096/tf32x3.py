"""Accuracy and the peers for scripts/gemm4096/tf32x3.cu: reads DIR/A.bin, DIR/B.bin and every
DIR/C_*.bin that tf32x3 wrote, compares each with a float64 product of the same inputs, then times
torch.matmul with TF32 off (cuBLAS's FMA kernel) and on, with the method tf32x3 uses (L2 flushed,
CUDA events, median of 22 after 3 warm-ups: torch_matmul.median_ms), and checks their answers the same way.
Last, 3xTF32 made of cuBLAS's own TF32 kernels (Hopper's warpgroup MMA, which tf32x3.cu does not
use): the big product, then the two small ones added into a second float32 sum by cuBLAS's epilogue
(beta = 1), the two sums added at the end; timed with the splitting and without it (operands split
beforehand, as a weight could be), and as one product over K = 3 x 4096 (all three sums in the MMA).

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


def tf32_split(x):
    """x = big + small, big rounded to TF32 (10 mantissa bits, to nearest), small exact in float32."""
    big = ((x.view(torch.int32) + 0x1000) & -0x2000).view(torch.float32)
    return big, x - big


torch.backends.cuda.matmul.allow_tf32 = True
ab, as_ = tf32_split(a)
bb, bs = tf32_split(b)


def three_products(ab, as_, bb, bs):
    small = torch.mm(ab, bs)
    small.addmm_(as_, bb)  # cuBLAS adds its product to `small` in float32 (beta = 1)
    return torch.mm(ab, bb).add_(small)


def split_then_three():
    ab, as_ = tf32_split(a)
    bb, bs = tf32_split(b)
    return three_products(ab, as_, bb, bs)


a3, b3 = torch.cat([ab, ab, as_], 1), torch.cat([bb, bs, bb], 0)
for name, fn in (("3xTF32 via cuBLAS, split included", split_then_three),
                 ("3xTF32 via cuBLAS, operands split", lambda: three_products(ab, as_, bb, bs)),
                 ("3xTF32 via cuBLAS, one K=3n product", lambda: torch.mm(a3, b3))):
    report(name, fn(), median_ms(fn, flush))
