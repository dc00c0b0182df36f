#!/usr/bin/env python3
"""scripts/bench-network on the cpu target, end to end with bert_base at batch 1 and a few trials (one
tuning job, every layer measured, weighted totals), resuming without tuning or measuring again,
one-line errors; and its totals on made-up figures.

  python3 tests/scripts/bench_network_test.py AUTOTUNE_EXECUTABLE
"""
import argparse
import json
import shutil
import tempfile
import unittest
from pathlib import Path

import script_test_support as support

BENCH_NETWORK = support.SCRIPTS / "bench-network"
AUTOTUNE = None  # set from the command line

network = support.load_script(BENCH_NETWORK, "bench_network")


def run(*args):
    return support.run_script(BENCH_NETWORK, *args)


def made_up_state(figures):
    """A State-like object whose layers have the given (best ms, PyTorch ms) figures."""
    layers = [{"name": f"l{i}", "op": "gemm", "shape": "M=8,N=8,K=8", "epilogue": "", "weight": w}
              for i, (w, _, _) in enumerate(figures)]
    data = {"target": "cuda", "tuning": {"status": "tuned", "seconds": 10.0, "records_before": 0, "records": 40},
            "layers": {}}
    for layer, (_, ours, theirs) in zip(layers, figures):
        data["layers"][layer["name"]] = {"best_ms": ours, "pytorch_ms": theirs, "speed_vs_pytorch": theirs / ours,
                                         "answers_match": True, "trials": 10}
    return argparse.Namespace(data=data), layers


class Totals(unittest.TestCase):
    def test_weighted_totals_and_the_layers_slower_than_pytorch(self):
        state, layers = made_up_state([(2, 1.0, 3.0), (1, 4.0, 2.0)])
        s = network.summary(state, layers, argparse.Namespace(network="n", batch=1, target="cuda"))
        self.assertEqual(s["autotune_total_ms"], 2 * 1.0 + 4.0)
        self.assertEqual(s["pytorch_total_ms"], 2 * 3.0 + 2.0)
        self.assertAlmostEqual(s["speed_vs_pytorch"], 8.0 / 6.0)
        self.assertEqual(s["slower_than_pytorch"], ["l1"])
        self.assertEqual(s["candidates_per_s"], 4.0)
        self.assertEqual(s["occurrences"], 3)

    def test_no_totals_while_a_layer_lacks_a_figure(self):
        state, layers = made_up_state([(1, 1.0, 3.0), (1, 4.0, 2.0)])
        del state.data["layers"]["l1"]["pytorch_ms"]
        s = network.summary(state, layers, argparse.Namespace(network="n", batch=1, target="cuda"))
        self.assertEqual(s["autotune_total_ms"], 5.0)
        self.assertNotIn("pytorch_total_ms", s)
        del state.data["layers"]["l0"]
        s = network.summary(state, layers, argparse.Namespace(network="n", batch=1, target="cuda"))
        self.assertNotIn("autotune_total_ms", s)
        self.assertEqual(s["measured"], 1)


class CpuFlow(unittest.TestCase):
    """bert_base at batch 1: 8 layers (the encoder's 11 stages merged to 8 tasks), 8 trials."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="bench_network_test-"))
        cls.out = cls.tmp / "out"
        cls.args = ["--out", str(cls.out), "--network", "bert_base", "--target", "cpu", "--autotune", AUTOTUNE,
                    "--trials", "8", "--repeats", "1", "--min-repeat-ms", "0", "--quiet",
                    "--", "--batch-size", "1", "--population", "16", "--repeats", "1", "--min-repeat-ms", "0"]
        cls.first = run(*cls.args)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def summary(self):
        return json.loads((self.out / "network.json").read_text())

    def test_1_one_job_tunes_every_layer_and_each_is_measured(self):
        self.assertEqual(self.first.returncode, 0, self.first.stderr)
        self.assertIn("status: complete", self.first.stderr)
        s = self.summary()
        self.assertTrue(s["complete"])
        self.assertEqual((s["layers"], s["measured"], s["trials"]), (8, 8, 8))
        self.assertEqual(s["occurrences"], 132)  # 12 encoder layers x 11 stages
        self.assertEqual(s["failed"], [])
        rows = {r["layer"]: r for r in s["layer_results"]}
        self.assertEqual(len(rows), 8)
        for r in rows.values():
            self.assertGreater(r["best_ms"], 0)
            self.assertEqual(r["trials"], 1)  # every layer's first round, of one trial
            self.assertNotIn("pytorch_ms", r)  # no PyTorch on the cpu target; the CPU library where there is one
            self.assertTrue(r.get("peer_ms") or r.get("peer_note"), r)
        self.assertAlmostEqual(s["autotune_total_ms"], sum(r["weight"] * r["best_ms"] for r in rows.values()))
        self.assertNotIn("pytorch_total_ms", s)
        self.assertGreater(s["tuning_seconds"], 0)
        md = (self.out / "network.md").read_text()
        self.assertEqual(self.first.stdout.strip(), md.strip())
        self.assertIn("bert_base at batch 1, target cpu.", md)
        self.assertIn("| **total** | 8 layers, 132 occurrences |", md)
        self.assertIn("scripts/bench-network --out", md)
        self.assertEqual(len(list((self.out / "layers").iterdir())), 8)
        self.assertTrue((self.out / "records.jsonl.xz").is_file())

    def test_2_same_command_again_tunes_and_measures_nothing(self):
        before = self.summary()
        again = run(*self.args)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertNotIn("tuning bert_base", again.stderr)
        self.assertNotIn("measuring", again.stderr)
        after = self.summary()
        self.assertEqual(after["trials"], before["trials"])
        self.assertEqual(after["autotune_total_ms"], before["autotune_total_ms"])

    def test_3_another_network_in_the_same_directory_is_refused(self):
        p = run("--out", str(self.out), "--network", "resnet18", "--target", "cpu", "--autotune", AUTOTUNE)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("use another --out", p.stderr)


    def test_4_a_database_that_holds_the_budget_is_only_measured(self):
        out = self.tmp / "measure-only"
        args = list(self.args)
        args[args.index("--out") + 1] = str(out)
        p = run(*args[:args.index("--")], "--db", str(self.out / "bench.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("tuning bert_base", p.stderr)
        self.assertIn("Tuning: none in this run; the database held 8 records of the layers.", p.stdout)
        self.assertEqual(json.loads((out / "network.json").read_text())["measured"], 8)


class Errors(unittest.TestCase, support.OneLineErrors):
    def test_usage_errors(self):
        self.one_line(run("--network", "resnet18"), "--out")
        with tempfile.TemporaryDirectory() as d:
            self.one_line(run("--out", d), "--network")
            self.one_line(run("--out", d, "--network", "resnet18", "--batch", "0"), "--batch must be 1 to 4096")
            self.one_line(run("--out", d, "--network", "resnet18", "--", "--trials", "5"),
                          "--trials after -- is this script's to set")

    def test_unknown_network(self):
        with tempfile.TemporaryDirectory() as d:
            self.one_line(run("--out", d, "--network", "resnet101", "--target", "cpu", "--autotune", AUTOTUNE),
                          "unknown network 'resnet101' (known: resnet18")


if __name__ == "__main__":
    support.main(globals(), "CpuFlow", "Errors")
