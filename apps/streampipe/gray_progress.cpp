// SPDX-License-Identifier: Apache-2.0
#include "gray_progress.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

namespace streampipe::cli {

ProgressBar::ProgressBar(std::size_t total, bool enabled, std::string rank)
    : total_(total), enabled_(enabled), rank_(std::move(rank)) {}

void ProgressBar::file_done(const tools::gray::FileResult& f, std::size_t finished) {
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

void ProgressBar::name_late_failures(const std::vector<tools::gray::FileResult>& files) {
  for (const auto& f : files)
    if (!f.ok && !f.cancelled && named_.count(f.input.string()) == 0) say_failed(f);
}

void ProgressBar::say_failed(const tools::gray::FileResult& f) {
  named_.insert(f.input.string());
  fmt::print(stderr, "streampipe gray{}: {}\n", rank_, f.error);
}

}  // namespace streampipe::cli
