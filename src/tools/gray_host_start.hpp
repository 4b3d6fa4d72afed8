// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host threads that convert whole files while the engine starts (Options::host_start): each
// takes one file at a time from the run's cursor and reads, decodes, converts (the host
// luma, the same bytes as the engine's), encodes and writes it, until stop(). A file that
// fails fails alone, named with its reason, as in the engine.

#include "gray_file_cursor.hpp"

#include "streampipe/pipeline/timeline.hpp"
#include "streampipe/report/atomic_file.hpp"
#include "streampipe/tools/gray.hpp"

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace streampipe::tools::gray::detail {

class HostStart {
 public:
  // Called on the converting thread once a file is finished, converted or failed.
  using Finished = std::function<void(std::size_t file)>;

  // Starts `threads` (>= 1) threads at once. `files`, `options`, `cursor` and `finished`
  // must outlive this object.
  HostStart(std::span<FileResult> files, const Options& options, report::Overwrite overwrite, FileCursor& cursor,
            int threads, Finished finished);
  ~HostStart();  // stop(), then waits for the threads
  HostStart(const HostStart&) = delete;
  HostStart& operator=(const HostStart&) = delete;

  // No thread takes a file after this; the files being converted finish.
  void stop() noexcept;
  // Waits for every thread; rethrows the first error outside a file's own (memory, a callback).
  void join();

  // After join(): the files converted here, in the order they were taken, and their timeline
  // records (Timeline::now_ms): stage_in reading, decoding and the luma, stage_out encoding
  // and writing; first_item is the file's index, lane and device -1.
  [[nodiscard]] const std::vector<std::size_t>& files() const noexcept { return taken_; }
  [[nodiscard]] const std::vector<pipeline::StageRecord>& records() const noexcept { return records_; }

 private:
  void run() noexcept;
  void convert(std::size_t file);

  std::span<FileResult> files_;
  const Options& options_;
  report::Overwrite overwrite_;
  FileCursor& cursor_;
  Finished finished_;
  std::atomic<bool> stopped_{false};
  std::mutex mutex_;  // guards taken_, records_, error_
  std::vector<std::size_t> taken_;
  std::vector<pipeline::StageRecord> records_;
  std::exception_ptr error_;
  std::vector<std::jthread> threads_;
};

}  // namespace streampipe::tools::gray::detail
