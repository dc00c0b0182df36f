#!/usr/bin/env python3
"""scripts/bench on the cpu target, end to end with a tiny case (tune, measure with --save-io, report),
resuming without re-measuring, --remeasure, one-line errors; and its pure helpers.

  python3 tests/scripts/bench_test.py AUTOTUNE_EXECUTABLE
"""
import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import script_test_support as support

BENCH = support.SCRIPTS / "bench"
AUTOTUNE = None  # set from the command line


bench = support.load_script(BENCH, "bench")


def run(*args):
    return support.run_script(BENCH, *args)


class Helpers(unittest.TestCase):
    def test_curve_figures(self):
        records = [(None, False), (4.0, True), (2.2, True), (2.1, False), (2.0, True)]
        self.assertEqual(bench.curve_figures(records), (2.0, 3))  # 2.2 <= 2.0 / 0.9; failures count as trials
        self.assertEqual(bench.curve_figures([(3.0, True), (2.5, True), (2.0, True)]), (2.0, 3))
        self.assertEqual(bench.curve_figures([(1.0, False)]), (None, None))

    def test_fp32_lanes(self):
        self.assertEqual(bench.fp32_lanes("9.0"), 128)
        self.assertEqual(bench.fp32_lanes("8.9"), 128)
        self.assertEqual(bench.fp32_lanes("8.6"), 128)
        self.assertEqual(bench.fp32_lanes("8.0"), 64)
        self.assertEqual(bench.fp32_lanes("7.0"), 64)
        self.assertEqual(bench.fp32_lanes("12.0"), 128)
        self.assertIsNone(bench.fp32_lanes("x"))

    def test_shape_pairs_fill_defaults_in_operator_order(self):
        params = {"conv2d": [("N", None), ("C", None), ("stride", 1), ("pad", 0)]}
        case = {"name": "c", "op": "conv2d", "shape": "pad=1,C=3,N=2"}
        self.assertEqual(bench.shape_pairs(case, params), [["N", 2], ["C", 3], ["stride", 1], ["pad", 1]])
        with self.assertRaises(bench.BenchError):
            bench.shape_pairs({"name": "c", "op": "conv2d", "shape": "N=1"}, params)
        with self.assertRaises(bench.BenchError):
            bench.shape_pairs({"name": "c", "op": "conv2d", "shape": "N=1,C=1,Q=2"}, params)

    def test_peer_runs_give_the_fastest_figure_and_every_run(self):
        runs = [{"latency_ms": 0.145, "gflops": 1.0, "answers_match": True, "max_rel_error": 1e-6},
                None, {"error": "no GPU"},
                {"latency_ms": 0.128, "gflops": 2.0, "answers_match": True, "max_rel_error": 3e-6}]
        p = bench.combine_peer_runs(runs)
        self.assertEqual(p["latency_ms"], 0.128)
        self.assertEqual(p["gflops"], 2.0)
        self.assertEqual(p["runs_ms"], [0.145, 0.128])
        self.assertTrue(p["answers_match"])
        self.assertEqual(p["max_rel_error"], 3e-6)
        # One run whose answer differs makes the case a mismatch, whatever its speed.
        runs[0]["answers_match"] = False
        self.assertFalse(bench.combine_peer_runs(runs)["answers_match"])
        self.assertIsNone(bench.combine_peer_runs([None, {"error": "x"}]))
        self.assertIsNone(bench.combine_peer_runs([]))

    def test_host_cpu(self):
        with tempfile.TemporaryDirectory() as d:
            info = Path(d) / "cpuinfo"
            info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n")
            self.assertEqual(bench.host_cpu(str(info)), f"{os.cpu_count()} CPUs (Intel(R) Xeon(R) Processor)")
            self.assertEqual(bench.host_cpu(str(Path(d) / "none")), f"{os.cpu_count()} CPUs")

    def test_machine_line_names_the_host_and_its_reference_compile(self):
        state = type("State", (), {})()
        state.data = {"target": "cuda", "machine": {"device": "NVIDIA H200", "host_cpu": "16 CPUs (Xeon)",
                                                    "reference_compile_s": 0.274}}
        line = bench.machine_line(state)
        self.assertIn("host 16 CPUs (Xeon), reference compile 0.274 s (NVRTC", line)
        del state.data["machine"]["reference_compile_s"]  # NVRTC could not compile: nothing said
        self.assertNotIn("reference compile", bench.machine_line(state))

    def test_triton_skip_reason(self):
        self.assertIsNone(bench.triton_skip_reason("cuda", "gemm", (True, "")))
        self.assertIsNone(bench.triton_skip_reason("cuda", "batch_matmul", (True, "")))
        self.assertIn("no conv2d", bench.triton_skip_reason("cuda", "conv2d", (True, "")))
        self.assertIn("cuda target only", bench.triton_skip_reason("cpu", "gemm", (True, "")))
        self.assertIn("PyTorch not installed (no torch)", bench.triton_skip_reason("cuda", "gemm", (False, "no torch")))

    def test_table_has_triton_columns_only_after_triton_ran(self):
        base = {"op": "gemm", "shape": "M=8,N=8,K=8", "trials": 4, "tuning_seconds": 1.0, "best_ms": 0.02,
                "gflops": 1.0, "pytorch_ms": 0.03, "pytorch_gflops": 1.0, "speed_vs_pytorch": 1.5,
                "answers_match": True, "max_rel_error_vs_pytorch": 1e-6}
        state = type("State", (), {})()
        state.data = {"cases": {"g": {"result": dict(base)}, "c": {"result": {**base, "op": "conv2d"}}}}
        plain = bench.table(state, ["g", "c"])
        self.assertNotIn("Triton", plain)
        state.data["cases"]["g"]["result"].update({"triton_ms": 0.025, "speed_vs_triton": 1.25,
                                                   "triton_answers_match": True, "triton_max_rel_error": 2e-6})
        state.data["cases"]["c"]["result"]["triton_note"] = "Triton has no conv2d to compare with: skipped"
        lines = bench.table(state, ["g", "c"]).splitlines()
        self.assertTrue(lines[0].endswith("| Triton (ms) | speed vs Triton | Triton's answer matches |"))
        self.assertEqual(len(lines[1].split("|")), len(lines[0].split("|")))
        self.assertTrue(lines[2].endswith("| 0.0250 | 1.25x | yes (2.0e-06) |"), lines[2])
        self.assertTrue(lines[3].endswith("| – | – | Triton has no conv2d to compare with: skipped |"), lines[3])
        self.assertEqual(len(lines[3].split("|")), len(lines[0].split("|")))

    def test_the_suites_are_in_the_repository(self):
        repo = support.SCRIPTS.parent
        self.assertEqual(bench.find_suite(None), repo / "bench" / "suite.json")
        self.assertEqual(bench.find_suite("elsewhere.json"), Path("elsewhere.json"))  # --suite wins
        self.assertTrue(bench.REFERENCE_TRACE.is_file())  # the reference compile's kernel
        for suite in (None, str(repo / "bench" / "ansor_suite.json")):
            with self.subTest(suite=suite):
                cases = bench.select_cases(argparse.Namespace(suite=suite, cases=None, all=True, case_shape=[]))
                self.assertGreater(len(cases), 0)
                for c in cases:
                    bench.parse_shape(c["shape"])
                    self.assertFalse(c["epilogue"].endswith("?"), c)
        names = [c["name"] for c in bench.select_cases(argparse.Namespace(suite=None, cases="gemm-1024", all=False,
                                                                          case_shape=[]))]
        self.assertEqual(names, ["gemm-1024"])

    def test_the_default_suite_does_not_depend_on_the_working_directory(self):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([sys.executable, str(BENCH), "--out", d, "--cases", "zzz"], cwd=d,
                               capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"unknown case zzz (the suite {support.SCRIPTS.parent / 'bench' / 'suite.json'} has: gemm-1024",
                      p.stderr)

    def test_batch_scales_each_operators_batch_parameter(self):
        ansor = str(support.SCRIPTS.parent / "bench" / "ansor_suite.json")
        args = argparse.Namespace(suite=ansor, cases="c2d-1,gmm-0,nrm-0,trf-0", all=False, case_shape=["gemm:N=8,M=4,K=2"],
                                  batch=16)
        got = {c["name"]: c["shape"] for c in bench.select_cases(args)}
        self.assertEqual(got["c2d-1-b16"], "N=16,C=64,H=56,W=56,K=64,R=1,S=1,stride=1,pad=0")
        self.assertEqual(got["gmm-0-b16"], "B=16,M=128,N=128,K=128")
        self.assertEqual(got["nrm-0-b16"], "B=16,M=256,N=256")
        self.assertEqual(got["trf-0-b16"], "M=8192,N=768")  # rows of 16 sequences
        self.assertEqual(got["gemm-N=8,M=4,K=2-b16"], "N=8,M=64,K=2")
        self.assertEqual(bench.scaled_batch("norm", "M=2,N=3", 4), "M=2,N=3,B=4")  # a default batch of 1
        with self.assertRaises(bench.BenchError):
            bench.scaled_batch("frobnicate", "X=1", 2)

    def test_epilogue_is_canonical(self):
        self.assertEqual(bench.canonical_epilogue("relu, bias"), "relu,bias")  # the order they apply in
        self.assertEqual(bench.canonical_epilogue("bias+relu"), "bias,relu")
        self.assertEqual(bench.canonical_epilogue("none"), "")
        self.assertEqual(bench.canonical_epilogue("scale,shift,residual,gelu_tanh"), "scale,shift,residual,gelu_tanh")
        self.assertTrue(bench.canonical_epilogue("swish").endswith("?"))
        self.assertTrue(bench.canonical_epilogue("relu,relu").endswith("?"))


class CpuFlow(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="bench_test-"))
        cls.out = cls.tmp / "out"
        cls.args = ["--out", str(cls.out), *support.tiny_cpu_bench_args(AUTOTUNE)]
        cls.first = run(*cls.args)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def records(self):
        return [json.loads(l) for l in (self.out / "bench.jsonl").read_text().splitlines()]

    def test_1_first_run_tunes_measures_and_reports(self):
        self.assertEqual(self.first.returncode, 0, self.first.stderr)
        self.assertIn("status: complete", self.first.stderr)
        [r] = self.records()
        self.assertNotIn("error", r)
        self.assertEqual(r["case"], "gemm-M=8,N=8,K=8")
        self.assertEqual(r["workload"], "gemm[M=8,N=8,K=8]")
        self.assertEqual(r["trials"], 4)
        self.assertEqual(r["trials_this_run"], 4)
        self.assertGreater(r["best_ms"], 0)
        self.assertGreater(r["gflops"], 0)
        self.assertGreater(r["tuning_seconds"], 0)
        self.assertGreater(r["candidates_per_s"], 0)
        self.assertEqual(set(r["stage_seconds"]), {"search", "model", "build", "run", "wait", "build_cpu", "timed"})
        self.assertIsInstance(r["cached_builds"], int)  # trials whose kernel came from the build cache
        self.assertGreater(r["stage_seconds"]["run"], 0)
        self.assertGreaterEqual(min(r["stage_seconds"].values()), 0)
        built = r["trials_this_run"] - r["cached_builds"]
        if r["stage_seconds"]["build_cpu"] > 0 and built > 0:  # the compilers' CPU per compiled candidate
            self.assertAlmostEqual(r["compile_cpu_per_candidate_s"], r["stage_seconds"]["build_cpu"] / built)
        else:
            self.assertIsNone(r["compile_cpu_per_candidate_s"])
        self.assertTrue(1 <= r["trials_to_90"] <= 4)
        self.assertEqual(r["flops"], 2 * 8 * 8 * 8)
        self.assertEqual(r["min_bytes"], 4 * 3 * 64)
        self.assertNotIn("pytorch_ms", r)  # no PyTorch comparison on the cpu target: the CPU library's
        if (Path(AUTOTUNE).parent / "autotune-cpu-peer").is_file():
            self.assertTrue(r["answers_match"], r)
            self.assertIn("OpenBLAS", r["peer"])
            self.assertGreater(r["peer_ms"], 0)
            self.assertAlmostEqual(r["speed_vs_peer"], r["peer_ms"] / r["best_ms"])
            self.assertTrue((self.out / "cases" / "gemm-M=8,N=8,K=8" / "peer.json").is_file())
        else:
            self.assertIn("peer_note", r)
        io = self.out / "cases" / "gemm-M=8,N=8,K=8" / "io"
        for f in ("input0.npy", "input1.npy", "output.npy", "io.json"):
            self.assertTrue((io / f).is_file(), f)
        md = (self.out / "bench.md").read_text()
        self.assertEqual(r["started_from"], "none (cold start)")  # no built-in model for the cpu target
        self.assertIn("| gemm-M=8,N=8,K=8 | gemm M=8,N=8,K=8 | none (cold start) | 4 |", md)
        self.assertIn("scripts/bench --out", md)
        self.assertEqual(self.first.stdout.strip(), md.strip())
        # Every record of the database, compressed, for carrying back (what `db import` reads).
        lines = lzma.decompress((self.out / "records.jsonl.xz").read_bytes()).decode().splitlines()
        self.assertEqual(len(lines), 4)
        self.assertEqual({json.loads(l)["workload"]["op"] for l in lines}, {"gemm"})

    def test_2_same_command_again_measures_nothing_new(self):
        [before] = self.records()
        again = run(*self.args)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn("status: complete", again.stderr)
        self.assertNotIn("more trials", again.stderr)
        self.assertNotIn("measuring", again.stderr)
        [after] = self.records()
        self.assertEqual(before["measured_at"], after["measured_at"])

    def test_3_remeasure_measures_once_more(self):
        [before] = self.records()
        again = run(*self.args[:-9], "--remeasure", "--triton", *self.args[-9:])
        self.assertEqual(again.returncode, 0, again.stderr)
        [after] = self.records()
        self.assertIn("skipped", after["triton_note"])  # Triton runs beside PyTorch on cuda only
        self.assertIn("| Triton (ms) |", (self.out / "bench.md").read_text())
        self.assertGreater(after["measured_at"], before["measured_at"])
        self.assertEqual(after["trials"], 4)  # not tuned again
        state = json.loads((self.out / "bench-state.json").read_text())
        self.assertNotIn("remeasure_since", state)  # the round is over
        self.assertEqual(state["cases"]["gemm-M=8,N=8,K=8"]["tune_parts"], 1)

    def test_4_a_sixteen_bit_run_is_its_own_case(self):
        run16 = run(*self.args[:-9], "--dtype", "float16", *self.args[-9:])
        self.assertEqual(run16.returncode, 0, run16.stderr)
        by_case = {r["case"]: r for r in self.records()}
        self.assertEqual(set(by_case), {"gemm-M=8,N=8,K=8", "gemm-M=8,N=8,K=8-float16"})
        r = by_case["gemm-M=8,N=8,K=8-float16"]
        self.assertNotIn("error", r)
        self.assertEqual(r["workload"], "gemm[M=8,N=8,K=8]:float16")
        self.assertEqual(r["dtype"], "float16")
        self.assertEqual(r["trials"], 4)  # its own records, not the float32 case's
        io = json.loads((self.out / "cases" / "gemm-M=8,N=8,K=8-float16" / "io" / "io.json").read_text())
        self.assertEqual(io["dtype"], "float16")
        self.assertIn("| gemm-M=8,N=8,K=8-float16 | gemm M=8,N=8,K=8 float16 |", (self.out / "bench.md").read_text())

    def test_5_a_tf32_run_is_its_own_case(self):
        run_tf32 = run(*self.args[:-9], "--precision", "tf32", *self.args[-9:])
        self.assertEqual(run_tf32.returncode, 0, run_tf32.stderr)
        r = {r["case"]: r for r in self.records()}["gemm-M=8,N=8,K=8-tf32"]
        self.assertNotIn("error", r)
        self.assertEqual(r["workload"], "gemm[M=8,N=8,K=8]:tf32")
        self.assertEqual(r["trials"], 4)
        io = json.loads((self.out / "cases" / "gemm-M=8,N=8,K=8-tf32" / "io" / "io.json").read_text())
        self.assertEqual((io["dtype"], io["precision"]), ("float32", "tf32"))

    def test_6_a_named_instruction_set_is_its_own_run(self):
        out = self.tmp / "generic"
        args = support.tiny_cpu_bench_args(AUTOTUNE)
        args[args.index("--target") + 1] = "cpu:generic"
        result = run("--out", str(out), *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        [r] = [json.loads(l) for l in (out / "bench.jsonl").read_text().splitlines()]
        self.assertNotIn("error", r)
        self.assertEqual((r["target"], r["trials"]), ("cpu:generic", 4))
        if (Path(AUTOTUNE).parent / "autotune-cpu-peer").is_file():
            peer = json.loads((out / "cases" / "gemm-M=8,N=8,K=8" / "peer.json").read_text())
            self.assertEqual(peer["isa"], "generic")
            self.assertTrue(r["answers_match"], r)


class Errors(unittest.TestCase, support.OneLineErrors):
    def test_unknown_case(self):
        with tempfile.TemporaryDirectory() as d:
            suite = Path(d) / "suite.json"
            suite.write_text(json.dumps({"cases": [{"name": "a", "op": "gemm", "shape": "M=1,N=1,K=1"}]}))
            self.one_line(run("--out", d, "--suite", str(suite), "--cases", "a,zzz"), "unknown case zzz")

    def test_precision_is_for_float32_products(self):
        with tempfile.TemporaryDirectory() as d:
            self.one_line(run("--out", d, "--case-shape", "softmax:M=4,N=8", "--precision", "tf32"),
                          "--precision tf32 is for gemm, batch_matmul, conv1d, conv2d, conv2d_nhwc, conv3d cases, not softmax-")
            self.one_line(run("--out", d, "--case-shape", "gemm:M=1,N=1,K=1", "--precision", "3xtf32", "--dtype",
                              "float16"), "--precision 3xtf32 is for float32 products, not --dtype float16")

    def test_missing_autotune(self):
        with tempfile.TemporaryDirectory() as d:
            self.one_line(run("--out", d, "--case-shape", "gemm:M=1,N=1,K=1", "--autotune", f"{d}/nope"),
                          "not an executable file")

    def test_an_executable_of_a_bundle_gets_its_libraries(self):
        with tempfile.TemporaryDirectory() as d:
            bundle = Path(d) / "bundle"
            (bundle / "lib").mkdir(parents=True)
            (bundle / "old").mkdir()
            (bundle / "env.sh").write_text("")
            seen = Path(d) / "seen"
            exe = bundle / "old" / "autotune"
            exe.write_text(f'#!/bin/sh\necho "$LD_LIBRARY_PATH" > {seen}\nexit 1\n')
            exe.chmod(0o755)
            p = run("--out", d, "--case-shape", "gemm:M=1,N=1,K=1", "--autotune", str(exe))
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(seen.read_text().split(":")[0], str((bundle / "lib").resolve()))

    def test_a_bundle_older_than_the_build_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            bundled, built = Path(d) / "bundled", Path(d) / "built"
            bundled.write_text("")
            built.write_text("")
            os.utime(bundled, (1000, 1000))
            os.utime(built, (2000, 2000))
            note = bench.stale_bundle_note(str(bundled), str(built))
            self.assertIn(f"{bundled} is older than {built}", note)
            self.assertIn(f"--autotune {built}", note)
            self.assertIsNone(bench.stale_bundle_note(str(built), str(bundled)))
            self.assertIsNone(bench.stale_bundle_note(str(bundled), f"{d}/no-build"))

    def test_usage_errors(self):
        self.one_line(run(), "--out")
        with tempfile.TemporaryDirectory() as d:
            self.one_line(run("--out", d, "--trials", "0"), "--trials must be at least 1")
            self.one_line(run("--out", d, "--peer-runs", "0"), "--peer-runs must be 1 to 20")
            self.one_line(run("--out", d, "--target", "cpu", "--cuda-graph"), "--cuda-graph needs the cuda target")

    def test_targets_are_autotunes(self):
        with tempfile.TemporaryDirectory() as d:
            self.one_line(run("--out", d, "--case-shape", "gemm:M=1,N=1,K=1", "--autotune", AUTOTUNE,
                              "--target", "cpu:avx9"), "--target cpu:avx9: unknown (autotune targets: cpu, ")
            self.one_line(run("--out", d, "--target", "gpu"), "'gpu' is not cuda, cpu or cpu:ISA")

    def test_bad_case_shape(self):
        with tempfile.TemporaryDirectory() as d:
            self.one_line(run("--out", d, "--case-shape", "gemm"), "expected OP:SHAPE")


class ReferenceCompile(unittest.TestCase):
    """The host-speed probe: where autotune can compile for cuda (NVRTC), a median of real compiles."""

    def test_seconds_where_nvrtc_compiles_else_none(self):
        tools = bench.Tools(argparse.Namespace(autotune=AUTOTUNE))
        targets = json.loads(subprocess.run([AUTOTUNE, "targets", "--json"], capture_output=True, text=True).stdout)
        can_compile = any(t["target"] == "cuda" and t["compile"] for t in targets)
        seconds = bench.Machine(tools, argparse.Namespace(target="cuda"), None).reference_compile(times=3)
        if can_compile:
            self.assertIsNotNone(seconds)
            self.assertGreater(seconds, 0)
            self.assertLess(seconds, 60)
        else:
            self.assertIsNone(seconds)


class Models(unittest.TestCase, support.OneLineErrors):
    """--models DIR: each case's tune starts from DIR/<case>.model."""

    def test_models_need_one_per_case_and_no_second_model(self):
        with tempfile.TemporaryDirectory() as d:
            self.one_line(run("--out", d, "--case-shape", "gemm:M=1,N=1,K=1", "--autotune", AUTOTUNE,
                              "--models", d), "no gemm-M=1,N=1,K=1.model")
            (Path(d) / "gemm-M=1,N=1,K=1.model").write_text("{}")
            self.one_line(run("--out", d, "--case-shape", "gemm:M=1,N=1,K=1", "--autotune", AUTOTUNE,
                              "--models", d, "--", "--model", "x.model"), "give one")

    def test_a_case_starts_from_its_model(self):
        # Not a model: the tune refuses it before measuring, and says which file it was.
        with tempfile.TemporaryDirectory() as d:
            bad = Path(d) / "gemm-M=8,N=8,K=8.model"
            bad.write_text("not a model")
            p = run("--out", f"{d}/out", "--target", "cpu", "--autotune", AUTOTUNE, "--case-shape",
                    "gemm:M=8,N=8,K=8", "--trials", "4", "--models", d, "--quiet")
            self.assertEqual(p.returncode, 0, p.stderr)
            [r] = [json.loads(l) for l in (Path(d) / "out" / "bench.jsonl").read_text().splitlines()]
            self.assertIn(str(bad.resolve()), r["error"])


if __name__ == "__main__":
    support.main(globals(), "CpuFlow", "Models", "ReferenceCompile")
