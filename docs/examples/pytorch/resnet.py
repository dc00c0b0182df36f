"""A PyTorch model with autotune's kernels, end to end: its layers as tuning tasks, tuned, swapped in,
checked against the model and timed against eager PyTorch (and, with --compile, torch.compile).

    PYTHONPATH=python python3 docs/examples/pytorch/resnet.py --out /tmp/resnet        # from a checkout with a build
    ... --device cuda --trials 1000 --cuda-graph --compile                              # on a GPU

The model is torchvision's resnet18 when torchvision is installed, else a ResNet-18-shaped model
defined here (the same layers). --image sets the input size (224 by default on cuda, 56 on cpu so
that the cpu run ends in minutes)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

import autotune
import autotune.torch as at


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
        return torchvision.models.resnet18(), "torchvision resnet18"
    except ImportError:
        return ResNet18(), "ResNet-18 (defined in this example; torchvision is not installed)"


def fold_batch_norm(model):
    """Inference form: each BatchNorm folded into the convolution before it (as deployment does), so
    the convolutions carry a bias and autotune can fuse it."""
    from torch.fx.experimental.optimization import fuse
    return fuse(model)


def time_ms(fn, device, graph=False, repeats=20, min_ms=50):
    """Median ms a call (each repeat runs the function for at least min_ms)."""
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if graph:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            fn()
        fn = g.replay
    for _ in range(3):
        fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    once = max(time.perf_counter() - t0, 1e-6)
    number = max(1, int(min_ms / 1000 / once))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        times.append((time.perf_counter() - t0) * 1000 / number)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for tasks.json and the database")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--trials", type=int, help="tuning trials for the whole model (default: 1000 cuda, 96 cpu)")
    ap.add_argument("--image", type=int, help="input height and width (default: 224 cuda, 56 cpu)")
    ap.add_argument("--autotune", default=os.environ.get("AUTOTUNE", "autotune"), help="the autotune CLI")
    ap.add_argument("--cuda-graph", action="store_true", help="also time both models as CUDA graphs")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile(mode='max-autotune')")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = args.device
    trials = args.trials or (1000 if dev == "cuda" else 96)
    size = args.image or (224 if dev == "cuda" else 56)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    model, what = make_model()
    model = fold_batch_norm(model.eval()).to(dev)
    x = torch.rand(1, 3, size, size, device=dev) * 2 - 1
    tasks = at.tasks(model, (x,))
    (out / "tasks.json").write_text(json.dumps(tasks, indent=1) + "\n")
    print(f"{what}: {len(tasks)} distinct tunable layers ({sum(t['weight'] for t in tasks)} in all), {out / 'tasks.json'}")

    db = out / "autotune.db"
    t0 = time.time()
    tune = [args.autotune, "tune", "--tasks", str(out / "tasks.json"), "--target", dev, "--trials", str(trials),
            "--db", str(db)]
    print("$", " ".join(tune), flush=True)
    with open(out / "tune.log", "w") as log:  # the tuner's progress and tables
        subprocess.run(tune, check=True, stdout=log, stderr=subprocess.STDOUT)
    print(f"tuned in {time.time() - t0:.0f} s ({out / 'tune.log'})")

    fast, report = at.optimize(model, autotune.Database(db), (x,))
    print(report)
    with torch.no_grad():
        want, got = model(x), fast(x)
        err = ((got.double() - want.double()).abs().max() / want.double().abs().mean()).item()
        print(f"largest error against the model: {err:.2e} (relative to the mean output)")
        runs = [("eager PyTorch", lambda: time_ms(lambda: model(x), dev)),
                ("with autotune's kernels", lambda: time_ms(lambda: fast(x), dev))]
        if args.cuda_graph and dev == "cuda":
            runs += [("eager PyTorch, CUDA graph", lambda: time_ms(lambda: model(x), dev, graph=True)),
                     ("with autotune's kernels, CUDA graph", lambda: time_ms(lambda: fast(x), dev, graph=True))]
        if args.compile:  # last: its own autotuning takes many minutes
            def compiled_ms():
                compiled = torch.compile(model, mode="max-autotune")
                compiled(x)
                return time_ms(lambda: compiled(x), dev)
            runs.append(("torch.compile(mode='max-autotune')", compiled_ms))
        for name, run in runs:
            print(f"{name:40s} {run():9.4f} ms", flush=True)
    return 0 if err < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
