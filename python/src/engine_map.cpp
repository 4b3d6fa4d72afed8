// SPDX-License-Identifier: Apache-2.0
// Engine.map() in C++ (engine.hpp): the arrays prepared (map_items.hpp) and submitted in
// chunks that grow from one item, so the engine works on the first items while later ones
// are prepared; the GIL is released while a chunk is submitted. An item `prepare` refuses,
// or a close() from another thread, ends the submitting: the items before it run to their
// end, and the call returns why it stopped.
#include "engine.hpp"

#include "item_result.hpp"
#include "map_items.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

namespace streampipe::python {
namespace {

// The most items map() prepares under the GIL before submitting them: a host function's
// lanes wait for the GIL meanwhile.
constexpr std::size_t kMapChunk = 64;

}  // namespace

nb::tuple PyEngine::map(nb::list inputs, nb::list outputs, nb::callable prepare, bool all_results) {
  require_not_forked();
  const EngineLife::Use use(life_);
  refuse_on_own_thread("map()");
  refuse_inside_map("map()");
  MapItems items(std::move(inputs), std::move(outputs), std::move(prepare), numpy_);
  const std::size_t n = items.size();
  std::vector<std::optional<pipeline::ItemResult>> results(n);
  MapTarget target;
  target.size = n;
  target.results = &results;
  std::unique_lock submitting(submit_mutex_, std::defer_lock);
  std::size_t accepted = 0;
  {
    nb::gil_scoped_release release;
    submitting.lock();
    mapping_thread_ = std::this_thread::get_id();
    {
      const std::lock_guard lk(mutex_);
      target.base = next_index_;
      maps_.push_back(&target);
    }
    engine_->expect(n);  // a map's length is known: no slow member holds its end
  }
  // Whatever ends the call, results no longer awaited go nowhere once it returns.
  struct Registered {
    PyEngine& engine;
    MapTarget& target;
    ~Registered() {
      const std::lock_guard lk(engine.mutex_);
      engine.maps_.erase(std::find(engine.maps_.begin(), engine.maps_.end(), &target));
    }
  } registered{*this, target};
  std::optional<nb::python_error> invalid;  // what `prepare` raised
  std::exception_ptr refused;
  bool signalled = false;  // a signal handler raised (the Python error is set)
  // Submission waits for free slots, so a long map() spends most of its time there.
  auto last_check = std::chrono::steady_clock::now();
  const auto check_due = [&] {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_check <= std::chrono::milliseconds(20)) return false;
    last_check = now;
    return true;
  };
  const auto go_on = [&] { return !invalid && !refused && !signalled && !life_.closing(); };
  std::vector<pipeline::Item> chunk;
  for (std::size_t size = 1; accepted < n && go_on(); size = std::min(2 * size, kMapChunk)) {
    chunk.clear();
    try {
      for (std::size_t k = accepted; k < n && chunk.size() < size; ++k) chunk.push_back(items.item(k));
    } catch (nb::python_error& e) {
      invalid.emplace(std::move(e));
    } catch (...) {
      refused = std::current_exception();
    }
    signalled = check_due() && PyErr_CheckSignals() != 0;
    nb::gil_scoped_release release;
    for (std::size_t j = 0; j < chunk.size() && !signalled && !life_.closing(); ++j) {
      try {
        (void)engine_->submit(std::move(chunk[j]));
      } catch (...) {
        refused = std::current_exception();
        break;
      }
      {
        const std::lock_guard lk(mutex_);
        ++next_index_;
        ++accepted;
      }
      if (check_due()) {
        nb::gil_scoped_acquire gil;
        signalled = PyErr_CheckSignals() != 0;
      }
    }
  }
  // A KeyboardInterrupt raised inside `prepare` is Ctrl-C as much as one seen here.
  const bool interrupted_in_prepare = invalid && !invalid->matches(PyExc_Exception);
  const bool closed_meanwhile = accepted < n && !invalid && !refused && !signalled && life_.closing();
  {
    nb::gil_scoped_release release;
    if (refused || signalled || interrupted_in_prepare) engine_->cancel();
    engine_->flush();  // a last, partly filled batch goes now, not when more items come
    mapping_thread_ = std::thread::id{};
    submitting.unlock();
  }
  {
    const std::lock_guard lk(mutex_);
    target.wanted = accepted;
  }
  const bool interrupted = wait_until([&] { return target.received >= target.wanted; }) || signalled;
  if (interrupted) throw nb::python_error();
  if (interrupted_in_prepare) throw nb::python_error(std::move(*invalid));
  if (refused) std::rethrow_exception(refused);
  nb::object error = nb::none();
  if (invalid) {
    error = nb::borrow(invalid->value());
  } else if (closed_meanwhile) {
    error = nb::handle(PyExc_ValueError)(
        fmt::format("the engine is closed: close() was called while map() ran; its first {} of {} items were "
                    "submitted and ran to their end, the rest were not",
                    accepted, n));
  }
  nb::list out;
  for (std::size_t k = 0; k < accepted; ++k) {
    if (all_results) {
      out.append(result_tuple(*results[k]));
    } else if (results[k]->status != pipeline::ItemStatus::done) {
      out.append(result_tuple(*results[k]));
      break;
    }
  }
  return nb::make_tuple(target.base, accepted, error, out);
}

}  // namespace streampipe::python
