"""PyTorch's torch.mm on the CPU for gemm shapes, the peer of docs/BENCHMARKS.md's CPU table: the
median of 50 calls after 3 warm-up calls, float32, all cores. Which BLAS runs is PyTorch's (Debian's
python3-torch calls libblas.so.3: OpenBLAS once libopenblas0 is installed, printed first).

    /usr/bin/python3 bench/cpu_gemm_peer.py 512,512,512 1024,1024,1024 128,3072,768"""
import statistics
import sys
import time

import torch


def median_ms(m, n, k, calls=50):
    a, b, c = torch.rand(m, k), torch.rand(k, n), torch.empty(m, n)
    for _ in range(3):
        torch.mm(a, b, out=c)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def main(shapes):
    if not shapes:
        sys.exit(__doc__)
    torch.mm(torch.rand(2, 2), torch.rand(2, 2))
    with open("/proc/self/maps") as maps:  # the BLAS library the call loaded
        print("BLAS:", " ".join(sorted({line.split()[-1] for line in maps if "blas" in line})) or "none found")
    for shape in shapes:
        m, n, k = (int(x) for x in shape.split(","))
        ms = median_ms(m, n, k)
        print(f"gemm M={m},N={n},K={k}  {ms:.4f} ms  {2 * m * n * k / ms / 1e6:.1f} GFLOP/s")


if __name__ == "__main__":
    main(sys.argv[1:])
