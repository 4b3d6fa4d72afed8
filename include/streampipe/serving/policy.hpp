// SPDX-License-Identifier: Apache-2.0
#pragma once
// The dynamic batcher's pure decisions, separate from its threads so they are tested alone.
//
// Buckets: each batch runs on the prepared plan of the smallest bucket that holds it and is
// padded up to that bucket's size. The buckets are the preferred batch sizes plus the max
// batch size; with no preferred sizes, the powers of two below max plus max.
//
// When to dispatch (the Triton rules): with `pending` requests queued and the oldest
// waiting for `oldest_age`,
//   1. pending >= max_batch_size          -> a batch of max_batch_size now;
//   2. a preferred size <= pending exists -> a batch of the largest such size now;
//   3. oldest_age >= max_queue_delay      -> a batch of everything pending now;
//   4. otherwise wait max_queue_delay - oldest_age for more requests.
// With no preferred sizes and a zero delay every request goes out at once.

#include <chrono>
#include <cstddef>
#include <vector>

namespace streampipe::serving {

struct BatchPolicy {
  std::size_t max_batch_size = 32;
  std::vector<std::size_t> preferred_batch_sizes;  // each in [1, max_batch_size]
  std::chrono::microseconds max_queue_delay{100};
};

// Throws std::invalid_argument naming the bad value.
void validate(const BatchPolicy& policy);

// Sorted, distinct, ends with max_batch_size.
[[nodiscard]] std::vector<std::size_t> bucket_sizes(const BatchPolicy& policy);

// The smallest bucket >= n; throws std::invalid_argument when n is 0 or above the largest.
[[nodiscard]] std::size_t bucket_for(std::size_t n, const std::vector<std::size_t>& buckets);

struct BatchDecision {
  std::size_t take = 0;  // > 0: form a batch of this many requests now
  std::chrono::nanoseconds wait{0};  // take == 0: decide again after at most this long
  [[nodiscard]] bool dispatch() const noexcept { return take > 0; }
};

// With pending == 0 the decision is to wait indefinitely (wait = nanoseconds::max()).
[[nodiscard]] BatchDecision decide_batch(std::size_t pending, std::chrono::nanoseconds oldest_age,
                                         const BatchPolicy& policy);

}  // namespace streampipe::serving
