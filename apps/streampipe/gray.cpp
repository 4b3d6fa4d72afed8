// SPDX-License-Identifier: Apache-2.0
// `streampipe gray INPUT... -o DIR`: PNG and JPEG files (or folders of them) to 8-bit
// grayscale with BT.601 luma (OpenCV's cvtColor rounding), on the engine's device set (the
// CPU and every GPU by default; tools::gray::convert). A bad file is reported with its name
// and reason, the others finish, exit 1.

#include "command_clock.hpp"
#include "commands.hpp"
#include "engine_options.hpp"
#include "gray_latency.hpp"
#include "gray_ranks.hpp"
#include "gray/gray_command_time.hpp"
#include "gray/gray_report.hpp"
#include "gray/gray_text.hpp"
#include "interrupt.hpp"
#include "json_text.hpp"
#include "memory_option.hpp"
#include "option_checks.hpp"
#include "outputs.hpp"
#include "ranks.hpp"
#include "report_option.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/report/json_schema.hpp"
#include "streampipe/io/decode_budget.hpp"
#include "streampipe/report/host_info.hpp"
#include "streampipe/tools/gray/convert.hpp"
#include "streampipe/tools/gray/plan.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <unistd.h>
#include <unordered_set>
#include <vector>

namespace streampipe::cli {
namespace {

namespace fs = std::filesystem;
namespace gray = streampipe::tools::gray;

struct GrayOptions {
  std::vector<std::string> inputs;
  std::string output_dir;
  bool recursive = false;
  std::string format = "png";
  int quality = 90;
  int compression = 1;  // the fastest compression: ~10x faster than 6 on photos, as small (docs/image-io.md)
  bool force = false;
  bool allow_special = false;
  std::string decode = "auto";
  std::string encode = "auto";
  EngineFlags engine;
  int group = 0;
  std::uint64_t max_pixels = io::DecodeLimits::kDefaultMaxPixels;
  bool quiet = false;
  bool verbose = false;
  std::string name{gray::kDefaultOutputName};
  std::string json_path;
  std::string trace_path;
  std::string gantt_path;
  std::uint64_t max_memory_mib = 0;
};

// One line on stderr, redrawn at most every 100 ms and at the end.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool enabled, std::string rank) : total_(total), enabled_(enabled), rank_(std::move(rank)) {}
  void file_done(const gray::FileResult& f, std::size_t finished) {
    if (!f.ok && !f.cancelled) {  // cancelled ones are counted in the summary, not listed
      ++failed_;
      if (enabled_) std::fputs("\r\033[K", stderr);
      say_failed(f);
    }
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (finished < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    constexpr std::size_t width = 30;
    const std::size_t filled = total_ ? finished * width / total_ : width;
    fmt::print(stderr, "\r\033[K[{:#<{}}{:<{}}] {}/{} files{}", "", filled, "", width - filled, finished, total_,
               failed_ ? fmt::format(", {} failed", failed_) : std::string());
    if (finished == total_) std::fputs("\n", stderr);
    std::fflush(stderr);
  }
  // After the run: the files that failed once every one had finished (their outputs could
  // not be flushed to disk), which no file_done() named. The summary counts every failure
  // as "named on stderr above": each is.
  void name_late_failures(const std::vector<gray::FileResult>& files) {
    for (const auto& f : files)
      if (!f.ok && !f.cancelled && named_.count(f.input.string()) == 0) say_failed(f);
  }

 private:
  void say_failed(const gray::FileResult& f) {
    named_.insert(f.input.string());
    fmt::print(stderr, "streampipe gray{}: {}\n", rank_, f.error);
  }

  std::size_t total_;
  bool enabled_;
  std::string rank_;  // " (rank N)" under mpirun
  std::size_t failed_ = 0;
  std::chrono::steady_clock::time_point last_{};
  std::unordered_set<std::string> named_;  // inputs whose failure was printed
};

int run_gray(const GrayOptions& o, const ReportOptions& report_options) {
  // The command's own clock: each step before the first file is part of what a user waits for.
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const auto t_run = Clock::now();
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
  go.limits.max_pixels = o.max_pixels;
  go.limits.raise_hint = "raise --max-pixels";
  const Ranks& ranks = Ranks::get();
  go.engine = engine_options(o.engine, gray::engine_defaults());
  const auto t_devices = Clock::now();
  // The decoded images of all the threads together: half of the memory the run may take
  // (the rest: staging, the outputs being encoded, the run itself).
  if (const report::MemoryAvailable memory = memory_budget(o.max_memory_mib); memory.known)
    go.limits.budget = std::make_shared<io::DecodeBudget>(
        memory.bytes / 2, fmt::format("half of {}, {}", report::format_bytes(memory.bytes), memory.source));
  for (const auto& [asked, name] : {std::pair{go.decode == gray::Decode::gpu, "--decode gpu"},
                                    std::pair{go.encode == gray::Encode::gpu, "--encode gpu"}})
    if (asked && (go.engine.backend == pipeline::Backend::host || go.engine.simulate_gpus))
      throw UsageError(fmt::format("{}: nvJPEG runs on a GPU, and this run has none (--backend host); use cpu", name));
  if (ranks.several() && (!o.gantt_path.empty() || report_options.wanted()))
    throw UsageError("--gantt and --report describe one process: under mpirun, --trace writes one trace with a row "
                     "per rank and --json one report of every rank");
  Outputs out(o.force, o.allow_special);
  Outputs::check_dir("-o", o.output_dir);

  gray::PlanOptions po;
  po.output_dir = o.output_dir;
  po.format = *format;
  po.recursive = o.recursive;
  po.name = o.name;
  po.force = true;  // existing outputs are checked below, after the inputs and the other outputs
  std::vector<fs::path> inputs(o.inputs.begin(), o.inputs.end());
  gray::Plan plan;
  try {
    plan = gray::plan(inputs, po);
  } catch (const gray::PlanError& e) {
    throw UsageError(e.what());
  }
  // Every output against every input and every other output, by what the paths lead to.
  for (const auto& job : plan.jobs) out.input("input", job.input.string());
  out.claim("--json", o.json_path);
  out.claim("--trace", o.trace_path);
  out.claim("--gantt", o.gantt_path);
  out.claim("--report-json", report_options.json_path);
  if (!o.force) {
    try {
      gray::check_existing_outputs(plan.jobs);
    } catch (const gray::PlanError& e) {
      throw UsageError(e.what());
    }
  }
  for (const auto& job : plan.jobs) out.claim_regular("-o", job.output.string());
  // Under mpirun each rank converts its shard; none writes before all have checked the
  // outputs, or one rank's new file would read as "exists" to another.
  const auto shard = report::shard_range(plan.jobs.size(), ranks.info().rank, ranks.info().size);
  const std::vector<gray::Job> jobs(plan.jobs.begin() + static_cast<std::ptrdiff_t>(shard.begin),
                                    plan.jobs.begin() + static_cast<std::ptrdiff_t>(shard.end));
  ranks.barrier();
  // Part of a tree that cannot be read fails the run, but not the files that can be.
  if (ranks.leader())
    for (const auto& why : plan.unreadable) fmt::print(stderr, "streampipe gray: {} (skipped)\n", why);

  ProgressBar bar(jobs.size(), !o.quiet && !ranks.several() && ::isatty(STDERR_FILENO) != 0, ranks.tag());
  go.on_file = [&bar](const gray::FileResult& f, std::size_t finished) { bar.file_done(f, finished); };
  bool interrupted = false;
  const auto t_convert = Clock::now();
  const gray::RunSummary s = [&] {
    // A first Ctrl-C finishes the files in flight; later (writing the JSON, which might
    // block on a FIFO) one ends the process at once.
    const interrupt::Graceful graceful;
    go.stop = graceful.token();
    gray::RunSummary summary = gray::convert(jobs, go);
    interrupted = go.stop.stop_requested();
    return summary;
  }();
  const auto t_done = Clock::now();
  bar.name_late_failures(s.files);
  bench::GrayCommandTime time;
  time.before_main_ms = command_start().before_ms;
  time.resolution_ms = command_start().resolution_ms;
  time.options_ms = ms(command_start().at, t_run);
  time.devices_ms = ms(t_run, t_devices);
  time.plan_ms = ms(t_devices, t_convert);
  time.convert_ms = ms(t_convert, t_done);
  time.setup_ms = s.setup_ms;
  if (interrupted) {
    out.print("gray: interrupted: {} of {} file(s) written, {} failed, {} not converted; every output present is "
              "complete{}\n",
              s.ok, jobs.size(), s.failed, s.cancelled,
              o.json_path.empty() && o.trace_path.empty() && o.gantt_path.empty() && report_options.json_path.empty()
                  ? ""
                  : " (no --json, --trace, --gantt or --report-json: they describe whole runs)");
    return interrupt::status();
  }
  if (ranks.several()) {
    const nlohmann::json common = {{"tool", "gray"},
                                   {"format", io::to_string(*format)},
                                   {"output_dir", o.output_dir},
                                   {"host", report::describe_host()},
                                   {"unreadable", plan.unreadable}};
    return finish_gray_ranks(ranks, s, s.failed > 0 || !plan.unreadable.empty() ? 1 : 0,
                             {o.json_path, o.trace_path, o.quiet, common}, out);
  }

  if (!o.quiet) {
    const bench::GrayRunText text{.files = jobs.size(),
                                  .unreadable = plan.unreadable.size(),
                                  .gpu_wanted = go.engine.backend != pipeline::Backend::host && !go.engine.simulate_gpus};
    out.print("{}", o.verbose ? bench::gray_full_report(s, time, text) : bench::gray_summary_line(s, time, text));
  }
  if (!o.trace_path.empty() || !o.gantt_path.empty()) {
    pipeline::Timeline timeline;
    for (const auto& r : s.records) timeline.add(r);
    if (!o.trace_path.empty()) out.write(o.trace_path, json_text(timeline.chrome_trace("streampipe gray"), -1));
    if (!o.gantt_path.empty())
      out.write(o.gantt_path, timeline.gantt_svg(fmt::format("streampipe gray: {} files on {}", jobs.size(), s.device)));
  }
  if (!o.json_path.empty()) {
    nlohmann::json j = bench::gray_run_json(s, true);
    j["tool"] = "gray";
    j["format"] = io::to_string(*format);
    j["output_dir"] = o.output_dir;
    j["host"] = report::describe_host();
    j["unreadable"] = plan.unreadable;
    j.update(bench::gray_command_json(s, time));
    out.write(o.json_path, json_text(report::stamped(std::move(j), "gray"), 2));
  }
  emit_report(report_options, gray_latency_run(s), "gray", out);
  return s.failed > 0 || !plan.unreadable.empty() ? 1 : 0;
}

Command add_gray(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "gray",
      "Convert PNG and JPEG files, or folders of them, to 8-bit grayscale (BT.601 luma, OpenCV's rounding) on the "
      "CPU and every GPU. Prints one summary line; -v prints where the time went. See docs/gray.md.");
  auto o = std::make_shared<GrayOptions>();
  sub->add_option("inputs", o->inputs, "image files and folders")->required()->check(file_name())->type_name("FILE|DIR");
  sub->add_option("-o,--output-dir,--output", o->output_dir, "write the images into DIR (created if needed)")
      ->required()
      ->check(file_name())
      ->type_name("DIR");
  sub->add_flag("-r,--recursive", o->recursive, "take images from subfolders too");
  sub->add_option("--format", o->format, "output format: png or jpeg")->capture_default_str()->type_name("FORMAT");
  sub->add_option("--name", o->name,
                  "output file name from {stem} and {ext} of the input; the format's extension is added "
                  "(e.g. '{stem}.{ext}' keeps x.jpg and x.png apart)")
      ->capture_default_str()
      ->type_name("PATTERN");
  sub->add_option("--quality", o->quality, "JPEG quality, 1-100")->capture_default_str()->transform(whole_number(1, 100))
      ->type_name("N");
  sub->add_option("--compression", o->compression,
                  "PNG compression, 0-9: 0 stores, 1 is fastest and about as small on photos (docs/image-io.md)")
      ->capture_default_str()->transform(whole_number(0, 9))->type_name("N");
  sub->add_flag("--force", o->force, "replace existing outputs (never the inputs)");
  add_allow_special_outputs(*sub, o->allow_special);
  sub->add_option("--decode", o->decode, "where JPEGs are decoded: auto (the CPU), cpu, or gpu (nvJPEG; docs/gray.md)")
      ->capture_default_str()
      ->type_name("WHERE");
  sub->add_option("--encode", o->encode,
                  "where JPEG outputs are encoded: auto (the GPU where nvJPEG and a GPU are there), cpu or gpu")
      ->capture_default_str()
      ->type_name("WHERE");
  sub->add_option("--max-pixels", o->max_pixels, "refuse images larger than N pixels, read from the header (0: no limit)")
      ->capture_default_str()
      ->transform(whole_number<std::uint64_t>())
      ->type_name("N");
  sub->add_option("--group", o->group, "with nvJPEG: files per engine item (0: chosen from the run)")
      ->capture_default_str()->transform(whole_number(0, 256))->type_name("N");
  add_engine_options(*sub, o->engine, gray::engine_defaults(), "the GPUs the files are spread over (e.g. --devices 0,2)");
  add_max_memory_option(*sub, o->max_memory_mib);
  auto* quiet = sub->add_flag("-q,--quiet", o->quiet, "print nothing but failures (no progress bar, no summary line)");
  sub->add_flag("-v,--verbose", o->verbose,
                "print the full report: start-up, rate, the bound stage, every device and where the time went")
      ->excludes(quiet);
  sub->add_option("--json", o->json_path, "write the summary and every file's result as JSON to FILE ('-': stdout)")
      ->check(file_name())
      ->type_name("FILE");
  sub->add_option("--trace", o->trace_path, "write the engine timeline as a Chrome trace (Perfetto) to FILE")
      ->check(file_name())
      ->type_name("FILE");
  sub->add_option("--gantt", o->gantt_path, "write the engine timeline as an SVG Gantt chart to FILE")
      ->check(file_name())
      ->type_name("FILE");
  auto report = add_report_options(*sub, "one image (one engine item), submitted -> written; on the GPU, H2D, "
                                           "compute and D2H are its slot's event intervals");
  set_examples(*sub, {"streampipe gray photos/ -o gray/", "streampipe gray -r photos/ -o gray/ --format jpeg -v",
                      "streampipe gray photos/ -o gray/ --name '{stem}.{ext}'"});
  return {sub, [o, report] { return run_gray(*o, *report); }};
}

}  // namespace

STREAMPIPE_COMMAND(add_gray);

}  // namespace streampipe::cli
