// SPDX-License-Identifier: Apache-2.0
#pragma once
// A Life run, the library call behind `streampipe life`: universes of one size stepped for a
// number of generations on GPUs or on the host backend, dealt by the engine's scheduler a
// chunk of generations at a time (each universe to the member expected to finish it first;
// its state copied in and out, from pinned memory with one GPU), with what happens along
// the way given to the caller (populations as they come, snapshots, a live frame), and
// under mpirun the job's universes gathered to rank 0.
// report.hpp turns the Summary into the table, the JSON and the latency report.
//
// run() is called on one thread, which also runs the callbacks; under mpirun every rank
// calls it once (it is collective). It throws what the devices and the kernels throw
// (CudaError, std::invalid_argument for a board no kernel takes, std::bad_alloc).

#include "streampipe/mpi/job.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "streampipe/report/latency_report.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/pattern.hpp"
#include "streampipe/tools/life/population_log.hpp"
#include "streampipe/tools/life/universe.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace streampipe::tools::life {

// How a run's GPUs step their universes: each GPU's share in one batch (the bit-packed
// kernel, one launch per up to 8 generations however many universes), or each universe on
// a lane (a stream) of its own (the byte kernels, and timed runs).
enum class Layout { batched, stream_each };

struct Options {
  std::uint32_t width = 256, height = 256;
  std::uint64_t generations = 100;
  Kernel kernel = Kernel::bit_packed;
  // Where the universes run: its backend, devices and simulate_gpus (device_set() below).
  // The run sets the rest: a lane per GPU's batch or per universe, one batch in flight.
  pipeline::EngineOptions engine;
  int universes = 1;         // of the whole job; seeds seed, seed + 1, ... by their place in it
  double density = 0.25;     // of the random fill (0 with a pattern: an empty background)
  std::uint64_t seed = 1;
  std::optional<Pattern> pattern;  // placed with its top-left cell at (x, y)
  std::uint32_t pattern_x = 0, pattern_y = 0;
  unsigned rows_per_thread = 0;    // the bit-packed kernel's; 0: sized by the GPU

  std::uint64_t snapshot_every = 0;  // on_snapshot for every universe at generation 0, K, 2K, ...
  bool live = false;                 // on_live after every generation
  // Every generation's populations are wanted: alone they come through on_generation as the
  // run goes; under mpirun rank 0 gets them in Summary::universes (gathered).
  bool every_population = false;
  bool timed = false;  // Summary::queries: one per generation of each universe (no batching then)
  const mpi::Job* job = &mpi::Job::single();
  std::stop_token stop;  // a stop ends the run between generations

  // Every universe's population at a generation, generations in order from 0 (alone only).
  std::function<void(std::uint64_t generation, std::span<const std::uint64_t> populations)> on_generation;
  // Universe `universe` (its place in the job) at `generation`.
  std::function<void(std::size_t universe, std::uint64_t generation, const Board& board)> on_snapshot;
  // Universe 0 of this process after a generation; the time it takes is output time.
  std::function<void(std::uint64_t generation, const Board& board, std::uint64_t population)> on_live;
};

struct UniverseOutcome {
  int runs_on = -1;  // the GPU (or simulated device, or rank) that ran it
  PopulationLog populations{false};
};

struct Summary {
  std::uint64_t generations = 0;  // stepped (fewer when interrupted)
  bool interrupted = false;
  // false on the ranks other than 0: their universes went to rank 0, which reports the job.
  // (Under mpirun an interrupted run gathers nothing and every rank has its own.)
  bool reports = true;
  std::vector<UniverseOutcome> universes;  // what this process reports, in job order
  double stepping_ms = 0;  // the slowest rank's under mpirun
  double output_ms = 0;    // snapshots and live frames
  pipeline::DeviceSet set; // what stepped (every rank's list under mpirun, each taking one)
  std::string where;       // "GPU 0 (NVIDIA H100 ...), bitpacked kernel, one batch per GPU"
  std::string device;      // the GPUs' names, or "none" on the host
  std::vector<std::pair<int, std::string>> gpus;  // this process's GPUs: index, name
  Layout layout = Layout::stream_each;
  std::vector<report::QueryRecord> queries;  // with Options::timed: ms from the run's start
};

// Where a run of `options` steps its universes: every GPU of its engine options' set, else
// the CPU (DeviceSet::unmixed: the GPUs and the host keep the states in different layouts,
// so they never share a run). Throws as DeviceSet::resolve.
[[nodiscard]] pipeline::DeviceSet device_set(const Options& options);

// The most lanes (streams) a GPU keeps busy in a run of `options`: one when its universes go
// in one batch (the bit-packed kernel, untimed), else one per universe, at most 64.
[[nodiscard]] int lanes_per_gpu(const Options& options) noexcept;

[[nodiscard]] Summary run(const Options& options);

// What run() holds on the host for `universes` universes of this process while it steps on
// `set` (device_set()): their states (a bit per cell with the bit-packed kernel on GPUs,
// else a byte) and room for a chunk's populations, in bytes (saturating). Allocates
// nothing: a caller may refuse a run that would not fit before it starts.
[[nodiscard]] std::uint64_t state_memory(const Options& options, const pipeline::DeviceSet& set,
                                         std::size_t universes);

}  // namespace streampipe::tools::life
