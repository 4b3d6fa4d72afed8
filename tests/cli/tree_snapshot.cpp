// SPDX-License-Identifier: Apache-2.0
#include "tree_snapshot.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <stdexcept>

namespace streampipe::testing {

namespace fs = std::filesystem;

std::string sha256_of_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unreadable";
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("EVP_DigestInit");
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    if (EVP_DigestUpdate(ctx.get(), buffer, static_cast<std::size_t>(in.gcount())) != 1)
      throw std::runtime_error("EVP_DigestUpdate");
    if (!in) break;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1) throw std::runtime_error("EVP_DigestFinal");
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

TreeSnapshot TreeSnapshot::of(const fs::path& root) {
  TreeSnapshot s;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(root).string();
    const fs::file_status st = it->symlink_status(ec);
    if (ec) break;
    std::string what;
    switch (st.type()) {
      case fs::file_type::regular:
        what = "file " + sha256_of_file(it->path());
        break;
      case fs::file_type::directory:
        what = "folder";
        break;
      case fs::file_type::symlink:
        what = "link -> " + fs::read_symlink(it->path(), ec).string();
        break;
      case fs::file_type::fifo:
        what = "fifo";
        break;
      case fs::file_type::character:
        what = "character device";
        break;
      case fs::file_type::block:
        what = "block device";
        break;
      case fs::file_type::socket:
        what = "socket";
        break;
      default:
        what = "other";
        break;
    }
    s.entries_[rel] = what;
  }
  if (ec) throw std::runtime_error(fmt::format("cannot walk {}: {}", root.string(), ec.message()));
  return s;
}

std::vector<std::string> TreeSnapshot::files() const {
  std::vector<std::string> out;
  for (const auto& [path, what] : entries_)
    if (what.starts_with("file ")) out.push_back(path);
  return out;
}

std::vector<std::string> TreeSnapshot::added(const TreeSnapshot& after) const {
  std::vector<std::string> out;
  for (const auto& [path, what] : after.entries_)
    if (!entries_.contains(path)) out.push_back(path);
  return out;
}

std::vector<std::string> TreeSnapshot::changed(const TreeSnapshot& after) const {
  std::vector<std::string> out;
  for (const auto& [path, what] : entries_) {
    const auto it = after.entries_.find(path);
    if (it == after.entries_.end())
      out.push_back(fmt::format("{}: removed (was {})", path, what));
    else if (it->second != what)
      out.push_back(fmt::format("{}: was {}, now {}", path, what, it->second));
  }
  return out;
}

}  // namespace streampipe::testing
