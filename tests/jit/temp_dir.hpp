// SPDX-License-Identifier: Apache-2.0
#pragma once
// A private temporary folder (mkdtemp: 0700, as the disk cache trusts) removed with all it
// holds, locked subfolders included.

#include <filesystem>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace streampipe::jit::test_support {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sp-jit-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace streampipe::jit::test_support
