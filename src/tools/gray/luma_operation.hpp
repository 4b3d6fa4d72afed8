// SPDX-License-Identifier: Apache-2.0
#pragma once
// gray's operation for one file per item (runs without nvJPEG): each item's input is its file
// as tools/gray/pixels.hpp stages it, told apart by the item's own sizes - as many bytes in
// as out: its gray values, copied; three times as many: 8-bit RGB, whose BT.601 luma is
// computed (ops::rgb_to_gray on a GPU's stream, ops::rgb_to_gray_host on the CPU's lanes).
// Any other ratio throws std::invalid_argument when the item is run.

#include "streampipe/pipeline/operation.hpp"

namespace streampipe::tools::gray::detail {

[[nodiscard]] pipeline::Operation luma_operation();

}  // namespace streampipe::tools::gray::detail
