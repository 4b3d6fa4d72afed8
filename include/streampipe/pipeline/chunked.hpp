// SPDX-License-Identifier: Apache-2.0
#pragma once
// One large host array processed in chunks: the classic "split the data, one stream per
// part". Records are the unit of division (a pixel of 3 bytes in and 1 out, a float in and
// out); a chunk holds chunk_records records, the last one the rest. Each chunk is an item
// of the engine, so chunks overlap across lanes and come back as soon as they are done.

#include "streampipe/pipeline/engine.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace streampipe::pipeline {

struct ChunkedRun {
  RunStats stats;
  std::size_t chunks = 0;
  std::size_t chunk_records = 0;
  std::vector<ItemResult> failures;  // one per failed or cancelled chunk
  [[nodiscard]] bool ok() const noexcept { return failures.empty(); }
};

// Throws std::invalid_argument when the spans do not divide into records or do not match
// each other (out must hold in.size() / in_record * out_record bytes), or chunk_records is 0.
ChunkedRun run_chunked(Engine& engine, std::span<const std::byte> in, std::size_t in_record,
                       std::span<std::byte> out, std::size_t out_record, std::size_t chunk_records);

template <typename In, typename Out>
ChunkedRun run_chunked(Engine& engine, std::span<const In> in, std::span<Out> out,
                       std::size_t chunk_elements, std::size_t in_per_record = 1,
                       std::size_t out_per_record = 1) {
  return run_chunked(engine, std::as_bytes(in), in_per_record * sizeof(In), std::as_writable_bytes(out),
                     out_per_record * sizeof(Out), chunk_elements / in_per_record);
}

}  // namespace streampipe::pipeline
