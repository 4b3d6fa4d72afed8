// SPDX-License-Identifier: Apache-2.0
#include "engine_thread.hpp"

#include "engine_impl.hpp"

namespace streampipe::pipeline {
namespace detail {
namespace {

// The engine the thread works for; kAnyEngine on a host lane.
const void* const kAnyEngine = &kAnyEngine;
thread_local const void* marked = nullptr;

}  // namespace

EngineThreadMark::EngineThreadMark(const void* engine) noexcept : outer_(marked) {
  marked = engine != nullptr ? engine : kAnyEngine;
}

EngineThreadMark::~EngineThreadMark() { marked = outer_; }

bool on_engine_thread(const void* engine) noexcept {
  return marked != nullptr && (marked == engine || marked == kAnyEngine);
}

}  // namespace detail

bool Engine::on_own_thread() const noexcept { return detail::on_engine_thread(&impl_->delivery); }

}  // namespace streampipe::pipeline
