// SPDX-License-Identifier: Apache-2.0
// The image-batch lesson: a batch of 1920x1080 RGB images converted to gray. The obvious
// loop copies one image in, converts it, copies it out, then the next; the lesson gives each
// image its own H2D -> kernel -> D2H on its own stream, from pinned memory, so copies in both
// directions and kernels overlap. Here the pipeline engine does that: 4 lanes (streams),
// pinned staging, and a timeline of every stage. Pageable inputs are staged by host threads;
// pinned inputs go straight to the DMA. Every output is checked against the CPU. Without a
// GPU the same program runs on the host backend.
//
//   example_image_batch [IMAGES]   (default 64)

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/ops/pipeline_ops.hpp"
#include "streampipe/ops/rgb_to_gray.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "streampipe/tools/gray/synthetic.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace streampipe;

namespace {

constexpr std::uint32_t kWidth = 1920, kHeight = 1080;
constexpr std::size_t kPixels = std::size_t{kWidth} * kHeight;

// One run over all images; returns the number of wrong outputs.
std::size_t run(const char* what, pipeline::EngineOptions options, const std::vector<const std::uint8_t*>& rgb,
                const std::vector<std::uint8_t*>& gray, const std::vector<std::vector<std::uint8_t>>& reference) {
  for (auto* g : gray) std::memset(g, 0xEE, kPixels);  // poison: a skipped image cannot pass
  pipeline::Engine engine(ops::gray_operation(), options);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < rgb.size(); ++i)
    (void)engine.submit(pipeline::make_item(std::span(rgb[i], kPixels * 3), std::span(gray[i], kPixels),
                                            "image " + std::to_string(i)));
  const auto stats = engine.drain();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::size_t wrong = stats.failed;
  for (std::size_t i = 0; i < gray.size(); ++i)
    if (std::memcmp(gray[i], reference[i].data(), kPixels) != 0) ++wrong;
  const auto rep = engine.timeline().report();
  fmt::print("{:<28} {:8.1f} ms  {:6.1f} images/s  in {:5.1f} GB/s  overlap {:4.0f}%  {}\n", what, ms,
             static_cast<double>(rgb.size()) * 1e3 / ms, static_cast<double>(rgb.size() * kPixels * 3) / 1e6 / ms,
             100 * rep.overlap_efficiency, wrong == 0 ? "all outputs correct" : fmt::format("{} WRONG", wrong));
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t images = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  if (images == 0 || images > 4096) {
    fmt::print(stderr, "usage: example_image_batch [IMAGES 1-4096]\n");
    return 2;
  }
  const bool gpu = Device::count() > 0;
  fmt::print("{} RGB images {}x{} -> gray on {}\n", images, kWidth, kHeight,
             gpu ? Device(0).name() : std::string("the host backend (no GPU)"));

  // A few distinct photo-like images, repeated: generating is not the lesson.
  std::vector<std::vector<std::uint8_t>> distinct, reference;
  for (std::uint32_t k = 0; k < 4; ++k) {
    distinct.push_back(tools::gray::photo_like(kWidth, kHeight, k + 1).pixels);
    reference.emplace_back(kPixels);
    ops::rgb_to_gray_host(distinct.back(), reference.back());
  }
  std::vector<std::vector<std::uint8_t>> pageable_in(images), pageable_out(images, std::vector<std::uint8_t>(kPixels));
  std::vector<std::vector<std::uint8_t>> refs(images);
  for (std::size_t i = 0; i < images; ++i) {
    pageable_in[i] = distinct[i % distinct.size()];
    refs[i] = reference[i % reference.size()];
  }
  std::vector<const std::uint8_t*> in;
  std::vector<std::uint8_t*> out;
  for (std::size_t i = 0; i < images; ++i) {
    in.push_back(pageable_in[i].data());
    out.push_back(pageable_out[i].data());
  }

  pipeline::EngineOptions serial;  // the obvious loop: one lane, nothing in flight behind it
  serial.lanes = 1;
  serial.depth = 1;
  pipeline::EngineOptions streams;  // the lesson: 4 streams, 2 images staged ahead on each
  streams.lanes = 4;
  streams.depth = 2;
  std::size_t wrong = 0;
  // The first run pays for module loading and the pinned pool's growth; shown, not compared.
  wrong += run("warm-up (first run)", streams, in, out, refs);
  wrong += run("serial, pageable", serial, in, out, refs);
  wrong += run("4 streams, pageable", streams, in, out, refs);

  if (gpu) {  // pinned inputs and outputs: the DMA reads and writes them directly
    std::vector<PinnedBuffer<std::uint8_t>> pinned_in, pinned_out;
    std::vector<const std::uint8_t*> pin;
    std::vector<std::uint8_t*> pout;
    for (std::size_t i = 0; i < images; ++i) {
      pinned_in.emplace_back(kPixels * 3);
      pinned_out.emplace_back(kPixels);
      std::memcpy(pinned_in.back().data(), pageable_in[i].data(), kPixels * 3);
      pin.push_back(pinned_in.back().data());
      pout.push_back(pinned_out.back().data());
    }
    wrong += run("serial, pinned", serial, pin, pout, refs);
    wrong += run("4 streams, pinned", streams, pin, pout, refs);
  }
  if (gpu)
    fmt::print("the input side is {:.0f} MB: at ~55 GB/s (pinned, PCIe Gen5 x16) the H2D link alone needs {:.1f} ms\n",
               static_cast<double>(images * kPixels * 3) / 1e6, static_cast<double>(images * kPixels * 3) / 55e6);
  return wrong == 0 ? 0 : 1;
}
