#!/usr/bin/env python3
"""Best-so-far latency against trials for tuning runs of one workload, read from their databases.

Usage: scripts/tuning_curve.py NAME=DB [NAME=DB ...] [--at 64,128,256,...] [--share 0.9]

Each DB holds one job's records of one workload (records are stored in measurement order). Prints,
per run, the best latency after each checkpoint and how many trials the run needed to come within
--share of the best latency any of the runs found (latency <= best / share): the figure that compares
a learned cost model with random ranking run from the same seed. Failed records count as trials.
"""
import argparse
import sqlite3
import sys


def curve(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT median_ms, error_kind = 'NONE' AND correct = 1 FROM records ORDER BY id").fetchall()
    con.close()
    best, out = float("inf"), []
    for ms, ok in rows:
        if ok and ms > 0:
            best = min(best, ms)
        out.append(best)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="NAME=DB")
    ap.add_argument("--at", default="64,128,256,384,512,768,1024", help="trial checkpoints")
    ap.add_argument("--share", type=float, default=0.9, help="share of the best throughput to reach")
    args = ap.parse_args()
    runs = []
    for spec in args.runs:
        name, sep, path = spec.partition("=")
        if not sep:
            sys.exit(f"tuning_curve: '{spec}' is not NAME=DB")
        try:
            runs.append((name, curve(path)))
        except sqlite3.Error as e:
            sys.exit(f"tuning_curve: {path}: {e}")
    overall = min((c[-1] for _, c in runs if c), default=float("inf"))
    target = overall / args.share
    checkpoints = [int(x) for x in args.at.split(",")]
    print(f"best of all runs: {overall:.5f} ms; {args.share:.0%} of it: latency <= {target:.5f} ms")
    print("| run | trials | " + " | ".join(f"best @{t}" for t in checkpoints) + f" | trials to {args.share:.0%} |")
    print("|---|---:|" + "---:|" * len(checkpoints) + "---:|")
    for name, c in runs:
        cells = [f"{c[t - 1]:.4f}" if t <= len(c) else "" for t in checkpoints]
        reach = next((i + 1 for i, v in enumerate(c) if v <= target), None)
        print(f"| {name} | {len(c)} | " + " | ".join(cells) + f" | {reach if reach else 'not reached'} |")


if __name__ == "__main__":
    main()
