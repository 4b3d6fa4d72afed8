// SPDX-License-Identifier: Apache-2.0
// The pipeline engine over arrays from Python (engine.hpp): every call but map()
// (engine_map.cpp), the delivery of results, and the bindings.
#include "engine.hpp"

#include "item_result.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <pthread.h>

#include <chrono>
#include <stdexcept>
#include <utility>

namespace streampipe::python {
namespace {

using pipeline::ItemResult;

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

void mark_forked_engines() noexcept {
  // The child's only thread forked while holding the mutex (the prepare handler).
  for (PyEngine* e : engines().live) e->forked();
  engines().mutex.unlock();
}

pipeline::Item make_item(std::uintptr_t in, std::size_t in_bytes, std::uintptr_t out, std::size_t out_bytes,
                         std::string label, bool device_memory) {
  pipeline::Item item;
  item.in = {reinterpret_cast<const std::byte*>(in), in_bytes};
  item.out = {reinterpret_cast<std::byte*>(out), out_bytes};
  item.label = std::move(label);
  item.device_memory = device_memory;
  return item;
}

}  // namespace

PyEngine::PyEngine(const PyOperation& op, const pipeline::EngineOptions& options, nb::object resolver,
                   nb::callable output_for)
    : resolver_(std::move(resolver)), numpy_(std::move(output_for)) {
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

PyEngine::~PyEngine() {
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

void PyEngine::submit(std::uintptr_t in, std::size_t in_bytes, std::uintptr_t out, std::size_t out_bytes,
                      std::string label, bool device_memory, nb::object future, nb::object out_array,
                      nb::object keep, nb::object callback) {
  require_not_forked();
  const EngineLife::Use use(life_);
  refuse_inside_map("submit()");
  Pending pending{std::move(future), std::move(out_array), std::move(keep), std::move(callback)};
  enqueue(make_item(in, in_bytes, out, out_bytes, std::move(label), device_memory), pending);
}

bool PyEngine::submit_array(nb::handle array, nb::handle out, std::string label, nb::object future,
                            nb::object callback) {
  require_not_forked();
  const EngineLife::Use use(life_);
  refuse_inside_map("submit()");
  pipeline::Item item;
  nb::object made;
  if (!numpy_.take(array.ptr(), out.ptr(), item, made)) return false;
  item.label = std::move(label);
  Pending pending{std::move(future), made.is_valid() ? std::move(made) : nb::borrow(out), nb::borrow(array),
                  std::move(callback)};
  enqueue(std::move(item), pending);
  return true;
}

// Under a Use, with the GIL. `pending` is moved in once the item is counted; when the item
// is refused it is left to the caller, whose references are dropped under the GIL.
void PyEngine::enqueue(pipeline::Item item, Pending& pending) {
  const bool own_thread = engine_->on_own_thread();
  nb::gil_scoped_release release;
  // On the engine's own thread a submit may not wait, not even for another submitter
  // (which may be waiting for a slot that only this thread can free).
  std::unique_lock submitting(submit_mutex_, std::defer_lock);
  if (!own_thread) {
    submitting.lock();
  } else if (!submitting.try_lock()) {
    throw std::logic_error("submit() from the engine's own thread (an on_complete callback or a host function) "
                           "while another thread submits: it would wait for that thread, which may be waiting "
                           "for this one");
  }
  if (life_.closing()) throw std::invalid_argument("the engine is closed");
  std::size_t index = 0;
  {
    const std::lock_guard lk(mutex_);
    index = next_index_;
    pending_.emplace(index, std::move(pending));
  }
  try {
    (void)engine_->submit(std::move(item));
  } catch (...) {
    const std::lock_guard lk(mutex_);
    // Refused before it was counted: nothing will resolve it.
    if (auto node = pending_.extract(index)) pending = std::move(node.mapped());
    throw;
  }
  const std::lock_guard lk(mutex_);
  ++next_index_;
}

nb::dict PyEngine::drain() {
  require_not_forked();
  const EngineLife::Use use(life_);
  refuse_on_own_thread("drain()");
  std::size_t target = 0;
  {
    const std::lock_guard lk(mutex_);
    target = next_index_;
  }
  {
    nb::gil_scoped_release release;
    engine_->flush();  // a partly filled batch would otherwise wait for items that never come
  }
  if (wait_delivered(target)) throw nb::python_error();
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

void PyEngine::flush() {
  require_not_forked();
  const EngineLife::Use use(life_);
  nb::gil_scoped_release release;
  engine_->flush();
}

void PyEngine::cancel() {
  require_not_forked();
  const EngineLife::Use use(life_);
  nb::gil_scoped_release release;
  engine_->cancel();
}

void PyEngine::close() {
  if (forked_) {
    (void)engine_.release();  // the parent's: its threads are not in this process
    return;
  }
  if (life_.closing()) return;  // closed, or closing on another thread
  refuse_inside_map("close()");
  if (life_.used_here())
    throw std::logic_error("close() from Python code that one of this engine's calls runs (a signal handler while "
                           "it waits, a shape rule) would wait for that call");
  {
    std::optional<EngineLife::Use> use;
    try {
      use.emplace(life_);
    } catch (const std::invalid_argument&) {
      return;  // another thread began closing it since
    }
    refuse_on_own_thread("close()");  // the engine is alive while a Use is held
  }
  if (!life_.begin_close()) return;
  {
    nb::gil_scoped_release release;  // the calls in progress, and delivery, may need the GIL
    life_.wait_unused();
    engine_.reset();
  }
  life_.end_close();
  const std::lock_guard lk(mutex_);
  pending_.clear();  // every item was resolved; references left by a failure go here
}

std::string PyEngine::describe() {
  require_not_forked();
  const EngineLife::Use use(life_);
  return engine_->describe();
}

nb::list PyEngine::devices(bool wait) {
  require_not_forked();
  const EngineLife::Use use(life_);
  std::vector<pipeline::DeviceReport> report;
  {
    nb::gil_scoped_release release;
    report = wait ? engine_->wait_until_started() : engine_->device_report();
  }
  nb::list out;
  for (const auto& d : report) {
    nb::list per_unit;
    for (const double ms : d.ms_per_unit) per_unit.append(ms);
    out.append(nb::make_tuple(d.device == pipeline::kCpuDevice ? nb::object(nb::str("cpu")) : nb::object(nb::int_(d.device)),
                              d.name, pipeline::device_state_name(d.state), d.reason, d.lanes, d.joined_ms, d.start_ms,
                              d.setup_ms, d.batches, d.items, nb::tuple(per_unit)));
  }
  return out;
}

std::string PyEngine::gpus_left_out() {
  require_not_forked();
  const EngineLife::Use use(life_);
  return engine_->gpus_left_out();
}

std::string PyEngine::report_json() {
  require_not_forked();
  const EngineLife::Use use(life_);
  return nlohmann::json(engine_->timeline().report()).dump();
}

std::string PyEngine::chrome_trace(const std::string& name) {
  require_not_forked();
  const EngineLife::Use use(life_);
  return engine_->timeline().chrome_trace(name).dump();
}

std::string PyEngine::gantt_svg(const std::string& title) {
  require_not_forked();
  const EngineLife::Use use(life_);
  return engine_->timeline().gantt_svg(title);
}

nb::list PyEngine::records() {
  require_not_forked();
  const EngineLife::Use use(life_);
  nb::list out;
  for (const auto& r : engine_->timeline().records())
    out.append(nb::make_tuple(pipeline::stage_name(r.stage), r.lane, r.first_item, r.items, r.start_ms, r.end_ms, r.bytes,
                              r.device));
  return out;
}

// On an engine thread, once per item. Never throws into the engine.
void PyEngine::on_complete(const ItemResult& r) noexcept {
  Pending pending;
  bool wake = false;
  {
    const std::lock_guard lk(mutex_);
    if (auto it = pending_.find(r.index); it != pending_.end()) {
      pending = std::move(it->second);
      pending_.erase(it);
    } else {
      for (MapTarget* m : maps_) {
        if (r.index >= m->base && r.index - m->base < m->size) {
          (*m->results)[r.index - m->base] = r;
          wake = ++m->received >= m->wanted;
          break;
        }
      }
    }
    if (!pending.future.is_valid()) {
      ++delivered_;
      wake = wake || (!delivered_targets_.empty() && delivered_ >= *delivered_targets_.begin());
    }
  }
  if (pending.future.is_valid()) {
    {
      nb::gil_scoped_acquire gil;
      try {
        resolver_(pending.future, result_tuple(r), pending.out, pending.callback);
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("streampipe: resolving a future");
      } catch (const std::exception& e) {
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "streampipe: resolving a future failed: %s", e.what());
      }
      pending = Pending{};
    }
    const std::lock_guard lk(mutex_);
    ++delivered_;  // after the future: drain() returns with every future resolved
    wake = !delivered_targets_.empty() && delivered_ >= *delivered_targets_.begin();
  }
  if (wake) delivered_cv_.notify_all();
}

bool PyEngine::wait_delivered(std::size_t target) {
  {
    const std::lock_guard lk(mutex_);
    delivered_targets_.insert(target);
  }
  bool interrupted = false;
  try {
    interrupted = wait_until([&] { return delivered_ >= target; });
  } catch (...) {
    const std::lock_guard lk(mutex_);
    delivered_targets_.erase(delivered_targets_.find(target));
    throw;
  }
  const std::lock_guard lk(mutex_);
  delivered_targets_.erase(delivered_targets_.find(target));
  return interrupted;
}

bool PyEngine::wait_until(const std::function<bool()>& done) {
  bool interrupted = false;
  for (;;) {
    bool finished = false;
    {
      nb::gil_scoped_release release;
      std::unique_lock lk(mutex_);
      finished = delivered_cv_.wait_for(lk, std::chrono::milliseconds(20), done);
    }
    if (finished) return interrupted;
    if (!interrupted && !PyErr_Occurred() && PyErr_CheckSignals() != 0) {
      interrupted = true;
      nb::gil_scoped_release release;
      engine_->cancel();
    }
  }
}

void PyEngine::require_not_forked() const {
  if (forked_)
    throw std::runtime_error("this engine was started in the parent process before fork(): its threads do not "
                             "exist in this one; make a new Engine here");
}

// `what` would wait for the engine to deliver, which on its own thread waits for itself.
void PyEngine::refuse_on_own_thread(const char* what) const {
  if (engine_->on_own_thread())
    throw std::logic_error(fmt::format("{} from the engine's own thread (an on_complete callback or a host "
                                       "function) would wait for itself; call it once the callback has returned",
                                       what));
}

// map() runs Python code (an array's methods, a shape rule) while it holds the submission
// lock; that code submitting to, mapping on or closing the same engine would wait for it.
void PyEngine::refuse_inside_map(const char* what) const {
  if (mapping_thread_.load() == std::this_thread::get_id())
    throw std::logic_error(fmt::format("{} from Python code that this engine's map() runs while preparing its items "
                                       "(an array's methods, a shape rule) would wait for that map()",
                                       what));
}

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
      .def_rw("gpu_start_ms", &Options::gpu_start_ms)
      .def_rw("gpu_stop_ms", &Options::gpu_stop_ms);

  nb::class_<PyEngine>(m, "Engine")
      .def(nb::init<const PyOperation&, const pipeline::EngineOptions&, nb::object, nb::callable>(),
           nb::arg("operation"), nb::arg("options"), nb::arg("resolver"), nb::arg("output_for"))
      .def("submit", &PyEngine::submit, nb::arg("in_ptr"), nb::arg("in_bytes"), nb::arg("out_ptr"),
           nb::arg("out_bytes"), nb::arg("label"), nb::arg("device_memory"), nb::arg("future"), nb::arg("out"),
           nb::arg("keep"), nb::arg("callback").none())
      .def("submit_array", &PyEngine::submit_array, nb::arg("array"), nb::arg("out").none(), nb::arg("label"),
           nb::arg("future"), nb::arg("callback").none())
      .def("map", &PyEngine::map, nb::arg("inputs"), nb::arg("outputs"), nb::arg("prepare"), nb::arg("all_results"))
      .def("drain", &PyEngine::drain)
      .def("flush", &PyEngine::flush)
      .def("cancel", &PyEngine::cancel)
      .def("close", &PyEngine::close)
      .def_prop_ro("closed", &PyEngine::closed)
      .def("describe", &PyEngine::describe)
      .def("devices", &PyEngine::devices, nb::arg("wait"))
      .def("gpus_left_out", &PyEngine::gpus_left_out)
      .def("report_json", &PyEngine::report_json)
      .def("chrome_trace", &PyEngine::chrome_trace, nb::arg("process_name"))
      .def("gantt_svg", &PyEngine::gantt_svg, nb::arg("title"))
      .def("records", &PyEngine::records);
}

}  // namespace streampipe::python
