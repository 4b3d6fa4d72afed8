# SPDX-License-Identifier: Apache-2.0
# The package imports and describes itself with or without a GPU.
import re
import subprocess
import sys

import pytest

import streampipe as sp


def test_info_says_which_backend_and_why():
    info = sp.info()
    assert re.fullmatch(r"\d+\.\d+\.\d+", info["version"])
    assert info["version"] == sp.__version__
    assert info["cuda_runtime"] >= 12000
    assert info["backend"] in ("gpu", "host")
    if info["backend"] == "host":
        assert info["devices"] == [] and info["reason"]
        assert sp.device_count() == 0
    else:
        assert info["reason"] is None and len(info["devices"]) == sp.device_count() > 0
        assert info["devices"][0]["multiprocessors"] > 0


def test_exception_classes_form_one_hierarchy():
    assert issubclass(sp.CudaError, sp.Error) and issubclass(sp.CompileError, sp.Error)
    assert issubclass(sp.Error, RuntimeError)
    assert sp.CudaError.__module__ == "streampipe"


def test_import_needs_no_gpu_and_prints_nothing():
    env_code = "import streampipe, json; print(json.dumps(streampipe.info()['backend']))"
    r = subprocess.run([sys.executable, "-c", env_code], capture_output=True, text=True, timeout=120,
                       env={"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin", **_pythonpath()})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '"host"'
    assert r.stderr == ""


def test_type_stubs_ship_with_the_package():
    from pathlib import Path
    package = Path(sp.__file__).parent
    assert (package / "py.typed").exists()
    stub = (package / "_core.pyi").read_text()
    assert "class Engine" in stub and "def info()" in stub


def test_a_host_array_without_a_buffer_is_refused_by_name():
    with pytest.raises(TypeError, match="object is not an array"):
        sp.describe(object())


def _pythonpath():
    import os
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def test_the_version_is_the_libraries_and_the_packages():
    import importlib.metadata
    assert sp.__version__ == sp._core.__version__ == sp.info()["version"]
    try:
        installed = importlib.metadata.version("streampipe")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("not installed (a build tree on PYTHONPATH): no package metadata")
    assert installed == sp.__version__


def test_help_of_engine_documents_every_argument():
    import inspect
    import pydoc
    text = pydoc.render_doc(sp.Engine, renderer=pydoc.plaintext)
    names = [p for p in inspect.signature(sp.Engine.__init__).parameters if p != "self"]
    missing = [n for n in names if f"{n}:" not in text]
    assert not missing, f"help(streampipe.Engine) does not document {missing}"
