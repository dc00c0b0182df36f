#!/usr/bin/env python3
"""scripts/bench-jobs on the cpu target: jobs run, are skipped when too little time is left, fail as a
status of their own, stop unfinished when their slice is too short to tune, and are packed after every
job without their databases; a bad job file is one line and status 2.

  python3 tests/scripts/bench_jobs_test.py AUTOTUNE_EXECUTABLE
"""
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest
from pathlib import Path

import script_test_support as support

SCRIPT = support.SCRIPTS / "bench-jobs"
AUTOTUNE = None  # set from the command line


bench_jobs = support.load_script(SCRIPT, "bench_jobs")


def run(*args):
    return support.run_script(SCRIPT, *args)


def tiny_job(autotune, trials=4):
    return shlex.join(support.tiny_cpu_bench_args(autotune, trials))


class JobFile(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="bench_jobs_test-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def read(self, text):
        path = self.tmp / "jobs.txt"
        path.write_text(text)
        return bench_jobs.read_jobs(str(path))

    def test_lines_become_jobs_and_comments_are_skipped(self):
        jobs = self.read("# a comment\n\na 90 --cases x --quiet -- --seed 1\nb 0.5 --case-shape 'gemm:M=1,N=1,K=1'\n")
        self.assertEqual(jobs, [("a", 90.0, ["--cases", "x", "--quiet", "--", "--seed", "1"]),
                                ("b", 0.5, ["--case-shape", "gemm:M=1,N=1,K=1"])])

    def test_tune_options_after_the_separator_may_repeat_driver_names(self):
        # `--out` after `--` belongs to autotune tune, not to scripts/bench
        [(_, _, args)] = self.read("a 1 --quiet -- --out x\n")
        self.assertEqual(args, ["--quiet", "--", "--out", "x"])

    def test_bad_lines_name_the_line(self):
        for text, expect in [("a\n", "expected NAME NEED_S ARGS"),
                             ("a ninety --quiet\n", "NEED_S 'ninety' is not a number"),
                             ("a -1\n", "must not be negative"),
                             ("a/b 1\n", "job name 'a/b'"),
                             ("a 1\na 2\n", "'a' is used twice"),
                             ("a 1 --out elsewhere\n", "--out is set by bench-jobs"),
                             ("a 1 --time-limit=30\n", "--time-limit is set by bench-jobs"),
                             ("a 1 'unclosed\n", "jobs.txt:1"),
                             ("# nothing\n", "names no job")]:
            with self.subTest(text=text):
                with self.assertRaises(bench_jobs.JobsError) as e:
                    self.read(text)
                self.assertIn(expect, str(e.exception))

    def test_a_network_job_has_its_layers_as_rows_and_is_unfinished_until_complete(self):
        job = self.tmp / "w" / "net"
        job.mkdir(parents=True)
        (job / "network.json").write_text(json.dumps({"network": "resnet18", "complete": False,
                                                      "layer_results": [{"layer": "conv1", "best_ms": 0.01}]}))
        self.assertEqual(bench_jobs.bench_rows(job), [{"layer": "conv1", "best_ms": 0.01}])
        self.assertEqual(bench_jobs.unfinished_cases(job), ["resnet18"])
        (job / "network.json").write_text(json.dumps({"network": "resnet18", "complete": True, "layer_results": []}))
        self.assertEqual(bench_jobs.unfinished_cases(job), [])

    def test_bad_input_is_one_line_and_status_two(self):
        (self.tmp / "bad.txt").write_text("a 1 --out x\n")
        (self.tmp / "good.txt").write_text("a 1 --quiet\n")
        for args, expect in [(["--out", str(self.tmp / "o"), "--budget", "10", str(self.tmp / "bad.txt")], "--out is set"),
                             (["--out", str(self.tmp / "o"), "--budget", "10", str(self.tmp / "missing.txt")],
                              "cannot read the job file"),
                             (["--out", str(self.tmp / "o"), "--budget", "0", str(self.tmp / "good.txt")],
                              "--budget must be positive"),
                             (["--out", str(self.tmp / "o"), "--budget", "10", "--pack", "a/b", str(self.tmp / "good.txt")],
                              "--pack 'a/b'"),
                             (["--out", str(self.tmp / "o"), "--budget", "10", "--bench", str(self.tmp / "none"),
                               str(self.tmp / "good.txt")], "no scripts/bench at")]:
            with self.subTest(expect=expect):
                p = run(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(expect, lines[0])


class CpuJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="bench_jobs_test-"))
        cls.out = cls.tmp / "out"
        (cls.tmp / "jobs.txt").write_text(
            f"undermargin 490 {tiny_job(AUTOTUNE)}\n"  # 500 s left, but a limit of 475 (margin 25)
            f"tiny 0 {tiny_job(AUTOTUNE)}\n"
            f"toolong 100000 {tiny_job(AUTOTUNE)}\n"
            f"broken 0 {tiny_job(cls.tmp / 'no-autotune')}\n")
        cls.first = run("--out", str(cls.out), "--budget", "500", "--pack", "results", str(cls.tmp / "jobs.txt"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def report(self):
        return [json.loads(l) for l in (self.out / "jobs.jsonl").read_text().splitlines()]

    def test_each_job_has_a_status_and_a_failed_one_makes_the_exit_status_one(self):
        self.assertEqual(self.first.returncode, 1, self.first.stderr)
        undermargin, tiny, toolong, broken = self.report()
        self.assertEqual(undermargin["status"], "skipped", "NEED_S is the time limit the job must get")
        self.assertFalse((self.out / "w" / "undermargin").exists())
        self.assertEqual((tiny["job"], tiny["status"], tiny["exit"]), ("tiny", "done", 0))
        [row] = tiny["rows"]
        self.assertEqual(row["case"], "gemm-M=8,N=8,K=8")
        self.assertGreater(row["best_ms"], 0)
        self.assertEqual(toolong["status"], "skipped")
        self.assertNotIn("rows", toolong)
        self.assertFalse((self.out / "w" / "toolong").exists(), "a skipped job starts nothing")
        self.assertEqual(broken["status"], "failed")
        self.assertNotEqual(broken["exit"], 0)
        self.assertIn("tiny: done (exit 0)", self.first.stderr)
        self.assertIn("toolong: skipped", self.first.stderr)

    def test_the_archive_holds_the_reports_and_records_without_databases(self):
        with tarfile.open(self.out / "results.tar.xz") as tar:
            names = tar.getnames()
        self.assertIn("jobs.jsonl", names)
        self.assertIn("w/tiny/bench.jsonl", names)
        self.assertIn("w/tiny/records.jsonl.xz", names)
        self.assertTrue((self.out / "w" / "tiny" / "bench.db").is_file(), "the database stays in DIR")
        self.assertFalse([n for n in names if ".db" in Path(n).name or Path(n).name == "io"], names)
        self.assertFalse((self.out / "results.tar.xz.part").exists())

    def test_a_slice_too_short_to_tune_is_unfinished_and_the_same_command_continues_it(self):
        out = self.tmp / "short"
        jobs = self.tmp / "short.txt"
        # a 30 s budget less the 5 s margin leaves the job 25 s, under the 60 s stop grace that scripts/bench
        # keeps by default: it stops before tuning, and says the part's time was used
        jobs.write_text(f"tiny 0 {tiny_job(AUTOTUNE)}\n")
        p = run("--out", str(out), "--budget", "30", "--margin", "5", str(jobs))
        self.assertEqual(p.returncode, 0, p.stderr)
        [entry] = self.report_of(out)
        self.assertEqual(entry["status"], "unfinished")
        self.assertEqual(entry["unfinished_cases"], ["gemm-M=8,N=8,K=8"])
        p = run("--out", str(out), "--budget", "500", str(jobs))
        self.assertEqual(p.returncode, 0, p.stderr)
        first, second = self.report_of(out)
        self.assertEqual(second["status"], "done")
        self.assertEqual(len(second["rows"]), 1)

    def test_ctrl_c_lets_the_job_store_what_it_has_and_starts_no_further_job(self):
        out = self.tmp / "interrupted"
        jobs = self.tmp / "interrupted.txt"
        jobs.write_text(f"slow 0 {tiny_job(AUTOTUNE, trials=100000)}\nnext 0 {tiny_job(AUTOTUNE)}\n")
        # in a process group of its own, so that the Ctrl-C reaches the driver and its jobs as a terminal's does
        p = subprocess.Popen([sys.executable, str(SCRIPT), "--out", str(out), "--budget", "500", "--pack", "results",
                              str(jobs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=os.setpgrp)
        db = out / "w" / "slow" / "bench.db"
        deadline = time.monotonic() + 120
        while not db.exists() and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.2)
        time.sleep(3)  # some trials stored
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("interrupted", err.strip().splitlines()[-1])
        [entry] = self.report_of(out)
        self.assertEqual(entry["status"], "interrupted")
        self.assertEqual(entry["unfinished_cases"], ["gemm-M=8,N=8,K=8"])
        self.assertFalse((out / "w" / "next").exists(), "no job starts after a Ctrl-C")
        with tarfile.open(out / "results.tar.xz") as tar:
            self.assertIn("jobs.jsonl", tar.getnames())

    @staticmethod
    def report_of(out):
        return [json.loads(l) for l in (out / "jobs.jsonl").read_text().splitlines()]


if __name__ == "__main__":
    support.main(globals(), "CpuJobs")
