"""A PyTorch model with autotune's kernels, end to end: its layers as tuning tasks, tuned, swapped in,
checked against the model and timed against eager PyTorch (and, with --compile, torch.compile).

    PYTHONPATH=python python3 docs/examples/pytorch/resnet.py --out /tmp/resnet        # from a checkout with a build
    ... --device cuda --trials 1000 --cuda-graph --compile                              # on a GPU

The model is torchvision's resnet18 when torchvision is installed, else a ResNet-18-shaped model
defined here (the same layers), its batch norms folded into the convolutions. --size sets the
image's height and width (224 by default on cuda, 56 on cpu so that the cpu run ends in minutes)."""
import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for cout, stride in [(64, 1), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)]:
            layers.append(Block(cin, cout, stride))
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        y = self.layers(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


def make_model():
    try:
        import torchvision
        model, what = torchvision.models.resnet18(), "torchvision resnet18"
    except ImportError:
        model, what = ResNet18(), "ResNet-18 (defined in this example; torchvision is not installed)"
    return fold_batch_norm(model.eval()), what


def fold_batch_norm(model):
    """Inference form: each BatchNorm folded into the convolution before it (as deployment does), so
    the convolutions carry a bias and autotune can fuse it."""
    from torch.fx.experimental.optimization import fuse
    return fuse(model)


def make_inputs(size, device):
    return (torch.rand(1, 3, size, size, device=device) * 2 - 1,)


if __name__ == "__main__":
    sys.exit(common.main(__doc__, make_model, make_inputs, {"cuda": 224, "cpu": 56}))
