"""Host time of one call of a tuned CUDA kernel from Python, against the bare runtime launch and
PyTorch's own torch.mm, on a gemm small enough (16^3) that the GPU never holds the host back: each
figure is the median over 20 bursts of 200 calls, the launch queue drained between bursts.

    autotune tune --op gemm --shape M=16,N=16,K=16 --target cuda --trials 8 --db /tmp/g.db
    PYTHONPATH=python python3 bench/python_call_overhead.py /tmp/g.db"""
import ctypes
import statistics
import sys
import time

import torch

import autotune
from autotune import _library


def burst(fn, n=200):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t = time.perf_counter() - t0
    torch.cuda.synchronize()
    return t / n


def main(db_path):
    k = autotune.Database(db_path).lookup("gemm", "M=16,N=16,K=16", target="cuda")
    if k is None:
        sys.exit(f"{db_path} holds no cuda kernel of gemm M=N=K=16 (see the docstring)")
    a, b, out = (torch.rand(16, 16, device="cuda") for _ in range(3))
    torch.testing.assert_close(k(a, b), a @ b, rtol=1e-4, atol=1e-4)  # the first call loads the kernel
    torch.testing.assert_close(k(a, b, out=out), a @ b, rtol=1e-4, atol=1e-4)
    module = k._load()
    args = (ctypes.c_void_p * 3)(a.data_ptr(), b.data_ptr(), out.data_ptr())
    stream = torch.cuda.current_stream().cuda_stream
    runs = [("torch.mm (PyTorch's launch)", lambda: torch.mm(a, b, out=out)),
            ("bare autotune_module_launch", lambda: _library.lib().autotune_module_launch(module, args, 3, stream)),
            ("kernel(a, b, out=c)", lambda: k(a, b, out=out)),
            ("kernel(a, b)", lambda: k(a, b))]
    for name, fn in runs:
        for _ in range(3):
            burst(fn)
        print(f"{name:32s} {1e6 * statistics.median(burst(fn) for _ in range(20)):.2f} us a call")


if __name__ == "__main__":
    main(sys.argv[1])
