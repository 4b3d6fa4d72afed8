// SPDX-License-Identifier: Apache-2.0
#include "streampipe/serving/policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::serving {

void validate(const BatchPolicy& policy) {
  if (policy.max_batch_size == 0) throw std::invalid_argument("batch policy: max batch size must be at least 1");
  for (const std::size_t p : policy.preferred_batch_sizes)
    if (p == 0 || p > policy.max_batch_size)
      throw std::invalid_argument(fmt::format(
          "batch policy: preferred batch size {} is outside [1, max batch size {}]", p, policy.max_batch_size));
  if (policy.max_queue_delay.count() < 0)
    throw std::invalid_argument("batch policy: max queue delay must not be negative");
}

std::vector<std::size_t> bucket_sizes(const BatchPolicy& policy) {
  validate(policy);
  std::vector<std::size_t> buckets = policy.preferred_batch_sizes;
  if (buckets.empty())
    for (std::size_t b = 1; b < policy.max_batch_size; b *= 2) buckets.push_back(b);
  buckets.push_back(policy.max_batch_size);
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  return buckets;
}

std::size_t bucket_for(std::size_t n, const std::vector<std::size_t>& buckets) {
  const auto it = std::lower_bound(buckets.begin(), buckets.end(), n);
  if (n == 0 || it == buckets.end())
    throw std::invalid_argument(fmt::format("no bucket holds a batch of {} (largest bucket {})", n,
                                            buckets.empty() ? 0 : buckets.back()));
  return *it;
}

BatchDecision decide_batch(std::size_t pending, std::chrono::nanoseconds oldest_age, const BatchPolicy& policy) {
  if (pending == 0) return {0, std::chrono::nanoseconds::max()};
  if (pending >= policy.max_batch_size) return {policy.max_batch_size, {}};
  std::size_t preferred = 0;
  for (const std::size_t p : policy.preferred_batch_sizes)
    if (p <= pending) preferred = std::max(preferred, p);
  if (preferred > 0) return {preferred, {}};
  const std::chrono::nanoseconds delay = policy.max_queue_delay;
  if (oldest_age >= delay) return {pending, {}};
  return {0, delay - oldest_age};
}

}  // namespace streampipe::serving
