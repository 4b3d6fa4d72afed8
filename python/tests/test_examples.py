# SPDX-License-Identifier: Apache-2.0
# Every example runs and passes its own checks: on the host backend here, on the GPU where
# there is one.
import os
import subprocess
import sys
from pathlib import Path

import pytest

import streampipe as sp

EXAMPLES = sorted(p.name for p in (Path(__file__).parent.parent / "examples").glob("*.py") if not p.name.startswith("_"))


def run_example(name, tmp_path, *flags):
    folder = Path(__file__).parent.parent / "examples"
    r = subprocess.run([sys.executable, str(folder / name), "--quick", *flags], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check:" in r.stdout and "FAILED" not in r.stdout
    return r.stdout


def test_there_are_the_chapters_examples():
    assert set(EXAMPLES) >= {"hello_add.py", "mandelbrot.py", "life.py", "arrays_200.py", "sync_and_devices.py"}


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_on_the_host_backend(name, tmp_path):
    run_example(name, tmp_path, "--host")


@pytest.mark.gpu
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_on_the_gpu(name, tmp_path):
    out = run_example(name, tmp_path)
    assert "[host backend" not in out
