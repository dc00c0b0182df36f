"""A tuning database and the kernels it holds, callable on numpy arrays and torch tensors."""
import ctypes
import sys

from . import _library
from ._library import AutotuneError, check
from .tensors import Arguments, TensorSpec, is_torch, torch_dtype


def _text(b):
    return b.decode() if b is not None else None


def _current_stream(torch, device):
    """The raw handle of the current CUDA stream of a device: torch's internal call where it has one
    (a tenth of the public one's cost), else the public one."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream


def _as_taken(torch, t, spec, on_gpu, device, alignment):
    """Whether tensor t is exactly as the kernel takes it: spec's (torch dtype, torch.Size), on the
    kernel's device, contiguous and aligned."""
    dtype, shape = spec
    return (isinstance(t, torch.Tensor) and t.dtype is dtype and t.shape == shape and t.is_cuda is on_gpu
            and (not on_gpu or t.get_device() == device) and t.is_contiguous() and t.data_ptr() % alignment == 0)


def _torch_with_cuda(workload):
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        raise AutotuneError(f"{workload} is a CUDA kernel: it runs on torch tensors of a CUDA device, and "
                            "PyTorch with a usable GPU is not here")
    return torch


class Kernel:
    """The best kernel of one workload (Database.lookup): its metadata, and a call that runs it.

    kernel(a, b) returns the output; kernel(a, b, out=c) writes c and returns it. A kernel with several
    outputs (add_rms_norm: the residual sum, then the normalized rows) returns them as a tuple and
    takes out=(s, y). cpu kernels take
    numpy arrays or torch CPU tensors, cuda kernels torch tensors on the GPU (run on the current
    stream, not waited for). The first call compiles the kernel (cached on disk afterwards).

    A cpu kernel may take an input (a convolution's weight) packed into a layout of its own, as the
    tuner measured it (`packs` names them): a call with the weight as it is packs it every time;
    kernel.pack("weight", w) makes the packed weight once, and calls given it skip that work."""

    def __init__(self, db, handle):
        self._db = db  # the answer lives as long as the database handle
        self._k = handle
        lib = _library.lib()
        self.language = _text(lib.autotune_kernel_language(handle))
        self.exact = bool(lib.autotune_kernel_is_exact(handle))
        self.workload = _text(lib.autotune_kernel_measured_workload(handle))
        self.target = _text(lib.autotune_kernel_target(handle))
        self.latency_ms = lib.autotune_kernel_latency_ms(handle)
        self.source = _text(lib.autotune_kernel_source(handle))
        self.trace = _text(lib.autotune_kernel_trace(handle))
        self.alignment = lib.autotune_kernel_pointer_alignment(handle)
        self._launch = lib.autotune_module_launch
        self.tensors = []
        for i in range(lib.autotune_kernel_num_params(handle)):
            rank = lib.autotune_kernel_tensor_rank(handle, i)
            self.tensors.append(TensorSpec(_text(lib.autotune_kernel_tensor_name(handle, i)),
                                           _text(lib.autotune_kernel_tensor_dtype(handle, i)),
                                           tuple(lib.autotune_kernel_tensor_dim(handle, i, d) for d in range(rank))))
        self.num_outputs = lib.autotune_kernel_num_outputs(handle)
        self.packs = {}  # input name -> (pack index, TensorSpec of the packed tensor)
        for i in range(lib.autotune_kernel_num_packed(handle)):
            spec = self.tensors[lib.autotune_kernel_packed_tensor(handle, i)]
            shape = tuple(lib.autotune_kernel_packed_dim(handle, i, d) for d in range(lib.autotune_kernel_packed_rank(handle, i)))
            self.packs[spec.name] = (i, TensorSpec(spec.name + "_packed", spec.dtype, shape))
        self._module = None
        self._device = None  # the CUDA device the module was loaded on
        self._args = (ctypes.c_void_p * len(self.tensors))()
        self._torch_specs = None  # (torch dtype, torch.Size) of each tensor, once torch is in use

    @property
    def inputs(self):
        return self.tensors[:-self.num_outputs]

    @property
    def outputs(self):
        return self.tensors[-self.num_outputs:]

    @property
    def output(self):
        return self.tensors[-1]

    def _outs(self, out):
        """`out` as a list with one entry per output (None: allocate it)."""
        if self.num_outputs == 1 and not isinstance(out, (tuple, list)):
            return [out]
        if out is None:
            return [None] * self.num_outputs
        if not isinstance(out, (tuple, list)) or len(out) != self.num_outputs:
            names = ", ".join(t.name for t in self.outputs)
            what = "it, or a tuple of it" if self.num_outputs == 1 else "a tuple of them"
            raise AutotuneError(f"{self.workload} writes {self.num_outputs} output{'s' if self.num_outputs > 1 else ''} "
                                f"({names}): out= takes {what}, not {len(out) if isinstance(out, (tuple, list)) else 'one'}")
        return list(out)

    def _result(self, outs):
        return outs[0] if self.num_outputs == 1 else tuple(outs)

    def _load(self, cuda_device=None):
        """The kernel's module, compiled and loaded at the first call. A CUDA module belongs to one
        device (torch's context for it: `cuda_device`, else the current device); calls with tensors
        on another fail."""
        if self._module is None:
            module = ctypes.c_void_p()
            if self.language == "cuda":
                torch = _torch_with_cuda(self.workload)
                cuda_device = torch.cuda.current_device() if cuda_device is None else cuda_device
                with torch.cuda.device(cuda_device):
                    torch.cuda.current_stream()  # makes torch's context for the device current
                    status = _library.lib().autotune_module_load(self._k, ctypes.byref(module))
            else:
                status = _library.lib().autotune_module_load(self._k, ctypes.byref(module))
            check(status, f"loading {self.workload}")
            self._module, self._device = module, cuda_device
        elif cuda_device is not None and cuda_device != self._device:
            raise AutotuneError(f"{self.workload}: this kernel was loaded on cuda:{self._device}, the tensors are on "
                                f"cuda:{cuda_device} (look the kernel up again for another device)")
        return self._module

    @property
    def build_options(self):
        """The compiler command (cpu) or NVRTC options (cuda) the kernel is built with, as it was measured."""
        return _text(_library.lib().autotune_module_build_options(self._load()))

    def pack(self, name, value):
        """Input `name` packed as the kernel takes it (a new array or tensor of the packed shape), made
        once: pass it in the input's place."""
        if name not in self.packs:
            raise AutotuneError(f"{self.workload} takes no packed input {name!r} (packed: {', '.join(self.packs) or 'none'})")
        index, packed_spec = self.packs[name]
        spec = next(t for t in self.inputs if t.name == name)
        args = Arguments(self.workload, self.tensors, self.language, self.alignment)
        source = args.input(value, spec)
        packed, target = args.output(None, packed_spec, is_torch(value), value.device if is_torch(value) else None)
        check(_library.lib().autotune_module_pack(self._load(), index, source, target), f"packing {name} of {self.workload}")
        return packed

    def __call__(self, *inputs, out=None):
        result = self._call_in_place(inputs, out)
        return result if result is not None else self._call_checked(inputs, out)

    def _call_in_place(self, inputs, out):
        """The call when every tensor is a torch tensor exactly as the kernel takes it (type, shape,
        device, contiguous, aligned) and the kernel is loaded: one pass of checks, no copies. None
        otherwise: the checked path then explains the mismatch or makes the copies."""
        torch = sys.modules.get("torch")
        n_in = len(self.tensors) - self.num_outputs
        if torch is None or self._module is None or len(inputs) != n_in:
            return None
        specs = self._torch_specs
        if specs is None:
            specs = self._torch_specs = tuple((torch_dtype(t.dtype), torch.Size(t.shape)) for t in self.tensors)
        args, align, device = self._args, self.alignment, self._device
        on_gpu = device is not None
        for i, t in enumerate(inputs):
            if not _as_taken(torch, t, specs[i], on_gpu, device, align):
                return None
            args[i] = t.data_ptr()
        outs = self._outs(out)
        for i, o in enumerate(outs):
            spec = specs[n_in + i]
            if o is None:
                o = outs[i] = torch.empty(spec[1], dtype=spec[0], device=inputs[0].device if inputs else None)
                if o.data_ptr() % align:
                    return None
            elif not _as_taken(torch, o, spec, on_gpu, device, align):
                return None
            args[n_in + i] = o.data_ptr()
        stream = _current_stream(torch, device) if on_gpu else None
        check(self._launch(self._module, args, len(self.tensors), stream), f"running {self.workload}")
        return self._result(outs)

    def _call_checked(self, inputs, out):
        if len(inputs) != len(self.inputs):
            names = ", ".join(t.name for t in self.inputs)
            raise AutotuneError(f"{self.workload} takes {len(self.inputs)} inputs ({names}), not {len(inputs)}")
        like_torch = any(is_torch(x) for x in inputs)
        args = Arguments(self.workload, self.tensors, self.language, self.alignment)
        packed = 0
        for i, (value, spec) in enumerate(zip(inputs, self.inputs)):
            packed_spec = self.packs[spec.name][1] if spec.name in self.packs else None
            if packed_spec and tuple(value.shape) == packed_spec.shape:
                spec, packed = packed_spec, packed + 1
            self._args[i] = args.input(value, spec)
        if 0 < packed < len(self.packs):
            raise AutotuneError(f"{self.workload}: pass every packed input ({', '.join(self.packs)}) packed, or none")
        outs = self._outs(out)
        like_torch = like_torch or any(is_torch(o) for o in outs)
        device = next((x.device for x in inputs if is_torch(x)), None)
        for i, spec in enumerate(self.outputs):
            outs[i], self._args[len(self.inputs) + i] = args.output(outs[i], spec, like_torch, device)
        stream = None
        if self.language == "cuda":
            import torch
            index = args.device
            module = self._load(index)
            stream = _current_stream(torch, index)
        else:
            module = self._load()
        launch = _library.lib().autotune_module_launch_packed if packed else self._launch
        check(launch(module, self._args, len(self.tensors), stream), f"running {self.workload}")
        args.finish()
        return self._result(outs)

    def __del__(self):
        if getattr(self, "_module", None) is not None:
            _library.lib().autotune_module_free(self._module)

    def __repr__(self):
        kind = "exact" if self.exact else "approximate"
        return f"<autotune.Kernel {self.workload} on {self.target}, {self.latency_ms:.4g} ms measured, {kind}>"


class Database:
    """A tuning database, opened read-only (autotune_db_open): Database("autotune.db")."""

    def __init__(self, path):
        handle = ctypes.c_void_p()
        check(_library.lib().autotune_db_open(str(path).encode(), ctypes.byref(handle)), f"opening {path}")
        self._db = handle

    def lookup(self, op, shape, epilogue="", target="cpu", dtype="float32", precision="ieee", nearest=False):
        """The best kernel of `op` at `shape` ("M=64,N=64,K=64" or a dict) with `epilogue` ("bias,relu")
        on `target` ("cpu", "cuda", "cuda:sm_90"); None when the database has none (nor, with
        nearest=True, a nearby shape's). dtype: float32, float16, bfloat16; precision: ieee, tf32 or
        3xtf32 for float32 gemm, batch_matmul and convolutions."""
        if isinstance(shape, dict):
            shape = ",".join(f"{k}={v}" for k, v in shape.items())
        type_name = dtype if precision == "ieee" else precision
        if precision not in ("ieee", "tf32", "3xtf32"):
            raise AutotuneError(f"unknown precision '{precision}' (expected ieee, tf32 or 3xtf32)")
        if precision != "ieee" and dtype != "float32":
            raise AutotuneError(f"precision {precision} is for float32 products, not {dtype}")
        k = ctypes.c_void_p()
        status = _library.lib().autotune_lookup_dtype(self._db, op.encode(), shape.encode(), (epilogue or "").encode(),
                                                      type_name.encode(), target.encode(), 1 if nearest else 0,
                                                      ctypes.byref(k))
        if status == 1:  # AUTOTUNE_NOT_FOUND
            return None
        check(status, f"lookup of {op} {shape}")
        return Kernel(self, k)

    def close(self):
        if getattr(self, "_db", None) is not None and self._db.value:
            _library.lib().autotune_db_close(self._db)
            self._db = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
