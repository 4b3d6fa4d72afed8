# SPDX-License-Identifier: Apache-2.0
# imread/imwrite, and the PNG files of every compression level read back exactly, by
# streampipe and by Pillow (an independent decoder, where installed).
import errno

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


# ---- the format from the name, the defaults, and Python's file errors -------------------

def test_the_extension_decides_the_format(tmp_path):
    a = _photo_like((16, 16, 3))
    for name, magic in (("x.png", b"\x89PNG"), ("x.jpg", b"\xff\xd8\xff"), ("x.JPEG", b"\xff\xd8\xff")):
        sp.imwrite(tmp_path / name, a)  # a path-like, as open() takes
        assert (tmp_path / name).read_bytes()[:len(magic)] == magic, name
    sp.imwrite(str(tmp_path / "x.jpeg"), a, format="jpg")  # agreeing spellings
    sp.imwrite(str(tmp_path / "x.img"), a, format="png")  # a name that says nothing: format= decides
    assert (tmp_path / "x.img").read_bytes()[:4] == b"\x89PNG"


def test_a_format_the_name_contradicts_or_cannot_tell_is_a_value_error(tmp_path):
    a = np.zeros((4, 4), np.uint8)
    with pytest.raises(ValueError, match=r"format='png' disagrees with the extension '\.jpg'"):
        sp.imwrite(str(tmp_path / "x.jpg"), a, format="png")
    with pytest.raises(ValueError, match=r"\.png, \.jpg, \.jpeg"):
        sp.imwrite(str(tmp_path / "x.tif"), a)
    with pytest.raises(ValueError, match="'png' or 'jpeg'"):
        sp.imwrite(str(tmp_path / "x.png"), a, format="gif")
    assert list(tmp_path.iterdir()) == []


def test_png_compression_defaults_to_1_as_in_gray(tmp_path):
    a = _photo_like((256, 256))
    for name, kwargs in (("default.png", {}), ("one.png", {"compression": 1}), ("six.png", {"compression": 6})):
        sp.imwrite(str(tmp_path / name), a, **kwargs)
    default = (tmp_path / "default.png").read_bytes()
    assert default == (tmp_path / "one.png").read_bytes()
    assert default != (tmp_path / "six.png").read_bytes()


def test_overwriting_is_open_w_unless_refused(tmp_path):
    path = tmp_path / "x.png"
    sp.imwrite(path, np.zeros((4, 4), np.uint8))
    sp.imwrite(path, np.full((4, 4), 7, np.uint8))  # replaced, as open(path, "w") replaces
    assert sp.imread(path)[0, 0] == 7
    with pytest.raises(FileExistsError) as e:
        sp.imwrite(path, np.zeros((4, 4), np.uint8), overwrite=False)
    assert e.value.errno == errno.EEXIST and e.value.filename == str(path)
    assert sp.imread(path)[0, 0] == 7


def test_read_errors_are_pythons_own(tmp_path):
    missing = tmp_path / "missing.png"
    with pytest.raises(FileNotFoundError) as e:
        sp.imread(missing)
    assert e.value.errno == errno.ENOENT and e.value.filename == str(missing)
    with pytest.raises(IsADirectoryError):
        sp.imread(tmp_path)
    corrupt = tmp_path / "corrupt.png"
    corrupt.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    with pytest.raises(sp.ImageError) as e:
        sp.imread(corrupt)
    assert isinstance(e.value, OSError) and e.value.filename == str(corrupt)
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    with pytest.raises(sp.ImageError, match="not a PNG or JPEG"):
        sp.imread(text)


def test_write_errors_are_pythons_own(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where a folder would go")
    with pytest.raises(NotADirectoryError):
        sp.imwrite(blocker / "x.png", np.zeros((4, 4), np.uint8))
