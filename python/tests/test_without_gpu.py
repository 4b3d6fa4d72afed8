# SPDX-License-Identifier: Apache-2.0
# What the GPU calls say where the process has no GPU: streampipe.Error naming the cause (no
# driver, no device) and what to do, never "GPU index 0 does not exist"; compile() without
# arch still works. Run in a child with CUDA_VISIBLE_DEVICES="" so that a GPU machine (no
# device visible) checks it as well as a machine without a driver.
import json
import os
import subprocess
import sys
import textwrap

import pytest

import streampipe as sp

CHILD = textwrap.dedent("""
    import json, numpy as np, streampipe as sp
    calls = {
        "SourceModule": lambda: sp.SourceModule("__global__ void k() {}"),
        "ReductionKernel": lambda: sp.ReductionKernel(np.float32, "0.0f", "a + b", "x[i]", "const float* x")(
            np.ones(4, np.float32)),
        "ElementwiseKernel": lambda: sp.ElementwiseKernel("float* x", "x[i] = 1")(n=4),
        "to_device": lambda: sp.to_device(np.ones(4, np.float32)),
        "DeviceArray": lambda: sp.DeviceArray((4,)),
        "Stream": lambda: sp.Stream(),
        "Event": lambda: sp.Event(),
        "synchronize": lambda: sp.synchronize(),
        "device_memory": lambda: sp.device_memory(),
    }
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = ["no error", ""]
        except Exception as e:
            out[name] = [type(e).__name__ + (" (streampipe.Error)" if isinstance(e, sp.Error) else ""), str(e)]
    r = sp.compile("__global__ void k() {}", cache=False)
    out["compile"] = [r.arch, r.kind]
    out["driver"] = sp.info()["cuda_driver"]
    print(json.dumps(out))
""")


def _child():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_gpu_calls_without_a_gpu_name_the_cause_and_the_remedy():
    out = _child()
    cause = "no NVIDIA driver found" if out.pop("driver") == 0 else "no CUDA device found"
    assert out.pop("compile") == [sp.DEFAULT_ARCH, "cubin"]
    for name, (kind, message) in out.items():
        assert kind.endswith("(streampipe.Error)"), f"{name}: {kind}: {message}"
        assert "does not exist" not in message, f"{name}: {message}"
        assert cause in message, f"{name}: {message}"
        assert 'backend="host"' in message and "compile()" in message, f"{name}: {message}"
    if cause == "no CUDA device found":
        assert 'CUDA_VISIBLE_DEVICES=""' in out["Stream"][1]


@pytest.mark.skipif(sp.device_count() > 0, reason="a GPU is usable in this process (the child test covers it)")
def test_the_error_carries_the_runtime_status():
    try:
        sp.Stream()
    except sp.Error as e:
        assert e.api == "CUDA runtime"
        assert e.status_name in ("cudaErrorInsufficientDriver", "cudaErrorNoDevice"), e.status_name
        assert e.call.startswith("cudaGetDeviceCount")
    else:
        raise AssertionError("Stream() without a GPU raised nothing")
