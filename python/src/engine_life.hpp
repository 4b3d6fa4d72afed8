// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine's life as Python's threads see it: open, closing, closed, and how many calls
// are using it. Every call that touches the C++ engine holds a Use for as long as it does,
// so that close() from another thread waits for those calls to end (with the GIL released)
// before it destroys the engine, instead of destroying it under them. Once close() began,
// a new Use throws std::invalid_argument "the engine is closed" (ValueError), and a call
// that holds one can see closing() and stop early (map() stops submitting).
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace streampipe::python {

class EngineLife {
 public:
  class Use {
   public:
    explicit Use(EngineLife& life);  // throws when close() began
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    EngineLife& life_;
  };

  // True once close() began: a call in progress ends as soon as it can.
  [[nodiscard]] bool closing() const noexcept { return state_.load() != State::open; }
  [[nodiscard]] bool closed() const noexcept { return state_.load() == State::closed; }
  // True while the calling thread holds a Use of this engine: a close() there would wait
  // for its own call.
  [[nodiscard]] bool used_here() const noexcept;

  // The first close() takes the engine from open to closing and returns true; later ones
  // (or one while another thread closes) return false and do nothing.
  [[nodiscard]] bool begin_close();
  // Blocks until no call uses the engine. Call without the GIL: a call in progress may
  // need it to end.
  void wait_unused();
  void end_close() noexcept;  // the engine is destroyed

 private:
  enum class State { open, closing, closed };
  std::atomic<State> state_{State::open};
  std::mutex mutex_;
  std::condition_variable unused_;
  std::size_t users_ = 0;
};

}  // namespace streampipe::python
