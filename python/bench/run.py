# SPDX-License-Identifier: Apache-2.0
"""The Python benchmark as a script, with its peers (PyTorch, CuPy) imported up front, where
they are installed. Same options as `python -m streampipe.bench`:

    python python/bench/run.py --runs 7 --json python-bench.json --cpp build/release/streampipe
"""
import importlib
import sys

for peer in ("torch", "cupy"):
    try:
        importlib.import_module(peer)
    except ImportError:
        pass

from streampipe.bench import main  # noqa: E402

sys.exit(main())
