#!/usr/bin/env python3
"""Times PyTorch's operator for an autotune workload with autotune's method, on the GPU machine.

Same method as autotune's CUDA runner: random inputs uniform in [-1, 1), float32, TF32 off, cuDNN
benchmark mode on; warm-up; each repeat runs the operator enough times to last at least
--min-repeat-ms, timed with CUDA events; the L2 cache is flushed (a write of twice its size) before
each repeat; the median of the repeats is the figure. Prints one JSON object per workload.

  python3 scripts/peer_bench.py --op gemm --shape M=4096,N=4096,K=4096 [--epilogue bias,relu]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def parse_shape(text):
    out = {}
    for item in text.split(","):
        k, v = item.split("=")
        out[k.strip()] = int(v)
    return out


def make_case(op, p, epilogue, dev):
    rnd = lambda *s: torch.rand(*s, device=dev, dtype=torch.float32) * 2 - 1
    bias = "bias" in epilogue
    relu = "relu" in epilogue
    if op == "gemm":
        a, b = rnd(p["M"], p["K"]), rnd(p["K"], p["N"])
        bv = rnd(p["N"]) if bias else None
        flops = 2.0 * p["M"] * p["N"] * p["K"]

        def fn():
            y = torch.matmul(a, b)
            if bias:
                y = y + bv
            return torch.relu(y) if relu else y
    elif op == "batch_matmul":
        a, b = rnd(p["B"], p["M"], p["K"]), rnd(p["B"], p["K"], p["N"])
        bv = rnd(p["N"]) if bias else None
        flops = 2.0 * p["B"] * p["M"] * p["N"] * p["K"]

        def fn():
            y = torch.bmm(a, b)
            if bias:
                y = y + bv
            return torch.relu(y) if relu else y
    elif op == "conv2d":
        s, pad, dil, g = p.get("stride", 1), p.get("pad", 0), p.get("dilation", 1), p.get("groups", 1)
        x = rnd(p["N"], p["C"], p["H"], p["W"])
        w = rnd(p["K"], p["C"] // g, p["R"], p["S"])
        bv = rnd(p["K"]) if bias else None
        oh = (p["H"] + 2 * pad - dil * (p["R"] - 1) - 1) // s + 1
        ow = (p["W"] + 2 * pad - dil * (p["S"] - 1) - 1) // s + 1
        flops = 2.0 * p["N"] * p["K"] * oh * ow * (p["C"] // g) * p["R"] * p["S"]

        def fn():
            y = F.conv2d(x, w, bv, stride=s, padding=pad, dilation=dil, groups=g)
            return torch.relu(y) if relu else y
    else:
        raise SystemExit(f"unknown op {op}")
    return fn, flops


def time_ms(fn, repeats, min_repeat_ms, flush):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    # Launches per repeat so that one repeat lasts at least min_repeat_ms.
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end), 1e-3)
    number = max(1, int(min_repeat_ms / once + 0.999))
    times = []
    for _ in range(repeats):
        flush.zero_()
        start.record()
        for _ in range(number):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / number)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", required=True)
    ap.add_argument("--shape", required=True)
    ap.add_argument("--epilogue", default="")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--min-repeat-ms", type=float, default=50)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 60 * 2**20)
    flush = torch.empty(2 * l2 // 4, device=dev, dtype=torch.float32)
    fn, flops = make_case(args.op, parse_shape(args.shape), args.epilogue, dev)
    with torch.no_grad():
        times = time_ms(fn, args.repeats, args.min_repeat_ms, flush)
    med = statistics.median(times)
    print(json.dumps({"peer": "pytorch", "op": args.op, "shape": args.shape, "epilogue": args.epilogue,
                      "device": props.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "latency_ms": med, "gflops": flops / (med * 1e6), "latencies_ms": times}))


if __name__ == "__main__":
    main()
