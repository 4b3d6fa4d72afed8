// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which files the gray tool converts and where each result goes, decided before any work.
//
// A file argument is converted whatever its name (the format is detected from its content,
// so an unsupported file is reported as a failure of that file): OUTDIR/<stem>.<ext>, or the
// name PlanOptions::name makes (gray_output_name.hpp). A file named twice (twice as itself,
// or as itself and through its folder) is converted once.
// A folder argument contributes its files named *.png, *.jpg or *.jpeg (any case) - only
// its direct children, or its whole tree with `recursive` - mirrored under OUTDIR with their
// relative paths: photos/a/b.jpg -> OUTDIR/a/b.png. OUTDIR itself is never scanned.
//
// Bad usage throws PlanError naming the problem, before anything is written: a missing
// input, a folder argument that cannot be listed, a folder without images, two inputs that
// would write the same output (the message says how to name them apart), a bad name pattern, an output that is an input, (without `force`) outputs
// that exist already, and (with `recursive`, when OUTDIR lies inside a folder argument)
// an existing file under OUTDIR that gray did not write (not an 8-bit gray PNG or JPEG):
// left out of the scan, it is an original image, never an output to replace, `force` or not. Inside a folder argument, a subfolder or entry that cannot be read
// (no permission) is never skipped silently: plan() names it in Plan::unreadable and goes
// on with the rest (the CLI then fails the run, exit 1), plan_jobs() throws PlanError.

#include "streampipe/io/image.hpp"
#include "streampipe/tools/gray/output_name.hpp"

#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::tools::gray {

struct Job {
  std::filesystem::path input;
  std::filesystem::path output;
};

struct PlanOptions {
  std::filesystem::path output_dir;
  io::ImageFormat format = io::ImageFormat::png;
  bool recursive = false;
  bool force = false;  // existing outputs are replaced instead of refused
  std::string name{kDefaultOutputName};  // each output's file name (gray_output_name.hpp)
};

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ".png" or ".jpg".
[[nodiscard]] const char* output_extension(io::ImageFormat format) noexcept;
// *.png, *.jpg, *.jpeg in any case.
[[nodiscard]] bool has_image_extension(const std::filesystem::path& path);

struct Plan {
  std::vector<Job> jobs;                // in a stable order: the arguments as given, each folder's files sorted
  std::vector<std::string> unreadable;  // "<path>: <why it cannot be read>", sorted
};

// The jobs, and what inside the folder arguments could not be read.
[[nodiscard]] Plan plan(std::span<const std::filesystem::path> inputs, const PlanOptions& options);
// The check plan() makes without `force`, alone: PlanError naming the outputs of `jobs` that
// exist already (the first three, then a count).
void check_existing_outputs(std::span<const Job> jobs);
// plan(), with anything unreadable a PlanError (naming the first, and how many).
[[nodiscard]] std::vector<Job> plan_jobs(std::span<const std::filesystem::path> inputs, const PlanOptions& options);

}  // namespace streampipe::tools::gray
