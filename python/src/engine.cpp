// SPDX-License-Identifier: Apache-2.0
// The pipeline engine over arrays. For submit() the package describes an array (host,
// pinned or device memory) and keeps it alive; map() takes the arrays themselves
// (map_items.hpp). This file submits them, resolves Python futures from the engine's
// threads, and waits without the GIL while polling for Ctrl-C: on an interrupt it cancels,
// waits until nothing is left running, and raises KeyboardInterrupt.
//   submit(): one item; `future` is resolved through `resolver(future, result)` under the GIL.
//   map():    many arrays prepared (map_items.hpp), submitted as they are, and waited for
//             in C++; results returned in order.
// On the engine's own threads (a callback resolving a future, a Python host function) every
// call that would wait for the engine raises RuntimeError instead of waiting for itself:
// close(), drain(), map(), and a submit() that finds no room. After fork() the child's
// engines have no threads: every call there raises RuntimeError, and the child's exit leaves
// them alone (their destructors would join threads that do not exist).
#include "bindings.hpp"
#include "item_result.hpp"
#include "map_items.hpp"
#include "operations.hpp"

#include "streampipe/pipeline/engine.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace streampipe::python {
namespace {

using pipeline::ItemResult;

// The most items map() prepares under the GIL before submitting them: a host function's
// lanes wait for the GIL meanwhile.
constexpr std::size_t kMapChunk = 64;

class PyEngine;

// Every engine of the process, so that a fork() can mark the child's copies. The mutex is
// held across fork() (pthread_atfork), so the child's copy of the set is consistent.
struct Engines {
  std::mutex mutex;
  std::set<PyEngine*> live;
};
Engines& engines() {
  static auto* e = new Engines;  // never destroyed: a fork may come during exit
  return *e;
}
void mark_forked_engines() noexcept;

class PyEngine {
 public:
  PyEngine(const PyOperation& op, const pipeline::EngineOptions& options, nb::object resolver)
      : resolver_(std::move(resolver)) {
    pipeline::EngineOptions o = options;
    o.on_complete = [this](const ItemResult& r) { on_complete(r); };
    {
      nb::gil_scoped_release release;
      engine_ = std::make_unique<pipeline::Engine>(op.op, std::move(o));
    }
    static const int handlers = ::pthread_atfork([] { engines().mutex.lock(); }, [] { engines().mutex.unlock(); },
                                                 [] { mark_forked_engines(); });
    (void)handlers;
    const std::lock_guard lock(engines().mutex);
    engines().live.insert(this);
  }
  ~PyEngine() {
    {
      const std::lock_guard lock(engines().mutex);
      engines().live.erase(this);
    }
    try {
      close();
    } catch (...) {
      // Destroyed on its own thread (the last reference dropped in a callback): its threads
      // cannot join themselves, so the engine is left to the process's end.
      (void)engine_.release();
    }
  }
  PyEngine(const PyEngine&) = delete;
  PyEngine& operator=(const PyEngine&) = delete;

  // In a child of fork(): nothing of the engine may be touched (its threads, and whoever
  // held its locks, are not there).
  void forked() noexcept { forked_ = true; }

  void submit(std::uintptr_t in, std::size_t in_bytes, std::uintptr_t out, std::size_t out_bytes,
              std::string label, bool device_memory, nb::object future) {
    require_open();
    refuse_inside_map("submit()");
    const bool own_thread = engine_->on_own_thread();
    PyObject* fut = future.release().ptr();  // our reference, dropped when resolved
    nb::gil_scoped_release release;
    // On the engine's own thread a submit may not wait, not even for another submitter
    // (which may be waiting for a slot that only this thread can free).
    std::unique_lock submitting(submit_mutex_, std::defer_lock);
    if (!own_thread) {
      submitting.lock();
    } else if (!submitting.try_lock()) {
      nb::gil_scoped_acquire gil;
      Py_DECREF(fut);
      throw std::logic_error("submit() from the engine's own thread (an on_complete callback or a host function) "
                             "while another thread submits: it would wait for that thread, which may be waiting "
                             "for this one");
    }
    std::size_t index = 0;
    {
      std::lock_guard lk(mutex_);
      index = next_index_;
      futures_[index] = fut;
    }
    try {
      (void)engine_->submit(make_item(in, in_bytes, out, out_bytes, std::move(label), device_memory));
    } catch (...) {
      std::lock_guard lk(mutex_);
      futures_.erase(index);  // refused before it was counted: nothing will resolve it
      nb::gil_scoped_acquire gil;
      Py_DECREF(fut);
      throw;
    }
    std::lock_guard lk(mutex_);
    ++next_index_;
  }

  // Prepares (MapItems) and submits in chunks that grow from one item, so the engine works
  // on the first items while later ones are prepared; the GIL is released while a chunk is
  // submitted. An item `prepare` refuses ends the submitting: the items before it run to
  // their end. Returns (base, accepted, error, results): base is the first item's engine
  // index; error is what `prepare` raised for item `accepted` (None: every item went in);
  // results are the accepted items' result tuples in order when `all_results`, else only
  // the first item not done (or none).
  nb::tuple map(nb::list inputs, nb::list outputs, nb::callable prepare, nb::callable output_for, bool all_results) {
    require_open();
    refuse_on_own_thread("map()");
    refuse_inside_map("map()");
    MapItems items(std::move(inputs), std::move(outputs), std::move(prepare), std::move(output_for));
    const std::size_t n = items.size();
    std::vector<std::optional<ItemResult>> results(n);
    std::unique_lock submitting(submit_mutex_, std::defer_lock);
    std::size_t base = 0, accepted = 0;
    {
      nb::gil_scoped_release release;
      submitting.lock();
      mapping_thread_ = std::this_thread::get_id();
      {
        std::lock_guard lk(mutex_);
        base = next_index_;
        map_ = MapTarget{base, &results};
      }
      engine_->expect(n);  // a map's length is known: no slow member holds its end
    }
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
    std::vector<pipeline::Item> chunk;
    for (std::size_t size = 1; accepted < n && !invalid && !refused && !signalled; size = std::min(2 * size, kMapChunk)) {
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
      for (std::size_t j = 0; j < chunk.size() && !signalled; ++j) {
        try {
          (void)engine_->submit(std::move(chunk[j]));
        } catch (...) {
          refused = std::current_exception();
          break;
        }
        {
          std::lock_guard lk(mutex_);
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
    {
      nb::gil_scoped_release release;
      if (refused || signalled || interrupted_in_prepare) engine_->cancel();
      engine_->flush();  // a last, partly filled batch goes now, not when more items come
      mapping_thread_ = std::thread::id{};
      submitting.unlock();
    }
    const bool interrupted = wait_for(base + accepted) || signalled;
    {
      std::lock_guard lk(mutex_);
      map_.reset();
    }
    if (interrupted) throw nb::python_error();
    if (interrupted_in_prepare) throw nb::python_error(std::move(*invalid));
    if (refused) std::rethrow_exception(refused);
    nb::list out;
    for (std::size_t k = 0; k < accepted; ++k) {
      if (all_results) {
        out.append(result_tuple(*results[k]));
      } else if (results[k]->status != pipeline::ItemStatus::done) {
        out.append(result_tuple(*results[k]));
        break;
      }
    }
    return nb::make_tuple(base, accepted, invalid ? nb::borrow(invalid->value()) : nb::none(), out);
  }

  nb::dict drain() {
    require_open();
    refuse_on_own_thread("drain()");
    std::size_t target = 0;
    {
      std::lock_guard lk(mutex_);
      target = next_index_;
    }
    {
      nb::gil_scoped_release release;
      engine_->flush();  // a partly filled batch would otherwise wait for items that never come
    }
    if (wait_for(target)) throw nb::python_error();
    pipeline::RunStats s;
    {
      nb::gil_scoped_release release;
      s = engine_->drain();
    }
    nb::dict d;
    d["submitted"] = s.submitted;
    d["done"] = s.done;
    d["failed"] = s.failed;
    d["cancelled"] = s.cancelled;
    d["staging_peak_bytes"] = s.staging_peak_bytes;
    return d;
  }

  void flush() {
    require_open();
    nb::gil_scoped_release release;
    engine_->flush();
  }
  void cancel() {
    require_open();
    nb::gil_scoped_release release;
    engine_->cancel();
  }

  // Waits for work in flight and stops the engine's threads; later calls raise.
  void close() {
    if (forked_) {
      (void)engine_.release();  // the parent's: its threads are not in this process
      return;
    }
    if (!engine_) return;
    refuse_on_own_thread("close()");
    refuse_inside_map("close()");
    {
      nb::gil_scoped_release release;  // delivery may need the GIL to resolve futures
      engine_.reset();
    }
    std::lock_guard lk(mutex_);
    for (auto& [index, fut] : futures_) Py_DECREF(fut);
    futures_.clear();
  }

  [[nodiscard]] std::string describe() const { return opened().describe(); }
  // Each member of the device set: (device, name, state, reason, lanes, joined_ms, start_ms, batches, items).
  [[nodiscard]] nb::list devices(bool wait) {
    require_open();
    std::vector<pipeline::DeviceReport> report;
    {
      nb::gil_scoped_release release;
      report = wait ? engine_->wait_until_started() : engine_->device_report();
    }
    nb::list out;
    for (const auto& d : report)
      out.append(nb::make_tuple(d.device == pipeline::kCpuDevice ? nb::object(nb::str("cpu")) : nb::object(nb::int_(d.device)),
                                d.name, pipeline::device_state_name(d.state), d.reason, d.lanes, d.joined_ms, d.start_ms,
                                d.batches, d.items));
    return out;
  }
  [[nodiscard]] std::string report_json() const {
    return nlohmann::json(const_cast<pipeline::Engine&>(opened()).timeline().report()).dump();
  }
  [[nodiscard]] std::string chrome_trace(const std::string& name) const {
    return const_cast<pipeline::Engine&>(opened()).timeline().chrome_trace(name).dump();
  }
  [[nodiscard]] std::string gantt_svg(const std::string& title) const {
    return const_cast<pipeline::Engine&>(opened()).timeline().gantt_svg(title);
  }
  [[nodiscard]] nb::list records() const {
    nb::list out;
    for (const auto& r : const_cast<pipeline::Engine&>(opened()).timeline().records())
      out.append(nb::make_tuple(pipeline::stage_name(r.stage), r.lane, r.first_item, r.items, r.start_ms, r.end_ms, r.bytes,
                                r.device));
    return out;
  }
  [[nodiscard]] bool closed() const noexcept { return !engine_; }

 private:
  struct MapTarget {
    std::size_t base;
    std::vector<std::optional<ItemResult>>* results;
  };

  static pipeline::Item make_item(std::uintptr_t in, std::size_t in_bytes, std::uintptr_t out, std::size_t out_bytes,
                                  std::string label, bool device_memory) {
    pipeline::Item item;
    item.in = {reinterpret_cast<const std::byte*>(in), in_bytes};
    item.out = {reinterpret_cast<std::byte*>(out), out_bytes};
    item.label = std::move(label);
    item.device_memory = device_memory;
    return item;
  }

  void require_open() const {
    if (forked_)
      throw std::runtime_error("this engine was started in the parent process before fork(): its threads do not "
                               "exist in this one; make a new Engine here");
    if (!engine_) throw std::invalid_argument("the engine is closed");
  }
  // `what` would wait for the engine to deliver, which on its own thread waits for itself.
  void refuse_on_own_thread(const char* what) const {
    if (engine_->on_own_thread())
      throw std::logic_error(fmt::format("{} from the engine's own thread (an on_complete callback or a host "
                                         "function) would wait for itself; call it once the callback has returned",
                                         what));
  }
  // map() runs Python code (an array's methods, a shape rule) while it holds the submission
  // lock; that code submitting to, mapping on or closing the same engine would wait for it.
  void refuse_inside_map(const char* what) const {
    if (mapping_thread_.load() == std::this_thread::get_id())
      throw std::logic_error(fmt::format("{} from Python code that this engine's map() runs while preparing its items "
                                         "(an array's methods, a shape rule) would wait for that map()",
                                         what));
  }
  [[nodiscard]] const pipeline::Engine& opened() const {
    require_open();
    return *engine_;
  }

  // On an engine thread, once per item. Never throws into the engine.
  void on_complete(const ItemResult& r) noexcept {
    PyObject* fut = nullptr;
    {
      std::lock_guard lk(mutex_);
      if (auto it = futures_.find(r.index); it != futures_.end()) {
        fut = it->second;
        futures_.erase(it);
      } else if (map_ && r.index >= map_->base && r.index - map_->base < map_->results->size()) {
        (*map_->results)[r.index - map_->base] = r;
      }
    }
    if (fut != nullptr) {
      nb::gil_scoped_acquire gil;
      try {
        resolver_(nb::handle(fut), result_tuple(r));
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("streampipe: resolving a future");
      } catch (const std::exception& e) {
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "streampipe: resolving a future failed: %s", e.what());
      }
      Py_DECREF(fut);
    }
    {
      std::lock_guard lk(mutex_);
      ++delivered_;
    }
    delivered_cv_.notify_all();
  }

  // Waits (GIL released) until `target` items were delivered, checking for signals every
  // 20 ms. Returns true when a signal handler raised (the Python error is set): the engine
  // is then cancelled and every item delivered before this returns.
  bool wait_for(std::size_t target) {
    bool interrupted = false;
    for (;;) {
      bool done = false;
      {
        nb::gil_scoped_release release;
        std::unique_lock lk(mutex_);
        done = delivered_cv_.wait_for(lk, std::chrono::milliseconds(20), [&] { return delivered_ >= target; });
      }
      if (done) return interrupted;
      if (!interrupted && !PyErr_Occurred() && PyErr_CheckSignals() != 0) {
        interrupted = true;
        nb::gil_scoped_release release;
        engine_->cancel();
      }
    }
  }

  nb::object resolver_;
  std::unique_ptr<pipeline::Engine> engine_;
  bool forked_ = false;
  std::mutex submit_mutex_;  // submissions in order, so our indices are the engine's
  std::mutex mutex_;
  std::condition_variable delivered_cv_;
  std::size_t next_index_ = 0;
  std::size_t delivered_ = 0;
  std::unordered_map<std::size_t, PyObject*> futures_;
  std::optional<MapTarget> map_;
  std::atomic<std::thread::id> mapping_thread_{};  // the thread whose map() holds submit_mutex_
};

void mark_forked_engines() noexcept {
  // The child's only thread forked while holding the mutex (the prepare handler).
  for (PyEngine* e : engines().live) e->forked();
  engines().mutex.unlock();
}

}  // namespace

void bind_engine(nb::module_& m) {
  using Options = pipeline::EngineOptions;
  // pipeline::EngineOptions itself, its defaults C++'s: the one owner of the engine's knobs
  // (the callback is the module's own).
  nb::class_<Options>(m, "EngineOptions", "pipeline::EngineOptions: where and how an engine runs (docs/engine.md).")
      .def(nb::init<>())
      .def_prop_rw("backend", [](const Options& o) { return std::string(pipeline::backend_name(o.backend)); },
                   [](Options& o, const std::string& b) { o.backend = pipeline::parse_backend(b); })
      .def_rw("devices", &Options::devices)
      .def_rw("simulate_gpus", &Options::simulate_gpus)
      .def_rw("rerun_on_device_loss", &Options::rerun_on_device_loss)
      .def_rw("lanes", &Options::lanes)
      .def_rw("cpu_lanes", &Options::cpu_lanes)
      .def_rw("depth", &Options::depth)
      .def_rw("batch_items", &Options::batch_items)
      .def_rw("batch_bytes", &Options::batch_bytes)
      .def_rw("staging_bytes", &Options::staging_bytes)
      .def_rw("use_graphs", &Options::use_graphs)
      .def_prop_rw("in_order", [](const Options& o) { return o.delivery == pipeline::Delivery::in_order; },
                   [](Options& o, bool in_order) {
                     o.delivery = in_order ? pipeline::Delivery::in_order : pipeline::Delivery::as_completed;
                   })
      .def_rw("host_threads", &Options::host_threads)
      .def_rw("record_timeline", &Options::record_timeline)
      .def_rw("expected_items", &Options::expected_items)
      .def_rw("gpu_start_ms", &Options::gpu_start_ms);

  nb::class_<PyEngine>(m, "Engine")
      .def(nb::init<const PyOperation&, const pipeline::EngineOptions&, nb::object>(), nb::arg("operation"),
           nb::arg("options"), nb::arg("resolver"))
      .def("submit", &PyEngine::submit, nb::arg("in_ptr"), nb::arg("in_bytes"), nb::arg("out_ptr"),
           nb::arg("out_bytes"), nb::arg("label"), nb::arg("device_memory"), nb::arg("future"))
      .def("map", &PyEngine::map, nb::arg("inputs"), nb::arg("outputs"), nb::arg("prepare"), nb::arg("output_for"),
           nb::arg("all_results"))
      .def("drain", &PyEngine::drain)
      .def("flush", &PyEngine::flush)
      .def("cancel", &PyEngine::cancel)
      .def("close", &PyEngine::close)
      .def_prop_ro("closed", &PyEngine::closed)
      .def("describe", &PyEngine::describe)
      .def("devices", &PyEngine::devices, nb::arg("wait"))
      .def("report_json", &PyEngine::report_json)
      .def("chrome_trace", &PyEngine::chrome_trace, nb::arg("process_name"))
      .def("gantt_svg", &PyEngine::gantt_svg, nb::arg("title"))
      .def("records", &PyEngine::records);
}

}  // namespace streampipe::python
