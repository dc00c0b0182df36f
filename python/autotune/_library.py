"""Loads libautotune_lookup (the lookup library and its runtime, include/autotune/lookup.h) with ctypes.

Where it looks, in order: $AUTOTUNE_LIBRARY (a path to the .so), the build tree of the repository
this package sits in (build/lib), then the system's library path (an installed copy)."""
import ctypes
import ctypes.util
import os
from pathlib import Path

MIN_ABI = 5  # the runtime's functions, packed inputs, several outputs


class AutotuneError(RuntimeError):
    """A failure reported by the library, with its one-line reason."""


def _candidates():
    env = os.environ.get("AUTOTUNE_LIBRARY")
    if env:
        yield env
        return
    here = Path(__file__).resolve().parent
    for build in (here.parent.parent / "build" / "lib",):
        found = sorted(build.glob("libautotune_lookup.so*"))
        if found:
            yield str(found[0])
    name = ctypes.util.find_library("autotune_lookup")
    if name:
        yield name


def _declare(lib):
    c = ctypes
    p, i64 = c.c_void_p, c.c_int64
    sigs = {
        "autotune_lookup_abi_version": (c.c_int, []),
        "autotune_version": (c.c_char_p, []),
        "autotune_last_error": (c.c_char_p, []),
        "autotune_db_open": (c.c_int, [c.c_char_p, c.POINTER(p)]),
        "autotune_db_close": (None, [p]),
        "autotune_lookup_dtype": (c.c_int, [p, c.c_char_p, c.c_char_p, c.c_char_p, c.c_char_p, c.c_char_p, c.c_uint,
                                            c.POINTER(p)]),
        "autotune_kernel_is_exact": (c.c_int, [p]),
        "autotune_kernel_language": (c.c_char_p, [p]),
        "autotune_kernel_source": (c.c_char_p, [p]),
        "autotune_kernel_num_params": (c.c_int, [p]),
        "autotune_kernel_num_outputs": (c.c_int, [p]),
        "autotune_kernel_latency_ms": (c.c_double, [p]),
        "autotune_kernel_measured_workload": (c.c_char_p, [p]),
        "autotune_kernel_target": (c.c_char_p, [p]),
        "autotune_kernel_trace": (c.c_char_p, [p]),
        "autotune_kernel_tensor_name": (c.c_char_p, [p, c.c_int]),
        "autotune_kernel_tensor_dtype": (c.c_char_p, [p, c.c_int]),
        "autotune_kernel_tensor_rank": (c.c_int, [p, c.c_int]),
        "autotune_kernel_tensor_dim": (i64, [p, c.c_int, c.c_int]),
        "autotune_kernel_pointer_alignment": (i64, [p]),
        "autotune_module_load": (c.c_int, [p, c.POINTER(p)]),
        "autotune_module_launch": (c.c_int, [p, c.POINTER(p), c.c_int, p]),
        "autotune_kernel_num_packed": (c.c_int, [p]),
        "autotune_kernel_packed_tensor": (c.c_int, [p, c.c_int]),
        "autotune_kernel_packed_rank": (c.c_int, [p, c.c_int]),
        "autotune_kernel_packed_dim": (i64, [p, c.c_int, c.c_int]),
        "autotune_module_pack": (c.c_int, [p, c.c_int, p, p]),
        "autotune_module_launch_packed": (c.c_int, [p, c.POINTER(p), c.c_int, p]),
        "autotune_module_build_options": (c.c_char_p, [p]),
        "autotune_module_free": (None, [p]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


def _load():
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        if not hasattr(lib, "autotune_lookup_abi_version") or lib.autotune_lookup_abi_version() < MIN_ABI:
            tried.append(f"{path} (older than ABI {MIN_ABI})")
            continue
        _declare(lib)
        return lib
    where = "; ".join(tried) or "none found (set AUTOTUNE_LIBRARY to the .so, or build the repository)"
    raise AutotuneError(f"cannot load libautotune_lookup: {where}")


_lib = None


def lib():
    """The loaded library (loaded on first use)."""
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def last_error():
    return lib().autotune_last_error().decode()


def check(status, what):
    """Raises AutotuneError with the library's reason unless status is AUTOTUNE_OK."""
    if status != 0:
        raise AutotuneError(f"{what}: {last_error()}")
