"""torch.matmul 4096^3 with TF32 off (cuBLAS's FMA kernel), timed as the gemm-4096 experiments time
their kernels (median_ms); `sustain S` runs it back to back for S seconds instead (clock and power)."""
import sys
import time

import torch


def median_ms(fn, flush):
    """Median of the last 22 of 25 calls of fn, each after a write of the 256 MB flush buffer."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for r in range(25):
        flush.fill_(r)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        if r >= 3:
            ms.append(e0.elapsed_time(e1))
    ms.sort()
    return ms[len(ms) // 2]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.rand(4096, 4096, device="cuda") * 2 - 1
    b = torch.rand(4096, 4096, device="cuda") * 2 - 1
    if len(sys.argv) == 3 and sys.argv[1] == "sustain":
        end = time.time() + float(sys.argv[2])
        n = 0
        while time.time() < end:
            for _ in range(20):
                torch.matmul(a, b)
            torch.cuda.synchronize()
            n += 20
        print(f"sustained torch.matmul: {n} launches")
        return
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    med = median_ms(lambda: torch.matmul(a, b), flush)
    print(f"torch.matmul (cuBLAS, TF32 off)            median {med:.4f} ms  {2 * 4096**3 / med / 1e9:.1f} TFLOP/s")


if __name__ == "__main__":
    main()
