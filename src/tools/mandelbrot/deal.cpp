// SPDX-License-Identifier: Apache-2.0
// A part of the image through the engine, a band per item (see tools/mandelbrot/bands.hpp).
#include "streampipe/tools/mandelbrot/bands.hpp"

#include "timing.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::tools::mandelbrot {
namespace {

// The member of `report` that ran lane `lane`: lanes are numbered member after member, in
// the report's order; report.size() for a lane of none.
std::size_t member_of_lane(const std::vector<pipeline::DeviceReport>& report, int lane) {
  int first = 0;
  for (std::size_t m = 0; m < report.size(); ++m) {
    if (lane >= first && lane < first + report[m].lanes) return m;
    first += report[m].lanes;
  }
  return report.size();
}

// What each member computed, from the bands' results.
std::vector<DeviceShare> shares(const std::vector<pipeline::DeviceReport>& report,
                                const std::vector<pipeline::ItemResult>& results, const std::vector<RowBand>& bands) {
  std::vector<DeviceShare> out;
  for (const auto& m : report)
    out.push_back({.device = m.device,
                   .simulated = m.simulated,
                   .name = m.name,
                   .state = pipeline::device_state_name(m.state),
                   .reason = m.reason});
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::size_t m = member_of_lane(report, results[i].lane);
    if (m == out.size()) continue;
    ++out[m].bands;
    out[m].rows += bands[i].rows;
  }
  return out;
}

[[noreturn]] void fail_with(const pipeline::ItemResult& r) {
  if (r.exception) std::rethrow_exception(r.exception);
  throw std::runtime_error(r.error.empty() ? fmt::format("band {} ({}) did not finish", r.index, r.label) : r.error);
}

}  // namespace

BandsRun compute_bands(pipeline::Operation op, pipeline::EngineOptions options, const Params& p, RowBand part) {
  p.validate();
  if (part.first_row > p.height || part.rows > p.height - part.first_row)
    throw std::invalid_argument(fmt::format("rows {}+{} leave a {}-row image", part.first_row, part.rows, p.height));
  BandsRun run;
  run.counts.resize(std::size_t{part.rows} * p.width);
  if (part.rows == 0) return run;

  // The bands are cut for every lane of the set. GPUs the engine will find count as one:
  // counting them would start CUDA (0.1-0.4 s) in a run the CPU may well finish alone, and
  // a GPU's lanes go through their bands far faster than the CPU's lane anyway.
  pipeline::request_lane_queues(options);  // named GPUs are counted now
  const pipeline::DeviceSet set =
      pipeline::DeviceSet::resolve(options.backend, options.devices, options.simulate_gpus, static_cast<bool>(op.host),
                                   static_cast<bool>(op.device));
  const std::size_t gpus = set.find_gpus ? 1 : set.gpus.size();
  const auto cpu_lanes = static_cast<std::size_t>(options.cpu_lanes > 0 ? options.cpu_lanes : options.lanes);
  const std::size_t lanes = (set.cpu ? cpu_lanes : 0) + gpus * static_cast<std::size_t>(options.lanes);
  std::vector<RowBand> bands = split_rows(part.rows, band_count(part.rows, lanes));
  for (auto& b : bands) b.first_row += part.first_row;

  std::vector<pipeline::ItemResult> results(bands.size());
  options.expected_items = bands.size();
  options.on_complete = [&results](const pipeline::ItemResult& r) { results.at(r.index) = r; };
  std::vector<pipeline::StageRecord> records;
  std::vector<pipeline::DeviceReport> report;
  {
    pipeline::Engine engine(std::move(op), options);
    for (const RowBand& b : bands) {
      pipeline::Item item;
      item.in = std::as_bytes(std::span(&b, 1));
      const std::size_t first = std::size_t{b.first_row - part.first_row} * p.width;
      item.out = std::as_writable_bytes(std::span(run.counts).subspan(first, std::size_t{b.rows} * p.width));
      item.label = fmt::format("rows {}-{}", b.first_row, b.first_row + b.rows - 1);
      (void)engine.submit(std::move(item));
    }
    engine.drain();
    records = engine.timeline().records();
    report = engine.device_report();
    run.engine = engine.describe();
  }
  for (const auto& r : results)
    if (!r.ok()) fail_with(r);

  for (std::size_t i = 0; i < bands.size(); ++i) {
    const auto& r = results[i];
    run.bands.push_back({r.device, bands[i], r.timing.compute_ms, r.timing.d2h_ms});
    run.gpu_ran = run.gpu_ran || (r.device >= 0 && !set.simulated);
  }
  run.devices = shares(report, results, bands);
  const PartTiming timing = part_timing(records, results, run.gpu_ran);
  run.compute_ms = timing.compute_ms;
  run.query = timing.query;
  return run;
}

}  // namespace streampipe::tools::mandelbrot
