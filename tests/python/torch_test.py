"""autotune.torch on the cpu target: a small model's tunable layers become tasks (a fused bias and
activation, weights by occurrence, an unsupported conv left out), `autotune tune --tasks` tunes them,
and `optimize` swaps the tuned layers for autotune's kernels: the model's output stays PyTorch's, an
input of another shape falls back to PyTorch, and the report says which layers were swapped.
Skipped (with a message) where PyTorch is not installed.
Usage: torch_test.py AUTOTUNE (the CLI); AUTOTUNE_LIBRARY and PYTHONPATH set."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

AUTOTUNE = None

try:
    import torch
    from torch import nn
except ImportError:
    torch = None


if torch is not None:
    class Small(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 8, 3, stride=2, bias=False)
            self.conv3 = nn.Conv2d(8, 8, 3, padding=1, padding_mode="reflect")  # not autotune's
            self.conv4 = nn.Conv2d(8, 8, 1)
            self.fc = nn.Linear(72, 16)

        def forward(self, x):
            y = torch.relu(self.conv1(x))
            y = self.conv3(self.conv2(y))
            y = torch.relu(self.conv4(y) + y)  # a shortcut: conv4's bias, the sum and the relu fuse
            z = nn.functional.relu(self.fc(y.flatten(1)))
            z = z.reshape(-1, 4, 4)
            z = torch.bmm(z, z.transpose(1, 2).contiguous())
            heads = z.reshape(-1, 2, 2, 4)  # (batch, heads, rows, columns): flattened to a batch of 2
            return heads @ heads.transpose(-1, -2)


@unittest.skipIf(torch is None, "PyTorch is not installed: autotune.torch is not tested")
class TorchCpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import autotune.torch as at
        cls.at = at
        torch.manual_seed(0)
        cls.model = Small().eval()
        cls.x = torch.rand(1, 3, 8, 8) * 2 - 1
        cls.tmp = tempfile.TemporaryDirectory()
        cls.tasks = at.tasks(cls.model, (cls.x,))
        path = os.path.join(cls.tmp.name, "tasks.json")
        with open(path, "w") as f:
            json.dump(cls.tasks, f)
        cls.db_path = os.path.join(cls.tmp.name, "t.db")
        cls.tune = subprocess.run([AUTOTUNE, "tune", "--tasks", path, "--target", "cpu", "--trials", "16",
                                   "--db", cls.db_path], capture_output=True, text=True, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_tasks(self):
        got = {(t["op"], t["shape"], t["epilogue"]) for t in self.tasks}
        self.assertEqual(got, {
            ("conv2d", "N=1,C=3,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1,dilation=1,groups=1", "bias,relu"),
            ("conv2d", "N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=2,pad=0,dilation=1,groups=1", ""),
            ("conv2d", "N=1,C=8,H=3,W=3,K=8,R=1,S=1,stride=1,pad=0,dilation=1,groups=1", "bias,residual,relu"),
            ("gemm", "M=1,N=16,K=72", "bias,relu"),
            ("batch_matmul", "B=1,M=4,N=4,K=4", ""),
            ("batch_matmul", "B=2,M=2,N=2,K=4", ""),
        })
        self.assertTrue(all(t["dtype"] == "float32" and t["weight"] == 1 for t in self.tasks))
        # At a precision, every product takes it: the convolutions' as the gemm's and bmm's.
        tf32 = self.at.tasks(self.model, (self.x,), precision="tf32")
        self.assertEqual({t["dtype"] for t in tf32}, {"tf32"})
        self.assertEqual(len(tf32), len(self.tasks))

    def test_optimize_swaps_the_tuned_layers_and_keeps_the_answers(self):
        import autotune
        self.assertEqual(self.tune.returncode, 0, self.tune.stderr)
        fast, report = self.at.optimize(self.model, autotune.Database(self.db_path), (self.x,))
        self.assertEqual(report.swapped(), 6, str(report))
        self.assertIn("conv3: ", str(report))
        self.assertIn("padding_mode 'reflect'", str(report))
        with torch.no_grad():
            torch.testing.assert_close(fast(self.x), self.model(self.x), rtol=1e-4, atol=1e-5)
            other = torch.rand(2, 3, 8, 8)  # another batch: PyTorch's layers
            torch.testing.assert_close(fast(other), self.model(other), rtol=1e-4, atol=1e-5)

    def test_layers_without_kernels_stay_pytorchs(self):
        import autotune
        self.assertEqual(self.tune.returncode, 0, self.tune.stderr)
        # The database holds cpu kernels only: asked for cuda ones, every layer stays PyTorch's.
        fast, report = self.at.optimize(self.model, autotune.Database(self.db_path), (self.x,), target="cuda")
        self.assertEqual(report.swapped(), 0)
        self.assertIn("no kernel in the database", str(report))
        with torch.no_grad():
            torch.testing.assert_close(fast(self.x), self.model(self.x))

@unittest.skipIf(torch is None, "PyTorch is not installed: autotune.torch is not tested")
class TorchChannelsLast(unittest.TestCase):
    """A channels_last model's convolutions are conv2d_nhwc tasks, run on the same memory."""

    def test_channels_last_convolutions_are_nhwc_kernels(self):
        import autotune
        import autotune.torch as at
        torch.manual_seed(1)
        model = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 1, bias=False)).eval()
        model = model.to(memory_format=torch.channels_last)
        x = (torch.rand(1, 4, 6, 6) * 2 - 1).to(memory_format=torch.channels_last)
        tasks = at.tasks(model, (x,))
        self.assertEqual({(t["op"], t["epilogue"]) for t in tasks}, {("conv2d_nhwc", "bias,relu"), ("conv2d_nhwc", "")})
        with tempfile.TemporaryDirectory() as tmp:
            path, db = os.path.join(tmp, "tasks.json"), os.path.join(tmp, "n.db")
            with open(path, "w") as f:
                json.dump(tasks, f)
            tune = subprocess.run([AUTOTUNE, "tune", "--tasks", path, "--target", "cpu", "--trials", "8", "--db", db],
                                  capture_output=True, text=True, timeout=600)
            self.assertEqual(tune.returncode, 0, tune.stderr)
            fast, report = at.optimize(model, autotune.Database(db), (x,))
            self.assertEqual(report.swapped(), 2, str(report))
            with torch.no_grad():
                y = fast(x)
                torch.testing.assert_close(y, model(x), rtol=1e-4, atol=1e-5)
                self.assertTrue(y.is_contiguous(memory_format=torch.channels_last))
                plain = torch.rand(1, 4, 6, 6)  # NCHW memory: PyTorch's layers
                torch.testing.assert_close(fast(plain), model(plain), rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    AUTOTUNE = sys.argv.pop(1)
    unittest.main(verbosity=2)
