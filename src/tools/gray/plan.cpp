// SPDX-License-Identifier: Apache-2.0
// Input discovery and output naming for the gray tool (see tools/gray/plan.hpp).

#include "streampipe/tools/gray/plan.hpp"

#include "streampipe/tools/gray/output_name.hpp"

#include "streampipe/host/read_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <utility>
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

// Walks `folder` (its whole tree with -r; folder links are not followed, file links are),
// collecting image files. What cannot be listed or examined goes to `unreadable`, except
// the folder argument itself, which is bad usage.
void add_folder(const fs::path& folder, const PlanOptions& o, const fs::path& out_identity, std::vector<Job>& jobs,
                std::vector<std::string>& unreadable) {
  std::vector<fs::path> found;
  const std::size_t unreadable_before = unreadable.size();
  std::vector<fs::path> pending{folder};
  while (!pending.empty()) {
    const fs::path dir = std::move(pending.back());
    pending.pop_back();
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
      std::error_code sec;
      const fs::file_status own = it->symlink_status(sec);
      if (!sec && fs::is_directory(own)) {
        // Earlier results are not inputs.
        if (o.recursive && identity(it->path()) != out_identity) pending.push_back(it->path());
        continue;
      }
      const fs::file_status st = sec ? own : it->status(sec);
      if (sec && sec != std::errc::no_such_file_or_directory) {  // a dangling link is no image
        unreadable.push_back(fmt::format("{}: cannot examine it: {}", it->path().string(), sec.message()));
        continue;
      }
      if (fs::is_regular_file(st) && has_image_extension(it->path())) found.push_back(it->path());
    }
    if (!ec) continue;
    if (dir == folder) throw PlanError(fmt::format("{}: cannot list the folder: {}", folder.string(), ec.message()));
    unreadable.push_back(fmt::format("{}: cannot list the folder: {}", dir.string(), ec.message()));
  }
  std::sort(found.begin(), found.end());
  if (found.empty() && unreadable.size() == unreadable_before)
    throw PlanError(fmt::format("{}: no *.png, *.jpg or *.jpeg files{}", folder.string(),
                                o.recursive ? "" : " directly inside (use -r for subfolders)"));
  for (auto& f : found) {
    fs::path rel = f.lexically_relative(folder);
    rel.replace_filename(output_file_name(rel, o.name, o.format));
    jobs.push_back({std::move(f), o.output_dir / rel});
  }
}

// Whether `a` is `b` or lies inside it (both as identity() gives them).
bool inside(const fs::path& a, const fs::path& b) {
  auto ai = a.begin();
  for (auto bi = b.begin(); bi != b.end(); ++bi, ++ai)
    if (ai == a.end() || *ai != *bi) return false;
  return true;
}

// What gray writes: an 8-bit, one-channel PNG or JPEG. Anything else in the output folder is
// not an earlier result of gray.
std::optional<std::string> not_a_gray_output(const fs::path& file) {
  const auto head = host::read_file_head(file, std::size_t{1} << 18);
  if (!head) return "cannot be read as an image";
  const auto h = io::read_image_header(*head);
  if (!h) return "not a PNG or JPEG image";
  if (h->channels == 1 && h->bit_depth == 8) return std::nullopt;
  static constexpr const char* layouts[] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
  return fmt::format("a {}-bit {} image", h->bit_depth, layouts[h->channels]);
}

// With -r, an output folder inside a scanned folder is left out of the scan: its images are
// not inputs. That must not make them outputs to replace: an existing file there is
// replaced (with --force) only when it is one gray writes, never an original image that
// happened to be in that folder.
void check_outputs_inside_scanned_tree(std::span<const fs::path> inputs, const PlanOptions& o,
                                       const fs::path& out_identity, const std::vector<Job>& jobs) {
  if (!o.recursive) return;
  const fs::path* tree = nullptr;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec) && inside(out_identity, identity(in))) tree = &in;
  }
  if (tree == nullptr) return;
  for (const auto& j : jobs) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(j.output, ec))) continue;
    if (const auto why = not_a_gray_output(j.output))
      throw PlanError(fmt::format(
          "{}: exists in the output folder {}, which lies inside {} (scanned by -r), and is {}, not an earlier gray "
          "output: it would be replaced, --force or not; choose an output folder outside {}",
          j.output.string(), o.output_dir.string(), tree->string(), *why, tree->string()));
  }
}

// A file named twice (as itself, or also through its folder) is converted once: the later
// job is dropped where it names the same file and the same output as an earlier one.
void drop_repeated_inputs(std::vector<Job>& jobs) {
  std::set<std::pair<fs::path, fs::path>> seen;
  std::erase_if(jobs, [&](const Job& j) { return !seen.emplace(identity(j.input), identity(j.output)).second; });
}

// How to keep two inputs' outputs apart: names that differ only in their extension differ
// under a pattern with {ext}; files of one name from different folders need different -o.
std::string apart_hint(const fs::path& a, const fs::path& b, const PlanOptions& o) {
  if (a.filename() == b.filename())
    return ": two files of one name from different folders; convert them into different output folders (-o)";
  if (o.name.find("{ext}") != std::string::npos) return {};
  return fmt::format("; name the outputs apart with --name '{{stem}}.{{ext}}' ({} and {})",
                     output_file_name(a, "{stem}.{ext}", o.format), output_file_name(b, "{stem}.{ext}", o.format));
}

}  // namespace

void check_existing_outputs(std::span<const Job> jobs) {
  std::vector<const Job*> existing;
  for (const auto& j : jobs) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(j.output, ec))) existing.push_back(&j);
  }
  if (existing.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < std::min<std::size_t>(existing.size(), 3); ++i)
    list += fmt::format("{}{}", i ? ", " : "", existing[i]->output.string());
  if (existing.size() > 3) list += fmt::format(" and {} more", existing.size() - 3);
  throw PlanError(fmt::format("{} output(s) exist already: {} (use --force to overwrite)", existing.size(), list));
}

const char* output_extension(io::ImageFormat format) noexcept { return format == io::ImageFormat::png ? ".png" : ".jpg"; }

bool has_image_extension(const fs::path& path) {
  const std::string ext = lower(path.extension().string());
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

std::vector<Job> plan_jobs(std::span<const fs::path> inputs, const PlanOptions& o) {
  Plan p = plan(inputs, o);
  if (!p.unreadable.empty())
    throw PlanError(fmt::format("{}{}", p.unreadable.front(),
                                p.unreadable.size() > 1 ? fmt::format(" (and {} more)", p.unreadable.size() - 1) : ""));
  return std::move(p.jobs);
}

Plan plan(std::span<const fs::path> inputs, const PlanOptions& o) {
  if (inputs.empty()) throw PlanError("no input files or folders given");
  if (o.output_dir.empty()) throw PlanError("no output folder given (-o OUTDIR)");
  {
    std::error_code ec;
    if (fs::exists(o.output_dir, ec) && !fs::is_directory(o.output_dir, ec))
      throw PlanError(fmt::format("{}: the output exists and is not a folder", o.output_dir.string()));
  }
  const fs::path out_identity = identity(o.output_dir);
  Plan result;
  std::vector<Job>& jobs = result.jobs;
  for (const auto& in : inputs) {
    if (in.empty()) throw PlanError("'' (an empty name) is no file or folder");
    std::error_code ec;
    const auto st = fs::status(in, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      throw PlanError(fmt::format("{}: cannot examine it: {}", in.string(), ec.message()));
    if (ec || !fs::exists(st)) throw PlanError(fmt::format("{}: no such file or folder", in.string()));
    if (fs::is_directory(st)) {
      add_folder(in, o, out_identity, jobs, result.unreadable);
    } else {
      jobs.push_back({in, o.output_dir / output_file_name(in, o.name, o.format)});
    }
  }

  drop_repeated_inputs(jobs);
  std::map<fs::path, const Job*> inputs_seen;
  for (const auto& j : jobs) inputs_seen.emplace(identity(j.input), &j);
  std::map<fs::path, const Job*> outputs;
  for (const auto& j : jobs) {
    const fs::path id = identity(j.output);
    if (const auto it = outputs.find(id); it != outputs.end())
      throw PlanError(fmt::format("{} and {} would both be written to {}{}", it->second->input.string(),
                                  j.input.string(), j.output.string(), apart_hint(it->second->input, j.input, o)));
    outputs.emplace(id, &j);
    if (const auto it = inputs_seen.find(id); it != inputs_seen.end())
      throw PlanError(fmt::format("{}: the output would replace the input {}", j.output.string(), it->second->input.string()));
  }
  check_outputs_inside_scanned_tree(inputs, o, out_identity, jobs);
  if (!o.force) check_existing_outputs(jobs);
  std::sort(result.unreadable.begin(), result.unreadable.end());
  return result;
}

}  // namespace streampipe::tools::gray
