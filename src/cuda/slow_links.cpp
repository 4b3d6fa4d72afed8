// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/slow_links.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace streampipe {

std::vector<SlowLink> slow_links(std::span<const double> gbps, double threshold) {
  if (!(threshold > 0.0 && threshold <= 1.0))
    throw std::invalid_argument(fmt::format("slow_links: threshold {} is not in (0, 1]", threshold));
  for (const double g : gbps)
    if (!std::isfinite(g) || g < 0.0)
      throw std::invalid_argument(fmt::format("slow_links: {} is not a bandwidth", g));
  std::vector<SlowLink> slow;
  if (gbps.size() < 2) return slow;
  std::vector<double> others;
  others.reserve(gbps.size() - 1);
  for (std::size_t i = 0; i < gbps.size(); ++i) {
    others.clear();
    for (std::size_t k = 0; k < gbps.size(); ++k)
      if (k != i) others.push_back(gbps[k]);
    std::sort(others.begin(), others.end());
    const std::size_t m = others.size() / 2;
    const double median = others.size() % 2 == 1 ? others[m] : (others[m - 1] + others[m]) / 2.0;
    if (gbps[i] < threshold * median) slow.push_back({i, gbps[i], median});
  }
  return slow;
}

}  // namespace streampipe
