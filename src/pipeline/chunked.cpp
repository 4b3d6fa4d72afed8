// SPDX-License-Identifier: Apache-2.0
#include "streampipe/pipeline/chunked.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace streampipe::pipeline {

ChunkedRun run_chunked(Engine& engine, std::span<const std::byte> in, std::size_t in_record,
                       std::span<std::byte> out, std::size_t out_record, std::size_t chunk_records) {
  if (in.empty()) throw std::invalid_argument("run_chunked: the input is empty");
  if (in_record == 0 || out_record == 0) throw std::invalid_argument("run_chunked: record sizes must be positive");
  if (chunk_records == 0) throw std::invalid_argument("run_chunked: chunks must hold at least one record");
  if (in.size() % in_record != 0)
    throw std::invalid_argument(fmt::format("run_chunked: input of {} bytes is not a whole number of {}-byte records",
                                            in.size(), in_record));
  const std::size_t records = in.size() / in_record;
  if (out.size() != records * out_record)
    throw std::invalid_argument(fmt::format(
        "run_chunked: {} input records need an output of {} bytes ({} per record), got {}", records,
        records * out_record, out_record, out.size()));

  ChunkedRun run;
  run.chunk_records = chunk_records;
  std::vector<std::future<ItemResult>> futures;
  engine.expect((records + chunk_records - 1) / chunk_records);  // no slow member holds the end
  for (std::size_t first = 0; first < records; first += chunk_records) {
    const std::size_t n = std::min(chunk_records, records - first);
    Item item;
    item.in = in.subspan(first * in_record, n * in_record);
    item.out = out.subspan(first * out_record, n * out_record);
    item.label = fmt::format("chunk {} (records {}..{})", futures.size(), first, first + n - 1);
    futures.push_back(engine.submit(std::move(item)));
  }
  run.chunks = futures.size();
  run.stats = engine.drain();
  for (auto& f : futures) {
    auto r = f.get();
    if (!r.ok()) run.failures.push_back(std::move(r));
  }
  return run;
}

}  // namespace streampipe::pipeline
