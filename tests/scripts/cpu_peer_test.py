#!/usr/bin/env python3
"""autotune-cpu-peer (tools/cpu_peer): OpenBLAS and oneDNN on the inputs `autotune measure --save-io`
saved agree with autotune's checked output at odd shapes (primes, groups, stride, dilation) and every
epilogue part; a changed output is a mismatch (exit 1); bad input is one line and exit 2.

  python3 tests/scripts/cpu_peer_test.py AUTOTUNE_EXECUTABLE   (autotune-cpu-peer beside it)
"""
import json
import shutil
import subprocess
import struct
import tempfile
import unittest
from pathlib import Path

import script_test_support as support

AUTOTUNE = None  # set from the command line

CASES = [
    ("gemm", "M=7,N=13,K=5", "bias,relu"),
    ("gemm", "M=33,N=17,K=29", "scale,shift,residual,gelu"),
    ("batch_matmul", "B=3,M=5,N=9,K=4", "gelu_tanh"),
    ("conv2d", "N=2,C=6,H=9,W=7,K=4,R=3,S=2,stride=2,pad=1,dilation=2,groups=2", "scale,shift,residual,silu"),
    ("conv2d", "N=1,C=5,H=11,W=11,K=5,R=3,S=3,pad=1,groups=5", "residual,bias,relu6"),
    ("conv1d", "N=1,C=3,L=17,K=7,R=5,stride=3,pad=2", "bias,gelu_tanh"),
    ("conv3d", "N=1,C=2,D=5,H=6,W=7,K=3,Q=3,R=2,S=3,pad=1", "bias,relu"),
    ("conv2d_nhwc", "N=2,C=6,H=9,W=7,K=4,R=3,S=2,stride=2,pad=1,groups=2", "bias,residual,relu"),
]


def peer_exe():
    return Path(AUTOTUNE).parent / "autotune-cpu-peer"


def save_io(op, shape, epilogue, out):
    p = subprocess.run([AUTOTUNE, "measure", "--op", op, "--shape", shape, "--epilogue", epilogue, "--target", "cpu",
                        "--repeats", "1", "--min-repeat-ms", "0", "--save-io", str(out)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"autotune measure {op} {shape}: {p.stderr}")


def run_peer(io_dir, *extra):
    p = subprocess.run([str(peer_exe()), "--inputs", str(io_dir), "--repeats", "1", "--min-repeat-ms", "0", *extra],
                       capture_output=True, text=True, timeout=300)
    return p, (json.loads(p.stdout) if p.stdout.strip() else None)


class CpuPeer(unittest.TestCase, support.OneLineErrors):
    @classmethod
    def setUpClass(cls):
        if not peer_exe().is_file():
            raise unittest.SkipTest("autotune-cpu-peer was not built (no OpenBLAS or oneDNN)")
        cls.tmp = Path(tempfile.mkdtemp(prefix="cpu_peer_test-"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_answers_match_autotunes_output(self):
        for i, (op, shape, epilogue) in enumerate(CASES):
            with self.subTest(op=op, shape=shape, epilogue=epilogue):
                io = self.tmp / f"case{i}"
                save_io(op, shape, epilogue, io)
                p, r = run_peer(io)
                self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
                self.assertTrue(r["answers_match"])
                self.assertGreater(r["latency_ms"], 0)
                self.assertTrue(all(v["answers_match"] for v in r["variants"]), r["variants"])
                self.assertIn("OpenBLAS" if op in ("gemm", "batch_matmul") else "oneDNN", r["peer"])

    def test_a_changed_output_is_a_mismatch(self):
        io = self.tmp / "changed"
        save_io("conv2d", "N=1,C=3,H=6,W=6,K=4,R=3,S=3,pad=1", "bias", io)
        out = io / "output.npy"
        data = bytearray(out.read_bytes())
        struct.pack_into("<f", data, len(data) - 4, struct.unpack_from("<f", data, len(data) - 4)[0] + 1.0)
        out.write_bytes(bytes(data))
        p, r = run_peer(io)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertFalse(r["answers_match"])

    def test_bad_input_is_one_line(self):
        self.one_line(run_peer(self.tmp / "missing")[0], "no io.json")
        io = self.tmp / "softmax"
        p = subprocess.run([AUTOTUNE, "measure", "--op", "softmax", "--shape", "M=4,N=8", "--target", "cpu",
                            "--repeats", "1", "--min-repeat-ms", "0", "--save-io", str(io)], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.one_line(run_peer(io)[0], "no CPU peer for softmax")
        self.one_line(run_peer(io, "--repeats", "0")[0], "--repeats")
        self.one_line(run_peer(io, "--isa", "sse9")[0], "unknown cpu instruction set")

    def test_inputs_that_are_not_the_workloads_are_one_line(self):
        io = self.tmp / "hostile"
        save_io("gemm", "M=7,N=13,K=5", "bias", io)
        shutil.copy(io / "input0.npy", io / "input1.npy")  # A's 7 x 5 where B's 5 x 13 belongs
        self.one_line(run_peer(io)[0], "input 1 (B) is not of")
        manifest = json.loads((io / "io.json").read_text())
        manifest["tensors"] = manifest["tensors"][1:]
        (io / "io.json").write_text(json.dumps(manifest))
        self.one_line(run_peer(io)[0], "lists 2 inputs")
        (io / "io.json").write_text(json.dumps({"tensors": [{"role": "input"}]}))
        self.one_line(run_peer(io)[0], "is not an io manifest")


if __name__ == "__main__":
    support.main(globals(), "CpuPeer")
