// SPDX-License-Identifier: Apache-2.0
#include "streampipe/mpi/ranks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::mpi {
namespace {

// Every variable rank_from_environment() reads: cleared for each test (the tests may run under
// a launcher themselves) and put back afterwards.
const std::vector<std::string> kLauncherVariables = {
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
    "SLURM_PROCID",         "SLURM_NTASKS",         "SLURM_LOCALID",              "PMI_RANK",
    "PMI_SIZE",             "MPI_LOCALRANKID",      "MPI_LOCALNRANKS",            "PMIX_RANK"};

class RankEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& name : kLauncherVariables) {
      if (const char* value = std::getenv(name.c_str())) saved_[name] = value;
      ::unsetenv(name.c_str());
    }
  }
  void TearDown() override {
    for (const auto& name : kLauncherVariables) ::unsetenv(name.c_str());
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  static void set(const char* name, const char* value) { ::setenv(name, value, 1); }

 private:
  std::map<std::string, std::string> saved_;
};

TEST_F(RankEnvironment, NoLauncherGivesNullopt) { EXPECT_EQ(rank_from_environment(), std::nullopt); }

TEST_F(RankEnvironment, OpenMpi) {
  set("OMPI_COMM_WORLD_RANK", "5");
  set("OMPI_COMM_WORLD_SIZE", "8");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "1");
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "4");
  EXPECT_EQ(rank_from_environment(), (RankInfo{5, 8, 1, 4}));
}

TEST_F(RankEnvironment, SlurmGivesNoLocalCount) {
  set("SLURM_PROCID", "3");
  set("SLURM_NTASKS", "4");
  set("SLURM_LOCALID", "1");
  EXPECT_EQ(rank_from_environment(), (RankInfo{3, 4, 1, 0}));
}

TEST_F(RankEnvironment, MpichHydra) {
  set("PMI_RANK", "2");
  set("PMI_SIZE", "3");
  set("MPI_LOCALRANKID", "0");
  set("MPI_LOCALNRANKS", "1");
  EXPECT_EQ(rank_from_environment(), (RankInfo{2, 3, 0, 1}));
}

TEST_F(RankEnvironment, PmixGivesTheRankAlone) {
  set("PMIX_RANK", "7");
  EXPECT_EQ(rank_from_environment(), (RankInfo{7, 0, 0, 0}));
}

TEST_F(RankEnvironment, OpenMpiWinsOverSlurmAndPmix) {
  // srun starting OpenMPI's own launcher, or mpirun setting PMIX_RANK beside its own names.
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "1");
  set("PMIX_RANK", "9");
  set("OMPI_COMM_WORLD_RANK", "1");
  set("OMPI_COMM_WORLD_SIZE", "2");
  EXPECT_EQ(rank_from_environment(), (RankInfo{1, 2, 0, 0}));
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(rank_from_environment(), (RankInfo{0, 1, 0, 0}));
  ::unsetenv("SLURM_PROCID");
  EXPECT_EQ(rank_from_environment(), (RankInfo{9, 0, 0, 0}));
}

TEST_F(RankEnvironment, SizeWithoutRankIsNotALauncher) {
  set("OMPI_COMM_WORLD_SIZE", "4");
  set("SLURM_NTASKS", "4");
  EXPECT_EQ(rank_from_environment(), std::nullopt);
}

void expect_invalid_naming(const char* variable) {
  try {
    (void)rank_from_environment();
    ADD_FAILURE() << "no exception for " << variable;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(variable), std::string::npos) << e.what();
  }
}

TEST_F(RankEnvironment, MalformedValuesNameTheVariable) {
  for (const char* bad : {"", "x", "1x", " 1", "-1", "2.5", "99999999999"}) {
    SCOPED_TRACE(bad);
    set("OMPI_COMM_WORLD_RANK", bad);
    expect_invalid_naming("OMPI_COMM_WORLD_RANK");
  }
  set("OMPI_COMM_WORLD_RANK", "0");
  set("OMPI_COMM_WORLD_SIZE", "two");
  expect_invalid_naming("OMPI_COMM_WORLD_SIZE");
  set("OMPI_COMM_WORLD_SIZE", "2");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "one");
  expect_invalid_naming("OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST_F(RankEnvironment, ContradictionsNameTheVariables) {
  set("OMPI_COMM_WORLD_RANK", "4");
  set("OMPI_COMM_WORLD_SIZE", "4");
  expect_invalid_naming("OMPI_COMM_WORLD_SIZE");
  set("OMPI_COMM_WORLD_RANK", "0");
  set("OMPI_COMM_WORLD_SIZE", "0");
  expect_invalid_naming("OMPI_COMM_WORLD_SIZE");
  set("OMPI_COMM_WORLD_SIZE", "4");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "2");
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
  expect_invalid_naming("OMPI_COMM_WORLD_LOCAL_RANK");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  set("SLURM_PROCID", "3");
  set("SLURM_NTASKS", "2");
  expect_invalid_naming("SLURM_PROCID");
}

TEST(ShardRange, CoversEveryItemOnceBalancedLowerRanksFirst) {
  for (std::size_t total : {0u, 1u, 2u, 3u, 5u, 7u, 10u, 64u, 99u, 100u, 101u, 1000u, 1023u}) {
    for (int size = 1; size <= 17; ++size) {
      SCOPED_TRACE(testing::Message() << "total " << total << " size " << size);
      std::size_t expected_begin = 0;
      std::size_t smallest = total, largest = 0;
      for (int rank = 0; rank < size; ++rank) {
        const ShardRange s = shard_range(total, rank, size);
        ASSERT_EQ(s.begin, expected_begin) << "rank " << rank;  // contiguous, in rank order
        ASSERT_LE(s.begin, s.end);
        ASSERT_EQ(s.size(), s.end - s.begin);
        if (rank > 0) {
          EXPECT_LE(s.size(), shard_range(total, rank - 1, size).size()) << "rank " << rank;
        }
        smallest = std::min(smallest, s.size());
        largest = std::max(largest, s.size());
        expected_begin = s.end;
      }
      EXPECT_EQ(expected_begin, total);
      EXPECT_LE(largest - smallest, 1u);
    }
  }
}

TEST(ShardRange, KnownSplits) {
  EXPECT_EQ(shard_range(10, 0, 3), (ShardRange{0, 4}));
  EXPECT_EQ(shard_range(10, 1, 3), (ShardRange{4, 7}));
  EXPECT_EQ(shard_range(10, 2, 3), (ShardRange{7, 10}));
  EXPECT_EQ(shard_range(2, 0, 3), (ShardRange{0, 1}));
  EXPECT_EQ(shard_range(2, 1, 3), (ShardRange{1, 2}));
  EXPECT_EQ(shard_range(2, 2, 3), (ShardRange{2, 2}));  // empty: fewer items than ranks
  EXPECT_EQ(shard_range(0, 0, 1), (ShardRange{0, 0}));
  EXPECT_EQ(shard_range(5, 0, 1), (ShardRange{0, 5}));
}

TEST(ShardRange, HugeTotalsDoNotOverflow) {
  const std::size_t total = std::numeric_limits<std::size_t>::max();
  const int size = 7;
  std::size_t next = 0;
  for (int rank = 0; rank < size; ++rank) {
    const ShardRange s = shard_range(total, rank, size);
    EXPECT_EQ(s.begin, next);
    next = s.end;
  }
  EXPECT_EQ(next, total);
}

TEST(ShardRange, RejectsBadRankOrSize) {
  EXPECT_THROW((void)shard_range(10, 0, 0), std::invalid_argument);
  EXPECT_THROW((void)shard_range(10, 0, -1), std::invalid_argument);
  EXPECT_THROW((void)shard_range(10, -1, 3), std::invalid_argument);
  EXPECT_THROW((void)shard_range(10, 3, 3), std::invalid_argument);
}

TEST(LocalDevice, SpreadsRanksOverTheHostsGpus) {
  EXPECT_EQ(local_device(0, 1), 0);
  EXPECT_EQ(local_device(3, 1), 0);
  EXPECT_EQ(local_device(0, 4), 0);
  EXPECT_EQ(local_device(3, 4), 3);
  EXPECT_EQ(local_device(5, 4), 1);
  EXPECT_EQ(local_device(8, 8), 0);
}

TEST(LocalDevice, RejectsNoDevicesOrNegativeRank) {
  EXPECT_THROW((void)local_device(0, 0), std::invalid_argument);
  EXPECT_THROW((void)local_device(1, -2), std::invalid_argument);
  EXPECT_THROW((void)local_device(-1, 2), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::mpi
