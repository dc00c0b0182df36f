"""autotune from Python: tuned kernels from a tuning database, called on numpy arrays and torch tensors.

    import autotune
    db = autotune.Database("autotune.db")
    gemm = db.lookup("gemm", "M=512,N=512,K=512", target="cpu")
    c = gemm(a, b)                       # numpy float32 arrays of shapes (512, 512)

Pure Python over the lookup library's C ABI (ctypes): no build step. The library is found through
$AUTOTUNE_LIBRARY, the repository's build tree, or the system's library path."""
from ._library import AutotuneError
from .database import Database, Kernel
from .tensors import TensorSpec


def version():
    """The autotune version of the library loaded."""
    from . import _library
    return _library.lib().autotune_version().decode()


__all__ = ["AutotuneError", "Database", "Kernel", "TensorSpec", "version"]
