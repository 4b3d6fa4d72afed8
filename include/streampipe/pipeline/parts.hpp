// SPDX-License-Identifier: Apache-2.0
#pragma once
// Work cut into independent parts, run by the thread that asks and by helper threads. The
// engine runs its staging copies this way (host_copy.hpp), and a host stage may run its own
// parts on the engine's idle host workers (run_parts): the files of a group, say, decoded
// side by side rather than one after another on one worker.

#include <cstddef>
#include <functional>
#include <memory>

namespace streampipe::pipeline {

// Parts of many calls at once, oldest call first: every thread that takes part (callers and
// helpers alike) runs the next part of the OLDEST unfinished call, so one call's parts run
// on all the threads and finish before the next call's, instead of every call crawling side
// by side and all finishing late. A call returns once its own parts have run; meanwhile its
// thread runs parts too (older calls' first), so a call never waits for a helper to start.
class PartQueue {
 public:
  using Spawn = std::function<void(std::function<void()>)>;
  // `helpers`: at most this many extra threads per call, asked for through `spawn`, which
  // may run them much later (a busy FIFO): a helper that finds nothing left returns.
  PartQueue(int helpers, Spawn spawn);
  ~PartQueue();
  PartQueue(const PartQueue&) = delete;
  PartQueue& operator=(const PartQueue&) = delete;

  [[nodiscard]] int helpers() const noexcept { return helpers_; }

  // Runs part(0) .. part(count - 1), each once, in any order and on any of the threads, and
  // returns when every one has run. With one part, or no helpers, they run in turn on the
  // calling thread. When a part throws, the call's parts not yet started are skipped and the
  // first exception is rethrown once the parts already started have finished.
  void run(std::size_t count, const std::function<void(std::size_t)>& part);

  struct State;

 private:
  int helpers_;
  Spawn spawn_;
  std::shared_ptr<State> state_;  // shared: a helper may run after its call returned
};

// Runs part(0) .. part(count - 1) as PartQueue::run does, on the engine's host workers when
// called from one of its host stages (Item::produce, Item::consume): the parts go to the
// engine's queue of parts, which its idle workers take. Elsewhere (any other thread) they run
// in turn on the calling thread. Parts must not wait for the engine (submit(), an item's
// future): the workers they would wait for may be running them.
void run_parts(std::size_t count, const std::function<void(std::size_t)>& part);

}  // namespace streampipe::pipeline
