"""The flow both examples share: the model's tunable layers as tasks, tuned with the autotune CLI,
swapped in with autotune.torch.optimize, checked against the model and timed against it."""
import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import torch

import autotune
import autotune.torch as at


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


def tune_model(args, tasks, db, dev, trials):
    t0 = time.time()
    tune = [args.autotune, "tune", "--tasks", str(tasks), "--target", dev, "--trials", str(trials), "--db", str(db)]
    print("$", " ".join(tune), flush=True)
    log = db.parent / "tune.log"
    with open(log, "w") as f:  # the tuner's progress and tables
        subprocess.run(tune, check=True, stdout=f, stderr=subprocess.STDOUT)
    print(f"tuned in {time.time() - t0:.0f} s ({log})")


def main(doc, make_model, make_inputs, default_size):
    """Runs the example: make_model() -> (model, description), make_inputs(size, device) -> inputs."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for tasks.json and the database")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--trials", type=int, help="tuning trials for the whole model (default: 1000 cuda, 96 cpu)")
    ap.add_argument("--size", type=int, help=f"the input's size (default: {default_size['cuda']} cuda, {default_size['cpu']} cpu)")
    ap.add_argument("--autotune", default=os.environ.get("AUTOTUNE", "autotune"), help="the autotune CLI")
    ap.add_argument("--cuda-graph", action="store_true", help="also time both models as CUDA graphs")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile(mode='max-autotune')")
    ap.add_argument("--no-tune", action="store_true", help="use the database already in --out as it is")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = args.device
    trials = args.trials or (1000 if dev == "cuda" else 96)
    size = args.size or default_size[dev]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    model, what = make_model()
    model = model.eval().to(dev)
    inputs = make_inputs(size, dev)
    tasks = at.tasks(model, inputs)
    (out / "tasks.json").write_text(json.dumps(tasks, indent=1) + "\n")
    print(f"{what}: {len(tasks)} distinct tunable layers ({sum(t['weight'] for t in tasks)} in all), {out / 'tasks.json'}")

    db = out / "autotune.db"
    if not args.no_tune:
        tune_model(args, out / "tasks.json", db, dev, trials)
    fast, report = at.optimize(model, autotune.Database(db), inputs)
    print(report)
    with torch.no_grad():
        want, got = model(*inputs), fast(*inputs)
        err = ((got.double() - want.double()).abs().max() / want.double().abs().mean()).item()
        print(f"largest error against the model: {err:.2e} (relative to the mean output)")
        runs = [("eager PyTorch", lambda: time_ms(lambda: model(*inputs), dev)),
                ("with autotune's kernels", lambda: time_ms(lambda: fast(*inputs), dev))]
        if args.cuda_graph and dev == "cuda":
            runs += [("eager PyTorch, CUDA graph", lambda: time_ms(lambda: model(*inputs), dev, graph=True)),
                     ("with autotune's kernels, CUDA graph", lambda: time_ms(lambda: fast(*inputs), dev, graph=True))]
        if args.compile:  # last: its own autotuning takes many minutes
            def compiled_ms():
                compiled = torch.compile(model, mode="max-autotune")
                compiled(*inputs)
                return time_ms(lambda: compiled(*inputs), dev)
            runs.append(("torch.compile(mode='max-autotune')", compiled_ms))
        for name, run in runs:
            print(f"{name:40s} {run():9.4f} ms", flush=True)
    return 0 if err < 1e-3 else 1


