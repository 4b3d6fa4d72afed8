// SPDX-License-Identifier: Apache-2.0
// gather_parts without MPI: a process alone, and rank 0 of a job whose other ranks' messages
// are given (what gather_strings would have brought back); and the GPUs each rank takes.
#include "streampipe/mpi/gather.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::mpi {
namespace {

class GivenRanks final : public Job {
 public:
  GivenRanks(int rank, std::vector<std::string> others) : others_(std::move(others)) {
    info_.rank = rank;
    info_.local_rank = rank;  // every rank on one host
    info_.size = static_cast<int>(others_.size()) + 1;
  }
  const RankInfo& info() const noexcept override { return info_; }
  const std::string& host() const noexcept override { return host_; }
  std::vector<std::string> gather_strings(std::string_view mine) const override {
    if (info_.rank != 0) return {};
    std::vector<std::string> all{std::string(mine)};
    all.insert(all.end(), others_.begin(), others_.end());
    return all;
  }
  int max_over_ranks(int value) const override { return value; }
  void barrier() const override {}

 private:
  RankInfo info_;
  std::string host_ = "node7";
  std::vector<std::string> others_;
};

std::string message(const nlohmann::json& meta, const std::string& bytes) {
  return meta.dump() + std::string(1, '\0') + bytes;
}

TEST(JobDevices, AloneTakesEveryGpuAndEachRankOfAHostOne) {
  EXPECT_EQ(Job::single().local_devices({2, 0}), (std::vector<int>{2, 0}));
  EXPECT_TRUE(Job::single().local_devices({}).empty());
  const GivenRanks second(1, {"", ""});  // rank 1 of 3 on one host
  EXPECT_EQ(second.local_devices({2, 0}), (std::vector<int>{0}));
  EXPECT_EQ(second.local_devices({5}), (std::vector<int>{5}));
  EXPECT_TRUE(second.local_devices({}).empty());
}

TEST(Gather, AloneGetsItsOwnPart) {
  const auto parts = gather_parts(Job::single(), {{"n", 3}}, std::string("a\0b", 3));
  ASSERT_TRUE(parts.has_value());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].meta.at("n"), 3);
  EXPECT_EQ((*parts)[0].bytes, std::string("a\0b", 3));
}

TEST(Gather, RankZeroGetsEveryPartInRankOrder) {
  const GivenRanks job(0, {message({{"rank", 1}}, "xy"), message({{"rank", 2}, {"text", "a\nb"}}, "")});
  const auto parts = gather_parts(job, {{"rank", 0}});
  ASSERT_TRUE(parts.has_value());
  ASSERT_EQ(parts->size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ((*parts)[static_cast<std::size_t>(r)].meta.at("rank"), r);
  EXPECT_EQ((*parts)[1].bytes, "xy");
  EXPECT_EQ((*parts)[2].meta.at("text"), "a\nb");
}

TEST(Gather, OtherRanksGetNothing) {
  const GivenRanks job(1, {"unused"});
  EXPECT_FALSE(gather_parts(job, {{"rank", 1}}).has_value());
}

TEST(Gather, AMalformedPartNamesItsRank) {
  const GivenRanks job(0, {"no end", message({}, "") , std::string("{oops") + std::string(1, '\0')});
  try {
    (void)gather_parts(job, {});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
}

TEST(Gather, PlacesNameTheRankAndTheJob) {
  const GivenRanks job(0, {"", ""});
  EXPECT_EQ(rank_place(job, "GPU 0 (H100)"), "rank 0 on node7 GPU 0 (H100)");
  EXPECT_EQ(job_place({"rank 0 on a host", "rank 1 on b host"}), "2 ranks (rank 0 on a host; rank 1 on b host)");
}

}  // namespace
}  // namespace streampipe::mpi
