"""BERT-base's encoder (12 layers, hidden 768, 12 heads, feed-forward 3072) with autotune's kernels:
its linear layers (bias fused; GELU after the feed-forward's first; the residual sum after the
attention's output and the feed-forward's second) and its attention products (batch and heads
flattened into a batch_matmul's batch). Softmax and layer norm stay PyTorch's.

    PYTHONPATH=python python3 docs/examples/pytorch/bert.py --out /tmp/bert          # --size: tokens (128 cuda, 32 cpu)
    ... --device cuda --trials 1000 --cuda-graph --compile"""
import math
import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

HIDDEN, HEADS, FFN, LAYERS = 768, 12, 3072, 12


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)
        self.norm1 = nn.LayerNorm(HIDDEN)
        self.up = nn.Linear(HIDDEN, FFN)
        self.act = nn.GELU()
        self.down = nn.Linear(FFN, HIDDEN)
        self.norm2 = nn.LayerNorm(HIDDEN)

    def forward(self, x):
        b, s = x.size(0), x.size(1)  # (traced by torch.fx: no unpacking of shapes)
        qkv = self.qkv(x).reshape(b, s, 3, HEADS, HIDDEN // HEADS).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0].contiguous(), qkv[1].contiguous(), qkv[2].contiguous()
        scores = (q @ k.transpose(-1, -2).contiguous()) * (1.0 / math.sqrt(HIDDEN // HEADS))
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, HIDDEN)
        x = self.norm1(self.out(context) + x)
        return self.norm2(self.down(self.act(self.up(x))) + x)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[Layer() for _ in range(LAYERS)])

    def forward(self, x):
        return self.layers(x)


def make_model():
    return Encoder(), f"BERT-base encoder ({LAYERS} layers, defined in this example)"


def make_inputs(tokens, device):
    return (torch.randn(1, tokens, HIDDEN, device=device),)


if __name__ == "__main__":
    sys.exit(common.main(__doc__, make_model, make_inputs, {"cuda": 128, "cpu": 32}))
