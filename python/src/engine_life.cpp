// SPDX-License-Identifier: Apache-2.0
// Which calls use an engine, so close() waits for them (engine_life.hpp).
#include "engine_life.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace streampipe::python {
namespace {

// The engines the calling thread holds a Use of, innermost last (a call may run Python
// code that calls another engine, or the same one).
thread_local std::vector<const EngineLife*> engines_in_use;

}  // namespace

EngineLife::Use::Use(EngineLife& life) : life_(life) {
  engines_in_use.push_back(&life);
  const std::lock_guard lock(life.mutex_);
  if (life.state_.load() != State::open) {
    engines_in_use.pop_back();
    throw std::invalid_argument("the engine is closed");
  }
  ++life.users_;
}

EngineLife::Use::~Use() {
  engines_in_use.erase(std::find(engines_in_use.rbegin(), engines_in_use.rend(), &life_).base() - 1);
  bool last = false;
  {
    const std::lock_guard lock(life_.mutex_);
    last = --life_.users_ == 0 && life_.state_.load() == State::closing;
  }
  if (last) life_.unused_.notify_all();
}

bool EngineLife::used_here() const noexcept {
  return std::find(engines_in_use.begin(), engines_in_use.end(), this) != engines_in_use.end();
}

bool EngineLife::begin_close() {
  const std::lock_guard lock(mutex_);
  if (state_.load() != State::open) return false;
  state_.store(State::closing);
  return true;
}

void EngineLife::wait_unused() {
  std::unique_lock lock(mutex_);
  unused_.wait(lock, [&] { return users_ == 0; });
}

void EngineLife::end_close() noexcept { state_.store(State::closed); }

}  // namespace streampipe::python
