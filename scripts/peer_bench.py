#!/usr/bin/env python3
"""Times PyTorch's operator (or Triton's matmul: --peer triton) for an autotune workload with autotune's
method, on the GPU machine.

Same method as autotune's CUDA runner: random inputs uniform in [-1, 1), float32 (unless --dtype), TF32 off, cuDNN
benchmark mode on; warm-up; each repeat runs the operator enough times to last at least
--min-repeat-ms, timed with CUDA events; the L2 cache is flushed (a write of twice its size) before
each repeat; the median of the repeats is the figure. Prints one JSON object per workload.

  python3 scripts/peer_bench.py --op gemm --shape M=4096,N=4096,K=4096 [--epilogue bias,relu]

--inputs DIR runs PyTorch's operator on the inputs that `autotune measure --save-io DIR` saved (the
very data autotune's kernel was checked and timed on; op, shape and epilogue come from DIR/io.json)
and compares its answer with autotune's saved output: max_rel_error is max_i |a_i - p_i| /
max(|p_i|, mean |p|) with p PyTorch's output (the rule of autotune's reference check,
measure/reference_check.h), and answers_match is max_rel_error <= --rtol (default 1e-4, autotune's
own tolerance against its naive reference). Exit status 1 when they do not match.

  python3 scripts/peer_bench.py --inputs DIR

--peer triton times Triton's float32 matrix product instead (scripts/triton_matmul.py: tl.dot in
"ieee" precision, Triton's autotuner choosing the tile the first time it meets a shape), for gemm
and batch_matmul (Triton has no convolution to compare with), with the same inputs, method and
answer check, except that each repeat replays its launches as one CUDA graph (Triton's Python
launcher costs more per call than a small kernel runs; autotune launches from C++).

  python3 scripts/peer_bench.py --peer triton --inputs DIR

--copy-bandwidth times a device-to-device copy of a large buffer (--copy-mib, default 1024) the same
way and prints the bandwidth (bytes read + written per second), the device's SM count, compute
capability and the SM clock that nvidia-smi reports while the copies run: the figures
scripts/bench needs for the roofline floor.

  python3 scripts/peer_bench.py --copy-bandwidth

--dtype float16|bfloat16 runs the operator in that type (inputs, weights and output; with --inputs the
type comes from io.json, whose 16-bit tensors are saved widened, so converting them back is exact).
PyTorch's reduced-precision reductions are turned off, so its products accumulate in float32 as
autotune's do; answers match within --rtol plus the type's unit roundoff (2^-11 for float16, 2^-8
for bfloat16) once per rounding of either side: autotune rounds once, PyTorch once for its product
and once more for each epilogue step it runs in the type (a bias fused into cuDNN's convolution is
no extra step).

--precision tf32|3xtf32 (default: io.json's "precision" with --inputs, else ieee) is for float32
products: tf32 turns PyTorch's TF32 on (cuBLAS's TF32 kernels), and the answers then match within
--rtol plus 16 TF32 unit roundoffs (2^-11 each: both sides round every factor); 3xtf32 keeps
PyTorch in IEEE float32 (its closest peer in accuracy) at --rtol. For every float32 product the
output also reports each side's largest error against a float64 product of the same inputs
(err64_autotune, err64_peer; the check's rule of max |got - ref| / max(|ref|, mean |ref|)).
"""
import argparse
import ast
import json
import os
import statistics
import struct
import subprocess
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    sys.exit(f"peer_bench: PyTorch is not installed here ({e})")


def parse_shape(text):
    out = {}
    for item in text.split(","):
        k, v = item.split("=")
        out[k.strip()] = int(v)
    return out


def load_triton_matmul():
    """scripts/triton_matmul.py (beside this script), or a one-line exit where Triton is missing."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import triton_matmul
    except ImportError as e:
        sys.exit(f"peer_bench: Triton is not installed here ({e})")
    return triton_matmul


class EpilogueTail:
    """autotune's epilogue parts in order, as PyTorch operations; `inputs` are the tensors the parts
    take (bias, scale, shift: one per channel; residual: the output's shape), drawn in part order."""

    ACTIVATIONS = {"relu": torch.relu, "relu6": F.relu6, "silu": F.silu,
                   "gelu": lambda y: F.gelu(y, approximate="none"), "gelu_tanh": lambda y: F.gelu(y, approximate="tanh")}

    def __init__(self, parts, rnd, out_shape, channels, channel_dim):
        view = [1] * len(out_shape)
        view[channel_dim] = channels
        self.steps, self.inputs = [], []
        for part in parts:
            if part in ("bias", "shift", "scale"):
                v = rnd(channels)
                self.inputs.append(v)
                v = v.view(view)
                self.steps.append((lambda y, v=v: y * v) if part == "scale" else (lambda y, v=v: y + v))
            elif part == "residual":
                r = rnd(*out_shape)
                self.inputs.append(r)
                self.steps.append(lambda y, r=r: y + r)
            elif part in self.ACTIVATIONS:
                self.steps.append(self.ACTIVATIONS[part])
            else:
                raise SystemExit(f"peer_bench: unknown epilogue part '{part}'")

    def __call__(self, y):
        for step in self.steps:
            y = step(y)
        return y


# Per convolution operator: its spatial and kernel parameters, outermost first, and PyTorch's function.
CONVOLUTIONS = {"conv1d": (("L",), ("R",), F.conv1d), "conv2d": (("H", "W"), ("R", "S"), F.conv2d),
                "conv3d": (("D", "H", "W"), ("Q", "R", "S"), F.conv3d),
                "conv2d_nhwc": (("H", "W"), ("R", "S"), F.conv2d)}
# Operators whose tensors have the channels last: PyTorch runs them on channels_last views of the same
# memory (NHWC data and KRSC weights as NCHW and KCRS tensors; cuDNN's NHWC kernels), no copies.
CHANNELS_LAST = ("conv2d_nhwc",)

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
UNIT_ROUNDOFF = {"float32": 0.0, "float16": 2.0**-11, "bfloat16": 2.0**-8}


def make_case(op, p, epilogue, dev, given=None, peer="pytorch", dtype=torch.float32):
    """The peer's operator as a function of no arguments, its FLOPs and how many times it rounds its
    result (its product, then each step of its epilogue). Inputs are random unless `given`:
    tensors in the workload's input order (A, B[, bias] or data, weight[, bias]), converted to `dtype`."""
    if peer == "triton" and op not in ("gemm", "batch_matmul"):
        raise SystemExit(f"peer_bench: --peer triton times gemm and batch_matmul; Triton has no {op} to compare with")
    tm = load_triton_matmul() if peer == "triton" else None
    pending = list(given) if given is not None else None

    def rnd(*s):
        if pending is not None:
            t = pending.pop(0)
            if tuple(t.shape) != tuple(s):
                raise SystemExit(f"peer_bench: a saved input has shape {tuple(t.shape)}, {op} {p} wants {s}")
            return t.to(dtype)
        return (torch.rand(*s, device=dev, dtype=torch.float32) * 2 - 1).to(dtype)

    parts = [q for q in epilogue.split(",") if q]
    bias = parts == ["bias"] or parts == ["bias", "relu"]
    relu = parts == ["relu"] or parts == ["bias", "relu"]
    if tm and parts not in ([], ["bias"], ["relu"], ["bias", "relu"]):
        raise SystemExit(f"peer_bench: --peer triton fuses bias and relu only, not '{epilogue}'")
    if op in ("gemm", "batch_matmul"):
        batch = (p["B"],) if op == "batch_matmul" else ()
        a, b = rnd(*batch, p["M"], p["K"]), rnd(*batch, p["K"], p["N"])
        out_shape, channels = (*batch, p["M"], p["N"]), p["N"]
        tail = EpilogueTail(parts, rnd, out_shape, channels, channel_dim=len(out_shape) - 1)
        bv = tail.inputs[0] if tm and bias else None
        flops = 2.0 * (batch[0] if batch else 1) * p["M"] * p["N"] * p["K"]
        product = torch.bmm if batch else torch.matmul

        def fn():
            if tm:
                return tm.matmul(a, b, bv, relu)
            return tail(product(a, b))
    elif op in CONVOLUTIONS:
        spatial, kernel, conv = CONVOLUTIONS[op]
        s, pad, dil, g = p.get("stride", 1), p.get("pad", 0), p.get("dilation", 1), p.get("groups", 1)
        last = op in CHANNELS_LAST
        x = rnd(p["N"], *(p[d] for d in spatial), p["C"]) if last else rnd(p["N"], p["C"], *(p[d] for d in spatial))
        w = (rnd(p["K"], *(p[d] for d in kernel), p["C"] // g) if last
             else rnd(p["K"], p["C"] // g, *(p[d] for d in kernel)))
        if last:  # the same memory as channels_last NCHW and KCRS tensors
            x, w = x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2)
        out = [(p[d] + 2 * pad - dil * (p[k] - 1) - 1) // s + 1 for d, k in zip(spatial, kernel)]
        out_shape = (p["N"], *out, p["K"]) if last else (p["N"], p["K"], *out)
        # A leading bias goes into the convolution itself (cuDNN fuses it), the rest follow.
        fused_bias = rnd(p["K"]) if parts[:1] == ["bias"] else None
        tail = EpilogueTail(parts[1:] if fused_bias is not None else parts, rnd, out_shape, p["K"],
                            len(out_shape) - 1 if last else 1)
        flops = 2.0 * p["N"] * p["K"] * (p["C"] // g)
        for d, k in zip(out, kernel):
            flops *= d * p[k]

        def fn():
            y = conv(x, w, fused_bias, stride=s, padding=pad, dilation=dil, groups=g)
            return tail(y.permute(0, 2, 3, 1) if last else y)
    elif op == "conv2d_transpose":
        s, pad, dil, g = p.get("stride", 1), p.get("pad", 0), p.get("dilation", 1), p.get("groups", 1)
        extra = p.get("output_padding", 0)
        x = rnd(p["N"], p["C"], p["H"], p["W"])
        w = rnd(p["C"], p["K"] // g, p["R"], p["S"])
        out = [(p[d] - 1) * s - 2 * pad + dil * (p[k] - 1) + extra + 1 for d, k in (("H", "R"), ("W", "S"))]
        fused_bias = rnd(p["K"]) if parts[:1] == ["bias"] else None
        tail = EpilogueTail(parts[1:] if fused_bias is not None else parts, rnd, (p["N"], p["K"], *out), p["K"], 1)
        flops = 2.0 * p["N"] * p["C"] * p["H"] * p["W"] * (p["K"] // g) * p["R"] * p["S"]

        def fn():
            return tail(F.conv_transpose2d(x, w, fused_bias, stride=s, padding=pad, output_padding=extra,
                                           groups=g, dilation=dil))
    elif op == "capsule_conv2d":
        fn, flops, tail = capsule_conv2d(p, parts, rnd)
    elif op in ROW_OPERATORS:
        fn, flops = row_operator(op, p, rnd)
        tail = None
    else:
        raise SystemExit(f"peer_bench: unknown op {op}")
    if pending:
        raise SystemExit(f"peer_bench: {len(pending)} saved inputs more than {op} with epilogue '{epilogue}' takes")
    return fn, flops, 1 + (0 if tm or tail is None else len(tail.steps))


def capsule_conv2d(p, parts, rnd):
    """Ansor's capsule convolution (tir/ops/capsule_conv2d.cc) as an einsum over the unfolded input:
    data [N,C,P,P,H,W] of PxP matrices, weights [K,C,P,P,R,S]."""
    n, c, k, cap = p["N"], p["C"], p["K"], p.get("capsule", 4)
    r, s, stride, pad = p["R"], p["S"], p.get("stride", 1), p.get("pad", 0)
    oh, ow = (p["H"] + 2 * pad - r) // stride + 1, (p["W"] + 2 * pad - s) // stride + 1
    x = rnd(n, c, cap, cap, p["H"], p["W"])
    w = rnd(k, c, cap, cap, r, s)
    tail = EpilogueTail(parts, rnd, (n, k, cap, cap, oh, ow), k, 1)
    flops = 2.0 * n * k * cap * cap * oh * ow * c * cap * r * s

    def fn():
        cols = F.unfold(x.reshape(n, c * cap * cap, p["H"], p["W"]), (r, s), padding=pad, stride=stride)
        cols = cols.view(n, c, cap, cap, r, s, oh, ow)
        return tail(torch.einsum("nciqrsyx,kcqjrs->nkijyx", cols, w))
    return fn, flops, tail


# Row operators: PyTorch's function, and the FLOPs per element autotune counts for them.
ROW_OPERATORS = {"softmax": 5, "layer_norm": 8, "rms_norm": 4, "norm": 2, "add_layer_norm": 9, "add_rms_norm": 5}
NORM_EPSILON = 1e-5  # tir/ops/row_operator.h


def row_operator(op, p, rnd):
    """softmax, layer_norm, rms_norm (inputs X[M,N] and per-column weights) or norm (X[B,M,N]) as
    PyTorch computes them, and their FLOPs. add_layer_norm and add_rms_norm (X, R[M,N], weights) add
    the residual first and return (sum, normalized sum), as eager PyTorch code does in two steps."""
    if op == "norm":
        x = rnd(p["B"], p["M"], p["N"])
        return (lambda: torch.linalg.vector_norm(x, dim=(1, 2))), 2.0 * x.numel()
    m, n = p["M"], p["N"]
    x = rnd(m, n)
    flops = ROW_OPERATORS[op] * float(m * n)
    if op == "softmax":
        return (lambda: torch.softmax(x, dim=-1)), flops
    residual = rnd(m, n) if op.startswith("add_") else None
    if op.endswith("layer_norm"):
        g, b = rnd(n), rnd(n)
        norm = lambda h: F.layer_norm(h, (n,), g, b, eps=NORM_EPSILON)
    else:
        w = rnd(n)
        if hasattr(F, "rms_norm"):
            norm = lambda h: F.rms_norm(h, (n,), w, eps=NORM_EPSILON)
        else:
            norm = lambda h: h * torch.rsqrt(h.float().pow(2).mean(-1, keepdim=True) + NORM_EPSILON).to(h.dtype) * w
    if residual is None:
        return (lambda: norm(x)), flops

    def add_norm():
        h = x + residual
        return h, norm(h)
    return add_norm, flops


def read_npy(path):
    """A little-endian float32, C-order .npy file (what `autotune measure --save-io` writes) as a CPU
    tensor; no numpy needed."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SystemExit(f"peer_bench: cannot read {path}: {e.strerror}")
    if data[:6] != b"\x93NUMPY":
        raise SystemExit(f"peer_bench: {path} is not a .npy file")
    if data[6] == 1:
        (hlen,), off = struct.unpack("<H", data[8:10]), 10
    else:
        (hlen,), off = struct.unpack("<I", data[8:12]), 12
    header = ast.literal_eval(data[off:off + hlen].decode("latin1"))
    if header.get("descr") != "<f4" or header.get("fortran_order"):
        raise SystemExit(f"peer_bench: {path} is not little-endian float32 in C order: {header}")
    shape = tuple(header["shape"])
    body = bytearray(data[off + hlen:])
    n = 1
    for d in shape:
        n *= d
    if len(body) != 4 * n:
        raise SystemExit(f"peer_bench: {path} holds {len(body)} bytes for shape {shape}")
    if n == 0:
        return torch.empty(shape, dtype=torch.float32)
    return torch.frombuffer(body, dtype=torch.float32).reshape(shape)


def load_saved(directory):
    """io.json of `autotune measure --save-io` and its tensors: (manifest, inputs, autotune's output or
    None; several outputs flattened into one, in the order saved)."""
    try:
        with open(os.path.join(directory, "io.json")) as f:
            io = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"peer_bench: {directory}/io.json: {e}")
    inputs, outputs = [], []
    for t in io["tensors"]:
        tensor = read_npy(os.path.join(directory, t["file"]))
        if list(tensor.shape) != list(t["shape"]):
            raise SystemExit(f"peer_bench: {t['file']} has shape {list(tensor.shape)}, io.json says {t['shape']}")
        if t["role"] == "input":
            inputs.append(tensor)
        elif t["role"] == "output":
            outputs.append(tensor)
    return io, inputs, flattened(outputs) if outputs else None


def flattened(outputs):
    """One output as it is; several (a tuple or list) flattened into one vector, in order."""
    if not isinstance(outputs, (tuple, list)):
        return outputs
    return outputs[0] if len(outputs) == 1 else torch.cat([t.reshape(-1) for t in outputs])


def relative_error(got, ref):
    """max_i |got_i - ref_i| / max(|ref_i|, mean |ref|), in double: measure/reference_check.h's rule
    (infinite where got is NaN or infinite and ref is finite)."""
    got, ref = got.double(), ref.double()
    scale = max(ref.abs().mean().item(), 1.1754943508222875e-38)
    err = (got - ref).abs() / ref.abs().clamp(min=scale)
    err = torch.where(torch.isfinite(got) | ~torch.isfinite(ref), err, torch.full_like(err, float("inf")))
    return err.max().item() if err.numel() else 0.0


def float64_errors(op, shape, epilogue, dev, given, autotune_out, peer_out):
    """Each side's largest error against the product computed in float64 from the same inputs."""
    with torch.no_grad():
        fn, _, _ = make_case(op, parse_shape(shape), epilogue, dev, [t.double() for t in given], "pytorch", torch.float64)
        ref = fn()
    return {"err64_autotune": relative_error(autotune_out, ref), "err64_peer": relative_error(peer_out, ref)}


def smi_gpu():
    """nvidia-smi's `-i` for the GPU PyTorch uses here: the first of CUDA_VISIBLE_DEVICES (nvidia-smi
    ignores that variable; scripts/bench sets CUDA_DEVICE_ORDER=PCI_BUS_ID so the indices agree),
    else the first GPU."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return ["-i", visible] if visible else []


def nvidia_smi(query):
    """Values of `nvidia-smi --query-gpu=QUERY` for the GPU in use, or None."""
    try:
        out = subprocess.run(["nvidia-smi", *smi_gpu(), f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return [v.strip() for v in out.stdout.strip().splitlines()[0].split(",")]


def copy_bandwidth(args, dev, props, flush):
    """Device-to-device copy of --copy-mib MiB, timed like the operators: bytes read + written per second."""
    n = args.copy_mib * 2**20 // 4
    src = torch.rand(n, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    # nvidia-smi samples the SM clock while the copies run (it takes a moment to start; the repeats
    # last about repeats x min_repeat_ms).
    smi = None
    try:
        smi = subprocess.Popen(["bash", "-c", "sleep 0.2; exec \"$@\"", "bash", "nvidia-smi", *smi_gpu(),
                                "--query-gpu=clocks.sm,clocks.max.sm", "--format=csv,noheader,nounits"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError:
        pass
    times = time_ms(lambda: dst.copy_(src), args.repeats, max(args.min_repeat_ms, 100), flush)
    clocks = None
    if smi is not None:
        try:
            out, _ = smi.communicate(timeout=30)
            clocks = [v.strip() for v in out.strip().splitlines()[0].split(",")] if out.strip() else None
        except (subprocess.TimeoutExpired, IndexError):
            smi.kill()
    med = statistics.median(times)
    moved = 2 * n * 4
    driver = nvidia_smi("driver_version")

    def mhz(v):
        try:
            return float(v)
        except (TypeError, ValueError):
            return None
    return {"peer": "copy", "device": props.name, "capability": f"{props.major}.{props.minor}",
            "sm_count": props.multi_processor_count, "l2_bytes": getattr(props, "L2_cache_size", None),
            "bytes_moved": moved, "latency_ms": med, "latencies_ms": times,
            "bandwidth_gbps": moved / (med * 1e6),
            "sm_clock_mhz": mhz(clocks[0]) if clocks else None,
            "max_sm_clock_mhz": mhz(clocks[1]) if clocks and len(clocks) > 1 else None,
            "driver": driver[0] if driver else None, "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version()}


def time_ms(fn, repeats, min_repeat_ms, flush, graph=False):
    """Per-launch milliseconds of `repeats` repeats. With graph, each repeat replays one CUDA graph of
    its launches, so the figure leaves out the Python-side launch cost (Triton's launcher takes tens
    of microseconds a call, longer than small kernels run)."""
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
    def launches():
        for _ in range(number):
            fn()  # the output is dropped at once: a graph's pool reuses its memory
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            launches()
        launches = g.replay
    times = []
    for _ in range(repeats):
        flush.zero_()
        start.record()
        launches()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / number)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op")
    ap.add_argument("--shape")
    ap.add_argument("--epilogue", default="")
    ap.add_argument("--peer", choices=["pytorch", "triton"], default="pytorch",
                    help="whose operator: PyTorch's (default) or Triton's float32 matmul (gemm, batch_matmul)")
    ap.add_argument("--cuda-graph", action="store_true",
                    help="replay each repeat's launches as one CUDA graph, leaving out the per-call host cost "
                         "(always so for --peer triton)")
    ap.add_argument("--inputs", metavar="DIR", help="the inputs (and output) saved by autotune measure --save-io DIR")
    ap.add_argument("--rtol", type=float, default=1e-4,
                    help="answers match when max_rel_error <= this (plus a 16-bit type's unit roundoff per rounding: see above)")
    ap.add_argument("--dtype", choices=sorted(DTYPES), help="element type (default: io.json's with --inputs, else float32)")
    ap.add_argument("--precision", choices=["ieee", "tf32", "3xtf32"],
                    help="float32 products: PyTorch's TF32 on for tf32 (default: io.json's with --inputs, else ieee)")
    ap.add_argument("--copy-bandwidth", action="store_true", help="time a device-to-device copy instead")
    ap.add_argument("--copy-mib", type=int, default=1024, help="size of the copied buffer (MiB)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--min-repeat-ms", type=float, default=50)
    args = ap.parse_args()
    if not args.copy_bandwidth and not args.inputs and not (args.op and args.shape):
        ap.error("give --op and --shape, --inputs DIR, or --copy-bandwidth")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # float32 accumulation in half-precision products, as autotune's kernels accumulate.
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cudnn.benchmark = True
    if not torch.cuda.is_available():
        sys.exit("peer_bench: PyTorch sees no CUDA device")
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 60 * 2**20)
    flush = torch.empty(2 * l2 // 4, device=dev, dtype=torch.float32)
    if args.copy_bandwidth:
        print(json.dumps(copy_bandwidth(args, dev, props, flush)))
        return 0

    op, shape, epilogue, given, theirs = args.op, args.shape, args.epilogue, None, None
    dtype = args.dtype or "float32"
    if args.inputs:
        io, saved, theirs = load_saved(args.inputs)
        saved_shape = io.get("shape_text") or ",".join(f"{k}={v}" for k, v in io["shape"].items())
        if op and op != io["op"]:
            sys.exit(f"peer_bench: --op {op}, but {args.inputs} holds {io['op']}")
        if shape and parse_shape(shape).items() - io["shape"].items():
            sys.exit(f"peer_bench: --shape {shape}, but {args.inputs} holds {saved_shape}")
        saved_dtype = io.get("dtype", "float32")
        if args.dtype and args.dtype != saved_dtype:
            sys.exit(f"peer_bench: --dtype {args.dtype}, but {args.inputs} holds {saved_dtype} tensors")
        if saved_dtype not in DTYPES:
            sys.exit(f"peer_bench: {args.inputs} holds {saved_dtype} tensors, which this script does not know")
        op, shape, epilogue, dtype = io["op"], saved_shape, io.get("epilogue", ""), saved_dtype
        given = [t.to(dev) for t in saved]
        saved_precision = io.get("precision", "ieee")
        if args.precision and args.precision != saved_precision:
            sys.exit(f"peer_bench: --precision {args.precision}, but {args.inputs} was computed at {saved_precision}")
        args.precision = saved_precision
    precision = args.precision or "ieee"
    if precision != "ieee" and dtype != "float32":
        sys.exit(f"peer_bench: --precision {precision} is for float32 products, not {dtype}")
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    if dtype != "float32" and args.peer == "triton":
        sys.exit("peer_bench: --peer triton times float32 products only")
    fn, flops, roundings = make_case(op, parse_shape(shape), epilogue, dev, given, args.peer, DTYPES[dtype])
    graph = args.cuda_graph or args.peer == "triton"  # Triton's launcher would set the pace otherwise
    with torch.no_grad():
        times = time_ms(fn, args.repeats, args.min_repeat_ms, flush, graph=graph)
        ours = flattened(fn()) if theirs is not None else None  # the algorithm just timed (cuDNN benchmark mode chose it)
    med = statistics.median(times)
    out = {"peer": args.peer, "cuda_graph": graph, "op": op, "shape": shape, "epilogue": epilogue, "dtype": dtype,
           "precision": precision,
           "device": props.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "latency_ms": med, "gflops": flops / (med * 1e6), "latencies_ms": times}
    if args.peer == "triton":
        tm = load_triton_matmul()
        out.update({"triton": tm.triton.__version__, "triton_config": tm.chosen_config()})
    status = 0
    if args.inputs:
        out["inputs"] = args.inputs
        if theirs is None:
            out.update({"max_rel_error": None, "answers_match": None,
                        "compare_error": "no autotune output in io.json (its run failed)"})
        else:
            rel = relative_error(theirs.to(dev), ours)
            rtol = args.rtol + (1 + roundings) * UNIT_ROUNDOFF[dtype] + (16 * 2.0**-11 if precision == "tf32" else 0)
            if dtype == "float32" and op in ("gemm", "batch_matmul"):
                out.update(float64_errors(op, shape, epilogue, dev, given, theirs.to(dev), ours))
            out.update({"max_rel_error": rel if rel != float("inf") else None, "rtol": rtol,
                        "answers_match": rel <= rtol})
            status = 0 if rel <= rtol else 1
    print(json.dumps(out))
    return status


if __name__ == "__main__":
    sys.exit(main())
