#!/usr/bin/env python3
"""scripts/leave-out-models on cpu records made here: one model per case, each trained without its
layer (a convolution at every batch size of the suite), a case with no kept records trained on all;
models already there are kept; bad input is one line and status 2.

  python3 tests/scripts/leave_out_models_test.py AUTOTUNE_EXECUTABLE
"""
import json
import lzma
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import script_test_support as support

SCRIPT = support.SCRIPTS / "leave-out-models"
AUTOTUNE = None  # set from the command line
FAST = ["--target", "cpu", "--trials", "8", "--batch-size", "8", "--population", "16", "--repeats", "1",
        "--min-repeat-ms", "0", "--warmup", "0", "--threads", "1"]
SUITE = {"cases": [{"name": "g8", "op": "gemm", "shape": "M=8,N=8,K=8"},
                   {"name": "c1", "op": "conv2d", "shape": "N=1,C=4,H=6,W=6,K=4,R=3,S=3,pad=1"},
                   {"name": "c2", "op": "conv2d", "shape": "N=2,C=4,H=6,W=6,K=4,R=3,S=3,pad=1"},
                   {"name": "g16", "op": "gemm", "shape": "M=16,N=16,K=16"}]}


def run(*args):
    return support.run_script(SCRIPT, *args)


class LeaveOutModels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="leave_out_models_test-"))
        db = cls.tmp / "tuned.db"
        for case in SUITE["cases"][:3]:  # g16 gets no records
            subprocess.run([AUTOTUNE, "tune", "--op", case["op"], "--shape", case["shape"], "--db", str(db), *FAST],
                           check=True, capture_output=True, timeout=300)
        exported = subprocess.run([AUTOTUNE, "db", "export", "--db", str(db), "--out", "-"], check=True,
                                  capture_output=True, timeout=300).stdout
        (cls.tmp / "records").mkdir()
        (cls.tmp / "records" / "cpu.jsonl.xz").write_bytes(lzma.compress(exported))
        (cls.tmp / "suite.json").write_text(json.dumps(SUITE))
        cls.args = ["--suite", str(cls.tmp / "suite.json"), "--records", str(cls.tmp / "records"), "--target", "cpu",
                    "--autotune", AUTOTUNE]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_one_model_per_case_without_its_layer(self):
        out = self.tmp / "models"
        p = run("--out", str(out), *self.args)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("g8", "c1", "c2", "g16"):
            model = json.loads((out / f"{name}.model").read_text())
            self.assertIn("learner", model)
        # the models and nothing else: the directory is carried to the GPU machine as it is
        self.assertEqual(sorted(f.name for f in out.iterdir()), ["c1.model", "c2.model", "g16.model", "g8.model"])
        lines = {l.split("] ")[1].split(":")[0]: l for l in p.stderr.splitlines() if "] " in l}
        # (how many records are valid is the cpu's business: the workloads learned from are the point)
        self.assertRegex(lines["g8"], r"without the 1 workload\(s\) of its layer: \d+ valid records of 2 workloads")
        self.assertRegex(lines["c1"], r"without the 2 workload\(s\) of its layer: \d+ valid records of 1 workload ")
        self.assertRegex(lines["c2"], r"without the 2 workload\(s\) of its layer: \d+ valid records of 1 workload ")
        self.assertRegex(lines["g16"], r"every record \(none of its layer is kept\): \d+ valid records of 3 workloads")
        again = run("--out", str(out), *self.args, "--cases", "g8")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn("is there", again.stderr)

    def test_records_db_is_kept_and_reused(self):
        db = self.tmp / "kept" / "records.db"
        first = run("--out", str(self.tmp / "m4"), *self.args, "--cases", "g8", "--records-db", str(db))
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn("imported cpu.jsonl.xz", first.stderr)
        self.assertTrue(db.is_file())
        second = run("--out", str(self.tmp / "m5"), *self.args, "--cases", "g8", "--records-db", str(db))
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn(f"records from {db}", second.stderr)
        self.assertNotIn("imported", second.stderr)
        self.assertEqual(sorted(f.name for f in (self.tmp / "m5").iterdir()), ["g8.model"])
        (self.tmp / "records" / "cpu.jsonl.xz").touch()  # newer records: the database is imported again
        os.utime(db, (0, 0))
        third = run("--out", str(self.tmp / "m6"), *self.args, "--cases", "g8", "--records-db", str(db))
        self.assertEqual(third.returncode, 0, third.stderr)
        self.assertIn("importing them again", third.stderr)
        self.assertIn("imported cpu.jsonl.xz", third.stderr)

    def test_databases_hold_the_best_records_of_the_other_workloads_of_the_operator(self):
        out = self.tmp / "seeds"
        p = run("--out", str(out), *self.args, "--cases", "g16,c2", "--databases")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("g16: ", p.stderr)
        self.assertRegex(p.stderr, r"g16\.db: [1-4] records of 1 other workloads")  # g8's best, at most 4
        self.assertRegex(p.stderr, r"c2\.db: 0 records of 0 other workloads")      # c1 is its layer
        exported = subprocess.run([AUTOTUNE, "db", "export", "--db", str(out / "g16.db"), "--out", "-"], check=True,
                                  capture_output=True, timeout=60).stdout.decode()
        records = [json.loads(l) for l in exported.splitlines() if l.strip()]
        self.assertTrue(records)
        self.assertEqual({(r["workload"]["op"], r["workload"]["shape"]["M"]) for r in records}, {("gemm", 8)})
        self.assertTrue(all(r["error_kind"] == "NONE" and r["correct"] for r in records))
        self.assertEqual(sorted(f.name for f in out.iterdir() if f.suffix in (".db", ".model")),
                         ["c2.db", "c2.model", "g16.db", "g16.model"])

    def test_bad_input_is_one_line(self):
        for args, text in ((["--out", str(self.tmp / "m2"), *self.args, "--cases", "zzz"], "unknown case zzz"),
                           (["--out", str(self.tmp / "m3"), *self.args, "--records", str(self.tmp)], "no *.jsonl.xz"),
                           (self.args, "--out"),
                           (["--out", str(self.tmp / "m7"), *self.args, "--records-db", str(self.tmp)], "a directory")):
            p = run(*args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)


class Usage(unittest.TestCase):
    def test_the_default_suite_is_the_repositorys(self):
        p = run("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("default: bench/suite.json of the repository", " ".join(p.stdout.split()))


if __name__ == "__main__":
    support.main(globals(), "LeaveOutModels")
