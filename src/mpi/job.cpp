// SPDX-License-Identifier: Apache-2.0
#include "streampipe/mpi/job.hpp"

namespace streampipe::mpi {
namespace {

// A process not under a launcher: nothing to send, nobody to wait for.
class SingleProcess final : public Job {
 public:
  const RankInfo& info() const noexcept override { return info_; }
  const std::string& host() const noexcept override { return host_; }
  std::vector<std::string> gather_strings(std::string_view mine) const override { return {std::string(mine)}; }
  int max_over_ranks(int value) const override { return value; }
  void barrier() const override {}

 private:
  RankInfo info_;
  std::string host_;
};

}  // namespace

const Job& Job::single() {
  static const SingleProcess alone;
  return alone;
}

}  // namespace streampipe::mpi
