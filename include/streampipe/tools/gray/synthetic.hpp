// SPDX-License-Identifier: Apache-2.0
#pragma once
// Photo-like test images for the gray tool's benchmark and examples: smooth colour gradients,
// a few filled shapes with soft edges, and sensor-like noise - content that compresses like a
// photograph (neither flat nor random). Deterministic for a given seed.

#include "streampipe/io/image.hpp"

#include <cstdint>

namespace streampipe::tools::gray {

[[nodiscard]] io::Image photo_like(std::uint32_t width, std::uint32_t height, std::uint32_t seed);

}  // namespace streampipe::tools::gray
