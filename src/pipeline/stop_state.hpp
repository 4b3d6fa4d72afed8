// SPDX-License-Identifier: Apache-2.0
#pragma once
// Why nothing more may start in an engine: cancel() was called, or a sticky device error
// left nothing able to run on the device. The first device error is kept; an item that
// never started reads "cancelled" over "failed" once cancel() was called. Pure: the engine
// guards it with its lock.

#include "streampipe/pipeline/item.hpp"

#include <string>
#include <utility>

namespace streampipe::pipeline::detail {

class StopState {
 public:
  void cancel() noexcept { cancelled_ = true; }
  // Records the device's error; later ones are ignored.
  void fail(const std::string& what) {
    if (fatal_.empty()) fatal_ = what;
  }
  [[nodiscard]] bool stopped() const noexcept { return cancelled_ || !fatal_.empty(); }
  // The status and the reason for an item that must not start; stopped() must hold.
  [[nodiscard]] std::pair<ItemStatus, std::string> reason() const {
    if (cancelled_) return {ItemStatus::cancelled, "cancelled before it started"};
    return {ItemStatus::failed, "the device failed earlier: " + fatal_};
  }

 private:
  bool cancelled_ = false;
  std::string fatal_;
};

}  // namespace streampipe::pipeline::detail
