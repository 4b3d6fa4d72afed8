# SPDX-License-Identifier: Apache-2.0
# Issue 36's classes on the Python side: nothing destroyed (special files, links, the kernel
# cache's trust), nothing hung (re-entrant calls, fork, FIFOs, Ctrl-C in NVRTC, threads that
# cannot start), nothing unbounded (the engine's caps, cache entries), clear errors (NUL
# bytes, imread's messages), and a closed engine that stays closed. Whatever could hang or
# abort today runs in a child process with a time limit.
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import streampipe as sp

X = np.ones(8, np.float32)
KERNEL = 'extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }\n'


def host_engine(op=None, **kw):
    return sp.Engine(op or sp.ops.affine(2.0, 1.0), backend="host", **kw)


def run_child(code, *args, timeout=120, env=None):
    """`code` in a fresh interpreter; a hang fails the test instead of the whole run."""
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung for {timeout} s:\nstdout: {e.stdout}\nstderr: {e.stderr}")


# ---- class 3: imwrite never replaces a special file or a link ---------------------------

def test_imwrite_never_replaces_a_fifo_a_device_or_a_link(tmp_path):
    a = np.zeros((4, 4), np.uint8)
    fifo = tmp_path / "x.png"
    os.mkfifo(fifo)
    with pytest.raises(RuntimeError, match="FIFO, not a regular file"):
        sp.imwrite(str(fifo), a)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    target = tmp_path / "t.png"
    sp.imwrite(str(target), a)
    before = target.read_bytes()
    link = tmp_path / "l.png"
    os.symlink("t.png", link)
    with pytest.raises(RuntimeError, match="symbolic link"):
        sp.imwrite(str(link), np.full((4, 4), 9, np.uint8))
    assert os.path.islink(link) and target.read_bytes() == before
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    except OSError:
        return  # no device nodes here (not root, or a container without CAP_MKNOD)
    with pytest.raises(RuntimeError, match="character device"):
        sp.imwrite(str(device), a, format="png")  # a name without an extension: the format given
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


# ---- class 4: trace_json and gantt_svg write as the CLI does -----------------------------

def test_trace_and_gantt_are_renamed_into_place_never_written_through_a_link(tmp_path):
    with host_engine() as e:
        e.map([X])
        trace = tmp_path / "t.json"
        trace.write_text("an earlier trace")
        inode = os.stat(trace).st_ino
        text = e.trace_json(str(trace))
        assert trace.read_text() == text
        assert os.stat(trace).st_ino != inode, "written in place: a full disk would leave half a file"
        keep = tmp_path / "keep.txt"
        keep.write_text("precious")
        link = tmp_path / "g.svg"
        os.symlink("keep.txt", link)
        with pytest.raises(RuntimeError, match="symbolic link"):
            e.gantt_svg(str(link))
        assert keep.read_text() == "precious" and os.path.islink(link)
        e.gantt_svg(tmp_path / "g2.svg")  # a path-like works too
        assert (tmp_path / "g2.svg").read_text().startswith("<")
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


# ---- class 5: the kernel cache is private, and refuses what others can write -------------

def test_kernel_cache_is_private_under_umask_0_and_refuses_entries_others_can_write(tmp_path, monkeypatch):
    cache = tmp_path / "nested" / "cache"
    monkeypatch.setenv("STREAMPIPE_CACHE_DIR", str(cache))
    monkeypatch.delenv("STREAMPIPE_CACHE_DISABLE", raising=False)
    old = os.umask(0)
    try:
        first = sp.compile(KERNEL, arch="sm_90", name="private.cu")
    finally:
        os.umask(old)
    assert first.stats.origin == "compiled"
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    entries = list(cache.glob("*.spk"))
    assert len(entries) == 1 and stat.S_IMODE(os.stat(entries[0]).st_mode) == 0o600
    assert sp.compile(KERNEL, arch="sm_90", name="private.cu").stats.origin == "disk"
    os.chmod(entries[0], 0o666)  # anyone could have put another kernel under this key
    again = sp.compile(KERNEL, arch="sm_90", name="private.cu")
    assert again.stats.origin == "compiled"
    assert "writable by others" in again.stats.cache_warning
    os.chmod(cache, 0o777)
    third = sp.compile(KERNEL, arch="sm_90", name="private.cu")
    assert third.stats.origin == "compiled" and "writable by others" in third.stats.cache_warning


# ---- class 6: a NUL byte is refused, not cut ---------------------------------------------

def test_a_nul_byte_in_a_path_or_a_source_is_refused(tmp_path):
    ok = tmp_path / "ok.png"
    sp.imwrite(str(ok), np.zeros((2, 2), np.uint8))
    with pytest.raises(ValueError, match="embedded null byte"):
        sp.imread(str(ok) + "\0.png")
    with pytest.raises(ValueError, match="embedded null byte"):
        sp.imwrite(str(tmp_path / "new.png") + "\0.jpg", np.zeros((2, 2), np.uint8))
    assert not (tmp_path / "new.png").exists()
    with pytest.raises(ValueError, match="embedded null byte"):
        sp.compile(KERNEL + "\0 whatever follows", arch="sm_90", cache=False)
    with pytest.raises(ValueError, match="embedded null byte"):
        sp.compile(KERNEL, arch="sm_90", include_dirs=[str(tmp_path) + "\0/x"], cache=False)
    with host_engine() as e:
        e.map([X])
        with pytest.raises(ValueError, match="embedded null byte"):
            e.trace_json(str(tmp_path / "t.json") + "\0.txt")
    assert not (tmp_path / "t.json").exists()


# ---- class 7: re-entrant calls raise instead of waiting for themselves --------------------

REENTRANT = """
import sys, threading, time
import numpy as np, streampipe as sp
call = sys.argv[1]
errors, holder = [], {}
attempts = []
def on_complete(item):
    e = holder["e"]
    if len(attempts) >= 20:
        return  # a bounded chain: a submit that succeeds starts another callback
    attempts.append(1)
    try:
        if call == "close": e.close()
        elif call == "drain": e.drain()
        elif call == "map": e.map([np.ones(8, np.float32)])
        elif call == "submit": e.submit(np.ones(8, np.float32))
    except RuntimeError as ex:
        errors.append(str(ex))
def slow(x, out):
    time.sleep(0.002)
    out[:] = x
def host_drains(x, out):
    holder["e"].drain()
op = sp.ops.from_function(host_drains if call == "host" else slow, np.float32)
e = sp.Engine(op, backend="host", lanes=1, depth=1, on_complete=None if call == "host" else on_complete)
holder["e"] = e
if call == "host":
    try:
        e.map([np.ones(8, np.float32)])
    except RuntimeError as ex:
        errors.append(str(ex))
else:
    # The main thread keeps the engine full: it waits in submit() while the callbacks run.
    futures = [e.submit(np.ones(8, np.float32)) for _ in range(40)]
    for f in futures:
        try:
            f.result(timeout=60)
        except Exception:
            pass
print(len(errors), errors[0] if errors else "", flush=True)
if call != "close":
    e.close()
print("closed", flush=True)
"""


@pytest.mark.parametrize("call", ["close", "drain", "map", "submit", "host"])
def test_waiting_on_the_engine_from_its_own_thread_raises_runtime_error(call):
    r = run_child(REENTRANT, call, timeout=90)
    assert r.returncode == 0, r.stderr
    count, _, message = r.stdout.partition(" ")
    assert int(count) >= 1, r.stdout + r.stderr
    assert "own thread" in message, r.stdout
    assert "closed" in r.stdout


# ---- class 8: fork() after an engine started ---------------------------------------------

FORK = """
import os, sys, warnings
import numpy as np, streampipe as sp
warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads running: the point here
e = sp.Engine(sp.ops.affine(2.0, 1.0), backend="host")
e.map([np.ones(8, np.float32)])
pid = os.fork()
if pid == 0:
    try:
        e.map([np.ones(8, np.float32)])
        print("the child used the parent's engine", flush=True)
        os._exit(3)
    except RuntimeError as ex:
        assert "fork" in str(ex), ex
    fresh = sp.Engine(sp.ops.affine(2.0, 1.0), backend="host")
    assert (fresh.map([np.ones(8, np.float32)])[0] == 3).all()
    fresh.close()
    sys.exit(0)  # a normal exit: finalizers run, the parent's engine is collected here
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status), flush=True)
assert (e.map([np.ones(8, np.float32)])[0] == 3).all()
e.close()
"""


def test_a_forked_child_gets_a_clear_error_and_exits_cleanly():
    r = run_child(FORK, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout, r.stdout + r.stderr


# ---- class 9: a thread that cannot start is an error naming the count --------------------

THREADS = """
import resource, numpy as np, streampipe as sp
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) for line in f if line.startswith("VmSize")) * 1024
room = vm + (256 << 20)  # a few dozen thread stacks
resource.setrlimit(resource.RLIMIT_AS, (room, room))
try:
    sp.Engine(sp.ops.affine(2.0, 1.0), backend="host", host_threads=1000).map([np.ones(8, np.float32)])
    print("started", flush=True)
except RuntimeError as e:
    print("refused:", e, flush=True)
"""


def test_threads_that_cannot_start_raise_naming_the_count():
    r = run_child(THREADS, timeout=60)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}"
    assert "refused:" in r.stdout and "of 1000" in r.stdout, r.stdout


# ---- class 11: Ctrl-C while NVRTC compiles ------------------------------------------------

COMPILE_INTERRUPTED = """
import atexit, signal, sys
import streampipe as sp
signal.signal(signal.SIGINT, signal.default_int_handler)
atexit.register(lambda: print("atexit ran", flush=True))
# A source NVRTC takes a while over (most of the run is spent inside compiles): chains of
# template instantiations.
source = "template <int N, int T> struct F { static constexpr long v = F<N - 1, T>::v + N; };\\n" \\
         "template <int T> struct F<0, T> { static constexpr long v = T; };\\n"
source += "".join(f"__global__ void k{i}(long* o) {{ o[0] = F<150, {i}>::v; }}\\n" for i in range(8))
print("compiling", flush=True)
try:
    for _ in range(200):
        sp.compile(source, arch="sm_90", cache=False)
    print("compiled before the interrupt", flush=True)
finally:
    print("finally ran", flush=True)
"""


def test_ctrl_c_during_a_compile_raises_keyboard_interrupt():
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(COMPILE_INTERRUPTED)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "compiling"
        time.sleep(1.5)  # well inside a compile
        child.send_signal(signal.SIGINT)  # what Ctrl-C sends
        out, err = child.communicate(timeout=240)
    finally:
        child.kill()
    assert "KeyboardInterrupt" in err, f"exit {child.returncode}: {out} {err}"
    assert "finally ran" in out and "atexit ran" in out, out
    # An uncaught KeyboardInterrupt ends Python by SIGINT (not NVRTC's exit status 4).
    assert child.returncode in (-signal.SIGINT, 128 + signal.SIGINT), child.returncode


AFTER_COMPILE = """
import os, signal, time
import streampipe as sp
signal.signal(signal.SIGINT, signal.default_int_handler)
sp.compile('extern "C" __global__ void k() {}', arch="sm_90", cache=False)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
    print("not interrupted", flush=True)
except KeyboardInterrupt:
    print("caught", flush=True)
"""


def test_a_compile_leaves_the_programs_ctrl_c_handler_in_place():
    # NVRTC resets SIGINT to SIG_DFL after a compile: the next Ctrl-C killed Python outright.
    r = run_child(AFTER_COMPILE, timeout=60)
    assert r.stdout.strip() == "caught", f"exit {r.returncode}: {r.stdout} {r.stderr}"


# ---- classes 12 and 16: FIFOs, devices and huge files are refused by kind and size -------

FIFO_READS = """
import os, sys, tempfile
import streampipe as sp
d = tempfile.mkdtemp()
fifo = os.path.join(d, "x.png")
os.mkfifo(fifo)
try:
    sp.imread(fifo)
    print("read")
except sp.ImageError as e:
    print("imread:", e, flush=True)
os.mkfifo(os.path.join(d, "inc.h"))
try:
    sp.compile('#include "inc.h"\\n__global__ void k() {}', arch="sm_90", include_dirs=[d], cache=False)
    print("compiled")
except ValueError as e:
    print("include:", e, flush=True)
"""


def test_fifos_are_refused_not_opened_for_reading():
    r = run_child(FIFO_READS, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "imread:" in r.stdout and "FIFO" in r.stdout.split("imread:")[1].splitlines()[0], r.stdout
    assert "include:" in r.stdout and "inc.h" in r.stdout and "FIFO" in r.stdout.split("include:")[1], r.stdout


CACHE_ENTRIES = """
import os, resource, sys
import streampipe as sp
kernel = sys.argv[1]
first = sp.compile(kernel, arch="sm_90", name="entry.cu")
entry = os.path.join(os.environ["STREAMPIPE_CACHE_DIR"], first.stats.key + ".spk")
# The peak so far: the interpreter, the module, NVRTC (and on a GPU machine, the driver).
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
def replace(make):
    os.unlink(entry)
    make()
    r = sp.compile(kernel, arch="sm_90", name="entry.cu")
    print(r.stats.origin, "|", r.stats.cache_warning.replace("\\n", " "), flush=True)
replace(lambda: os.mkfifo(entry))
replace(lambda: os.symlink("/dev/zero", entry))
def zeros(size):
    def make():
        with open(entry, "wb") as f:
            f.truncate(size)  # sparse on disk
    return make
replace(zeros(900 << 20))  # below any size limit: its magic shows it is no entry
replace(zeros(3 << 29))    # 1.5 GB: larger than any entry
print("peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base, flush=True)
"""


def test_cache_entries_that_are_fifos_devices_or_huge_are_never_read(cache_dir):
    r = run_child(CACHE_ENTRIES, KERNEL, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 5, r.stdout
    assert lines[0].startswith("compiled") and "FIFO" in lines[0], lines[0]
    assert lines[1].startswith("compiled") and "symbolic link" in lines[1], lines[1]
    assert lines[2].startswith("compiled") and "not a streampipe kernel cache entry" in lines[2], lines[2]
    assert lines[3].startswith("compiled") and "larger than any entry" in lines[3], lines[3]
    grew_kib = int(lines[4].split()[1])
    assert grew_kib < 512 << 10, f"the peak RSS grew {grew_kib} KiB: a garbage entry was read whole"


# ---- class 17: the engine's caps, the CLI's limits ---------------------------------------

CAPS = """
import resource, numpy as np, streampipe as sp
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) for line in f if line.startswith("VmSize")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (2 << 30), vm + (2 << 30)))
for kw in (dict(lanes=10**6), dict(depth=10**6), dict(host_threads=10**5), dict(batch_items=10**7),
           dict(devices=list(range(1000)))):
    try:
        sp.Engine(sp.ops.affine(2.0, 1.0), backend="host", **kw).map([np.ones(8, np.float32)])
        print("accepted", kw, flush=True)
    except ValueError as e:
        print("refused", e, flush=True)
"""


def test_engine_options_beyond_the_caps_are_value_errors_before_any_work():
    r = run_child(CAPS, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}"
    lines = r.stdout.splitlines()
    assert len(lines) == 5 and all(line.startswith("refused") for line in lines), r.stdout
    assert "lanes 1000000 is not in 1-128" in lines[0]
    assert "host_threads 100000 is not in 0-1024" in lines[2]


# ---- class 23: imread's messages ---------------------------------------------------------

def test_imread_names_a_device_and_takes_its_pixel_limit(tmp_path):
    with pytest.raises(sp.ImageError, match="/dev/zero: is a character device"):
        sp.imread("/dev/zero")
    big = tmp_path / "big.png"
    sp.imwrite(str(big), np.zeros((100, 100), np.uint8))
    with pytest.raises(sp.ImageError, match=r"exceeds the limit of 1000 pixels; pass a larger max_pixels="):
        sp.imread(str(big), max_pixels=1000)
    assert sp.imread(str(big), max_pixels=0).shape == (100, 100)
    assert sp.imread(str(big)).shape == (100, 100)


# ---- class 25: closed means closed --------------------------------------------------------

@pytest.mark.parametrize("started", [False, True])
def test_a_closed_engine_stays_closed(started):
    e = host_engine()
    if started:
        e.map([X])
    e.close()
    for call in (lambda: e.map([X]), lambda: e.map([]), lambda: e.submit(X), e.drain, e.flush, e.cancel,
                 e.describe, e.report, e.timeline, e.__enter__):
        with pytest.raises(ValueError, match="closed"):
            call()
    e.close()  # a second close does nothing
