# SPDX-License-Identifier: Apache-2.0
# imread/imwrite, and the PNG files of every compression level read back exactly, by
# streampipe and by Pillow (an independent decoder, where installed).
import numpy as np
import pytest

import streampipe as sp


def _photo_like(shape, dtype=np.uint8, seed=3):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    top = 200 if dtype == np.uint8 else 60000
    values = (np.arange(n) // 7 % top) + rng.integers(0, 9, n)
    return values.astype(dtype).reshape(shape)


SHAPES = [((1080, 1920), np.uint8), ((77, 333, 3), np.uint8), ((5, 7, 4), np.uint8), ((64, 64, 2), np.uint8),
          ((1, 1), np.uint8), ((40, 50), np.uint16)]


@pytest.mark.parametrize("shape,dtype", SHAPES)
@pytest.mark.parametrize("level", [0, 1, 2, 6])
def test_png_levels_read_back_exactly(tmp_path, shape, dtype, level):
    a = _photo_like(shape, dtype)
    path = tmp_path / "x.png"
    sp.imwrite(str(path), a, compression=level)
    back = sp.imread(str(path))
    assert back.dtype == a.dtype and back.shape == a.shape
    assert np.array_equal(back, a)


@pytest.mark.parametrize("shape,dtype", SHAPES)
def test_fast_png_reads_back_exactly_in_pillow(tmp_path, shape, dtype):
    image = pytest.importorskip("PIL.Image")
    a = _photo_like(shape, dtype)
    path = tmp_path / "x.png"
    sp.imwrite(str(path), a, compression=1)  # level 1: streampipe's own encoder
    with image.open(path) as im:
        back = np.asarray(im)
    assert back.shape == a.shape
    assert np.array_equal(back.astype(np.int64), a.astype(np.int64))


def test_fast_png_is_smaller_than_stored(tmp_path):
    a = _photo_like((512, 512))
    sizes = {}
    for level in (0, 1):
        path = tmp_path / f"x{level}.png"
        sp.imwrite(str(path), a, compression=level)
        sizes[level] = path.stat().st_size
    assert sizes[1] < sizes[0] * 0.7, sizes


def test_bad_compression_level_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="0-9"):
        sp.imwrite(str(tmp_path / "x.png"), np.zeros((4, 4), np.uint8), compression=10)
    assert not (tmp_path / "x.png").exists()
