// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gray tool's work: image files -> 8-bit grayscale files, through the pipeline engine.
// Each file is one item: a host worker decodes it into the staging memory as 8-bit RGB
// (gray_pixels.hpp), the lane converts it with ops::rgb_to_gray (BT.601 fixed point, equal to
// OpenCV's cvtColor(RGB2GRAY)) on the GPU or on the host backend, and a host worker encodes
// the result and writes it atomically (temp file + rename; refused if it exists, unless
// `force`). A corrupt, truncated or unsupported file fails alone, named with its reason.
// With Decode::gpu (the default where nvJPEG and a GPU are there), files go in groups, JPEGs
// are decoded by nvJPEG on the lanes instead, and with Encode::gpu JPEG outputs are encoded
// there too (gray_decode.hpp).
// While the engine starts (on a GPU: its context, pools and codec handles, a large part of a
// short run), host threads convert whole files, the same bytes as the host backend gives,
// taking them in job order; the engine takes the rest once it is ready (Options::host_start).
// A stop requested through Options::stop ends the run early: no file is started after it,
// files not yet on the device are cancelled, those further along are finished, and every
// output present is complete (no temporary file is left).

#include "streampipe/io/decode_limits.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/timeline.hpp"
#include "streampipe/tools/gray_decode.hpp"
#include "streampipe/tools/gray_plan.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

namespace streampipe::tools::gray {

struct FileResult {
  std::filesystem::path input;
  std::filesystem::path output;
  bool ok = false;
  std::string error;            // "<input>: <reason>" when it failed
  std::uint64_t bytes_in = 0;   // input file size
  std::uint64_t bytes_out = 0;  // output file size
  std::uint32_t width = 0, height = 0;
  int channels = 0, bit_depth = 0;  // as decoded (before the conversion to 8-bit RGB)
  std::string decoder;   // "gpu" (nvJPEG) or "cpu" once decoded
  std::string fallback;  // Decode::gpu: why the CPU decoded this file; empty when nvJPEG did
  bool cancelled = false;  // never converted: a stop was requested first (`error` says so)
  bool host_start = false;  // converted whole on a host thread while the engine started
  double write_ms = 0;      // writing its output: temporary file, flushed to disk, renamed
};

struct Options {
  io::ImageFormat format = io::ImageFormat::png;
  int jpeg_quality = 90;     // 1-100
  int png_compression = 1;   // 0-9; 1: up filter + run-length zlib, fast for photos (docs/image-io.md)
  bool force = false;        // replace existing outputs
  // gpu: needs nvJPEG (gpu_decode_available()) and the GPU backend; automatic: gpu when both are there.
  Decode decode = Decode::automatic;
  Encode encode = Encode::automatic;  // JPEG output; as `decode`
  pipeline::Backend backend = pipeline::Backend::automatic;
  std::vector<int> devices;  // the engine's device set (empty: every usable GPU); files spread over them
  int lanes = 0;    // per device; 0: 4 streams on the GPU; on the host backend, one per 4 threads (>= 2)
  int threads = 0;  // decode/encode workers; 0: the hardware threads
  // With nvJPEG in the run: files per engine item, decoded in one call (0: chosen from the
  // files, the workers and the output format).
  int group = 0;
  // `threads` host threads convert whole files (decode, luma, encode, write) while the
  // engine starts, and stop taking files once it is ready. Not with Decode::gpu or
  // Encode::gpu, which ask for every JPEG to go through nvJPEG. With Backend::automatic it
  // also keeps short runs (fewer than 100 files per thread) on the host, and stops the GPU's
  // start once these threads have taken every file (RunSummary::backend_note says which).
  bool host_start = true;
  io::DecodeLimits limits;  // checked from each file's header before it is decoded
  // Called once per file as it finishes (from engine threads, one call at a time), with the
  // number finished so far.
  std::function<void(const FileResult&, std::size_t finished)> on_file;
  // Requesting a stop cancels the files not started yet (FileResult::cancelled); the stop
  // callback runs on the requesting thread.
  std::stop_token stop;
};

struct RunSummary {
  std::vector<FileResult> files;  // in job order
  std::size_t ok = 0;
  std::size_t failed = 0;
  std::size_t cancelled = 0;    // not converted because a stop was requested
  std::uint64_t bytes_in = 0;   // file bytes of the inputs that were read
  std::uint64_t bytes_out = 0;  // file bytes written
  std::uint64_t pixels = 0;     // of the converted images
  double wall_ms = 0;           // first file taken to last file finished and flushed to disk
  double sync_ms = 0;           // ... of which the outputs flushed to disk after the last write
  std::string backend;          // "gpu" or "host"
  // Backend::automatic: why the run ended on the host although a GPU may be there (a short
  // run, or host threads that took every file before the GPU was ready); else empty.
  std::string backend_note;
  std::string device;           // the GPUs' names, or "host"
  std::string engine;           // Engine::describe()
  int threads = 0;              // host workers, as resolved
  int lanes = 0;                // lanes per device, as resolved
  std::string decode;           // "cpu" or "gpu", as resolved
  std::string encode;           // "cpu" or "gpu", as resolved (cpu for PNG output)
  std::string codecs;           // with nvJPEG: its backend ("nvJPEG, 7 JPEG engines"); else empty
  std::size_t group = 1;        // files per engine item (nvJPEG batches a group's JPEGs)
  double setup_ms = 0;          // convert() called -> first file taken (by the engine or a host-start thread)
  // convert() called -> the engine's parts ready, in the order they start: the GPUs found
  // (Backend::automatic: CUDA's initialization), nvJPEG's handles and lane states (0 without
  // them), the engine itself (GPU contexts, streams, pinned pools, workers).
  double gpus_found_ms = 0, codecs_ready_ms = 0, engine_ready_ms = 0;
  bool host_start = false;      // host threads converted files while the engine started (Options::host_start)
  std::size_t host_start_files = 0;  // ... this many
  std::size_t gpu_decoded = 0;  // files nvJPEG decoded
  std::map<std::string, std::size_t> fallbacks;  // Decode::gpu: files the CPU decoded, by reason
  std::vector<pipeline::StageRecord> records;  // the engine's timeline
  // Per file, in job order: the engine's result of its item (its group's); for a host-start
  // file one made alike, numbered after the engine's items, with device and lane -1.
  std::vector<pipeline::ItemResult> items;
  pipeline::TimelineReport timeline;

  [[nodiscard]] double images_per_s() const noexcept { return wall_ms > 0 ? static_cast<double>(ok) * 1e3 / wall_ms : 0; }
};

// Throws std::invalid_argument for bad options (quality, compression, threads, lanes, and
// Decode::gpu or Encode::gpu without nvJPEG or on the host backend) and
// whatever the engine throws for an unusable backend or device; failures of single files
// are in the summary instead.
[[nodiscard]] RunSummary convert(std::span<const Job> jobs, const Options& options);

// Where the time went, from the timeline records of one run.
struct TimeSplit {
  double wall_ms = 0;
  double decode_ms = 0, h2d_ms = 0, compute_ms = 0, d2h_ms = 0, encode_ms = 0;  // summed over items
  double decode_busy_ms = 0, encode_busy_ms = 0;  // union of intervals (some worker busy)
  double device_busy_ms = 0;  // union of H2D, compute and D2H intervals over all lanes
  [[nodiscard]] double device_share() const noexcept { return wall_ms > 0 ? device_busy_ms / wall_ms : 0; }
};
[[nodiscard]] TimeSplit split_time(std::span<const pipeline::StageRecord> records, double wall_ms);

}  // namespace streampipe::tools::gray
