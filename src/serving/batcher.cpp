// SPDX-License-Identifier: Apache-2.0
// DynamicBatcher, the handle: every call goes to its Impl (batcher_impl.cpp).
#include "batcher_impl.hpp"

#include <cstdio>
#include <exception>
#include <utility>

namespace streampipe::serving {

const char* to_string(RequestStatus status) noexcept {
  switch (status) {
    case RequestStatus::ok: return "ok";
    case RequestStatus::rejected: return "rejected";
    case RequestStatus::queue_full: return "queue_full";
    case RequestStatus::timed_out: return "timed_out";
    case RequestStatus::cancelled: return "cancelled";
    case RequestStatus::shut_down: return "shut_down";
    case RequestStatus::failed: return "failed";
  }
  return "unknown";
}

DynamicBatcher::DynamicBatcher(BatchExecutor& executor, BatcherOptions options)
    : impl_(std::make_unique<Impl>(executor, std::move(options))) {}

DynamicBatcher::~DynamicBatcher() {
  try {
    impl_->shutdown(ShutdownMode::drain);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "streampipe: batcher shutdown failed: %s\n", e.what());
  }
}

std::future<RequestResult> DynamicBatcher::submit(const Request& request) { return impl_->submit(request); }

void DynamicBatcher::submit(const Request& request, Completion done) { impl_->submit(request, std::move(done)); }

void DynamicBatcher::shutdown(ShutdownMode mode) { impl_->shutdown(mode); }

BatcherStats DynamicBatcher::stats() const { return impl_->stats(); }

const std::vector<std::size_t>& DynamicBatcher::buckets() const noexcept { return impl_->buckets(); }

Clock::time_point DynamicBatcher::origin() const noexcept { return impl_->origin(); }

std::vector<report::QueryRecord> DynamicBatcher::take_records() { return impl_->take_records(); }

}  // namespace streampipe::serving
