// SPDX-License-Identifier: Apache-2.0
// Input discovery and output naming for the gray tool (see gray_plan.hpp).

#include "streampipe/tools/gray_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <system_error>

namespace streampipe::tools::gray {
namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Canonical where it exists, else lexically normal: compares paths that name the same file.
fs::path identity(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? fs::absolute(p).lexically_normal() : c;
}

void add_folder(const fs::path& folder, const PlanOptions& o, const fs::path& out_identity, std::vector<Job>& jobs) {
  std::vector<fs::path> found;
  std::error_code ec;
  const auto visit = [&](const fs::directory_entry& e) {
    std::error_code fec;
    if (e.is_regular_file(fec) && has_image_extension(e.path())) found.push_back(e.path());
  };
  if (o.recursive) {
    fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code dec;
      if (it->is_directory(dec) && identity(it->path()) == out_identity) {
        it.disable_recursion_pending();  // earlier results are not inputs
        continue;
      }
      visit(*it);
    }
  } else {
    fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) visit(*it);
  }
  if (ec) throw PlanError(fmt::format("{}: cannot list the folder: {}", folder.string(), ec.message()));
  std::sort(found.begin(), found.end());
  if (found.empty())
    throw PlanError(fmt::format("{}: no *.png, *.jpg or *.jpeg files{}", folder.string(),
                                o.recursive ? "" : " directly inside (use -r for subfolders)"));
  for (auto& f : found) {
    fs::path rel = f.lexically_relative(folder);
    rel.replace_extension(output_extension(o.format));
    jobs.push_back({std::move(f), o.output_dir / rel});
  }
}

}  // namespace

const char* output_extension(io::ImageFormat format) noexcept { return format == io::ImageFormat::png ? ".png" : ".jpg"; }

bool has_image_extension(const fs::path& path) {
  const std::string ext = lower(path.extension().string());
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

std::vector<Job> plan_jobs(std::span<const fs::path> inputs, const PlanOptions& o) {
  if (inputs.empty()) throw PlanError("no input files or folders given");
  if (o.output_dir.empty()) throw PlanError("no output folder given (-o OUTDIR)");
  {
    std::error_code ec;
    if (fs::exists(o.output_dir, ec) && !fs::is_directory(o.output_dir, ec))
      throw PlanError(fmt::format("{}: the output exists and is not a folder", o.output_dir.string()));
  }
  const fs::path out_identity = identity(o.output_dir);
  std::vector<Job> jobs;
  for (const auto& in : inputs) {
    std::error_code ec;
    const auto st = fs::status(in, ec);
    if (ec || !fs::exists(st)) throw PlanError(fmt::format("{}: no such file or folder", in.string()));
    if (fs::is_directory(st)) {
      add_folder(in, o, out_identity, jobs);
    } else {
      fs::path name = in.filename();
      name.replace_extension(output_extension(o.format));
      jobs.push_back({in, o.output_dir / name});
    }
  }

  std::map<fs::path, const Job*> inputs_seen;
  for (const auto& j : jobs) inputs_seen.emplace(identity(j.input), &j);
  std::map<fs::path, const Job*> outputs;
  for (const auto& j : jobs) {
    const fs::path id = identity(j.output);
    if (const auto it = outputs.find(id); it != outputs.end())
      throw PlanError(fmt::format("{} and {} would both be written to {}", it->second->input.string(), j.input.string(), j.output.string()));
    outputs.emplace(id, &j);
    if (const auto it = inputs_seen.find(id); it != inputs_seen.end())
      throw PlanError(fmt::format("{}: the output would replace the input {}", j.output.string(), it->second->input.string()));
  }
  if (!o.force) {
    std::vector<const Job*> existing;
    for (const auto& j : jobs) {
      std::error_code ec;
      if (fs::exists(fs::symlink_status(j.output, ec))) existing.push_back(&j);
    }
    if (!existing.empty()) {
      std::string list;
      for (std::size_t i = 0; i < std::min<std::size_t>(existing.size(), 3); ++i)
        list += fmt::format("{}{}", i ? ", " : "", existing[i]->output.string());
      if (existing.size() > 3) list += fmt::format(" and {} more", existing.size() - 3);
      throw PlanError(fmt::format("{} output(s) exist already: {} (use --force to overwrite)", existing.size(), list));
    }
  }
  return jobs;
}

}  // namespace streampipe::tools::gray
