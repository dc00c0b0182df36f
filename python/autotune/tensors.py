"""Arguments of a kernel call: numpy arrays (cpu kernels) or torch tensors (cpu or cuda kernels),
checked against the kernel's tensors (shape, element type, device) and brought to what the kernel
was measured with: contiguous, row-major, aligned to the kernel's pointer alignment (a copy, with a
warning, where they are not)."""
import sys
import warnings
from dataclasses import dataclass

from ._library import AutotuneError


# The element types of kernels' tensors, by the names that numpy and torch give them too.
DTYPE_NAMES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str  # one of DTYPE_NAMES
    shape: tuple


def _torch():
    return sys.modules.get("torch")


def is_torch(value):
    t = _torch()
    return t is not None and isinstance(value, t.Tensor)


def _numpy():
    import numpy
    return numpy


def _np_dtype(name):
    np = _numpy()
    if name == "bfloat16":
        raise AutotuneError("numpy has no bfloat16: pass torch tensors to a bfloat16 kernel")
    return np.dtype(name)


def torch_dtype(name):
    return getattr(_torch(), name)


def _aligned_numpy(shape, dtype, alignment):
    """An uninitialized C-ordered array whose data starts on an `alignment`-byte boundary."""
    np = _numpy()
    count = 1
    for d in shape:
        count *= d
    raw = np.empty(count * dtype.itemsize + alignment, dtype=np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset:offset + count * dtype.itemsize].view(dtype).reshape(shape)


class Arguments:
    """The pointers of one call, and what to do after it (copy a temporary output back)."""

    def __init__(self, kernel_name, specs, language, alignment):
        self.kernel_name, self.specs, self.language, self.alignment = kernel_name, specs, language, alignment
        self.keep = []          # arrays that must live until the launch returns
        self.copy_back = []     # (temporary output, the caller's out) of each output copied
        self.device = None      # the CUDA device index every tensor is on

    def _check(self, value, spec, role):
        shape = tuple(value.shape)
        if shape != spec.shape:
            raise AutotuneError(f"{self.kernel_name}: {role} {spec.name} has shape {shape}, the kernel takes {spec.shape}")
        if is_torch(value):
            if value.dtype != torch_dtype(spec.dtype):
                raise AutotuneError(f"{self.kernel_name}: {role} {spec.name} is {value.dtype}, the kernel takes {spec.dtype}")
            on_gpu = value.device.type == "cuda"
            if on_gpu != (self.language == "cuda"):
                where = "a CUDA device" if self.language == "cuda" else "the CPU"
                raise AutotuneError(f"{self.kernel_name}: {role} {spec.name} is on {value.device}; the kernel runs on {where}")
            if on_gpu:
                if self.device is not None and value.get_device() != self.device:
                    raise AutotuneError(f"{self.kernel_name}: {role} {spec.name} is on {value.device}, an earlier tensor "
                                        f"on cuda:{self.device}; one call's tensors share a device")
                self.device = value.get_device()
        else:
            if self.language == "cuda":
                raise AutotuneError(f"{self.kernel_name}: a CUDA kernel takes torch tensors on the GPU, not {type(value).__name__}")
            if value.dtype != _np_dtype(spec.dtype):
                raise AutotuneError(f"{self.kernel_name}: {role} {spec.name} is {value.dtype}, the kernel takes {spec.dtype}")

    def _ready(self, value):
        """Whether the kernel can read `value` in place: contiguous and aligned."""
        if is_torch(value):
            return value.is_contiguous() and value.data_ptr() % self.alignment == 0
        return value.flags["C_CONTIGUOUS"] and value.ctypes.data % self.alignment == 0

    def _copy(self, value):
        if is_torch(value):
            return value.contiguous().clone()  # a fresh allocation: the allocator's alignment
        copy = _aligned_numpy(value.shape, value.dtype, self.alignment)
        copy[...] = value
        return copy

    @staticmethod
    def _pointer(value):
        return value.data_ptr() if is_torch(value) else value.ctypes.data

    def input(self, value, spec):
        self._check(value, spec, "input")
        if not self._ready(value):
            warnings.warn(f"{self.kernel_name}: input {spec.name} copied: it is not contiguous and "
                          f"{self.alignment}-byte aligned, as the kernel was measured with", stacklevel=4)
            value = self._copy(value)
        self.keep.append(value)
        return self._pointer(value)

    def output(self, out, spec, like_torch, device):
        if out is None:
            if like_torch:
                out = _torch().empty(spec.shape, dtype=torch_dtype(spec.dtype), device=device)
            else:
                out = _aligned_numpy(spec.shape, _np_dtype(spec.dtype), self.alignment)
        self._check(out, spec, "output")
        target = out
        if not self._ready(out):
            warnings.warn(f"{self.kernel_name}: output {spec.name} goes through an aligned copy: it is not "
                          f"contiguous and {self.alignment}-byte aligned", stacklevel=4)
            target = self._copy(out)
            self.copy_back.append((target, out))
        self.keep.append(target)
        return out, self._pointer(target)

    def finish(self):
        for tmp, out in self.copy_back:
            if is_torch(out):
                out.copy_(tmp)
            else:
                out[...] = tmp
