// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pipeline engine over arrays, as the package's Engine drives it (engine.cpp, the calls;
// engine_map.cpp, map()). Items are submitted in one order under a lock, so this side's
// indices are the engine's; their results come back on the engine's threads (on_complete).
//   submit():       one item the package described; its future is resolved through
//                   `resolver(future, result, out, callback)` under the GIL.
//   submit_array(): one plain numpy item described here (numpy_item.hpp); false: declined,
//                   nothing submitted, the package describes it.
//   map():          many arrays prepared (map_items.hpp), submitted as they are, and waited
//                   for here; results returned in order.
// Waits release the GIL and poll for Ctrl-C: on an interrupt the engine is cancelled, every
// item is left to end, and the signal handler's exception (KeyboardInterrupt) is raised.
//
// Threads: every call holds an EngineLife::Use while it uses the engine, so close() from
// another thread waits for the calls in progress instead of destroying the engine under
// them; map() then stops submitting and reports the items it did not submit, and a call
// made once close() began raises ValueError "the engine is closed". On the engine's own
// threads (a callback resolving a future, a Python host function) every call that would
// wait for the engine raises RuntimeError instead of waiting for itself: close(), drain(),
// map(), and a submit() that finds no room; so does a close() from Python code one of the
// engine's calls runs. After fork() the child's engines have no threads: every call there
// raises RuntimeError, and the child's exit leaves them alone.
#include "bindings.hpp"
#include "engine_life.hpp"
#include "numpy_item.hpp"
#include "operations.hpp"

#include "streampipe/pipeline/engine.hpp"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace streampipe::python {

class PyEngine {
 public:
  // output_for(shape, dtype) -> (shape, dtype): the operation's output for an input.
  PyEngine(const PyOperation& op, const pipeline::EngineOptions& options, nb::object resolver,
           nb::callable output_for);
  ~PyEngine();
  PyEngine(const PyEngine&) = delete;
  PyEngine& operator=(const PyEngine&) = delete;

  // In a child of fork(): nothing of the engine may be touched (its threads, and whoever
  // held its locks, are not there).
  void forked() noexcept { forked_ = true; }

  // `out` and `keep` stay referenced until the item is resolved; `callback` (or None) is
  // handed to the resolver with the result.
  void submit(std::uintptr_t in, std::size_t in_bytes, std::uintptr_t out, std::size_t out_bytes, std::string label,
              bool device_memory, nb::object future, nb::object out_array, nb::object keep, nb::object callback);
  [[nodiscard]] bool submit_array(nb::handle array, nb::handle out, std::string label, nb::object future,
                                  nb::object callback);
  // Returns (base, accepted, error, results): base is the first item's engine index; error
  // is the exception that stopped the submitting at item `accepted` (what `prepare` raised
  // for it, or a ValueError when close() was called meanwhile; None: every item went in);
  // results are the accepted items' result tuples in order when `all_results`, else only
  // the first item not done (or none).
  nb::tuple map(nb::list inputs, nb::list outputs, nb::callable prepare, bool all_results);
  nb::dict drain();
  void flush();
  void cancel();
  void close();  // waits for calls in progress and work in flight, then stops the threads

  [[nodiscard]] std::string describe();
  [[nodiscard]] nb::list devices(bool wait);
  [[nodiscard]] std::string gpus_left_out();
  [[nodiscard]] std::string report_json();
  [[nodiscard]] std::string chrome_trace(const std::string& name);
  [[nodiscard]] std::string gantt_svg(const std::string& title);
  [[nodiscard]] nb::list records();
  [[nodiscard]] bool closed() const noexcept { return life_.closed(); }

 private:
  // What a submitted item holds until it is resolved. Its references are dropped under the
  // GIL; moved-from, it holds none.
  struct Pending {
    nb::object future, out, keep, callback;
  };
  // One map() call waiting for its items: [base, base + size) are its engine indices.
  struct MapTarget {
    std::size_t base = 0;
    std::size_t size = 0;
    std::vector<std::optional<pipeline::ItemResult>>* results = nullptr;
    std::size_t received = 0;
    std::size_t wanted = SIZE_MAX;  // its accepted items, once known
  };

  void enqueue(pipeline::Item item, Pending& pending);
  void on_complete(const pipeline::ItemResult& r) noexcept;
  // Waits (GIL released) until `done()` holds under mutex_, checking for signals every
  // 20 ms. Returns true when a signal handler raised (the Python error is set): the engine
  // is then cancelled and `done()` awaited all the same.
  bool wait_until(const std::function<bool()>& done);
  bool wait_delivered(std::size_t target);

  void require_not_forked() const;
  void refuse_on_own_thread(const char* what) const;
  void refuse_inside_map(const char* what) const;

  nb::object resolver_;
  NumpyItems numpy_;
  std::unique_ptr<pipeline::Engine> engine_;
  EngineLife life_;
  bool forked_ = false;
  std::mutex submit_mutex_;  // submissions in order, so our indices are the engine's
  std::mutex mutex_;
  std::condition_variable delivered_cv_;
  std::size_t next_index_ = 0;
  std::size_t delivered_ = 0;
  std::multiset<std::size_t> delivered_targets_;  // what drain() calls wait for
  std::unordered_map<std::size_t, Pending> pending_;
  std::vector<MapTarget*> maps_;
  std::atomic<std::thread::id> mapping_thread_{};  // the thread whose map() holds submit_mutex_
};

}  // namespace streampipe::python
