// SPDX-License-Identifier: Apache-2.0
#pragma once
// The populations of one Life universe over a run: the first, the last, the least and the
// most always; every generation's only when asked for (the CLI's --population under mpirun),
// so that the memory of a long run does not grow with its generations.

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace streampipe::tools::life {

class PopulationLog {
 public:
  explicit PopulationLog(bool keep_every_generation) : keep_all_(keep_every_generation) {}

  void add(std::uint64_t population) {
    if (count_ == 0) first_ = min_ = max_ = population;
    min_ = std::min(min_, population);
    max_ = std::max(max_, population);
    last_ = population;
    ++count_;
    if (keep_all_) all_.push_back(population);
  }
  void add(std::span<const std::uint64_t> populations) {
    for (const auto p : populations) add(p);
  }

  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }  // generation 0 included
  [[nodiscard]] std::uint64_t first() const noexcept { return first_; }
  [[nodiscard]] std::uint64_t last() const noexcept { return last_; }
  [[nodiscard]] std::uint64_t min() const noexcept { return min_; }
  [[nodiscard]] std::uint64_t max() const noexcept { return max_; }
  // Generation 0 first; empty unless every generation was asked for.
  [[nodiscard]] const std::vector<std::uint64_t>& all() const noexcept { return all_; }
  [[nodiscard]] bool keeps_all() const noexcept { return keep_all_; }

  // A log as another process kept it (an MPI rank's, sent as its fields).
  [[nodiscard]] static PopulationLog restore(std::uint64_t count, std::uint64_t first, std::uint64_t last,
                                             std::uint64_t min, std::uint64_t max, std::vector<std::uint64_t> all,
                                             bool keep_all) {
    PopulationLog log(keep_all);
    log.count_ = count;
    log.first_ = first;
    log.last_ = last;
    log.min_ = min;
    log.max_ = max;
    log.all_ = std::move(all);
    return log;
  }

 private:
  bool keep_all_;
  std::uint64_t count_ = 0, first_ = 0, last_ = 0, min_ = 0, max_ = 0;
  std::vector<std::uint64_t> all_;
};

}  // namespace streampipe::tools::life
