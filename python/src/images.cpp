// SPDX-License-Identifier: Apache-2.0
// Reading and writing PNG/JPEG through the io layer (libpng, libjpeg-turbo), so that the
// examples and users save what they compute without another image library. What the system
// refuses leaves as an io::ImageError with its errno, which errors.cpp turns into Python's
// own OSError subclass; the package (streampipe/images.py) picks the format from the name.
#include "bindings.hpp"

#include "streampipe/io/image.hpp"
#include "streampipe/host/atomic_file.hpp"

#include <nanobind/ndarray.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <sys/stat.h>

namespace streampipe::python {
namespace {

// (height, width) gray or (height, width, channels) uint8/uint16, C-contiguous.
using ImageArray = nb::ndarray<nb::numpy, nb::c_contig, nb::device::cpu>;

io::Image to_image(const ImageArray& a) {
  const bool u8 = a.dtype() == nb::dtype<std::uint8_t>(), u16 = a.dtype() == nb::dtype<std::uint16_t>();
  if (!u8 && !u16) throw std::invalid_argument("images are uint8 or uint16 arrays");
  if (a.ndim() != 2 && a.ndim() != 3) throw std::invalid_argument("images are (height, width[, channels]) arrays");
  const int channels = a.ndim() == 3 ? static_cast<int>(a.shape(2)) : 1;
  io::Image img = io::Image::make(static_cast<std::uint32_t>(a.shape(1)), static_cast<std::uint32_t>(a.shape(0)),
                                  channels, u16 ? 16 : 8);
  std::memcpy(img.pixels.data(), a.data(), img.size_bytes());
  return img;
}

// A numpy array (typed so in the stubs: numpy.typing.NDArray), owning the pixels.
nb::ndarray<nb::numpy> to_array(io::Image img) {
  auto* pixels = new std::vector<std::uint8_t>(std::move(img.pixels));
  nb::capsule owner(pixels, [](void* p) noexcept { delete static_cast<std::vector<std::uint8_t>*>(p); });
  const std::size_t shape[3] = {img.height, img.width, static_cast<std::size_t>(img.channels)};
  const std::size_t ndim = img.channels == 1 ? 2 : 3;
  const nb::dlpack::dtype dtype = img.bit_depth == 16 ? nb::dtype<std::uint16_t>() : nb::dtype<std::uint8_t>();
  return nb::ndarray<nb::numpy>(pixels->data(), ndim, shape, owner, nullptr, dtype);
}

}  // namespace

void bind_images(nb::module_& m) {
  m.def("imread", [](const std::string& path, std::uint64_t max_pixels) {
    without_nul(path, "path");
    io::ImageReadOptions options;
    options.limits.max_pixels = max_pixels;
    options.limits.raise_hint = "pass a larger max_pixels= to imread (0: no limit)";
    io::Image img;
    {
      nb::gil_scoped_release release;
      img = io::read_image(path, options);
    }
    return to_array(std::move(img));
  }, nb::arg("path"), nb::arg("max_pixels") = io::DecodeLimits::kDefaultMaxPixels,
        "A PNG or JPEG file as a uint8/uint16 array (height, width[, channels]). Images above `max_pixels` "
        "(checked from the header; 0: no limit) are refused; a FIFO or device is refused by its kind. A file the "
        "system refuses raises Python's OSError for its errno (FileNotFoundError...), one refused for its content "
        "or kind ImageError.");
  m.def("imwrite", [](const std::string& path, const ImageArray& array, const std::string& format, int quality,
                      bool overwrite, int compression) {
    without_nul(path, "path");
    const auto parsed = io::parse_image_format(format);
    if (!parsed) throw std::invalid_argument("format must be png or jpeg, not '" + format + "'");
    io::Image img = to_image(array);
    const io::PngWriteOptions png{.compression = compression};
    (void)io::resolve_png_encoding(png);  // a bad level is a ValueError before any work
    nb::gil_scoped_release release;
    struct stat st {};
    // FileExistsError, as open(path, "x") says; write_image's own check (and its link step,
    // should the file appear meanwhile) still stands behind this one.
    if (!overwrite && ::lstat(path.c_str(), &st) == 0) throw io::ImageError(path, std::strerror(EEXIST), EEXIST);
    try {
      io::write_image(path, img, *parsed, quality, overwrite ? io::Overwrite::allow : io::Overwrite::refuse, png);
    } catch (const host::WriteFileError& e) {
      // The system refused (no permission, a full disk): Python's OSError for that errno.
      throw io::ImageError(path, e.what(), e.error_number());
    }
  }, nb::arg("path"), nb::arg("array"), nb::arg("format"), nb::arg("quality") = 90, nb::arg("overwrite") = true,
        nb::arg("compression") = 1,
        "Writes the array as PNG (compression 0-9: 1 is streampipe's fast encoder) or JPEG (quality), "
        "atomically; an existing link, device, FIFO or socket is refused, never replaced. The package's "
        "imwrite takes the format from the file's extension.");
}

}  // namespace streampipe::python
