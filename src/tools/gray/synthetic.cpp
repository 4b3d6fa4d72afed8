// SPDX-License-Identifier: Apache-2.0
// Photo-like synthetic images (see tools/gray/synthetic.hpp).

#include "streampipe/tools/gray/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace streampipe::tools::gray {

io::Image photo_like(std::uint32_t width, std::uint32_t height, std::uint32_t seed) {
  io::Image img = io::Image::make(width, height, 3, 8);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  // Per-channel gradient: value = a + bx * x + by * y over the normalized frame.
  float a[3], bx[3], by[3];
  for (int c = 0; c < 3; ++c) {
    a[c] = 40 + 120 * unit(rng);
    bx[c] = -60 + 120 * unit(rng);
    by[c] = -60 + 120 * unit(rng);
  }
  struct Disc {
    float cx, cy, r, color[3];
  };
  Disc discs[6];
  for (auto& d : discs) {
    d.cx = unit(rng) * static_cast<float>(width);
    d.cy = unit(rng) * static_cast<float>(height);
    d.r = (0.05f + 0.2f * unit(rng)) * static_cast<float>(std::min(width, height));
    for (float& c : d.color) c = 255 * unit(rng);
  }
  const float inv_w = 1.0f / static_cast<float>(std::max(1u, width));
  const float inv_h = 1.0f / static_cast<float>(std::max(1u, height));
  std::uint32_t noise = seed * 2654435761u + 1u;  // xorshift: fast, and enough for grain
  for (std::uint32_t y = 0; y < height; ++y) {
    std::uint8_t* row = img.pixels.data() + static_cast<std::size_t>(y) * width * 3;
    const float fy = static_cast<float>(y);
    for (std::uint32_t x = 0; x < width; ++x) {
      const float fx = static_cast<float>(x);
      float v[3];
      for (int c = 0; c < 3; ++c) v[c] = a[c] + bx[c] * fx * inv_w + by[c] * fy * inv_h;
      for (const auto& d : discs) {
        const float d2 = (fx - d.cx) * (fx - d.cx) + (fy - d.cy) * (fy - d.cy);
        if (d2 >= d.r * d.r) continue;
        const float w = std::clamp((d.r - std::sqrt(d2)) / 3.0f, 0.0f, 1.0f);  // soft 3-pixel edge
        if (w > 0)
          for (int c = 0; c < 3; ++c) v[c] = v[c] * (1 - w) + d.color[c] * w;
      }
      for (int c = 0; c < 3; ++c) {
        noise ^= noise << 13;
        noise ^= noise >> 17;
        noise ^= noise << 5;
        const float grain = static_cast<float>(noise % 13) - 6.0f;
        row[x * 3 + static_cast<std::uint32_t>(c)] = static_cast<std::uint8_t>(std::clamp(v[c] + grain, 0.0f, 255.0f));
      }
    }
  }
  return img;
}

}  // namespace streampipe::tools::gray
