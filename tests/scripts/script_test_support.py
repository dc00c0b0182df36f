"""What the tests of scripts/ share: loading a script without a .py name as a module, running it as a
process, and the autotune executable given on the command line (test classes that need it are skipped
without it)."""
import importlib.machinery
import importlib.util
import subprocess
import sys
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load_script(path, name):
    """The script at `path` (no .py suffix) as a module, for testing its pure helpers."""
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def tiny_cpu_bench_args(autotune, trials=4):
    """scripts/bench options for the smallest whole run on the cpu target: a gemm of 8^3, 4 trials."""
    return ["--target", "cpu", "--autotune", str(autotune), "--case-shape", "gemm:M=8,N=8,K=8", "--trials", str(trials),
            "--repeats", "1", "--min-repeat-ms", "0", "--quiet",
            "--", "--batch-size", "4", "--population", "16", "--repeats", "1", "--min-repeat-ms", "0"]


def run_script(path, *args, timeout=600):
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=timeout)


class OneLineErrors:
    """A mixin for test cases: bad input is exit status 2 and one line on stderr that says `text`."""

    def one_line(self, p, text):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(text, p.stderr)


def main(module_globals, *needs_autotune):
    """Runs the module's tests; the first argument, when it is no option, is the autotune executable
    (module_globals["AUTOTUNE"]); without it the classes named in needs_autotune are skipped."""
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        module_globals["AUTOTUNE"] = sys.argv.pop(1)
    if module_globals.get("AUTOTUNE") is None:
        for name in needs_autotune:
            module_globals[name] = unittest.skip("give the autotune executable")(module_globals[name])
    unittest.main(module=module_globals["__name__"], verbosity=2)
