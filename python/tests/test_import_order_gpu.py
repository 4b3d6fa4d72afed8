# SPDX-License-Identifier: Apache-2.0
# streampipe imported before, between and after PyTorch, CuPy and JAX, in every order, each
# order in a process of its own; after the imports an engine runs over each library's device
# arrays and a runtime kernel compiles and runs (import_order_child.py). A process that dies
# ("free(): invalid pointer" was one) or computes wrong fails its order; so does one that maps
# a CUDA runtime file the peers alone do not map, or two different NVRTC files. Libraries not
# installed are left out of the orders; with none of them installed the test skips.
import importlib.util
import itertools
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.gpu

PEERS = ("torch", "cupy", "jax")
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "import_order_child.py")


def _installed(name):
    return importlib.util.find_spec(name) is not None


def _run(order):
    env = dict(os.environ)
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # JAX would take 75% of the GPU per process
    env.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)     # each order as a fresh process sees it
    r = subprocess.run([sys.executable, CHILD, ",".join(order)], capture_output=True, text=True, timeout=600,
                       env=env)
    return order, r


def _last_json(r):
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_every_import_order_lives_and_computes():
    peers = [p for p in PEERS if _installed(p)]
    if not peers:
        pytest.skip("none of PyTorch, CuPy and JAX is installed")
    orders = list(itertools.permutations(["streampipe", *peers]))
    # Four processes at a time: each holds a context per library, well within one GPU.
    _, baseline = _run(tuple(peers))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(_run, orders))
    assert baseline.returncode == 0, f"the peers alone ({peers}) failed:\n{baseline.stderr[-3000:]}"
    peers_cudart = {os.path.realpath(f) for f in _last_json(baseline)["cudart"]}
    failures = []
    for order, r in results:
        name = " -> ".join(order)
        if r.returncode != 0:
            failures.append(f"{name}: exit {r.returncode}\n{r.stderr[-3000:]}")
            continue
        got = _last_json(r)
        wrong = {k: v for k, v in got["max_abs_error"].items() if not v <= 1e-5}
        if wrong:
            failures.append(f"{name}: wrong results {wrong}")
        # streampipe's runtime is its own (static): it maps no CUDA runtime the peers did not.
        extra = {os.path.realpath(f) for f in got["cudart"]} - peers_cudart
        if extra:
            failures.append(f"{name}: CUDA runtime files beside the peers' {sorted(peers_cudart)}: {sorted(extra)}")
        # NVRTC is the process's one copy, whoever loaded it first.
        nvrtc = {os.path.realpath(f) for f in got["nvrtc"]}
        if len(nvrtc) > 1:
            failures.append(f"{name}: {len(nvrtc)} NVRTC files mapped: {sorted(nvrtc)}")
    assert not failures, f"{len(failures)} of {len(orders)} orders failed:\n" + "\n".join(failures)
