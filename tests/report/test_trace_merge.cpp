// SPDX-License-Identifier: Apache-2.0
#include "streampipe/report/trace_merge.hpp"

#include "streampipe/pipeline/timeline.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::report {
namespace {

using nlohmann::json;

// A trace as one rank's Timeline::chrome_trace() writes it: its process name, two rows, one
// event on each.
json rank_trace(const std::string& process_name, double ts) {
  return {{"traceEvents",
           json::array({{{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", process_name}}}},
                        {{"name", "h2d item 0"}, {"ph", "X"}, {"pid", 1}, {"tid", 0}, {"ts", ts}, {"dur", 5.0}},
                        {{"name", "compute item 0"}, {"ph", "X"}, {"pid", 1}, {"tid", 10}, {"ts", ts + 5}, {"dur", 2.5}},
                        {{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 10}, {"args", {{"name", "lane 0 compute"}}}}})},
          {"displayTimeUnit", "ms"}};
}

std::vector<json> events_of_pid(const json& merged, int pid) {
  std::vector<json> out;
  for (const auto& e : merged.at("traceEvents"))
    if (e.at("pid") == pid) out.push_back(e);
  return out;
}

const json* metadata(const json& merged, int pid, const char* name) {
  const json* found = nullptr;
  for (const auto& e : merged.at("traceEvents")) {
    if (e.at("pid") == pid && e.at("ph") == "M" && e.at("name") == name) {
      EXPECT_EQ(found, nullptr) << "two " << name << " events for pid " << pid;
      found = &e;
    }
  }
  return found;
}

TEST(MergeChromeTraces, OneProcessRowPerRankNamedAndSorted) {
  const std::vector<json> traces = {rank_trace("gray", 0), rank_trace("gray", 100), rank_trace("gray", 7)};
  const json merged = merge_chrome_traces(traces, {"host-a GPU 0 (gray)", "host-a GPU 1 (gray)", ""});
  EXPECT_EQ(merged.at("displayTimeUnit"), "ms");
  ASSERT_EQ(merged.at("traceEvents").size(), 3u * 5u);  // per rank: name, sort index, 3 events kept
  const std::vector<std::string> names = {"rank 0: host-a GPU 0 (gray)", "rank 1: host-a GPU 1 (gray)", "rank 2: gray"};
  for (int rank = 0; rank < 3; ++rank) {
    SCOPED_TRACE(rank);
    const int pid = rank + 1;
    const json* name = metadata(merged, pid, "process_name");
    ASSERT_NE(name, nullptr);
    EXPECT_EQ(name->at("args").at("name"), names[static_cast<std::size_t>(rank)]);
    const json* sort = metadata(merged, pid, "process_sort_index");
    ASSERT_NE(sort, nullptr);
    EXPECT_EQ(sort->at("args").at("sort_index"), pid);
    // The rank's own events, tid, ts and everything else as they were.
    const auto events = events_of_pid(merged, pid);
    const json& original = traces[static_cast<std::size_t>(rank)].at("traceEvents");
    ASSERT_EQ(events.size(), 5u);
    for (std::size_t i = 1; i < original.size(); ++i) {
      json expected = original[i];
      expected["pid"] = pid;
      EXPECT_EQ(events[i + 1], expected) << i;
    }
  }
}

TEST(MergeChromeTraces, NoPidZeroAndNoOtherPids) {
  const json merged = merge_chrome_traces({rank_trace("a", 0), rank_trace("b", 0)}, {"a", "b"});
  for (const auto& e : merged.at("traceEvents")) {
    EXPECT_TRUE(e.at("pid") == 1 || e.at("pid") == 2) << e.dump();
  }
}

TEST(MergeChromeTraces, TraceWithoutProcessNameGetsOne) {
  const json bare = {{"traceEvents", json::array({{{"name", "x"}, {"ph", "X"}, {"pid", 4}, {"tid", 2}, {"ts", 1}, {"dur", 1}}})}};
  const json merged = merge_chrome_traces({bare, bare}, {"", "named"});
  EXPECT_EQ(metadata(merged, 1, "process_name")->at("args").at("name"), "rank 0");
  EXPECT_EQ(metadata(merged, 2, "process_name")->at("args").at("name"), "rank 1: named");
  EXPECT_FALSE(merged.contains("displayTimeUnit"));
  EXPECT_EQ(events_of_pid(merged, 2).back().at("tid"), 2);
}

TEST(MergeChromeTraces, OffsetsShiftEveryTimedEventOfTheirRank) {
  const json merged = merge_chrome_traces({rank_trace("a", 0), rank_trace("b", 0)}, {"a", "b"}, {0.0, 250.5});
  const auto zero = events_of_pid(merged, 1);
  const auto one = events_of_pid(merged, 2);
  EXPECT_DOUBLE_EQ(zero[2].at("ts").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(one[2].at("ts").get<double>(), 250.5);
  EXPECT_DOUBLE_EQ(one[3].at("ts").get<double>(), 255.5);
  EXPECT_EQ(one[2].at("dur"), 5.0);       // durations do not move
  EXPECT_FALSE(one[4].contains("ts"));    // nor metadata without a time
}

TEST(MergeChromeTraces, EmptyInputGivesAnEmptyTrace) {
  const json merged = merge_chrome_traces({}, {});
  EXPECT_EQ(merged, (json{{"traceEvents", json::array()}}));
}

TEST(MergeChromeTraces, MergesWhatTheTimelineWrites) {
  pipeline::Timeline a, b;
  a.add({pipeline::Stage::h2d, 0, 0, 1, 10.0, 11.0, 1024});
  a.add({pipeline::Stage::compute, 0, 0, 1, 11.0, 12.5, 0});
  b.add({pipeline::Stage::d2h, 1, 3, 2, 40.0, 41.0, 2048});
  const json ta = a.chrome_trace("gray GPU 0"), tb = b.chrome_trace("gray GPU 1");
  const json merged = merge_chrome_traces({ta, tb}, {"", ""});
  EXPECT_EQ(metadata(merged, 1, "process_name")->at("args").at("name"), "rank 0: gray GPU 0");
  EXPECT_EQ(metadata(merged, 2, "process_name")->at("args").at("name"), "rank 1: gray GPU 1");
  std::size_t slices = 0;
  for (const auto& e : merged.at("traceEvents")) slices += e.at("ph") == "X" ? 1 : 0;
  EXPECT_EQ(slices, 3u);
  // Every event of the inputs is there once, but for the process names they replace.
  EXPECT_EQ(merged.at("traceEvents").size(), ta.at("traceEvents").size() + tb.at("traceEvents").size() - 2 + 4);
}

void expect_invalid_naming(const std::vector<json>& traces, const std::string& words) {
  std::vector<std::string> names(traces.size());
  try {
    (void)merge_chrome_traces(traces, names);
    ADD_FAILURE() << "no exception; expected one saying " << words;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(MergeChromeTraces, MalformedTracesNameTheRank) {
  const json good = rank_trace("a", 0);
  expect_invalid_naming({good, json::array()}, "rank 1's trace is not a JSON object");
  expect_invalid_naming({good, good, json{{"events", json::array()}}}, "rank 2's trace has no traceEvents array");
  expect_invalid_naming({json{{"traceEvents", "none"}}}, "rank 0's trace has no traceEvents array");
  expect_invalid_naming({good, json{{"traceEvents", json::array({json::object(), 3})}}}, "rank 1's event 1 is not an object");
  expect_invalid_naming({json{{"traceEvents", json::array({{{"ph", "X"}, {"ts", "soon"}}})}}, good},
                        "rank 0's event 0 has a ts that is not a number");
}

TEST(MergeChromeTraces, MismatchedNamesOrOffsetsAreRejected) {
  const json good = rank_trace("a", 0);
  EXPECT_THROW((void)merge_chrome_traces({good, good}, {"one"}), std::invalid_argument);
  EXPECT_THROW((void)merge_chrome_traces({good, good}, {"a", "b"}, {1.0}), std::invalid_argument);
  EXPECT_THROW((void)merge_chrome_traces({good}, {"a"}, {std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW((void)merge_chrome_traces({good}, {"a"}, {std::numeric_limits<double>::infinity()}), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe::report
