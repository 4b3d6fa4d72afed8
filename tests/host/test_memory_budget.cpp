// SPDX-License-Identifier: Apache-2.0
// The memory a run may take: /proc/meminfo's and the control groups' figures, and the
// refusal of a need above them (issue 36, classes 13 and 15).
#include "streampipe/host/memory_budget.hpp"

#include <gtest/gtest.h>

namespace streampipe::host {
namespace {

TEST(MemoryBudget, ReadsMemAvailableInBytes) {
  const std::string meminfo =
      "MemTotal:       24603900 kB\nMemFree:        21000000 kB\nMemAvailable:   22900000 kB\nBuffers: 1 kB\n";
  ASSERT_TRUE(parse_meminfo_available(meminfo));
  EXPECT_EQ(*parse_meminfo_available(meminfo), std::uint64_t{22900000} * 1024);
}

TEST(MemoryBudget, MalformedOrMissingMemAvailableIsUnknown) {
  EXPECT_FALSE(parse_meminfo_available("MemTotal: 5 kB\n"));
  EXPECT_FALSE(parse_meminfo_available("MemAvailable: lots kB\n"));
  EXPECT_FALSE(parse_meminfo_available("MemAvailable: 12\n"));  // no unit
  EXPECT_FALSE(parse_meminfo_available("MemAvailable: 99999999999999999999 kB\n"));
  EXPECT_FALSE(parse_meminfo_available(""));
}

TEST(MemoryBudget, CgroupRoomIsLimitLessUsage) {
  EXPECT_EQ(cgroup_room("1073741824\n", "73741824\n"), std::uint64_t{1000000000});
  EXPECT_EQ(cgroup_room("100", "250"), std::uint64_t{0});  // over its limit already
  EXPECT_FALSE(cgroup_room("max\n", "5"));                 // v2: no limit
  EXPECT_FALSE(cgroup_room("9223372036854771712", "5"));   // v1: no limit
  EXPECT_FALSE(cgroup_room("", "5"));
  EXPECT_FALSE(cgroup_room("12", "-1"));
}

TEST(MemoryBudget, TheLeastKnownFigureBounds) {
  const MemoryAvailable ram{1000, "MemAvailable", true}, group{400, "the cgroup", true}, none{};
  EXPECT_EQ(least(ram, group).bytes, 400u);
  EXPECT_EQ(least(group, ram).source, "the cgroup");
  EXPECT_EQ(least(ram, none).bytes, 1000u);
  EXPECT_FALSE(least(none, none).known);
}

TEST(MemoryBudget, RefusalNamesBothFiguresAndTheSource) {
  const MemoryAvailable avail{std::uint64_t{2} << 30, "MemAvailable in /proc/meminfo", true};
  const auto why = memory_refusal(std::uint64_t{3} << 30, avail, "a 1000x1000 board", "try a smaller --size");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("a 1000x1000 board needs 3.00 GiB (3221225472 bytes)"), std::string::npos) << *why;
  EXPECT_NE(why->find("2.00 GiB (2147483648 bytes) is available (MemAvailable in /proc/meminfo)"), std::string::npos)
      << *why;
  EXPECT_NE(why->find("try a smaller --size"), std::string::npos) << *why;
  EXPECT_FALSE(memory_refusal(std::uint64_t{2} << 30, avail, "x"));  // exactly what there is
  EXPECT_FALSE(memory_refusal(~std::uint64_t{0}, MemoryAvailable{}, "x"));  // unknown: nothing refused
}

TEST(MemoryBudget, ThisMachineHasAFigure) {
  const MemoryAvailable here = available_memory();
  ASSERT_TRUE(here.known) << "neither /proc/meminfo nor a cgroup could be read";
  EXPECT_GT(here.bytes, 0u);
  EXPECT_FALSE(here.source.empty());
}

TEST(MemoryBudget, FormatsBytes) {
  EXPECT_EQ(format_bytes(512), "512 bytes");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{5} << 40), "5.00 TiB");
}

}  // namespace
}  // namespace streampipe::host
