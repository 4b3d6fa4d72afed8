// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which engine, if any, the calling thread is doing work for: set while a Deliverer hands an
// item to its callback and while a host lane runs an operation's host form. There, a wait
// on the engine would wait for the thread itself (drain() until this very item is handed
// over, a submit() for a slot only this thread can free), so the engine refuses instead
// (std::logic_error), as concurrent.futures refuses a thread joining itself.

namespace streampipe::pipeline::detail {

// Marks the calling thread for the object's lifetime (nested marks restore the outer one).
class EngineThreadMark {
 public:
  explicit EngineThreadMark(const void* engine) noexcept;
  ~EngineThreadMark();
  EngineThreadMark(const EngineThreadMark&) = delete;
  EngineThreadMark& operator=(const EngineThreadMark&) = delete;

 private:
  const void* outer_;
};

// True while the calling thread is marked for `engine`, or runs any engine's host form
// (nullptr marks: a host lane serves one engine but does not know which).
[[nodiscard]] bool on_engine_thread(const void* engine) noexcept;

}  // namespace streampipe::pipeline::detail
