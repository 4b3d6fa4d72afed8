// SPDX-License-Identifier: Apache-2.0
// Decompression bombs and trusted lengths (issue 24, class 2): files whose headers claim far
// more than they hold are refused from the header, naming the file and the limit, with the
// process's peak memory unchanged; ancillary PNG chunks are skipped unread; corrupt or cut
// JPEG data is an error, not a gray patch; allocation failures name their size.

#include "streampipe/io/image.hpp"

#include "hostile_files.hpp"
#include "image_samples.hpp"
#include "jpeg_recipes.hpp"
#include "support/sanitizers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace streampipe::io {
namespace {

using namespace streampipe::io::testing;

// Less than any refused file would take, more than the test's own noise.
constexpr double kMaxGrowthMib = 48;

// Decodes `data` as `source`, expecting an ImageError that names the source and contains
// every fragment; and that the process's peak memory grew by less than kMaxGrowthMib.
void expect_refused(const Bytes& data, const std::string& source, std::initializer_list<const char*> fragments,
                    const ImageReadOptions& options = {}) {
  const double before = peak_rss_mib();
  try {
    (void)decode_image(data, options, source);
    ADD_FAILURE() << source << ": decoded; expected a refusal";
  } catch (const ImageError& e) {
    EXPECT_EQ(e.source(), source);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(source, 0), 0u) << what;
    for (const char* f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "'" << f << "' not in: " << what;
  }
  EXPECT_LT(peak_rss_mib() - before, kMaxGrowthMib) << source << " cost memory before it was refused";
}

// The same refusal whether the JPEG is decoded to RGB or to its luma alone.
void expect_jpeg_refused(const Bytes& data, const std::string& source, std::initializer_list<const char*> fragments,
                         ImageReadOptions options = {}) {
  for (const bool luma : {false, true}) {
    SCOPED_TRACE(luma ? "decoded to luma" : "decoded to RGB");
    options.jpeg_luma = luma;
    expect_refused(data, source, fragments, options);
  }
}

// ---- PNG ----------------------------------------------------------------------------------

TEST(PngLimits, HugeDimensionsAreRefusedByThePixelLimit) {
  // 65535 x 65535 RGBA at 16 bits: 32 GiB decoded, 128 GiB once gray expands it to RGB.
  const auto idat = png_chunk("IDAT", zlib_compress(Bytes(1000)));
  const auto file = concat({png_signature(), png_ihdr(65535, 65535, 16, 6), idat, png_chunk("IEND", {})});
  expect_refused(file, "huge.png", {"65535x65535", "exceeds the limit of 268435456 pixels", "DecodeLimits"});
}

TEST(PngLimits, TheLimitIsConfigurableAndNamesHowToRaiseIt) {
  const auto png = encode_png(random_image(64, 64, 3, 8, 1));
  ImageReadOptions small;
  small.limits.max_pixels = 64 * 63;
  small.limits.raise_hint = "use --max-pixels";
  expect_refused(png, "a.png", {"64x64 image (4096 pixels) exceeds the limit of 4032 pixels", "use --max-pixels"},
                 small);
  small.limits.max_pixels = 64 * 64;
  EXPECT_EQ(decode_image(png, small).width, 64u);
  small.limits.max_pixels = 0;  // no limit
  EXPECT_EQ(decode_image(png, small).width, 64u);
}

TEST(PngLimits, A68ByteHeaderCannotClaimMoreThanItsDataHolds) {
  // Within the pixel limit (16384 x 16384 RGB), but 11 bytes of zlib data inflate to at most
  // 11 KiB: refused before anything is allocated for the 768 MiB of pixels.
  const auto idat = png_chunk("IDAT", zlib_compress(Bytes(16)));
  const auto file = concat({png_signature(), png_ihdr(16384, 16384, 8, 2), idat, png_chunk("IEND", {})});
  EXPECT_EQ(file.size(), 68u);
  expect_refused(file, "header.png", {"bytes of image data cannot hold a 16384x16384 image", "truncated or corrupt"});
  ImageReadOptions unlimited;
  unlimited.limits.max_pixels = 0;
  expect_refused(file, "header.png", {"cannot hold"}, unlimited);
}

TEST(PngLimits, AHugeAncillaryChunkLengthIsNotTrusted) {
  // libpng's crasher files: a 1x1 image and one chunk that claims 2 GiB. libpng allocates
  // (and clears) a text chunk at its declared length, warning only that it is too large.
  for (const char* type : {"tEXt", "zTXt", "iTXt", "iCCP", "sPLT", "pCAL", "sCAL", "eXIf", "juNK"}) {
    Bytes file = concat({png_signature(), png_ihdr(1, 1, 8, 0)});
    put_be32(file, 0x7fffffff);
    for (int i = 0; i < 4; ++i) file.push_back(static_cast<std::byte>(type[i]));
    file.resize(file.size() + 16);
    EXPECT_EQ(file.size(), 57u);
    expect_refused(file, std::string(type) + ".png", {"PNG: chunk", type, "declares 2147483647 bytes"});
  }
  Bytes overflow = concat({png_signature(), png_ihdr(1, 1, 8, 0)});
  put_be32(overflow, 0xfffffff0u);
  overflow.resize(overflow.size() + 20);
  expect_refused(overflow, "length.png", {"at most 2^31 - 1"});
}

TEST(PngLimits, AncillaryChunksAreSkippedUnread) {
  const Image img = random_image(31, 17, 3, 8, 7);
  const auto png = encode_png(img);
  // A 9 MB text chunk (above libpng's 8 MB chunk limit) and 64 compressed comments of 8 MB
  // each (512 MB if kept): the pixels decode as before, without the memory.
  Bytes text(9'000'000, std::byte{'a'});
  text[7] = std::byte{0};  // keyword "aaaaaaa"
  Bytes chunks = png_chunk("tEXt", text);
  Bytes ztxt = {std::byte{'C'}, std::byte{0}, std::byte{0}};  // keyword, separator, method
  const auto comment = zlib_compress(Bytes(7'900'000, std::byte{' '}));
  ztxt.insert(ztxt.end(), comment.begin(), comment.end());
  const auto one = png_chunk("zTXt", ztxt);
  for (int i = 0; i < 64; ++i) chunks.insert(chunks.end(), one.begin(), one.end());
  const auto file = with_chunks_after_ihdr(png, chunks);
  const double before = peak_rss_mib();
  EXPECT_EQ(decode_image(file, {}, "text.png").pixels, img.pixels);
  EXPECT_LT(peak_rss_mib() - before, kMaxGrowthMib);
}

// ---- JPEG ---------------------------------------------------------------------------------

TEST(JpegLimits, PatchedDimensionsAreRefused) {
  const auto jpeg = encode_jpeg(smooth_image(16, 16, 3), 90);
  // 60000 x 60000: above the pixel limit. 8000 x 8000 (64 Mpixel, within it): a file of a
  // few hundred bytes cannot hold the 62,500 blocks of its first component.
  expect_jpeg_refused(with_jpeg_size(jpeg, 60000, 60000), "big.jpg", {"60000x60000", "exceeds the limit"});
  expect_jpeg_refused(with_jpeg_size(jpeg, 8000, 8000), "patched.jpg",
                 {"cannot hold a 8000x8000 image", "patched dimensions"});
}

TEST(JpegLimits, CutShortButEndingWithEoiIsAnError) {
  const auto full = encode_jpeg(smooth_image(96, 96, 3), 90);
  for (const double fraction : {0.3, 0.5, 0.8, 0.95}) {
    Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(static_cast<double>(full.size()) * fraction));
    cut.push_back(std::byte{0xFF});
    cut.push_back(std::byte{0xD9});
    expect_jpeg_refused(cut, "cut.jpg", {"JPEG:", "truncated"});
  }
  EXPECT_EQ(decode_image(full).width, 96u);  // the whole file still decodes
}

TEST(JpegLimits, CorruptEntropyDataIsAnError) {
  auto jpeg = encode_jpeg(smooth_image(64, 64, 3), 90);
  std::size_t sos = 0;
  for (std::size_t i = 0; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == std::byte{0xFF} && jpeg[i + 1] == std::byte{0xDA}) {
      sos = i;
      break;
    }
  ASSERT_GT(sos, 0u);
  const std::size_t data = sos + 2 + ((std::to_integer<std::size_t>(jpeg[sos + 2]) << 8) |
                                      std::to_integer<std::size_t>(jpeg[sos + 3]));
  ASSERT_LT(data + 40, jpeg.size() - 2);
  // FF 00 is a stuffed 0xFF byte: a run of one bits, which no Huffman table may assign
  // (T.81 annex C), so libjpeg meets an undecodable code.
  for (std::size_t i = data + 8; i < data + 40; i += 2) {
    jpeg[i] = std::byte{0xFF};
    jpeg[i + 1] = std::byte{0x00};
  }
  expect_jpeg_refused(jpeg, "corrupt.jpg", {"JPEG:", "Huffman"});
}

TEST(JpegLimits, ProgressiveScansAreLimited) {
  const auto jpeg = progressive_jpeg(48, 40);
  EXPECT_EQ(decode_image(jpeg).height, 40u);  // libjpeg's script: 10 scans, within the default
  ImageReadOptions few;
  few.limits.max_jpeg_scans = 3;
  expect_jpeg_refused(jpeg, "scans.jpg", {"more than 3 scans"}, few);
}

// A luma-only decode skips the chroma planes' transforms, not their data: a progressive file
// whose corruption lies in a scan of the blue-difference component alone is refused too.
TEST(JpegLimits, CorruptChromaIsAnErrorInALumaDecode) {
  auto jpeg = write_jpeg_recipe(in_gamut_photo(128, 96, 5), {"444-progressive", JCS_YCbCr, 1, 1, true});
  // The first AC scan of component 2 (Cb): SOS, its length, one component, id 2, then Ss > 0.
  std::size_t data = 0, end = 0;
  for (std::size_t i = 0; i + 8 < jpeg.size(); ++i) {
    if (jpeg[i] != std::byte{0xFF} || jpeg[i + 1] != std::byte{0xDA}) continue;
    const std::size_t length = (std::to_integer<std::size_t>(jpeg[i + 2]) << 8) | std::to_integer<std::size_t>(jpeg[i + 3]);
    if (jpeg[i + 4] == std::byte{1} && jpeg[i + 5] == std::byte{2} && jpeg[i + 7] != std::byte{0}) {
      data = i + 2 + length;
      for (end = data; end + 1 < jpeg.size(); ++end)  // the next marker (FF 00 is a stuffed byte)
        if (jpeg[end] == std::byte{0xFF} && jpeg[end + 1] != std::byte{0x00}) break;
      break;
    }
  }
  ASSERT_GT(data, 0u) << "no AC scan of Cb alone";
  ASSERT_GT(end, data + 24) << "the Cb scan is too short to corrupt";
  for (std::size_t i = data + 4; i + 4 < end; i += 2) {
    jpeg[i] = std::byte{0xFF};
    jpeg[i + 1] = std::byte{0x00};
  }
  expect_jpeg_refused(jpeg, "chroma.jpg", {"JPEG:", "Huffman"});
}

// ---- allocation failures ------------------------------------------------------------------

TEST(ImageAllocation, FailureNamesTheSizeAndTheImage) {
#if defined(STREAMPIPE_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer reports an impossible allocation instead of throwing std::bad_alloc";
#else
  // 2^60 bytes: no machine has them, and the request is valid (below size_t's half).
  try {
    (void)Image::make(std::uint32_t{1} << 30, std::uint32_t{1} << 30, 1);
    ADD_FAILURE() << "allocated 1 EiB";
  } catch (const AllocationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot allocate 1.0 EiB (1152921504606846976 bytes)"), std::string::npos) << what;
    EXPECT_NE(what.find("a 1073741824x1073741824 gray image at 8 bits"), std::string::npos) << what;
    EXPECT_EQ(e.bytes(), std::uint64_t{1} << 60);
    const std::bad_alloc& as_bad_alloc = e;  // what out-of-memory handlers catch
    EXPECT_STREQ(as_bad_alloc.what(), e.what());
  }
#endif
}

TEST(ImageAllocation, SizesInBinaryUnits) {
  EXPECT_EQ(format_bytes(837), "837 bytes");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{12} << 30), "12.0 GiB");
}

}  // namespace
}  // namespace streampipe::io
