// SPDX-License-Identifier: Apache-2.0
// A Life run (see tools/life/run.hpp): the universes dealt by the engine's scheduler a chunk
// of generations at a time (universe_operation.hpp), on the GPUs or the host, with chunks
// sized by their measured time (chunk_rule.hpp) that end where the caller wants to see a
// board; then, under mpirun, gathered.

#include "streampipe/tools/life/run.hpp"

#include "chunk_rule.hpp"
#include "gather.hpp"
#include "universe_operation.hpp"
#include "universe_states.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/parts.hpp"
#include "streampipe/tools/life/random.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

namespace streampipe::tools::life {
namespace {

using Clock = std::chrono::steady_clock;

// Universes each on a stream of their own: at most this many streams per GPU.
constexpr int kMostLanesPerGpu = 64;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Where the run stepped, for the report's title: the GPUs and the kernel, or the host.
std::string where_of(const Options& o, const pipeline::DeviceSet& set, const std::vector<Device>& gpus,
                     Layout layout) {
  if (!set.on_gpus()) {
    std::string where = "host backend (CPU reference)";
    if (set.simulated) where += fmt::format(", universes dealt to {} simulated device(s)", set.gpus.size());
    return where;
  }
  std::vector<std::string> names;
  for (const auto& gpu : gpus) names.push_back(fmt::format("{} ({})", gpu.index(), gpu.name()));
  return fmt::format("{}, {} kernel{}",
                     gpus.size() == 1 ? "GPU " + names[0] : fmt::format("{} GPUs: {}", gpus.size(), fmt::join(names, ", ")),
                     to_string(o.kernel), layout == Layout::batched ? ", one batch per GPU" : "");
}

// The engine for a run: one lane per GPU whose batch holds that GPU's share of the universes
// (the bit-packed kernel steps them in one launch), or a lane per universe for the byte
// kernels (each on a stream of its own); on the host one lane, whose steps take every core.
pipeline::EngineOptions engine_options(const pipeline::DeviceSet& set, const std::vector<int>& gpus,
                                       std::size_t universes, std::size_t state_bytes, Layout layout) {
  pipeline::EngineOptions eo;
  eo.delivery = pipeline::Delivery::in_order;
  eo.depth = 1;
  eo.cpu_lanes = 1;
  eo.lanes = 1;
  eo.record_timeline = false;
  if (set.on_gpus()) {
    eo.backend = pipeline::Backend::gpu;
    eo.devices = gpus;
  } else if (set.simulated) {
    eo.backend = pipeline::Backend::gpu;
    eo.simulate_gpus = true;
    eo.devices = set.gpus;
  } else {
    eo.backend = pipeline::Backend::host;
  }
  const std::size_t members = std::max<std::size_t>(1, eo.devices.size());
  const std::size_t share = (universes + members - 1) / members;
  if (layout == Layout::batched) {
    eo.batch_items = static_cast<int>(share);
    eo.batch_bytes = std::max<std::size_t>(eo.batch_bytes, share * state_bytes + 1);
  } else if (set.on_gpus()) {
    eo.lanes = static_cast<int>(std::clamp<std::size_t>(share, 1, kMostLanesPerGpu));
  }
  return eo;
}

// Every universe's first state (a random fill, or the pattern on its background) and its
// population, made on the host on every core: universes at once, and for fewer universes
// than cores, blocks of rows of each at once.
void first_states(const Options& o, std::size_t first, const detail::UniverseShape& shape,
                  detail::UniverseStates& states, std::vector<std::uint64_t>& populations) {
  const std::size_t count = states.size();
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t blocks = o.pattern ? 1 : std::min<std::size_t>((cores + count - 1) / count, o.height);
  std::vector<std::uint64_t> live(count * blocks, 0);
  const std::uint64_t threshold = density_threshold(o.density);
  std::vector<std::jthread> threads;
  pipeline::PartQueue parts(static_cast<int>(std::min(count * blocks, cores)) - 1,
                            [&threads](std::function<void()> f) { threads.emplace_back(std::move(f)); });
  parts.run(count * blocks, [&](std::size_t part) {
    const std::size_t k = part / blocks, block = part % blocks;
    if (o.pattern) {
      Board board = random_board(o.width, o.height, o.density, o.seed + first + k);
      place(board, *o.pattern, o.pattern_x, o.pattern_y);
      live[part] = board.population();
      const std::vector<std::uint64_t> state = detail::to_state(board, shape);
      std::copy(state.begin(), state.end(), states.state(k).begin());
      return;
    }
    const auto row = [&](std::size_t b) { return static_cast<std::uint32_t>(o.height * b / blocks); };
    live[part] = detail::fill_random_rows(states.state(k), shape, o.seed + first + k, threshold, row(block),
                                          row(block + 1));
  });
  for (std::size_t k = 0; k < count; ++k) {
    populations[k] = 0;
    for (std::size_t b = 0; b < blocks; ++b) populations[k] += live[k * blocks + b];
  }
}

// Chunks on GPUs start at 16 generations and aim at half a second each: a chunk moves every
// state to its GPU and back and waits for the slowest universe. On the host they start at
// one generation (a large board's may take long) and aim at 100 ms: a host chunk moves
// nothing over a link, so short ones cost little, and a stop is taken sooner. A timed run
// steps one generation per item.
detail::ChunkRule chunk_rule(const Options& o, bool on_gpus, std::size_t universes) {
  detail::ChunkRule rule;
  rule.most = o.timed ? 1 : detail::most_generations(universes);
  rule.first = on_gpus ? 16 : 1;
  rule.target_ms = on_gpus ? 500 : 100;
  return rule;
}

// The universes' shape: in the GPUs' kernel's layout, or a byte per cell on the host.
detail::UniverseShape shape_of(const Options& o, bool on_gpus) {
  return {o.width,
          o.height,
          o.kernel,
          on_gpus ? detail::layout_of(o.kernel) : detail::StateLayout::bytes,
          o.rows_per_thread,
          std::max(1u, std::thread::hardware_concurrency())};
}

[[noreturn]] void fail_with(const pipeline::ItemResult& r) {
  if (r.exception) std::rethrow_exception(r.exception);
  throw std::runtime_error(r.error.empty() ? fmt::format("{} did not finish", r.label) : r.error);
}

}  // namespace

int lanes_per_gpu(const Options& o) noexcept {
  if (o.kernel == Kernel::bit_packed && !o.timed) return 1;
  return static_cast<int>(std::clamp(o.universes, 1, kMostLanesPerGpu));
}

pipeline::DeviceSet device_set(const Options& o) {
  pipeline::EngineOptions asked = o.engine;
  asked.lanes = lanes_per_gpu(o);
  pipeline::request_lane_queues(asked);  // resolving the set starts CUDA
  return pipeline::DeviceSet::resolve(o.engine.backend, o.engine.devices, o.engine.simulate_gpus, true, true).unmixed();
}

Summary run(const Options& o) {
  const mpi::Job& job = *o.job;
  Summary summary;
  summary.set = device_set(o);
  const pipeline::DeviceSet& set = summary.set;
  const bool on_gpus = set.on_gpus();
  // Under mpirun this rank's universes, on its node-local GPU; alone, all of them.
  const auto share = job.shard(static_cast<std::size_t>(o.universes));
  const std::vector<int> dealt_to = on_gpus ? job.local_devices(set.gpus) : set.gpus;
  std::vector<Device> gpus;
  for (const int index : on_gpus ? dealt_to : std::vector<int>{}) gpus.emplace_back(index);
  const std::size_t count = share.size();
  // Timing one generation of one universe takes an item each.
  summary.layout = on_gpus && o.kernel == Kernel::bit_packed && !o.timed ? Layout::batched : Layout::stream_each;
  const detail::UniverseShape shape = shape_of(o, on_gpus);
  const std::size_t state_bytes = detail::state_bytes(shape);

  const detail::ChunkRule rule = chunk_rule(o, on_gpus, count);
  std::vector<Clock::time_point> submitted(count);
  std::vector<pipeline::ItemResult> results(count);
  pipeline::EngineOptions eo = engine_options(set, dealt_to, count, state_bytes, summary.layout);
  std::size_t first_index = 0;  // the engine's index of this chunk's first item
  Clock::time_point t0;
  bool warming = false;  // the states' pass before the clock
  eo.on_complete = [&](const pipeline::ItemResult& r) {
    const std::size_t k = r.index - first_index;
    results.at(k) = r;
    if (!o.timed || warming) return;
    const double begin = ms_between(t0, submitted[k]), end = ms_between(t0, Clock::now());
    report::QueryRecord q;
    q.submit_ms = q.enqueue_begin_ms = begin;
    q.enqueue_end_ms = begin + r.timing.queued_ms + r.timing.stage_in_ms + r.timing.enqueue_ms;
    q.complete_ms = end;
    if (on_gpus) q.compute_ms = r.timing.compute_ms;
    summary.queries.push_back(q);
  };
  // The engine first: its GPUs start on threads of their own while this one makes the
  // states. A rank with no universes starts no GPU.
  std::optional<pipeline::Engine> engine;
  const std::size_t batch = summary.layout == Layout::batched ? static_cast<std::size_t>(eo.batch_items) : 1;
  if (count > 0) engine.emplace(detail::universe_operation(shape, batch, rule.most), eo);
  detail::UniverseStates states(count, shape, rule.most);
  std::vector<PopulationLog> populations;
  std::vector<int> runs_on(count, job.several() && !on_gpus ? job.info().rank : -1);
  const bool keep_populations = o.every_population && job.several();
  {
    std::vector<std::uint64_t> first(count);
    first_states(o, share.begin, shape, states, first);
    for (std::size_t k = 0; k < count; ++k) {
      populations.emplace_back(keep_populations);
      populations.back().add(first[k]);
      if (o.snapshot_every > 0 && o.on_snapshot)
        o.on_snapshot(share.begin + k, 0, detail::to_board(states.state(k), shape));
    }
  }
  const bool stream_rows = o.every_population && !job.several() && o.on_generation;
  std::vector<std::uint64_t> generation_row(count);
  if (stream_rows) {
    for (std::size_t k = 0; k < count; ++k) generation_row[k] = populations[k].last();
    o.on_generation(0, generation_row);
  }
  // With one GPU the states are pinned, so that the engine copies them where they are.
  // With several they stay pageable: the engine then stages each GPU's batch on a worker of
  // its own, which also enqueues it; from pinned memory this thread would enqueue every
  // GPU's chunk, and a launch into a full queue would hold it on one GPU while the others
  // wait.
  if (engine && gpus.size() == 1) {
    const CurrentDeviceGuard current(gpus.front());
    states.pin();
  }
  // Every universe stepped `n` generations from `from` (none: its state passes through).
  const auto run_chunk = [&](std::uint64_t n, std::uint64_t from) {
    for (std::size_t k = 0; k < count; ++k) {
      pipeline::Item item;  // stepped in place: the output lies over the input
      item.in = states.input(k);
      item.out = states.output(k, n);
      item.work = n > 0 ? static_cast<double>(n) : 1.0;
      item.label = n > 0 ? fmt::format("universe {}, generations {}-{}", share.begin + k, from + 1, from + n)
                         : fmt::format("universe {}, passed through", share.begin + k);
      submitted[k] = Clock::now();
      (void)engine->submit(std::move(item));
    }
    engine->drain();
    first_index += count;
    for (const auto& r : results)
      if (!r.ok()) fail_with(r);
  };
  // The stepping clock starts once the GPUs have started, and once every state has passed
  // through a lane without a generation: a lane makes its device memory and its copies'
  // set-up on its first batch, a start as the GPU's own is.
  if (engine) (void)engine->wait_until_started();
  if (engine && on_gpus) {
    warming = true;
    run_chunk(0, 0);
    warming = false;
  }

  t0 = Clock::now();
  std::uint64_t done = 0;
  detail::ChunkTime last;
  while (done < o.generations && !o.stop.stop_requested() && count > 0) {
    const std::uint64_t until_board =
        o.live ? 1 : (o.snapshot_every > 0 ? o.snapshot_every - done % o.snapshot_every : 0);
    const std::uint64_t n = detail::next_chunk(rule, last, o.generations - done, until_board);
    const auto t_chunk = Clock::now();
    run_chunk(n, done);
    // Sized by the time the lanes stepped (their copies and waits are about the same
    // whatever the chunk's length); the wall clock where they did not time it.
    const double stepped_ms = detail::stepping_ms(results);
    last = {n, stepped_ms > 0 ? stepped_ms : ms_between(t_chunk, Clock::now())};
    std::vector<std::span<const std::uint64_t>> logs;
    for (std::size_t k = 0; k < count; ++k) logs.push_back(states.populations(k, n));
    std::uint64_t stepped = n;
    if (stream_rows)
      for (std::uint64_t j = 0; j < n; ++j) {
        for (std::size_t k = 0; k < count; ++k) generation_row[k] = logs[k][j];
        o.on_generation(done + j + 1, generation_row);
        if (o.stop.stop_requested()) {  // a stop ends the run at the generation it came after
          stepped = j + 1;
          break;
        }
      }
    for (std::size_t k = 0; k < count; ++k) {
      populations[k].add(logs[k].first(stepped));
      runs_on[k] = results[k].device >= 0 ? results[k].device : runs_on[k];
    }
    done += stepped;
    if (stepped < n) break;
    const auto t_out = Clock::now();
    const bool snapshot = o.snapshot_every > 0 && done % o.snapshot_every == 0;
    if (snapshot && o.on_snapshot)
      for (std::size_t k = 0; k < count; ++k)
        o.on_snapshot(share.begin + k, done, detail::to_board(states.state(k), shape));
    if (o.live && o.on_live) o.on_live(done, detail::to_board(states.state(0), shape), populations[0].last());
    summary.output_ms += ms_between(t_out, Clock::now());
  }
  summary.interrupted = o.stop.stop_requested();
  summary.generations = done;
  summary.stepping_ms = std::max(ms_between(t0, Clock::now()) - summary.output_ms, 1e-6);
  summary.where = where_of(o, set, gpus, summary.layout);
  for (const auto& gpu : gpus) {
    summary.gpus.emplace_back(gpu.index(), gpu.name());
    summary.device += (summary.device.empty() ? "" : ", ") + gpu.name();
  }
  if (!on_gpus) summary.device = "none";
  if (summary.interrupted && job.several()) return summary;  // every rank was sent the signal
  for (std::size_t k = 0; k < count; ++k) summary.universes.push_back({runs_on[k], std::move(populations[k])});
  if (job.several()) {
    std::optional<JobLife> gathered =
        gather_life(job, summary.universes, summary.stepping_ms, summary.output_ms, summary.where);
    summary.reports = gathered.has_value();
    summary.universes.clear();
    if (!gathered) return summary;
    summary.universes = std::move(gathered->universes);
    summary.stepping_ms = gathered->stepping_ms;
    summary.output_ms = gathered->output_ms;
    summary.where = gathered->where;
  }
  return summary;
}

std::uint64_t state_memory(const Options& o, const pipeline::DeviceSet& set, std::size_t universes) {
  return detail::UniverseStates::block_bytes(universes, shape_of(o, set.on_gpus()),
                                             chunk_rule(o, set.on_gpus(), universes).most);
}

}  // namespace streampipe::tools::life
