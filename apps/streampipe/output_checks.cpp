// SPDX-License-Identifier: Apache-2.0
#include "output_checks.hpp"

#include "commands.hpp"

#include "streampipe/host/file_content.hpp"
#include "streampipe/host/read_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace streampipe::cli {

namespace fs = std::filesystem;

// What `option` writes to `path`: what the option always writes, else (a benchmark's
// declared outputs, the files -o names) by the path's extension.
namespace {

host::Content expected_content(std::string_view option, const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (option == "--json" || option == "--report-json" || option == "--trace") return host::Content::json;
  if (option == "--gantt" || option == "--svg") return host::Content::svg;
  if (option == "--population") return ext == ".json" ? host::Content::json : host::Content::text;
  if (ext == ".json") return host::Content::json;
  if (ext == ".svg") return host::Content::svg;
  if (ext == ".png") return host::Content::png;
  if (ext == ".jpg" || ext == ".jpeg") return host::Content::jpeg;
  return host::Content::text;
}

}  // namespace

// An existing file that `option` would replace holds content of its own kind (an image an
// option took as its value by mistake, "--json a.png b.png", is never replaced).
void check_content(std::string_view option, const std::string& path) {
  const auto head = host::read_file_head(path, 4096);
  if (!head) return;  // unreadable: the write itself will say what is wrong
  const host::Content found = host::sniff_content(*head);
  const host::Content written = expected_content(option, path);
  if (host::may_replace(written, found)) return;
  throw UsageError(fmt::format("{} {}: the file holds {}, not {}; an output never replaces a file of another kind, "
                               "--force or not (did {} take another argument as its value?)",
                               option, path, host::describe(found), host::describe(written), option));
}

// The folder `path` would be created in, or its nearest existing parent, must let this
// process create files: found before any work, not after it (a read-only --json target).
void check_writable_folder(std::string_view option, const std::string& path, bool is_folder) {
  fs::path dir = is_folder ? fs::path(path) : fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir.parent_path() != dir) dir = dir.parent_path();
  if (!fs::is_directory(dir, ec)) return;  // a file on the way: the write names it
  if (::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) == 0) return;
  const int err = errno;
  throw UsageError(fmt::format("{} {}: cannot create files in {}: {}", option, path, dir.string(), std::strerror(err)));
}

}  // namespace streampipe::cli
