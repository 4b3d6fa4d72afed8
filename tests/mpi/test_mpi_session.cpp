// SPDX-License-Identifier: Apache-2.0
// MpiSession under mpirun (ctest runs it on 3 ranks). One session lives for the whole
// program, as in a real one; each test checks, after its collectives, with EXPECT_* only, so
// a failing rank still joins the next collective instead of leaving the others waiting.
// Rank 0 prints GoogleTest's usual output; the other ranks print their failures alone, each
// line naming its rank. The ranks agree on one exit status: every one exits 1 if any failed.
#include "streampipe/mpi/session.hpp"

#include "streampipe/mpi/ranks.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace streampipe::mpi {
namespace {

MpiSession* g_session = nullptr;

const MpiSession& session() { return *g_session; }

// What rank r sends in the gather tests: distinct per rank and per test.
std::string text_of(int rank) { return fmt::format("rank {} of {}", rank, session().size()); }

TEST(MpiSession, RankSizeAndHost) {
  const MpiSession& s = session();
  EXPECT_TRUE(s.owns_mpi());
  EXPECT_EQ(s.size(), 3) << "ctest runs this program on 3 ranks";
  EXPECT_GE(s.rank(), 0);
  EXPECT_LT(s.rank(), s.size());
  // ctest's mpirun puts every rank on this host.
  EXPECT_EQ(s.local_size(), s.size());
  EXPECT_EQ(s.local_rank(), s.rank());
  EXPECT_FALSE(s.host().empty());
  EXPECT_EQ(s.info(), (RankInfo{s.rank(), s.size(), s.local_rank(), s.local_size()}));
  // The launcher's environment says the same as MPI.
  const auto from_environment = rank_from_environment();
  ASSERT_TRUE(from_environment.has_value());
  EXPECT_EQ(from_environment->rank, s.rank());
  EXPECT_EQ(from_environment->size, s.size());
}

TEST(MpiSession, EveryRankSeesTheSameRanksOnce) {
  const MpiSession& s = session();
  EXPECT_EQ(s.sum_over_ranks(1), 3u);
  EXPECT_EQ(s.sum_over_ranks(static_cast<std::uint64_t>(s.rank())), 0u + 1u + 2u);
  EXPECT_EQ(s.max_over_ranks(s.rank()), 2);
  EXPECT_EQ(s.max_over_ranks(-s.rank()), 0);
  // Values past 32 bits are summed whole.
  EXPECT_EQ(s.sum_over_ranks(std::uint64_t{1} << 40), std::uint64_t{3} << 40);
}

TEST(MpiSession, ExitStatusesCombineToTheWorst) {
  const int mine = session().rank() == 1 ? 1 : 0;
  EXPECT_EQ(session().max_over_ranks(mine), 1);
  EXPECT_EQ(session().max_over_ranks(0), 0);
}

TEST(MpiSession, GatherStringsInRankOrderAtRankZeroOnly) {
  const MpiSession& s = session();
  const auto all = s.gather_strings(text_of(s.rank()));
  if (s.rank() == 0) {
    ASSERT_EQ(all.size(), 3u);
    for (int r = 0; r < 3; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], text_of(r));
  } else {
    EXPECT_TRUE(all.empty());
  }
}

TEST(MpiSession, GatherEmptyAndLargeStrings) {
  const MpiSession& s = session();
  // Rank 0 sends nothing, rank 1 a MiB of bytes that are not text (NULs included), rank 2 a byte.
  const auto mib_of = [](int seed) {
    std::string big(std::size_t{1} << 20, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(seed)) & 0xff);
    return big;
  };
  const std::string mine = s.rank() == 0 ? std::string() : s.rank() == 1 ? mib_of(7) : std::string("z");
  const auto all = s.gather_strings(mine);
  if (s.rank() == 0) {
    ASSERT_EQ(all.size(), 3u);
    EXPECT_TRUE(all[0].empty());
    EXPECT_TRUE(all[1] == mib_of(7)) << "the MiB arrived changed (" << all[1].size() << " bytes)";
    EXPECT_EQ(all[2], "z");
  } else {
    EXPECT_TRUE(all.empty());
  }
  // All empty: still one (empty) string per rank.
  const auto empties = s.gather_strings({});
  if (s.rank() == 0) {
    EXPECT_EQ(empties, (std::vector<std::string>(3)));
  }
}

TEST(MpiSession, GatherOverIntMaxThrowsOnEveryRank) {
  // No rank allocates 2 GiB: the sizes alone decide, before any data moves. A view over a small
  // buffer claims the size; gather_strings must throw before it reads past the buffer.
  const MpiSession& s = session();
  const std::string small = "x";
  const std::size_t claim = s.rank() == 2 ? std::size_t{1} << 31 : 1;  // 2 GiB at rank 2 alone
  bool threw = false;
  try {
    (void)s.gather_strings(std::string_view(small.data(), claim));
  } catch (const std::length_error&) {
    threw = true;
  }
  EXPECT_TRUE(threw);
  // The session still works afterwards, on every rank.
  EXPECT_EQ(s.sum_over_ranks(threw ? 1 : 0), 3u);
}

TEST(MpiSession, ASecondSessionBorrowsMpiAndLeavesItRunning) {
  {
    MpiSession inner;
    EXPECT_FALSE(inner.owns_mpi());
    EXPECT_EQ(inner.rank(), session().rank());
    EXPECT_EQ(inner.size(), session().size());
    EXPECT_NE(inner.communicator(), session().communicator());
    EXPECT_EQ(inner.max_over_ranks(inner.rank()), 2);
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  EXPECT_EQ(finalized, 0);
  EXPECT_EQ(session().sum_over_ranks(1), 3u);
}

TEST(MpiSession, SessionOnASubCommunicator) {
  // Ranks 0 and 2 in one communicator, rank 1 alone: a session works on whatever it is given.
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(session().communicator(), session().rank() % 2, session().rank(), &half), MPI_SUCCESS);
  {
    MpiSession sub(half);
    const int expected_size = session().rank() % 2 == 0 ? 2 : 1;
    EXPECT_EQ(sub.size(), expected_size);
    EXPECT_EQ(sub.rank(), session().rank() / 2);
    EXPECT_EQ(sub.sum_over_ranks(1), static_cast<std::uint64_t>(expected_size));
  }
  MPI_Comm_free(&half);
}

TEST(MpiSession, FailingCallsThrowNamingTheCall) {
  // MPI_Comm_dup of MPI_COMM_NULL fails on every rank alike; MPI returns the error (the
  // session made MPI_COMM_WORLD return errors) and the session turns it into an exception.
  try {
    MpiSession bad(MPI_COMM_NULL);
    ADD_FAILURE() << "no exception for a session on MPI_COMM_NULL";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("MPI_Comm_dup failed: "), std::string::npos) << e.what();
  }
  EXPECT_EQ(session().sum_over_ranks(1), 3u);
}

// Failures of ranks other than 0, one line each, naming the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  // The test's name is kept here: asking UnitTest for it while it reports a failure deadlocks
  // (it holds its own lock then).
  void OnTestStart(const ::testing::TestInfo& test) override {
    test_ = std::string(test.test_suite_name()) + "." + test.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "rank %d: FAILED %s at %s:%d: %s\n", rank_, test_.c_str(),
                 result.file_name() ? result.file_name() : "?", result.line_number(), result.summary());
  }

 private:
  int rank_;
  std::string test_;
};

}  // namespace
}  // namespace streampipe::mpi

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto session = std::make_unique<streampipe::mpi::MpiSession>();
  streampipe::mpi::g_session = session.get();
  if (session->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new streampipe::mpi::RankFailurePrinter(session->rank()));
  }
  const int mine = RUN_ALL_TESTS() == 0 ? 0 : 1;
  const int status = session->max_over_ranks(mine);
  if (session->rank() == 0 && status != mine) std::fprintf(stderr, "another rank failed: see its lines above\n");
  streampipe::mpi::g_session = nullptr;
  session.reset();
  return status;
}
