"""Triton's float32 matrix product: the peer `scripts/peer_bench.py --peer triton` times for gemm and
batch_matmul, the kernel a compiler engineer would write in Triton instead of tuning with autotune.

tl.dot with input_precision="ieee" keeps float32 arithmetic (FMAs, no TF32 tensor cores), as autotune's
kernels and PyTorch with TF32 off do. Triton's own autotuner picks the tile among CONFIGS the first
time it meets a shape, as a Triton user would let it; bias and ReLU are applied before the store, fused as
autotune fuses its epilogues.

  from triton_matmul import matmul, chosen_config
  c = matmul(a, b, bias=None, relu=False)   # a [M, K] @ b [K, N], or a batch: a [B, M, K] @ b [B, K, N]
"""
import torch
import triton
import triton.language as tl

# (block M, block N, block K, warps, pipeline stages): the tiles of Triton's matmul tutorial brought to
# float32 (tl.dot wants every block dimension >= 16; a float32 element is twice a float16's bytes, so
# block K is halved), and small-M tiles for batch-1 projections.
TILES = [(128, 128, 16, 4, 3), (128, 128, 32, 4, 2), (128, 128, 16, 8, 3), (128, 128, 32, 8, 3),
         (256, 128, 16, 8, 3), (128, 256, 16, 8, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4),
         (64, 64, 32, 4, 4), (64, 64, 32, 2, 5), (32, 64, 32, 2, 5), (16, 64, 64, 2, 4),
         (16, 128, 32, 4, 4), (32, 128, 32, 4, 4)]
CONFIGS = [triton.Config({"BM": m, "BN": n, "BK": k, "GROUP": 8}, num_warps=w, num_stages=s)
           for m, n, k, w, s in TILES]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K", "HAS_BIAS", "RELU"])
@triton.jit
def _matmul(a, b, bias, c, M, N, K, HAS_BIAS: tl.constexpr, RELU: tl.constexpr,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    # Program (tile, batch). Tiles go GROUP tile rows at a time, column by column, so that the programs
    # resident at once share rows of A and columns of B in L2 (the tutorial's order).
    pid, batch = tl.program_id(0), tl.program_id(1)
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    first = pid // (GROUP * tiles_n) * GROUP
    rows = min(tiles_m - first, GROUP)
    tm = first + (pid % (GROUP * tiles_n)) % rows
    tn = (pid % (GROUP * tiles_n)) // rows
    a += batch.to(tl.int64) * M * K
    b += batch.to(tl.int64) * K * N
    c += batch.to(tl.int64) * M * N
    rm = tm * BM + tl.arange(0, BM)
    rn = tn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        x = tl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = tl.load(b + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(bias + rn, mask=rn < N, other=0.0)[None, :]
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b, bias=None, relu=False):
    """a @ b (+ bias) (ReLU) in float32: a [M, K] and b [K, N], or a [B, M, K] and b [B, K, N]; bias [N]."""
    if a.dim() != b.dim() or a.dim() not in (2, 3) or a.shape[-1] != b.shape[-2] or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"triton_matmul: cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
    a, b = a.contiguous(), b.contiguous()
    batch = a.shape[0] if a.dim() == 3 else 1
    m, k = a.shape[-2:]
    n = b.shape[-1]
    out = torch.empty(*a.shape[:-1], n, device=a.device, dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]), batch)  # noqa: E731
    _matmul[grid](a, b, bias if bias is not None else a, out, m, n, k, HAS_BIAS=bias is not None, RELU=relu)
    return out


def chosen_config():
    """The tile Triton's autotuner chose on the last shape it tuned, as text (None before any call)."""
    cfg = getattr(_matmul, "best_config", None)
    return None if cfg is None else str(cfg)
