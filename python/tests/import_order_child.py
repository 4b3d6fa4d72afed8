# SPDX-License-Identifier: Apache-2.0
"""One order of the import-order matrix (test_import_order_gpu.py), run as its own process:
imports the libraries named on the command line in that order, then runs an engine over
each peer library's device arrays (input and, where the library's arrays are writable,
output too) and compiles and launches a runtime kernel. Prints one JSON line: what each
engine computed against numpy, and which CUDA runtime and NVRTC files the process mapped.
Without streampipe in the order it only makes the peers' arrays: the baseline of what the
peers map by themselves.
Exits non-zero (with the traceback) on any failure; a crash shows as the signal."""
import importlib
import json
import sys

import numpy as np


def mapped(word):
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if word in line.rsplit("/", 1)[-1]})


def peer_arrays(name, lib, xs):
    """The inputs as the library's device arrays, the outputs (or None: the engine allocates
    them), and a function reading one back into numpy."""
    if name == "torch":
        ins = [lib.from_numpy(x).cuda() for x in xs]
        outs = [lib.empty_like(t) for t in ins]
        lib.cuda.synchronize()
        return ins, outs, lambda t: t.cpu().numpy()
    if name == "cupy":
        ins = [lib.asarray(x) for x in xs]
        outs = [lib.empty_like(a) for a in ins]
        lib.cuda.Device().synchronize()
        return ins, outs, lib.asnumpy
    if name == "jax":
        ins = [lib.device_put(x, lib.devices("gpu")[0]) for x in xs]
        for a in ins:
            a.block_until_ready()
        return ins, None, np.asarray  # JAX arrays are immutable: the engine allocates
    raise ValueError(name)


def engine_over(sp, name, lib):
    rng = np.random.default_rng(len(name))
    xs = [rng.random(4096, dtype=np.float32) for _ in range(8)]
    ins, outs, to_numpy = peer_arrays(name, lib, xs)
    with sp.Engine(sp.ops.affine(2.0, 1.0), backend="gpu") as engine:
        ys = engine.map(ins, out=outs)
    worst = max(float(np.max(np.abs(to_numpy(y) if not isinstance(y, sp.DeviceArray) else y.get()) - (2 * x + 1)))
                for x, y in zip(xs, ys))
    return worst


def runtime_kernel(sp):
    mod = sp.SourceModule("""
__global__ void twice(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}""")
    x = np.arange(1000, dtype=np.float32)
    d = sp.to_device(x)
    mod.get_function("twice")(d, np.int32(x.size), grid=4, block=256)
    sp.synchronize()
    return float(np.max(np.abs(d.get() - 2 * x)))


def main(order):
    libs = {name: importlib.import_module(name) for name in order}
    if "streampipe" not in libs:  # the baseline: what the peers alone map once their arrays exist
        for name, lib in libs.items():
            peer_arrays(name, lib, [np.zeros(16, np.float32)])
        print(json.dumps({"order": order, "max_abs_error": {}, "cudart": mapped("libcudart.so"),
                          "nvrtc": mapped("libnvrtc.so")}))
        return
    sp = libs["streampipe"]
    errors = {name: engine_over(sp, name, lib) for name, lib in libs.items() if name != "streampipe"}
    errors["runtime kernel"] = runtime_kernel(sp)
    print(json.dumps({"order": order, "max_abs_error": errors, "cudart": mapped("libcudart.so"),
                      "nvrtc": mapped("libnvrtc.so")}))


if __name__ == "__main__":
    main(sys.argv[1].split(","))
