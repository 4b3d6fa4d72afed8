// SPDX-License-Identifier: Apache-2.0
#include "gray_options.hpp"

#include "commands.hpp"
#include "memory_option.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"

#include "streampipe/io/decode_budget.hpp"
#include "streampipe/tools/gray/decode.hpp"

#include <fmt/format.h>

#include <memory>
#include <utility>

namespace streampipe::cli {

namespace gray = streampipe::tools::gray;

void add_gray_flags(CLI::App& app, GrayFlags& o) {
  app.add_option("inputs", o.inputs, "image files and folders")->required()->check(file_name())->type_name("FILE|DIR");
  app.add_option("-o,--output-dir,--output", o.output_dir, "write the images into DIR (created if needed)")
      ->required()
      ->check(file_name())
      ->type_name("DIR");
  app.add_flag("-r,--recursive", o.recursive, "take images from subfolders too");
  app.add_option("--format", o.format, "output format: png or jpeg")->capture_default_str()->type_name("FORMAT");
  app.add_option("--name", o.name,
                  "output file name from {stem} and {ext} of the input; the format's extension is added "
                  "(e.g. '{stem}.{ext}' keeps x.jpg and x.png apart)")
      ->capture_default_str()
      ->type_name("PATTERN");
  app.add_option("--quality", o.quality, "JPEG quality, 1-100")->capture_default_str()->transform(whole_number(1, 100))
      ->type_name("N");
  app.add_option("--compression", o.compression,
                  "PNG compression, 0-9: 0 stores, 1 is fastest and about as small on photos (docs/image-io.md)")
      ->capture_default_str()->transform(whole_number(0, 9))->type_name("N");
  app.add_flag("--force", o.force, "replace existing outputs (never the inputs)");
  add_allow_special_outputs(app, o.allow_special);
  app.add_option("--decode", o.decode,
                  "where JPEGs are decoded: auto (nvJPEG on the GPUs where one may take files, else the CPU), cpu, "
                  "or gpu (nvJPEG; docs/gray.md)")
      ->capture_default_str()
      ->type_name("WHERE");
  app.add_option("--encode", o.encode,
                  "where outputs are encoded: auto (as --decode; PNG at --compression 1 only), cpu, or gpu (JPEG: "
                  "nvJPEG; PNG: streampipe's own, --compression 1 only)")
      ->capture_default_str()
      ->type_name("WHERE");
  app.add_option("--max-pixels", o.max_pixels, "refuse images larger than N pixels, read from the header (0: no limit)")
      ->capture_default_str()
      ->transform(whole_number<std::uint64_t>())
      ->type_name("N");
  app.add_option("--group", o.group, "with nvJPEG: files per engine item (0: chosen from the run)")
      ->capture_default_str()->transform(whole_number(0, 256))->type_name("N");
  add_engine_options(app, o.engine, gray::engine_defaults(), "the GPUs the files are spread over (e.g. --devices 0,2)");
  // gray's GPUs work only on its codecs (convert.hpp): auto is the CPU alone when both are kept there.
  app.get_option("--backend")
      ->description("where the work runs: auto (the CPU and the GPUs; the CPU alone with --decode cpu --encode cpu), "
                    "gpu or host");
  add_max_memory_option(app, o.max_memory_mib);
  auto* quiet = app.add_flag("-q,--quiet", o.quiet, "print nothing but failures (no progress bar, no summary line)");
  app.add_flag("-v,--verbose", o.verbose,
                "print the full report: start-up, rate, the bound stage, every device and where the time went")
      ->excludes(quiet);
  app.add_option("--json", o.json_path, "write the summary and every file's result as JSON to FILE ('-': stdout)")
      ->check(file_name())
      ->type_name("FILE");
  app.add_option("--trace", o.trace_path, "write the engine timeline as a Chrome trace (Perfetto) to FILE")
      ->check(file_name())
      ->type_name("FILE");
  app.add_option("--gantt", o.gantt_path, "write the engine timeline as an SVG Gantt chart to FILE")
      ->check(file_name())
      ->type_name("FILE");
}

gray::Options gray_options(const GrayFlags& o) {
  const auto format = io::parse_image_format(o.format);
  if (!format) throw UsageError(fmt::format("--format '{}' is not png or jpeg", o.format));
  const auto decode = gray::parse_decode(o.decode);
  if (!decode) throw UsageError(fmt::format("--decode '{}' is not auto, cpu or gpu", o.decode));
  const auto encode = gray::parse_encode(o.encode);
  if (!encode) throw UsageError(fmt::format("--encode '{}' is not auto, cpu or gpu", o.encode));
  for (const auto& [asked, name] : {std::pair{*decode == gray::Decode::gpu, "--decode gpu"},
                                    std::pair{*encode == gray::Encode::gpu, "--encode gpu"}})
    if (asked && !gray::gpu_decode_available())
      throw UsageError(fmt::format("{}: nvJPEG is not available in this build; use cpu (host worker threads)", name));

  gray::Options go;
  go.format = *format;
  go.jpeg_quality = o.quality;
  go.png_compression = o.compression;
  go.force = o.force;
  go.group = o.group;
  go.decode = *decode;
  go.encode = *encode;
  if (go.encode == gray::Encode::gpu && go.format == io::ImageFormat::png && go.png_compression != 1)
    throw UsageError(fmt::format("--encode gpu writes PNG at --compression 1 (filter up, strategy fast), not {}; "
                                 "use --encode cpu for other levels",
                                 go.png_compression));
  go.limits.max_pixels = o.max_pixels;
  go.limits.raise_hint = "raise --max-pixels";
  go.engine = engine_options(o.engine, gray::engine_defaults());
  // The decoded images of all the threads together: half of the memory the run may take
  // (the rest: staging, the outputs being encoded, the run itself).
  if (const host::MemoryAvailable memory = memory_budget(o.max_memory_mib); memory.known)
    go.limits.budget = std::make_shared<io::DecodeBudget>(
        memory.bytes / 2, fmt::format("half of {}, {}", host::format_bytes(memory.bytes), memory.source));
  for (const auto& [asked, name] : {std::pair{go.decode == gray::Decode::gpu, "--decode gpu"},
                                    std::pair{go.encode == gray::Encode::gpu, "--encode gpu"}})
    if (asked && (go.engine.backend == pipeline::Backend::host || go.engine.simulate_gpus))
      throw UsageError(fmt::format("{}: nvJPEG runs on a GPU, and this run has none (--backend host); use cpu", name));
  return go;
}

}  // namespace streampipe::cli
