# SPDX-License-Identifier: Apache-2.0
"""Device against stream synchronization, and explicit devices: a slow kernel on one
stream and a quick one on another; waiting for the quick stream returns while the slow one
still runs, waiting for the device waits for both. Every call names its device; the
current device (the primary context the runtime uses) is set explicitly per thread.

    python sync_and_devices.py [--host]
"""
import threading
import time
from typing import List

import numpy as np

import streampipe as sp
from _common import check, parse

SPIN = r"""
__global__ void spin(unsigned long long cycles, int* done) {
  unsigned long long start = clock64();
  while (clock64() - start < cycles) {}
  *done = 1;
}
"""


def main() -> None:
    args = parse(__doc__)
    info = sp.info()
    if not args.gpu:
        if info["backend"] == "host":
            print(f"devices: none ({info['reason']}); an engine here runs on the host backend")
        with sp.Engine(sp.ops.affine(1, 0), backend="auto" if info["backend"] == "host" else "host") as e:
            check(e.backend == "host", "without a GPU (or asked for) an engine runs on the host backend")
            check(e.map([np.arange(4, dtype=np.float32)])[0].tolist() == [0, 1, 2, 3], "and computes")
        return
    for d in info["devices"]:
        free, total = sp.device_memory(d["index"])
        print(f"GPU {d['index']}: {d['name']}, sm_{d['compute_capability'][0]}{d['compute_capability'][1]}, "
              f"{d['multiprocessors']} SMs, {free / 2**30:.1f} of {total / 2**30:.1f} GiB free")
    device = 0
    sp.set_device(device)
    check(sp.get_device() == device, "the current device is the one set")
    seen: List[int] = []

    def use_device() -> None:
        sp.set_device(device)
        seen.append(sp.get_device())

    t = threading.Thread(target=use_device)
    t.start()
    t.join()
    check(seen == [device], "another thread sets its own current device")

    spin = sp.SourceModule(SPIN, device=device).get_function("spin")
    slow, quick = sp.Stream(device), sp.Stream(device)
    flags = sp.zeros(2, np.int32, device)
    clock_hz = 1.5e9
    spin(np.uint64(int(0.3 * clock_hz)), flags.ptr, grid=1, block=1, stream=slow)  # ~0.3 s
    spin(np.uint64(1000), flags.ptr + 4, grid=1, block=1, stream=quick)
    t0 = time.perf_counter()
    quick.synchronize()
    quick_wait = time.perf_counter() - t0
    still_running = not slow.query()
    sp.synchronize(device)
    device_wait = time.perf_counter() - t0
    print(f"stream sync returned after {1e3 * quick_wait:.1f} ms; device sync after {1e3 * device_wait:.1f} ms")
    check(still_running, "the slow stream was still running when the quick one was done")
    check(device_wait > quick_wait, "device synchronization waited for the slow stream too")
    check(list(flags.get()) == [1, 1], "both kernels finished")


if __name__ == "__main__":
    main()
