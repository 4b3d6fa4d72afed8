# SPDX-License-Identifier: Apache-2.0
# The extension as a neighbour of other libraries in one process (no GPU needed): it exports
# its init alone, so nothing else binds to a definition inside it (libstdc++ and PyTorch did,
# and the heap was corrupted: docs/python.md, "What importing does"); it brings no CUDA
# runtime library of its own and points at no toolkit; NVRTC is loaded when a kernel first
# compiles, the process's copy when there is one, and a missing NVRTC is named.
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from streampipe import _core

EXTENSION = _core.__file__


def _tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} (binutils) is not installed")
    return path


def _run_child(code, env=None, prefix=()):
    r = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=env if env is not None else dict(os.environ))
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


# Run in a child: which files of the process are mapped, by name.
MAPPED = """
def mapped(word):
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if word in line.rsplit("/", 1)[-1]})
"""


def test_the_extension_exports_its_init_alone():
    out = subprocess.run([_tool("nm"), "-D", "--defined-only", EXTENSION], capture_output=True, text=True,
                         check=True).stdout
    exported = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert exported == ["PyInit__core"], f"{len(exported)} symbols exported, e.g. {exported[:10]}"


def test_the_extension_links_no_cuda_library_and_no_toolkit_path():
    out = subprocess.run([_tool("readelf"), "-d", EXTENSION], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    cuda = [n for n in needed if n.startswith(("libcuda", "libnvrtc", "libnvjpeg", "libcublas"))]
    assert cuda == [], f"the extension links {cuda}: the runtime is static, NVRTC loaded at run time"
    paths = [line for line in out.splitlines() if "RPATH" in line or "RUNPATH" in line]
    assert not any("cuda" in p for p in paths), paths


def test_importing_maps_no_cuda_library():
    # The driver (libcuda) too: importing makes no CUDA call.
    got = _run_child(MAPPED + "import streampipe, json; "
                     "print(json.dumps([mapped('libcudart'), mapped('libnvrtc'), mapped('libcuda.so')]))")
    assert got == [[], [], []], f"import streampipe mapped {got}"


def _wheel_cudart():
    for base in sys.path:
        hits = glob.glob(os.path.join(base, "nvidia", f"cu{_core.cuda_major}", "lib", f"libcudart.so.{_core.cuda_major}"))
        if hits:
            return hits[0]
    return None


def test_beside_the_nvidia_wheels_runtime_only_that_one_is_mapped():
    cudart = _wheel_cudart()
    if cudart is None:
        pytest.skip(f"NVIDIA's CUDA runtime wheel (nvidia-cuda-runtime, CUDA {_core.cuda_major}) is not installed")
    # What PyTorch's import does: the wheel's runtime, loaded by its path.
    code = MAPPED + f"""
import ctypes, json
ctypes.CDLL({cudart!r}, mode=ctypes.RTLD_GLOBAL)
import streampipe
streampipe.compile('extern "C" __global__ void k(float* x) {{ x[0] = 1.0f; }}', arch="sm_90", cache=False)
print(json.dumps([mapped("libcudart"), streampipe.info()["cuda_runtime"]]))
"""
    maps, runtime = _run_child(code)
    assert [os.path.realpath(m) for m in maps] == [os.path.realpath(cudart)]
    assert runtime >= _core.cuda_major * 1000


def test_nvrtc_is_loaded_by_the_first_compile_and_shared_with_the_process():
    code = MAPPED + """
import json, streampipe
before = mapped("libnvrtc.so")
streampipe.compile('extern "C" __global__ void k(float* x) { x[0] = 1.0f; }', arch="sm_90", cache=False)
print(json.dumps([before, mapped("libnvrtc.so"), streampipe._core.nvrtc_library_path()]))
"""
    before, after, path = _run_child(code)
    assert before == []
    assert [os.path.realpath(a) for a in after] == [os.path.realpath(path)]
    # Another library's copy loaded first is the one used: no second NVRTC.
    code = MAPPED + f"""
import ctypes, json
ctypes.CDLL({path!r})
import streampipe
streampipe.compile('extern "C" __global__ void k(float* x) {{ x[0] = 1.0f; }}', arch="sm_90", cache=False)
print(json.dumps(mapped("libnvrtc.so")))
"""
    assert [os.path.realpath(a) for a in _run_child(code)] == [os.path.realpath(path)]


def test_nvrtc_comes_from_the_nvidia_wheel_when_it_is_installed():
    from streampipe._libraries import nvidia_wheel_dirs
    dirs = nvidia_wheel_dirs(_core.cuda_major, sys.path)
    if not dirs:
        pytest.skip(f"NVIDIA's NVRTC wheel (nvidia-cuda-nvrtc, CUDA {_core.cuda_major}) is not installed")
    path = _run_child("import json, streampipe; print(json.dumps(streampipe._core.nvrtc_library_path()))")
    assert os.path.dirname(os.path.realpath(path)) == os.path.realpath(dirs[0])


def test_a_missing_nvrtc_is_named_with_what_to_install(tmp_path):
    # The toolkit hidden in a private mount namespace (root only), the wheels' folders unnamed.
    toolkit = os.path.realpath("/usr/local/cuda")
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        pytest.skip("hiding the toolkit needs root and unshare")
    empty = str(tmp_path)
    code = """
import json, streampipe
streampipe._core.set_nvrtc_search_dirs([])
try:
    streampipe.compile('extern "C" __global__ void k() {}', arch="sm_90", cache=False)
    print(json.dumps(None))
except streampipe.Error as e:
    print(json.dumps(str(e)))
"""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH")}
    probe = subprocess.run([unshare, "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare --mount is not permitted here: {probe.stderr.decode().strip()}")
    script = f"mount --bind {empty} {toolkit} && exec \"$@\""
    message = _run_child(code, env=env, prefix=(unshare, "--mount", "sh", "-c", script, "sh"))
    assert message is not None, "compiled without NVRTC?"
    assert f"libnvrtc.so.{_core.cuda_major}" in message and "pip install nvidia-cuda-nvrtc" in message, message
