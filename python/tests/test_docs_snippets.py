# SPDX-License-Identifier: Apache-2.0
# Every ```python block of docs/python.md and README.md runs as written, each on its own (a
# reader copies one block, not the page), in a folder of its own. A block whose first line is
# `# needs a GPU` runs fully where a GPU is usable; elsewhere it must fail the way streampipe
# fails without a GPU (streampipe.Error naming the missing driver or device), which shows
# that the marker is needed and that everything before the block's first GPU call runs.
import pathlib
import re

import pytest

import streampipe as sp

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ("docs/python.md", "README.md")
GPU_MARKER = "# needs a GPU"
NO_GPU_CAUSES = ("no NVIDIA driver found", "no CUDA device found")


def python_blocks(relative):
    """(first line number, source) of each ```python block of the file."""
    lines = (ROOT / relative).read_text().splitlines()
    blocks, start = [], None
    for number, line in enumerate(lines, 1):
        if start is None and re.fullmatch(r"```python\s*", line):
            start = number + 1
        elif start is not None and line.strip() == "```":
            blocks.append((start, "\n".join(lines[start - 1:number - 1]) + "\n"))
            start = None
    assert start is None, f"{relative}: a ```python block opened at line {start - 1} never closes"
    return blocks


BLOCKS = [pytest.param(doc, line, source, id=f"{doc}:{line}") for doc in DOCS for line, source in python_blocks(doc)]


def test_every_document_has_python_blocks():
    # A renamed fence (```py) would otherwise leave the documents untested, silently.
    for doc in DOCS:
        assert python_blocks(doc), f"{doc} has no ```python block"


@pytest.mark.parametrize("doc, line, source", BLOCKS)
def test_block_runs_as_written(doc, line, source, tmp_path, monkeypatch, cache_dir):
    monkeypatch.chdir(tmp_path)
    code = compile(source, f"{doc}:{line}", "exec")
    namespace = {"__name__": "__docs__"}
    needs_gpu = source.lstrip().startswith(GPU_MARKER)
    if not needs_gpu or sp.device_count() > 0:
        exec(code, namespace)
        return
    with pytest.raises(sp.Error) as e:
        exec(code, namespace)
    assert any(cause in str(e.value) for cause in NO_GPU_CAUSES), str(e.value)
