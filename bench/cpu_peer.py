"""PyTorch on the CPU, the peer of docs/BENCHMARKS.md's CPU table: gemm M,N,K (torch.mm) and batch-1
3x3 convolutions C,H (C to C channels on HxH, padding 1: torch's conv2d), float32, all cores; the
median of 50 calls after warm-up calls. Which BLAS runs is PyTorch's (Debian's python3-torch calls
libblas.so.3: OpenBLAS once libopenblas0 is installed; printed first); conv2d runs oneDNN.

    /usr/bin/python3 bench/cpu_peer.py gemm:512,512,512 gemm:1024,1024,1024 conv2d:64,56"""
import statistics
import sys
import time

import torch


def median_ms(fn, calls=50):
    for _ in range(5):
        fn()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def case(text):
    """(name, call, flops) of 'gemm:M,N,K' or 'conv2d:C,H'."""
    op, _, dims = text.partition(":")
    try:
        d = [int(x) for x in dims.split(",")]
    except ValueError:
        d = []
    if op == "gemm" and len(d) == 3:
        m, n, k = d
        a, b, c = torch.rand(m, k), torch.rand(k, n), torch.empty(m, n)
        return f"gemm M={m},N={n},K={k}", lambda: torch.mm(a, b, out=c), 2 * m * n * k
    if op == "conv2d" and len(d) == 2:
        ch, h = d
        x, w = torch.rand(1, ch, h, h), torch.rand(ch, ch, 3, 3)
        return f"conv2d C=K={ch} {h}x{h} 3x3", lambda: torch.nn.functional.conv2d(x, w, padding=1), 2 * ch * ch * 9 * h * h
    sys.exit(f"cpu_peer: '{text}' is neither gemm:M,N,K nor conv2d:C,H")


def main(args):
    if not args:
        sys.exit(__doc__)
    torch.mm(torch.rand(2, 2), torch.rand(2, 2))
    with open("/proc/self/maps") as maps:  # the BLAS library the call loaded
        print("BLAS:", " ".join(sorted({line.split()[-1] for line in maps if "blas" in line})) or "none found")
    with torch.no_grad():
        for text in args:
            name, call, flops = case(text)
            ms = median_ms(call)
            print(f"{name}  {ms:.4f} ms  {flops / ms / 1e6:.1f} GFLOP/s")


if __name__ == "__main__":
    main(sys.argv[1:])
