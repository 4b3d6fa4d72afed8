# SPDX-License-Identifier: Apache-2.0
# Tests marked `gpu` need a usable GPU: skipped without one, failed instead when
# STREAMPIPE_REQUIRE_GPU=1 (the GPU check, where a skip would hide a missing device).
import os

import pytest

import streampipe


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a usable CUDA device")


def pytest_collection_modifyitems(config, items):
    if streampipe.device_count() > 0:
        return
    if os.environ.get("STREAMPIPE_REQUIRE_GPU") == "1":
        return  # they run, and fail for want of a device
    reason = f"no usable GPU: {streampipe.info()['reason']}"
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private kernel disk cache for the test (and the processes it starts)."""
    d = tmp_path / "kernel-cache"
    monkeypatch.setenv("STREAMPIPE_CACHE_DIR", str(d))
    monkeypatch.delenv("STREAMPIPE_CACHE_DISABLE", raising=False)
    return d
