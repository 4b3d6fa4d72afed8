// SPDX-License-Identifier: Apache-2.0
#include "soak/soak.hpp"

#include "soak/probe.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"
#include "streampipe/ops/affine.hpp"
#include "streampipe/ops/pipeline_ops.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <memory>
#include <optional>

namespace streampipe::bench::soak {
namespace {

using pipeline::Batch;
using pipeline::Engine;
using pipeline::Item;
using pipeline::ItemResult;
using pipeline::ItemStatus;

enum class Fault { none, operation, cuda, produce, consume };
// Span to span from pageable memory (batches); the same from pinned input on the GPU; produce
// and consume stages; a span input with a consume stage.
enum class Kind { pageable, pinned_in, stages, span_consume };

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Which item gets which fault: a function of the seed and the item's number over the whole
// run, so a failing run can be replayed.
struct Plan {
  std::uint64_t seed = 1;
  double rate = 0;
  bool gpu = false;

  [[nodiscard]] Kind kind(std::size_t i) const { return static_cast<Kind>(mix(seed * 31 + i) % 4); }
  [[nodiscard]] Fault fault(std::size_t i) const {
    const std::uint64_t u = mix(seed ^ (i * 0xD1B54A32D192ED03ull));
    if (static_cast<double>(u >> 11) * 0x1.0p-53 >= rate) return Fault::none;
    Fault choices[4] = {Fault::operation};
    int n = 1;
    if (gpu) choices[n++] = Fault::cuda;
    if (kind(i) == Kind::stages) choices[n++] = Fault::produce;
    if (kind(i) == Kind::stages || kind(i) == Kind::span_consume) choices[n++] = Fault::consume;
    return choices[(u & 0xFFFF) % static_cast<std::uint64_t>(n)];
  }
};

// A few distinct inputs that the items cycle through, with their reference outputs.
struct Inputs {
  static constexpr std::size_t kCount = 64;
  std::vector<std::vector<float>> in, want;
  std::vector<PinnedBuffer<float>> pinned;  // GPU only: the pinned-input kind reads these

  Inputs(std::size_t max_floats, std::uint64_t seed, bool gpu) : in(kCount), want(kCount) {
    for (std::size_t k = 0; k < kCount; ++k) {
      in[k].resize(1 + mix(seed + 1000 + k) % max_floats);
      for (std::size_t j = 0; j < in[k].size(); ++j) in[k][j] = static_cast<float>((j * 13 + k) % 4096) * 0.25f;
      want[k].resize(in[k].size());
      ops::affine_host(in[k], want[k], 2.0f, 1.0f);
      if (gpu) {
        pinned.emplace_back(in[k].size());
        std::memcpy(pinned.back().data(), in[k].data(), in[k].size() * sizeof(float));
      }
    }
  }
};

// One item in flight: its output room, which item it is, and its future.
struct Entry {
  std::vector<float> out;
  std::size_t item = 0;
  std::size_t input = 0;
  std::optional<std::future<ItemResult>> future;
};

class Soak {
 public:
  Soak(const SoakOptions& o, const std::function<void(const std::string&)>& progress)
      : o_(o), progress_(progress), plan_{o.seed, o.failure_rate, o.backend == pipeline::Backend::gpu},
        inputs_(std::max<std::size_t>(1, o.max_item_bytes / sizeof(float)), o.seed, plan_.gpu),
        ring_(kRing) {
    for (auto& e : ring_) e.out.resize(std::max<std::size_t>(1, o.max_item_bytes / sizeof(float)));
  }

  SoakOutcome run() {
    if (plan_.gpu) {
      out_.device_name = Device(o_.device).properties().name;
      (void)device_used_bytes(o_.device);  // the runtime's own threads start here, before the count
    }
    // A warm-up engine first: pools fill and libraries start their threads before the count.
    const std::size_t warm = std::min<std::size_t>(2000, std::max<std::size_t>(o_.items / 50, 100));
    segment(0, warm, /*warmup=*/true);
    std::string name = std::move(out_.device_name);
    out_ = SoakOutcome{};  // the warm-up's items are not the run's
    out_.device_name = std::move(name);
    out_.threads_before = thread_count();
    out_.warmup_items = 0.1 * static_cast<double>(o_.items);
    const auto t0 = std::chrono::steady_clock::now();
    sample(0);
    const auto engines = static_cast<std::size_t>(o_.engines);
    const std::size_t per_engine = (o_.items + engines - 1) / engines;
    for (std::size_t begin = 0; begin < o_.items; begin += per_engine) {
      segment(begin, std::min(o_.items, begin + per_engine), false);
      out_.threads_after_max = std::max(out_.threads_after_max, thread_count());
    }
    out_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out_;
  }

 private:
  static constexpr std::size_t kRing = 1024;  // items in flight at most: far above lanes x depth x batch

  // Items [begin, end) of the run (or of the warm-up) through one engine of their own.
  void segment(std::size_t begin, std::size_t end, bool warmup) {
    calls_ = std::vector<std::atomic<std::uint8_t>>(end - begin);
    pipeline::EngineOptions eo;
    eo.backend = o_.backend;
    if (o_.backend == pipeline::Backend::gpu) eo.devices = {o_.device};
    eo.lanes = o_.lanes;
    eo.depth = o_.depth;
    eo.batch_items = o_.batch_items;
    // The timeline keeps every stage of every item by design (for traces and reports): off,
    // as for any long-running engine, or it would be the slope this run measures.
    eo.record_timeline = false;
    eo.on_complete = [this](const ItemResult& r) {
      if (r.index < calls_.size()) ++calls_[r.index];
    };
    engine_ = std::make_unique<Engine>(operation(begin), eo);
    const std::size_t sample_every = std::max<std::size_t>(1, o_.items / static_cast<std::size_t>(o_.samples));
    for (std::size_t i = begin; i < end; ++i) {
      Entry& e = ring_[i % kRing];
      settle(e);
      e.item = i;
      e.input = mix(o_.seed + 7 * i) % Inputs::kCount;
      std::fill_n(e.out.begin(), inputs_.in[e.input].size(), std::numeric_limits<float>::quiet_NaN());
      e.future = engine_->submit(make(i, e));
      if (!warmup && (i + 1) % sample_every == 0) sample(i + 1);
    }
    auto drained = std::async(std::launch::async, [this] { return engine_->drain(); });
    if (drained.wait_for(o_.item_timeout) != std::future_status::ready) {
      (void)new std::future<pipeline::RunStats>(std::move(drained));  // its destructor would wait for ever
      hang("drain()");
    }
    const pipeline::RunStats stats = drained.get();
    for (auto& e : ring_) settle(e);
    if (stats.submitted != end - begin) ++out_.faults.wrong_status;
    for (auto& c : calls_)
      if (c.load() != 1) ++out_.faults.callbacks;
    engine_.reset();
    if (warmup && out_.faults.total() > 0) throw std::runtime_error("the warm-up engine already got items wrong");
  }

  // The engine may be hung: it is left as it is (run_soak() leaks this object with it, so
  // that its threads never see freed memory) and the caller is told.
  [[noreturn]] void hang(const std::string& what) {
    ++out_.faults.unresolved;
    (void)engine_.release();
    throw SoakHang(fmt::format("{} did not return within {} s: the engine hangs", what, o_.item_timeout.count()));
  }

  // Checks the item in `e`, if any, against its plan; frees `e` for the next one.
  void settle(Entry& e) {
    if (!e.future) return;
    if (e.future->wait_for(o_.item_timeout) != std::future_status::ready)
      hang(fmt::format("the future of item {}", e.item));
    const ItemResult r = e.future->get();
    e.future.reset();
    const Fault f = plan_.fault(e.item);
    if (f != Fault::none) ++out_.injected;
    if (r.status == ItemStatus::done) {
      ++out_.done;
      const auto& want = inputs_.want[e.input];
      if (f != Fault::none) {
        ++out_.faults.wrong_status;
      } else if (std::memcmp(e.out.data(), want.data(), want.size() * sizeof(float)) != 0) {
        ++out_.faults.wrong_output;
      }
    } else if (r.status == ItemStatus::failed) {
      ++out_.failed;
      // Its own fault, or a fault of the operation on an item of its batch.
      if (f == Fault::none && r.error.find("operation 'affine' failed") == std::string::npos)
        ++out_.faults.wrong_status;
    } else {
      ++out_.faults.wrong_status;  // nothing cancels in a soak
    }
    ++out_.submitted;
  }

  // y = 2x + 1, failing a batch that holds an item with an operation fault. `base` turns the
  // engine's item indices into the run's.
  [[nodiscard]] pipeline::Operation operation(std::size_t base) const {
    pipeline::Operation op = ops::affine_operation(2.0f, 1.0f);
    const Plan plan = plan_;
    op.host = [plan, base, host = op.host](const Batch& b) {
      for (std::size_t k = 0; k < b.size(); ++k)
        if (plan.fault(base + b.index(k)) == Fault::operation) throw std::runtime_error("injected operation failure");
      host(b);
    };
    op.device = [plan, base, device = op.device](const Batch& b) {
      for (std::size_t k = 0; k < b.size(); ++k) {
        const Fault f = plan.fault(base + b.index(k));
        if (f == Fault::operation) throw std::runtime_error("injected operation failure");
        if (f == Fault::cuda)  // a copy to a null pointer: cudaErrorInvalidValue, not sticky
          SP_CUDA_CHECK(cudaMemcpyAsync(nullptr, b.in(), 16, cudaMemcpyDeviceToDevice, b.stream().handle()));
      }
      device(b);
    };
    return op;
  }

  [[nodiscard]] Item make(std::size_t i, Entry& e) const {
    const Fault f = plan_.fault(i);
    const std::vector<float>& in = inputs_.in[e.input];
    const std::size_t bytes = in.size() * sizeof(float);
    Item item;
    item.label = fmt::format("soak-{}", i);
    float* out = e.out.data();
    const auto consume = [out, f](std::span<const std::byte> got) {
      if (f == Fault::consume) throw std::runtime_error("injected consume failure");
      std::memcpy(out, got.data(), got.size());
    };
    switch (plan_.kind(i)) {
      case Kind::pinned_in:
        if (plan_.gpu) {
          item.in = std::as_bytes(inputs_.pinned[e.input].span());
          item.out = std::as_writable_bytes(std::span<float>(out, in.size()));
          break;
        }
        [[fallthrough]];  // the host backend has no pinned memory: pageable
      case Kind::pageable:
        item.in = std::as_bytes(std::span<const float>(in));
        item.out = std::as_writable_bytes(std::span<float>(out, in.size()));
        break;
      case Kind::stages:
        item.produce = [&in, bytes, f](pipeline::StagingInput& staging) {
          if (f == Fault::produce) throw std::runtime_error("injected produce failure");
          std::memcpy(staging.allocate(bytes, bytes).data(), in.data(), bytes);
        };
        item.consume = consume;
        break;
      case Kind::span_consume:
        item.in = std::as_bytes(std::span<const float>(in));
        item.consume = consume;
        break;
    }
    return item;
  }

  void sample(std::size_t items) {
    const auto at = static_cast<double>(items);
    out_.rss.push_back({at, static_cast<double>(resident_bytes())});
    out_.pinned.push_back({at, static_cast<double>(pinned_bytes())});
    if (plan_.gpu) out_.device.push_back({at, static_cast<double>(device_used_bytes(o_.device))});
    if (items > 0 && items % std::max<std::size_t>(1, o_.items / 10) == 0)
      progress_(fmt::format("  {:>9} items  RSS {:8.1f} MiB  pinned {:7.1f} MiB{}", items,
                            out_.rss.back().value / 1048576.0, out_.pinned.back().value / 1048576.0,
                            plan_.gpu ? fmt::format("  device {:8.1f} MiB", out_.device.back().value / 1048576.0)
                                      : std::string()));
  }

  const SoakOptions& o_;
  const std::function<void(const std::string&)>& progress_;
  Plan plan_;
  Inputs inputs_;
  std::vector<Entry> ring_;
  std::vector<std::atomic<std::uint8_t>> calls_;  // the current engine's callbacks, per item
  std::unique_ptr<Engine> engine_;
  SoakOutcome out_;
};

}  // namespace

SoakOutcome run_soak(const SoakOptions& options, const std::function<void(const std::string&)>& progress) {
  if (options.items < 1000) throw std::invalid_argument("soak: at least 1000 items");
  if (!(options.failure_rate >= 0 && options.failure_rate <= 1))
    throw std::invalid_argument("soak: failure rate outside [0, 1]");
  if (options.engines < 1 || options.samples < 4 || options.max_item_bytes < sizeof(float))
    throw std::invalid_argument("soak: engines >= 1, samples >= 4 and items of at least 4 bytes");
  auto soak = std::make_unique<Soak>(options, progress);
  try {
    return soak->run();
  } catch (const SoakHang&) {
    (void)soak.release();  // a hung engine's threads may still use it
    throw;
  }
}

}  // namespace streampipe::bench::soak
