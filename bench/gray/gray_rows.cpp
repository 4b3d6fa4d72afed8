// SPDX-License-Identifier: Apache-2.0
// One command of `bench gray`, run, checked and read back (see gray_rows.hpp).

#include "gray/gray_rows.hpp"

#include "gray/gray_check.hpp"
#include "harness/command.hpp"

#include "streampipe/report/statistics.hpp"
#include "streampipe/tools/gray/plan.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <mutex>

namespace streampipe::bench::gray_bench {

namespace fs = std::filesystem;
namespace gray = streampipe::tools::gray;

CommandRow::CommandRow(RowPlan plan, const Inputs& inputs, io::ImageFormat format, int warmup, int check_threads)
    : plan_(std::move(plan)), inputs_(inputs), format_(format), warmup_(warmup), check_threads_(check_threads) {}

void CommandRow::poison() const {
  fs::remove_all(plan_.out_dir);
  if (!plan_.json.empty()) fs::remove(plan_.json);
}

double CommandRow::run() {
  const CommandRun r = run_command(plan_.argv, plan_.log, plan_.limit_s);
  last_wall_ms_ = r.wall_ms;
  last_exit_ = r.ok() ? 0 : 1;
  last_status_ = r.describe();
  return static_cast<double>(inputs_.files.size()) * 1e3 / r.wall_ms;
}

bool CommandRow::verify() {
  const bool timed = round_++ >= warmup_;
  std::string why;
  if (last_exit_ != 0)
    why = fmt::format("{}; its output ends:\n{}", last_status_, log_tail(plan_.log));
  else if (plan_.peer)
    why = check_outputs({});
  else
    why = check_tool_run(timed);
  if (timed && why.empty()) wall_ms_.push_back(last_wall_ms_);
  if (why.empty()) return true;
  if (failure_.empty()) failure_ = why;
  return false;
}

std::string CommandRow::check_tool_run(bool timed) {
  nlohmann::json j;
  try {
    std::ifstream in(plan_.json);
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return fmt::format("cannot read its --json {}: {}", plan_.json.string(), e.what());
  }
  const std::size_t n = inputs_.files.size();
  if (j.value("ok", std::size_t{0}) != n)
    return fmt::format("{} of {} files converted (--json {})", j.value("ok", 0), n, plan_.json.string());
  // Which files nvJPEG decoded: those are held to its tolerance, the others are exact.
  std::map<std::string, std::string> decoder;
  decoders_ = nlohmann::json::object();
  for (const auto& f : j.value("file_results", nlohmann::json::array())) {
    const std::string d = f.value("decoder", std::string("cpu"));
    decoder[fs::path(f.value("input", std::string())).filename().string()] = d;
    decoders_[d] = decoders_.value(d, 0) + 1;
  }
  std::vector<bool> gpu_decoded(n);
  for (std::size_t i = 0; i < n; ++i) gpu_decoded[i] = decoder[inputs_.files[i].filename().string()] == "gpu";
  if (auto why = check_outputs(gpu_decoded); !why.empty()) return why;
  if (timed) {
    const double conversion = j.value("wall_ms", 0.0);
    tool_conversion_ms_.push_back(conversion);
    outside_ms_.push_back(last_wall_ms_ - conversion);
    if (j.contains("command_wall_ms")) tool_command_ms_.push_back(j["command_wall_ms"].get<double>());
    if (j.contains("startup_ms")) startup_ms_.push_back(j["startup_ms"].get<double>());
  }
  j.erase("file_results");
  last_run_ = std::move(j);
  return {};
}

std::string CommandRow::check_outputs(const std::vector<bool>& gpu_decoded) {
  std::string first;
  std::mutex m;
  gray::LevelDifference run_diff;
  parallel_for(inputs_.files.size(), check_threads_, [&](std::size_t i) {
    const fs::path out =
        plan_.out_dir / fs::path(inputs_.files[i].filename()).replace_extension(gray::output_extension(format_));
    gray::LevelDifference d;
    const std::string why =
        plan_.peer ? check_peer_output(out, inputs_.reference[i], format_, plan_.bound, d)
                   : check_output(out, inputs_.reference[i], format_, gpu_decoded.at(i) ? &d : nullptr);
    std::lock_guard lock(m);
    run_diff.add(d);
    if (!why.empty() && first.empty()) first = why;
  });
  diff_.add(run_diff);
  return first;
}

Row CommandRow::row(const std::vector<double>& rates, bool verified) const {
  Row r;
  r.name = plan_.name;
  r.unit = "images/s";
  r.values = rates;
  r.verified = verified;
  r.peer = plan_.peer;
  const auto summary = [](const std::vector<double>& v) {
    return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(report::summarize(v));
  };
  r.fields = {{"command", command_text(plan_.argv)}, {"command_wall_ms", summary(wall_ms_)}};
  if (!plan_.peer) {
    r.fields["backend"] = last_run_.value("backend", std::string("?"));
    r.fields["device"] = last_run_.value("device", std::string("?"));
    r.fields["decode"] = last_run_.value("decode", std::string("?"));
    r.fields["decoders"] = decoders_;
    r.fields["tool_conversion_ms"] = summary(tool_conversion_ms_);
    r.fields["tool_command_wall_ms"] = summary(tool_command_ms_);
    r.fields["startup_ms"] = summary(startup_ms_);
    r.fields["outside_conversion_ms"] = summary(outside_ms_);
    r.fields["bound"] = last_run_.value("bound", nlohmann::json(nullptr));
    r.fields["last_run"] = last_run_;
  }
  if (plan_.peer) r.fields["library"] = plan_.library;
  if (diff_.count > 0 && plan_.peer)
    r.fields["gray_difference_vs_reference"] = {{"max_levels", diff_.max},
                                                {"mean_levels", diff_.mean()},
                                                {"pixels", diff_.count},
                                                {"bound_max", plan_.bound.max_levels},
                                                {"bound_mean_per_file", plan_.bound.mean_levels},
                                                {"bound_why", plan_.bound_why}};
  else if (diff_.count > 0)
    r.fields["gray_difference_vs_cpu_decode"] = {{"max_levels", diff_.max},
                                                 {"mean_levels", diff_.mean()},
                                                 {"pixels", diff_.count},
                                                 {"bound_max", gray::LevelDifference::kMaxLevels}};
  if (!failure_.empty()) r.fields["failure"] = failure_;
  return r;
}

}  // namespace streampipe::bench::gray_bench
