# SPDX-License-Identifier: Apache-2.0
"""What the examples share: the backend they run on and how they check themselves."""
import argparse
import sys
from typing import Optional

import streampipe as sp


def parse(description: Optional[str], default_out: Optional[str] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--host", action="store_true", help="run on the host backend even with a GPU")
    p.add_argument("--quick", action="store_true", help="small sizes (what the tests run)")
    if default_out is not None:
        p.add_argument("-o", "--out", default=default_out, help=f"output folder (default {default_out})")
    args = p.parse_args()
    args.gpu = sp.device_count() > 0 and not args.host
    if not args.gpu:
        why = "--host" if args.host else sp.info()["reason"]
        print(f"[host backend: {why}; sizes are reduced]")
        args.quick = True
    return args


def check(condition: bool, what: str) -> None:
    """Every example checks its own results; a failed check exits 1."""
    print(f"  check: {what}: {'ok' if condition else 'FAILED'}")
    if not condition:
        sys.exit(1)
