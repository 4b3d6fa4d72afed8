// SPDX-License-Identifier: Apache-2.0
#pragma once
// The gray tool's work: image files -> 8-bit grayscale files, through the pipeline engine.
// Each file (or group of files) is one item on the engine's device set: the CPU and every
// GPU by default. A host worker reads the file and prepares it for the member that takes
// the item: the CPU's decoder (libjpeg-turbo / libpng) to its gray values (a YCbCr JPEG's Y
// plane, decoded alone: Options::jpeg_luma; a gray image) or to 8-bit RGB (pixels.hpp), for
// the CPU's lanes or a GPU without nvJPEG in the run; the compressed JPEG for a GPU with
// nvJPEG, which decodes it on the lane (decode.hpp). The luma of RGB is BT.601 fixed point
// (ops::rgb_to_gray, equal to OpenCV's cvtColor(RGB2GRAY)) on whichever member runs it, and
// a host worker encodes the result (or the GPU did, Encode::gpu) and writes it atomically (temp file + rename;
// refused if it exists, unless `force`). A corrupt, truncated or unsupported file fails
// alone, named with its reason.
// The engine starts cold: the CPU's lanes convert files from the first moment while each GPU
// (its context, pools and nvJPEG's states) starts on a thread of its own and joins when
// ready; a run too short to repay a GPU's start ends on the CPU without starting one.
// A stop requested through Options::stop ends the run early: no file is started after it,
// files not yet on a device are cancelled, those further along are finished, and every
// output present is complete (no temporary file is left).

#include "streampipe/io/decode_limits.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/timeline.hpp"
#include "streampipe/tools/gray/decode.hpp"
#include "streampipe/tools/gray/plan.hpp"

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
  // "luma": the decoder gave its gray values (a JPEG's Y plane, decoded alone, or a gray
  // image); "rgb": it gave colour, whose luma the lanes computed. Empty until decoded.
  std::string decoded_to;
  std::string fallback;  // Decode::gpu: why the CPU decoded this file; empty when nvJPEG did
  bool cancelled = false;  // never converted: a stop was requested first (`error` says so)
  int device = -1;          // the GPU that converted it, pipeline::kCpuDevice, or -1: none
  double write_ms = 0;      // writing its output: temporary file, flushed to disk, renamed
};

// The engine's options as gray takes them by default: the CPU and every GPU, 4 lanes per
// GPU, a host worker per core. convert() fills in what is left at 0: the CPU's lanes (a
// quarter of the workers, at least 2), enough depth that every worker can stage a file
// while each lane holds one, and what a GPU's start costs (longer with nvJPEG's states):
// a run the CPU alone finishes sooner starts no GPU.
[[nodiscard]] pipeline::EngineOptions engine_defaults();

struct Options {
  io::ImageFormat format = io::ImageFormat::png;
  int jpeg_quality = 90;     // 1-100
  int png_compression = 1;   // 0-9; 1: up filter + run-length zlib, fast for photos (docs/image-io.md)
  bool force = false;        // replace existing outputs
  // gpu: baseline JPEGs through nvJPEG on the GPUs (needs it; progressive files, PNGs and
  // what else nvJPEG should not take are decoded on the host); cpu: the host decodes every
  // file. automatic: gpu wherever a GPU with nvJPEG may take files (this build has nvJPEG,
  // the backend is not the host's, a driver is installed), else cpu. With neither codec on
  // the GPU, Backend::automatic runs on the CPU alone: a GPU would only copy the luma
  // through (docs/gray.md).
  Decode decode = Decode::automatic;
  // gpu: outputs encoded on the GPUs, JPEG by nvJPEG, PNG by io::GpuPngEncoder (PNG at
  // compression 1 only, whose files it writes byte for byte); cpu: the host. automatic: as
  // for decode, and for PNG only at compression 1.
  Encode encode = Encode::automatic;
  // YCbCr JPEGs decoded to their Y plane alone (libjpeg-turbo and nvJPEG skip the chroma;
  // within a level of the luma of the RGB decode wherever no colour clips, docs/gray.md).
  // False: every file decoded to RGB, then its luma taken (equal to OpenCV's
  // cvtColor(RGB2GRAY) of the decoded RGB on every pixel).
  bool jpeg_luma = true;
  // With nvJPEG in the run: files per engine item, decoded in one call (0: chosen from the
  // files, the workers and the output format).
  int group = 0;
  io::DecodeLimits limits;  // checked from each file's header before it is decoded
  // Called once per file as it finishes (from engine threads, one call at a time), with the
  // number finished so far.
  std::function<void(const FileResult&, std::size_t finished)> on_file;
  // Requesting a stop cancels the files not started yet (FileResult::cancelled); the stop
  // callback runs on the requesting thread.
  std::stop_token stop;
  // Where the files run and with how many lanes, workers and slots (engine.host_threads
  // are the decode/encode workers; engine.backend and engine.devices the device set).
  pipeline::EngineOptions engine = engine_defaults();
};

// What one member of the device set did in a run.
struct DeviceShare {
  pipeline::DeviceReport device;  // its name, state and reason; joined_ms counts from convert()'s call
  std::size_t files = 0;          // files it converted
  double share = 0;               // of the run's converted files
  double images_per_s = 0;        // its files over the time from its joining to the run's end
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
  std::string backend;          // the members that converted files: "host", "gpu" or "host+gpu"
  std::string device;           // their names ("host", the GPUs' names)
  std::string engine;           // Engine::describe()
  int threads = 0;              // host workers, as resolved
  int lanes = 0;                // lanes per GPU, as resolved
  int cpu_lanes = 0;            // the CPU's lanes, as resolved (0: the CPU is not in the set)
  std::string decode;           // where JPEGs were decoded: "cpu", "gpu" or "cpu+gpu"
  std::string encode;           // where the outputs were encoded, likewise
  std::string encoder;          // with GPU encoding: "nvJPEG" (JPEG) or "GPU PNG encoder"; else empty
  std::string codecs;           // with nvJPEG on a GPU: its backend ("nvJPEG, 7 JPEG engines"); else empty
  std::size_t group = 1;        // files per engine item (nvJPEG batches a group's JPEGs)
  double setup_ms = 0;          // convert() called -> the engine ready to take the first file
  std::vector<DeviceShare> devices;  // each member of the set, the CPU first
  std::string gpus_left_out;    // why no GPU of the machine is in `devices` (Engine::gpus_left_out)
  std::size_t gpu_decoded = 0;  // files nvJPEG decoded
  std::map<std::string, std::size_t> fallbacks;  // Decode::gpu: files the CPU decoded, by reason
  std::map<std::string, std::size_t> decoded_to;  // converted files by FileResult::decoded_to
  std::vector<pipeline::StageRecord> records;  // the engine's timeline
  // Per file, in job order: the engine's result of its item (its group's).
  std::vector<pipeline::ItemResult> items;
  pipeline::TimelineReport timeline;

  [[nodiscard]] double images_per_s() const noexcept { return wall_ms > 0 ? static_cast<double>(ok) * 1e3 / wall_ms : 0; }
};

// Throws std::invalid_argument for bad options (quality, compression, threads, lanes, and
// Decode::gpu or Encode::gpu without nvJPEG or on the host backend) and whatever the
// engine throws for an unusable backend or device; failures of single files are in the
// summary instead.
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
