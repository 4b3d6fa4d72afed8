# SPDX-License-Identifier: Apache-2.0
"""PNG and JPEG files as numpy arrays, through the C++ io layer (libpng, libjpeg-turbo).

Errors are Python's own for a file the system refuses (FileNotFoundError,
PermissionError, IsADirectoryError: errno and filename set, as open() sets them), and
ImageError, an OSError, for a file refused for its content or kind (corrupt, not PNG or
JPEG, above max_pixels, a FIFO or a device). Misuse (a dtype, a format) is a ValueError."""
from __future__ import annotations

import os
from typing import Any, Dict, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _core

PathLike = Union[str, "os.PathLike[str]"]

# The file name's extension decides the format, as in Pillow, OpenCV and imageio.
EXTENSIONS: Dict[str, str] = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg"}
_FORMATS = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg"}


def _format_of(path: str, format: Optional[str]) -> str:
    ext = os.path.splitext(path)[1].lower()
    named = EXTENSIONS.get(ext)
    if format is None:
        if named is None:
            supported = ", ".join(EXTENSIONS)
            raise ValueError(f"{path}: cannot tell the image format from the extension {ext or '(none)'!r}: "
                             f"name the file {supported}, or pass format='png' or 'jpeg'")
        return named
    chosen = _FORMATS.get(format.lower())
    if chosen is None:
        raise ValueError(f"format must be 'png' or 'jpeg', not {format!r}")
    if named is not None and named != chosen:
        raise ValueError(f"{path}: format={format!r} disagrees with the extension {ext!r}, which means {named}")
    return chosen


def imread(path: PathLike, max_pixels: int = 2**28) -> npt.NDArray[Any]:
    """A PNG or JPEG file (told apart by its bytes) as a uint8/uint16 array (height, width[,
    channels]). An image above `max_pixels` (0: no limit) is refused from its header, a
    FIFO or device by its kind, never read."""
    return _core.imread(os.fspath(path), max_pixels)


def imwrite(path: PathLike, array: Any, format: Optional[str] = None, quality: int = 90, overwrite: bool = True,
            compression: int = 1) -> None:
    """Writes a uint8/uint16 (height, width[, channels]) array as the format the extension
    names (.png, .jpg, .jpeg); `format` ("png" or "jpeg") is needed only for another
    extension and must agree with one of these. PNG: `compression` 0-9 (1, the default as
    in the CLI's gray: streampipe's fast encoder); JPEG: `quality` 1-100. The file is
    written atomically, replacing an existing regular file as open(path, "w") does unless
    `overwrite=False` (then FileExistsError); a link, device, FIFO or socket is never
    replaced."""
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"imwrite takes a str or os.PathLike[str] path, not {type(path).__name__}")
    chosen = _format_of(path, format)
    _core.imwrite(path, np.ascontiguousarray(array), chosen, quality, overwrite, compression)


__all__ = ["imread", "imwrite", "EXTENSIONS"]
