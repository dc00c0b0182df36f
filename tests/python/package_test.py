"""The Python package over the lookup library: a cpu gemm kernel looked up and called on numpy
arrays gives numpy's answer (in place with out=, through aligned copies with a warning where the
arrays are not aligned or contiguous); wrong shapes, types, counts and devices are exceptions with
one sentence; a missing record is None; torch CPU tensors work where PyTorch is installed.
Usage: package_test.py FIXTURE_DB (make_lookup_db's database); AUTOTUNE_LIBRARY and PYTHONPATH set."""
import sys
import tempfile
import unittest
import warnings

import numpy as np

import autotune

DB = None


class CpuPackedConvolution(unittest.TestCase):
    """The fixture's conv2d record takes its weight packed: called with the weight as it is (packed on
    every call) or packed once with pack(), it gives numpy's answer."""

    def test_weights_packed_once_or_every_call(self):
        k = autotune.Database(DB).lookup("conv2d", "N=1,C=16,H=14,W=14,K=32,R=3,S=3,pad=1", target="cpu")
        self.assertEqual(list(k.packs), ["weight"])
        rng = np.random.default_rng(7)
        x = rng.uniform(-1, 1, (1, 16, 14, 14)).astype(np.float32)
        w = rng.uniform(-1, 1, (32, 16, 3, 3)).astype(np.float32)
        padded = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
        want = sum(np.einsum("kc,cpq->kpq", w[:, :, r, s], padded[:, r:r + 14, s:s + 14]) for r in range(3) for s in range(3))
        np.testing.assert_allclose(k(x, w)[0], want, rtol=1e-4, atol=1e-4)
        packed = k.pack("weight", w)
        self.assertEqual(packed.shape, k.packs["weight"][1].shape)
        np.testing.assert_allclose(k(x, packed)[0], want, rtol=1e-4, atol=1e-4)
        with self.assertRaisesRegex(autotune.AutotuneError, "no packed input 'data'"):
            k.pack("data", x)


class CpuTwoOutputs(unittest.TestCase):
    """add_rms_norm writes the residual sum and the normalized rows: the call returns both (a tuple,
    in the kernel's order) or writes the two arrays of out=."""

    def test_sum_and_normalized_rows(self):
        k = autotune.Database(DB).lookup("add_rms_norm", "M=4,N=48", target="cpu")
        self.assertEqual(k.num_outputs, 2)
        self.assertEqual([t.name for t in k.inputs], ["X", "R", "W"])
        self.assertEqual([t.name for t in k.outputs], ["sum", "Y"])
        rng = np.random.default_rng(3)
        x, r = (rng.uniform(-1, 1, (4, 48)).astype(np.float32) for _ in range(2))
        w = rng.uniform(-1, 1, 48).astype(np.float32)
        h = x.astype(np.float64) + r
        want = h / np.sqrt((h * h).mean(axis=1, keepdims=True) + 1e-5) * w
        s, y = k(x, r, w)
        np.testing.assert_allclose(s, h, rtol=1e-6)
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
        outs = (np.full((4, 48), np.nan, np.float32), np.full((4, 48), np.nan, np.float32))
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            got = k(x, r, w, out=outs)
        self.assertIs(got[0], outs[0])
        np.testing.assert_allclose(outs[1], want, rtol=1e-4, atol=1e-5)
        with self.assertRaisesRegex(autotune.AutotuneError, "writes 2 outputs \\(sum, Y\\)"):
            k(x, r, w, out=outs[1])


class CpuGemm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.db = autotune.Database(DB)
        cls.k = cls.db.lookup("gemm", "M=64,N=64,K=64", target="cpu")
        rng = np.random.default_rng(5)
        cls.a = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
        cls.b = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
        cls.want = cls.a.astype(np.float64) @ cls.b.astype(np.float64)

    def close(self, c):
        np.testing.assert_allclose(c, self.want, rtol=1e-4, atol=1e-4)

    def test_metadata(self):
        k = self.k
        self.assertEqual((k.language, k.exact, k.workload), ("c", True, "gemm[M=64,N=64,K=64]"))
        self.assertEqual([t.name for t in k.tensors], ["A", "B", "C"])
        self.assertEqual(k.output.shape, (64, 64))
        self.assertEqual(k.alignment, 64)
        self.assertIn("-fopenmp", k.build_options)
        self.assertIn("gemm[M=64,N=64,K=64]", repr(k))

    def test_call_returns_the_product(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # aligned, contiguous arrays: no copy, no warning
            a = autotune.tensors._aligned_numpy((64, 64), np.dtype(np.float32), 64)
            b = autotune.tensors._aligned_numpy((64, 64), np.dtype(np.float32), 64)
            a[...], b[...] = self.a, self.b
            self.close(self.k(a, b))

    def test_out_is_written_and_returned(self):
        out = np.full((64, 64), np.nan, dtype=np.float32)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            got = self.k(self.a, self.b, out=out)
        self.assertIs(got, out)
        self.close(out)
        out[:] = np.nan
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            self.assertIs(self.k(self.a, self.b, out=(out,)), out)  # a tuple of the one output, as for several
        self.close(out)

    def test_unaligned_and_strided_inputs_are_copied_with_a_warning(self):
        raw = np.zeros(64 * 64 + 1, dtype=np.float32)
        a = raw[1:].reshape(64, 64)  # 4 bytes off any 64-byte boundary
        a[...] = self.a
        bt = np.ascontiguousarray(self.b.T).T  # the same values, column-major
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = self.k(a, bt)
        self.close(c)
        self.assertTrue(any("input A copied" in str(w.message) for w in caught), [str(w.message) for w in caught])
        self.assertTrue(any("input B copied" in str(w.message) for w in caught))

    def test_bad_arguments_are_one_sentence(self):
        cases = [
            (lambda: self.k(self.a), "takes 2 inputs (A, B), not 1"),
            (lambda: self.k(self.a, self.b[:32]), "input B has shape (32, 64), the kernel takes (64, 64)"),
            (lambda: self.k(self.a.astype(np.float64), self.b), "input A is float64, the kernel takes float32"),
            (lambda: self.k(self.a, self.b, out=np.empty((64, 63), np.float32)), "output C has shape (64, 63)"),
            (lambda: self.k(self.a, self.b, out=(np.empty((64, 64), np.float32),) * 2), "writes 1 output (C): out= takes it"),
        ]
        for call, text in cases:
            with self.assertRaises(autotune.AutotuneError) as e:
                call()
            self.assertIn(text, str(e.exception))
            self.assertEqual(len(str(e.exception).splitlines()), 1)

    def test_missing_record_is_none_and_bad_query_an_error(self):
        self.assertIsNone(self.db.lookup("gemm", "M=3,N=3,K=3", target="cpu"))
        with self.assertRaises(autotune.AutotuneError) as e:
            self.db.lookup("nope", "M=1", target="cpu")
        self.assertIn("unknown operator 'nope'", str(e.exception))
        with self.assertRaises(autotune.AutotuneError):
            self.db.lookup("gemm", "M=64,N=64,K=64", dtype="float16", precision="tf32")
        self.assertIsNone(self.db.lookup("gemm", "M=64,N=64,K=64", target="cpu", precision="3xtf32"))
        self.assertEqual(self.db.lookup("gemm", {"M": 64, "N": 64, "K": 64}, target="cpu").workload, self.k.workload)

    def test_a_kernel_outlives_nothing_it_needs(self):
        with autotune.Database(DB) as db:
            k = db.lookup("gemm", "M=64,N=64,K=64", target="cpu")
            self.close(k(self.a, self.b))

    def test_a_missing_database_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(autotune.AutotuneError) as e:
                autotune.Database(f"{d}/none.db")
            self.assertIn("opening", str(e.exception))


class TorchCpu(unittest.TestCase):
    def setUp(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("PyTorch is not installed")

    def test_torch_cpu_tensors(self):
        import torch
        db = autotune.Database(DB)
        k = db.lookup("gemm", "M=64,N=64,K=64", target="cpu")
        a, b = torch.rand(64, 64) * 2 - 1, torch.rand(64, 64) * 2 - 1
        c = k(a, b)
        self.assertIsInstance(c, torch.Tensor)
        torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
        with self.assertRaises(autotune.AutotuneError):
            k(a.double(), b)

    def test_tensors_as_the_kernel_takes_them_skip_the_checked_path(self):
        import torch
        k = autotune.Database(DB).lookup("gemm", "M=64,N=64,K=64", target="cpu")
        a, b = torch.rand(64, 64) * 2 - 1, torch.rand(64, 64) * 2 - 1
        k(a, b)  # loads the kernel
        checked = k._call_checked
        k._call_checked = lambda *args: self.fail("the checked path ran for tensors the kernel takes as they are")
        out = torch.empty(64, 64)
        self.assertIs(k(a, b, out=out), out)
        torch.testing.assert_close(out, a @ b, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(k(a, b), a @ b, rtol=1e-4, atol=1e-4)
        # Anything else goes the checked way: errors stay one sentence, copies warn at the caller's line.
        k._call_checked = checked
        for call, text in [(lambda: k(a.double(), b), "input A is torch.float64"),
                           (lambda: k(a, b[:32]), "input B has shape (32, 64)"),
                           (lambda: k(a, b, out=torch.empty(64, 64, dtype=torch.float16)), "output C is torch.float16"),
                           (lambda: k(a), "takes 2 inputs")]:
            with self.assertRaises(autotune.AutotuneError) as e:
                call()
            self.assertIn(text, str(e.exception))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = k(a.t().contiguous().t(), b)
        torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
        self.assertEqual([w.filename for w in caught], [__file__], [str(w.message) for w in caught])


if __name__ == "__main__":
    DB = sys.argv.pop(1)
    unittest.main(verbosity=2)
