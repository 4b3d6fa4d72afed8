// SPDX-License-Identifier: Apache-2.0
// A Life run (see tools/life/run.hpp): the universes set up on their GPUs or the host, then
// stepped in chunks that end where the caller wants to see a board, then gathered.

#include "streampipe/tools/life/run.hpp"

#include "gather.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace streampipe::tools::life {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Universe {
  Board host;  // host backend, or the last downloaded state
  PopulationLog populations;
  int runs_on = -1;  // the GPU (or simulated device, or rank) it is dealt to
};

// Where the run stepped, for the report's title: the GPUs and the kernel, or the host.
std::string where_of(const Options& o, const std::vector<Device>& gpus, Layout layout) {
  if (!o.gpu) {
    std::string where = "host backend (CPU reference)";
    if (o.simulated) where += fmt::format(", universes dealt to {} simulated device(s)", o.devices.size());
    return where;
  }
  std::vector<std::string> names;
  for (const auto& gpu : gpus) names.push_back(fmt::format("{} ({})", gpu.index(), gpu.name()));
  return fmt::format("{}, {} kernel{}",
                     gpus.size() == 1 ? "GPU " + names[0] : fmt::format("{} GPUs: {}", gpus.size(), fmt::join(names, ", ")),
                     to_string(o.kernel), layout == Layout::batched ? ", one batch per GPU" : "");
}

}  // namespace

Summary run(const Options& o) {
  const mpi::Job& job = *o.job;
  Summary summary;
  // Under mpirun this rank's universes, on its node-local GPU; alone, all of them.
  const auto share = job.shard(static_cast<std::size_t>(o.universes));
  std::vector<int> dealt_to = o.devices;
  if (job.several() && o.gpu)
    dealt_to = {o.devices[static_cast<std::size_t>(
        mpi::local_device(job.info().local_rank, static_cast<int>(o.devices.size())))]};
  std::vector<Device> gpus;
  for (const int index : o.gpu ? dealt_to : std::vector<int>{}) gpus.emplace_back(index);
  // Universe i runs on devices[i % n]: universes are all the same size and step the same
  // generations, so dealing them out in turn balances the GPUs without measuring them.
  // Seeds and frames follow a universe's place in the whole job (share.begin + k).
  std::vector<Universe> universes;
  const bool keep_populations = o.every_population && job.several();
  for (std::size_t i = share.begin; i < share.end; ++i)
    universes.push_back({Board{}, PopulationLog(keep_populations),
                         dealt_to.empty() ? (job.several() ? job.info().rank : -1) : dealt_to[i % dealt_to.size()]});
  // Timing one generation of one universe needs a stream per universe.
  summary.layout = o.kernel == Kernel::bit_packed && !o.timed ? Layout::batched : Layout::stream_each;
  std::optional<DealtUniverses> on_gpus;
  if (o.gpu && !universes.empty()) {
    on_gpus.emplace(gpus, o.width, o.height, static_cast<std::uint32_t>(universes.size()), o.kernel, summary.layout);
    if (o.rows_per_thread != 0 && o.kernel == Kernel::bit_packed) on_gpus->set_rows_per_thread(o.rows_per_thread);
  }
  const bool see_boards = o.snapshot_every > 0 || o.live;
  for (std::size_t k = 0; k < universes.size(); ++k) {
    auto& u = universes[k];
    const std::uint64_t seed = o.seed + share.begin + k;
    const bool need_host_board = !o.gpu || o.pattern.has_value();
    if (need_host_board) {
      u.host = random_board(o.width, o.height, o.density, seed);
      if (o.pattern) place(u.host, *o.pattern, o.pattern_x, o.pattern_y);
    }
    if (on_gpus) {
      const auto index = static_cast<std::uint32_t>(k);
      if (need_host_board)
        on_gpus->upload(index, u.host);
      else
        on_gpus->fill_random(index, seed, o.density);
      u.populations.add(on_gpus->population(index));
      if (see_boards) u.host = on_gpus->download(index);
    } else {
      u.populations.add(u.host.population());
    }
    if (o.snapshot_every > 0 && o.on_snapshot) o.on_snapshot(share.begin + k, 0, u.host);
  }
  const bool stream_rows = o.every_population && !job.several() && o.on_generation;
  std::vector<std::uint64_t> generation_row(universes.size());
  if (stream_rows) {
    for (std::size_t k = 0; k < universes.size(); ++k) generation_row[k] = universes[k].populations.last();
    o.on_generation(0, generation_row);
  }

  // Generations run in chunks that end where a snapshot or a live frame is due. On the GPU
  // a chunk is also bounded, so that the device's population log stays small and a stop is
  // taken soon: it starts at 16 generations and doubles while one takes under 100 ms.
  const std::uint64_t chunk = o.live ? 1 : (o.snapshot_every > 0 ? o.snapshot_every : o.generations);
  std::uint64_t gpu_chunk = 16;
  std::uint64_t gpu_chunk_max = 65536;
  // Timed: each generation on the GPU holds an event pair until its chunk ends, so chunks
  // are bounded (one stream synchronization per chunk).
  if (o.timed && on_gpus) {
    gpu_chunk_max = std::max<std::uint64_t>(1, 65536 / std::max<std::size_t>(1, universes.size()));
    on_gpus->time_steps(true);
  }
  const auto t0 = Clock::now();
  const double origin_ms = std::chrono::duration<double, std::milli>(t0.time_since_epoch()).count();
  Board scratch;
  // Asked once: step_host would ask the system for every generation (0 threads).
  const unsigned host_threads = std::max(1u, std::thread::hardware_concurrency());
  std::uint64_t done = 0;
  while (done < o.generations && !o.stop.stop_requested()) {
    std::uint64_t n = std::min(chunk, o.generations - done);
    if (o.snapshot_every > 0) n = std::min(n, o.snapshot_every - done % o.snapshot_every);
    if (on_gpus) {
      n = std::min(n, gpu_chunk);
      const auto t_chunk = Clock::now();
      // Every GPU's chunk is enqueued before any is waited for: all of them busy at once.
      on_gpus->step(n);
      auto logs = on_gpus->populations();
      std::vector<std::vector<DeviceUniverse::StepTiming>> timings;
      if (o.timed) timings = on_gpus->step_timings();
      if (stream_rows)
        for (std::size_t j = 0; j < n; ++j) {
          for (std::size_t k = 0; k < universes.size(); ++k) generation_row[k] = logs[k][j];
          o.on_generation(done + j + 1, generation_row);
        }
      for (std::size_t k = 0; k < universes.size(); ++k) {
        universes[k].populations.add(logs[k]);
        if (o.timed)
          for (const auto& t : timings[k]) {
            report::QueryRecord q;
            q.submit_ms = q.enqueue_begin_ms = t.enqueue_begin_ms - origin_ms;
            q.enqueue_end_ms = t.enqueue_end_ms - origin_ms;
            q.complete_ms = t.done_ms - origin_ms;
            q.compute_ms = t.compute_ms;
            summary.queries.push_back(q);
          }
      }
      if (Clock::now() - t_chunk < std::chrono::milliseconds(100)) gpu_chunk = std::min(2 * gpu_chunk, gpu_chunk_max);
    } else {
      // Generation by generation over every universe, so that a stop finds them all at one.
      std::uint64_t g = 0;
      for (; g < n && !o.stop.stop_requested(); ++g) {
        for (std::size_t k = 0; k < universes.size(); ++k) {
          auto& u = universes[k];
          const double begin = o.timed ? ms_between(t0, Clock::now()) : 0.0;
          step_host(u.host, scratch, host_threads);
          std::swap(u.host, scratch);
          u.populations.add(u.host.population());
          generation_row[k] = u.populations.last();
          if (o.timed) summary.queries.push_back({begin, begin, begin, ms_between(t0, Clock::now()), {}, {}, {}, 1, 1});
        }
        if (stream_rows) o.on_generation(done + g + 1, generation_row);
      }
      n = g;
    }
    if (n == 0) break;
    done += n;
    const auto t_out = Clock::now();
    const bool snapshot = o.snapshot_every > 0 && done % o.snapshot_every == 0;
    if (snapshot || o.live)
      for (std::size_t k = 0; k < universes.size(); ++k) {
        auto& u = universes[k];
        if (on_gpus && (snapshot || k == 0)) u.host = on_gpus->download(static_cast<std::uint32_t>(k));
        if (snapshot && o.on_snapshot) o.on_snapshot(share.begin + k, done, u.host);
      }
    if (o.live && o.on_live && !universes.empty()) o.on_live(done, universes[0].host, universes[0].populations.last());
    summary.output_ms += ms_between(t_out, Clock::now());
  }
  summary.interrupted = o.stop.stop_requested();
  summary.generations = done;
  summary.stepping_ms = std::max(ms_between(t0, Clock::now()) - summary.output_ms, 1e-6);
  summary.where = where_of(o, gpus, summary.layout);
  for (const auto& gpu : gpus) {
    summary.gpus.emplace_back(gpu.index(), gpu.name());
    summary.device += (summary.device.empty() ? "" : ", ") + gpu.name();
  }
  if (!o.gpu) summary.device = "none";
  if (summary.interrupted && job.several()) return summary;  // every rank was sent the signal
  for (auto& u : universes) summary.universes.push_back({u.runs_on, std::move(u.populations)});
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

}  // namespace streampipe::tools::life
