// SPDX-License-Identifier: Apache-2.0
#include "streampipe/io/decode_budget.hpp"

#include "streampipe/io/image.hpp"
#include "streampipe/host/memory_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace streampipe::io {
namespace {

// Reservations this thread holds (of any budget): such a thread never waits.
thread_local int held_here = 0;

}  // namespace

DecodeBudget::DecodeBudget(std::uint64_t bytes, std::string what) : total_(bytes), what_(std::move(what)) {}

std::shared_ptr<const void> DecodeBudget::reserve(std::uint64_t bytes, const std::string& source) {
  if (bytes > total_)
    throw ImageError(source, fmt::format("decodes to {} ({} bytes), more than the {} ({} bytes) all decoding threads "
                                         "may hold at once ({})",
                                         host::format_bytes(bytes), bytes, host::format_bytes(total_), total_,
                                         what_));
  {
    std::unique_lock lock(mutex_);
    if (held_here == 0) freed_.wait(lock, [&] { return held_ + bytes <= total_; });
    held_ += bytes;
    peak_ = std::max(peak_, held_);
  }
  ++held_here;
  const auto owner = std::this_thread::get_id();
  return std::shared_ptr<const void>(static_cast<const void*>(this),
                                     [self = shared_from_this(), bytes, owner](const void*) {
                                       if (std::this_thread::get_id() == owner) --held_here;
                                       self->release(bytes);
                                     });
}

void DecodeBudget::release(std::uint64_t bytes) noexcept {
  {
    const std::lock_guard lock(mutex_);
    held_ -= bytes;
  }
  freed_.notify_all();
}

std::uint64_t DecodeBudget::held() const {
  const std::lock_guard lock(mutex_);
  return held_;
}

std::uint64_t DecodeBudget::peak() const {
  const std::lock_guard lock(mutex_);
  return peak_;
}

}  // namespace streampipe::io
