// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every command reads and writes, checked in one place before any work:
//   - a machine-output option (--json, --report-json, --trace, --gantt, --svg, --population)
//     takes FILE, or "-" for standard output; then standard output carries that output alone
//     and the human text (tables, progress, summaries) goes to standard error. Two options
//     given "-" are bad usage;
//   - an output is never an input or another output: paths are compared by what they lead
//     to (device and inode, or the canonical path of a file not created yet), so hard links,
//     symbolic links and "./x" are caught, with --force too;
//   - an existing FILE is bad usage unless --force, and written atomically (temp file +
//     rename, Overwrite::refuse without --force, so one appearing meanwhile survives);
//   - an existing symbolic link, device, FIFO or socket is never replaced: refused even with
//     --force, unless --allow-special-outputs, which writes into the device or FIFO and
//     through the link to its target (a target that exists needs --force as usual);
//   - an existing file is replaced by a FILE option's output only when it is of that output's
//     kind, checked from its first bytes (host/file_content.hpp): a report replaces text,
//     never an image or binary data, so "--json a.png b.png --force" is refused, not a JSON
//     written over the image the option took as its value;
//   - the folder each output goes into (or its nearest existing parent) lets this process
//     create files, so that a read-only target fails before the work, not after it;
//   - inputs are regular files (a FIFO or device would block or never end);
//   - -o DIR is the folder a command writes its outputs into, created when needed.
// Every refusal is a UsageError (exit 2) naming the option and the path.
//
//   Outputs out(o.force, o.allow_special);
//   out.input("--pattern", o.pattern);     // first: throws UsageError
//   out.claim("--json", o.json_path);
//   out.print("{} files\n", n);            // human text: standard output, or standard error
//   out.write(o.json_path, text);          // last: the file, or standard output for "-"

#include "file_identity.hpp"

#include "streampipe/host/atomic_file.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace streampipe::cli {

// A write to standard output failed (a full disk, a closed pipe): exit 1, said once.
struct StdoutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An output written piece by piece while the work goes on (life's --population, a row per
// generation), so that its size never builds up in memory: standard output, a device or
// FIFO allowed by --allow-special-outputs, or a file that appears whole at commit() and,
// destroyed without it (a failure, an interruption), is not written at all. write() throws
// StdoutError for standard output (a closed pipe: EPIPE stops the run), std::runtime_error
// naming the path otherwise.
class OutputSink {
 public:
  OutputSink(OutputSink&&) noexcept;
  OutputSink& operator=(OutputSink&&) noexcept;
  ~OutputSink();
  void write(std::string_view text);
  void commit();

 private:
  friend class Outputs;
  OutputSink() = default;
  std::string path_;
  bool to_stdout_ = false;
  int fd_ = -1;  // a device or FIFO, written into
  std::unique_ptr<host::AtomicFileWriter> file_;
};

class Outputs {
 public:
  explicit Outputs(bool force = false, bool allow_special = false) : force_(force), allow_special_(allow_special) {}

  // Registers an input `path`, named `what` in messages ("input", "--pattern"). Throws
  // UsageError for an empty name, a missing file and one that is not a regular file, and
  // when an output claimed before is the same file.
  void input(std::string_view what, const std::string& path);
  // Claims `path` for `option`, to be written by write(); an empty path (the option not
  // given) claims nothing; "-" standard output. Throws UsageError as the rules above say.
  void claim(std::string_view option, const std::string& path);
  // Claims a file the command writes itself (images under -o DIR, traces): the same checks,
  // but a link or special file is refused even with --allow-special-outputs, since the file
  // is replaced by a rename.
  void claim_regular(std::string_view option, const std::string& path);
  // Checks -o DIR (or another folder option): not empty, not "-", not an existing file, and
  // a folder (or the nearest existing parent) this process may create files in.
  static void check_dir(std::string_view option, const std::string& dir);
  // Claims standard output for something other than a file (life --live draws there).
  void claim_terminal(std::string_view what);

  [[nodiscard]] bool force() const noexcept { return force_; }
  [[nodiscard]] host::Overwrite overwrite() const noexcept {
    return force_ ? host::Overwrite::allow : host::Overwrite::refuse;
  }
  // True when an output claimed standard output.
  [[nodiscard]] bool machine_stdout() const noexcept { return !stdout_owner_.empty(); }
  // Where the human text goes: standard output, or standard error when an output has it.
  [[nodiscard]] std::FILE* human() const noexcept { return machine_stdout() ? stderr : stdout; }
  template <typename... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) const {
    fmt::print(human(), format, std::forward<Args>(args)...);
  }
  // Writes `content` to `path` (claimed before): "-" standard output (flushed, and a write
  // error throws std::runtime_error naming standard output), else the file: atomically, or
  // straight into a device or FIFO allowed by --allow-special-outputs. An empty path writes
  // nothing. Throws std::runtime_error naming the path and the system's reason.
  void write(const std::string& path, std::string_view content) const;
  // The same, piece by piece (see OutputSink); an empty path is an error.
  [[nodiscard]] OutputSink open(const std::string& path) const;

 private:
  struct Target {
    std::string write_path;  // where the bytes go: the path, or a link's target
    bool direct = false;     // into a device or FIFO: opened and written, not renamed over
  };
  struct Holder {  // "--json out.json", "input a.png"
    std::string option;
    std::string path;
  };
  void claim_file(std::string_view option, const std::string& path, bool special_allowed);
  // Fails when `id` is already an output (or, for an input, one of the outputs).
  void check_unique(const Holder& who, const FileIdentity& id, bool is_input) const;
  void remember(const Holder& who, const FileIdentity& id, bool is_input);

  bool force_;
  bool allow_special_;
  std::string stdout_owner_;                // the option that has standard output
  std::map<std::string, Target> targets_;  // claimed for write(), by the path as given
  // Who holds each file, by canonical path and by inode: inputs and outputs apart.
  std::map<std::string, Holder> input_paths_, output_paths_;
  std::map<std::pair<dev_t, ino_t>, Holder> input_inodes_, output_inodes_;
  std::set<std::string> writable_folders_;  // checked once each (gray claims a file per image)
};

}  // namespace streampipe::cli
