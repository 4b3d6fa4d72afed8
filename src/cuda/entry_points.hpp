// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to streampipe (not installed): filling a table of entry points from a library
// loaded at run time (dlopen), as jit does for NVRTC and serving for cuBLASLt. The first
// entry point the library lacks is recorded and later ones are skipped, so the table's user
// reports one failure naming it. Never throws but std::bad_alloc.

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>
#include <utility>

namespace streampipe::detail {

class EntryPoints {
 public:
  // `library` from dlopen; `name` says which library in a failure (e.g. "libnvrtc.so.13").
  EntryPoints(void* library, std::string name) : library_(library), name_(std::move(name)) {}

  template <typename F>
  void resolve(const char* symbol, F& out) {
    if (!failure_.empty()) return;
    out = reinterpret_cast<F>(::dlsym(library_, symbol));
    if (out == nullptr) {
      failure_ = fmt::format("{} has no {}", name_, symbol);
      call_ = fmt::format("dlsym(\"{}\")", symbol);
    }
  }

  // Empty when every entry point asked for was found; else "<name> has no <symbol>".
  [[nodiscard]] const std::string& failure() const noexcept { return failure_; }
  // The loader call that failed: dlsym("<symbol>").
  [[nodiscard]] const std::string& call() const noexcept { return call_; }

 private:
  void* library_;
  std::string name_;
  std::string failure_;
  std::string call_;
};

}  // namespace streampipe::detail
