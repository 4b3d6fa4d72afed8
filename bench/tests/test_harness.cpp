// SPDX-License-Identifier: Apache-2.0
// The harness alone: what measure() runs and keeps, parameters by type, the JSON envelope
// and the printed table; and that every benchmark of the catalog declares usable parameters.

#include "harness/benchmark.hpp"
#include "harness/measure.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace streampipe::bench {
namespace {

TEST(Measure, PoisonsRunsAndVerifiesEveryRunKeepingOnlyTimedOnes) {
  std::vector<std::string> log;
  int run = 0;
  const Samples s = measure(2, 3, {[&] { log.push_back("poison"); },
                                   [&] {
                                     log.push_back("run");
                                     return static_cast<double>(++run);
                                   },
                                   [&] {
                                     log.push_back("verify");
                                     return true;
                                   }});
  EXPECT_EQ(s.values, (std::vector<double>{3, 4, 5}));
  EXPECT_TRUE(s.verified);
  ASSERT_EQ(log.size(), 15u);
  for (std::size_t i = 0; i < log.size(); i += 3) {
    EXPECT_EQ(log[i], "poison");
    EXPECT_EQ(log[i + 1], "run");
    EXPECT_EQ(log[i + 2], "verify");
  }
  EXPECT_DOUBLE_EQ(s.summary().median, 4);
}

TEST(Measure, AWrongWarmUpOutputFailsTheRow) {
  int run = 0;
  const Samples s = measure(1, 2, {{}, [&] { return static_cast<double>(run++); }, [&] { return run > 1; }});
  EXPECT_FALSE(s.verified);
  EXPECT_EQ(s.values.size(), 2u);
}

TEST(Measure, AlternatesVariantsRunByRun) {
  std::string order;
  const Trial trials[] = {{{}, [&] { order += 'a'; return 1.0; }, {}}, {{}, [&] { order += 'b'; return 2.0; }, {}}};
  const auto s = measure_alternating(1, 2, trials);
  EXPECT_EQ(order, "ababab");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].values, (std::vector<double>{2, 2}));
}

TEST(Measure, RatesPerSecond) {
  const std::vector<double> ms = {500, 250};
  EXPECT_EQ(per_second(ms, 10), (std::vector<double>{20, 40}));
  EXPECT_GE(wall_ms([] {}), 0.0);
}

Benchmark toy() {
  Benchmark b;
  b.name = "toy";
  b.parameters = {{"count", "how many", std::int64_t{3}, 1, 10},
                  {"ratio", "a fraction", 0.5, 0, 1},
                  {"mode", "which", std::string("fast"), 0, 0, {"fast", "slow"}},
                  {"sizes", "list", std::vector<std::int64_t>{1, 2}}};
  b.run = [](State& state) {
    Table t;
    t.name = "only";
    t.title = "toy table";
    t.headers = {"row", "ms"};
    Row ok{"ok", "ms", {1, 2, 3}, true, false, {"ok", "2"}, {{"extra", state.get<int>("count")}}};
    Row wrong{"wrong", "ms", {4}, state.get<std::string>("mode") == "fast", true, {"wrong", "4"}, nlohmann::json::object()};
    t.rows = {ok, wrong};
    t.notes = {"a note"};
    state.result().limits = {{"gbps", 1.5}};
    state.print("first line\n");
    state.add_table(std::move(t));
    EXPECT_EQ(state.get<std::size_t>("count"), 3u);
    EXPECT_DOUBLE_EQ(state.get<double>("ratio"), 0.5);
    EXPECT_EQ(state.get<std::vector<std::int64_t>>("sizes").size(), 2u);
    EXPECT_THROW((void)state.get<int>("missing"), std::out_of_range);
  };
  return b;
}

TEST(Harness, RunsABenchmarkAndWritesTheEnvelope) {
  const Benchmark b = toy();
  Values values = defaults(b);
  values["mode"] = std::string("slow");
  std::string printed;
  const Result r = run(b, {5, 1, 0, {0}, false, {}}, values, [&](const std::string& text) { printed += text; });
  EXPECT_EQ(printed.rfind("first line\n", 0), 0u);
  EXPECT_NE(printed.find("toy table"), std::string::npos);
  EXPECT_NE(printed.find("a note\n"), std::string::npos);
  EXPECT_FALSE(r.verified());  // the "wrong" row failed with mode=slow

  const auto j = envelope(r, "streampipe bench toy");
  EXPECT_EQ(j["benchmark"], "toy");
  EXPECT_EQ(j["command"], "streampipe bench toy");
  EXPECT_EQ(j["device"]["index"], -1);
  EXPECT_TRUE(j.contains("host"));
  EXPECT_EQ(j["runs"], 5);
  EXPECT_EQ(j["warmup"], 1);
  EXPECT_EQ(j["parameters"]["mode"], "slow");
  EXPECT_EQ(j["parameters"]["sizes"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(j["limits"]["gbps"], 1.5);
  EXPECT_EQ(j["verified"], false);
  const auto& rows = j["tables"][0]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["unit"], "ms");
  EXPECT_EQ(rows[0]["summary"]["median"], 2.0);
  EXPECT_EQ(rows[0]["summary"]["min"], 1.0);
  EXPECT_EQ(rows[0]["summary"]["max"], 3.0);
  EXPECT_EQ(rows[0]["extra"], 3);
  EXPECT_FALSE(rows[0].contains("peer"));
  EXPECT_EQ(rows[1]["peer"], true);
  EXPECT_EQ(rows[1]["verified"], false);
}

TEST(Harness, FlagsRealListsOutputsAndFiles) {
  Benchmark b;
  b.name = "outputs";
  b.parameters = {{"loud", "a flag", false}, {"rates", "reals", std::vector<double>{1.5, 2.5}}};
  b.outputs = {{"plot", "a plot"}, {"log", "a log"}};
  b.files = [](const Values& v) { return std::vector<File>{{"--loud", std::get<bool>(v.at("loud")) ? "a" : "b"}}; };
  b.run = [](State& state) {
    EXPECT_TRUE(state.get<bool>("loud"));
    EXPECT_EQ(state.get<std::vector<double>>("rates"), (std::vector<double>{1.5, 2.5}));
    EXPECT_TRUE(state.force());
    for (const char* name : {"plot", "log"})
      if (state.wants(name)) state.result().outputs[name] = std::string("made ") + name;
  };
  Values values = defaults(b);
  EXPECT_EQ(b.files(values).front().path, "b");
  values["loud"] = true;
  EXPECT_EQ(b.files(values).front().path, "a");
  Settings settings;
  settings.force = true;
  settings.outputs = {"plot"};
  const Result r = run(b, settings, values, [](const std::string&) {});
  ASSERT_EQ(r.outputs.size(), 1u);  // only what was asked for
  EXPECT_EQ(r.outputs.at("plot"), "made plot");
  const auto j = envelope(r, "x");
  EXPECT_EQ(j["parameters"]["loud"], true);
  EXPECT_EQ(j["parameters"]["rates"], nlohmann::json::array({1.5, 2.5}));
  EXPECT_FALSE(j.contains("outputs"));  // the outputs are the runner's to write, not the envelope's
}

TEST(Harness, StreamsDeclaresTheTracesItWrites) {
  const Benchmark& b = find("streams");
  Values values = defaults(b);
  EXPECT_TRUE(b.files(values).empty());  // no --trace-dir
  values["trace-dir"] = std::string("t");
  EXPECT_EQ(b.files(values).size(), 18u);  // 9 engine runs, a trace and a Gantt chart each
  values["experiment"] = std::string("gray");
  const auto gray = b.files(values);
  ASSERT_EQ(gray.size(), 6u);
  EXPECT_EQ(gray.front().option, "--trace-dir");
  EXPECT_EQ(gray.front().path, "t/gray-engine-pinned.trace.json");
  values["experiment"] = std::string("overhead");
  EXPECT_TRUE(b.files(values).empty());
}

TEST(Harness, CommandLineNamesThisProgram) {
  EXPECT_NE(command_line().find("test_bench_harness"), std::string::npos);
}

TEST(Catalog, EveryBenchmarkDeclaresUsableParameters) {
  std::set<std::string> names;
  for (const auto& b : catalog()) {
    EXPECT_TRUE(names.insert(b.name).second) << b.name;
    EXPECT_FALSE(b.description.empty()) << b.name;
    EXPECT_FALSE(b.mismatch.empty()) << b.name;
    EXPECT_TRUE(b.run) << b.name;
    // The runner's own options (--json, --runs, --warmup, --device, --force, --help) are taken.
    std::set<std::string> params = {"json", "runs", "warmup", "device", "force", "help"};
    for (const auto& o : b.outputs) EXPECT_TRUE(params.insert(o.name).second) << b.name << " --" << o.name;
    for (const auto& p : b.parameters) {
      EXPECT_TRUE(params.insert(p.name).second) << b.name << " --" << p.name;
      if (const auto* v = std::get_if<std::int64_t>(&p.value); v != nullptr && p.show_default && p.min < p.max) {
        EXPECT_GE(static_cast<double>(*v), p.min) << b.name << " --" << p.name;
        EXPECT_LE(static_cast<double>(*v), p.max) << b.name << " --" << p.name;
      }
    }
    EXPECT_EQ(&find(b.name), &b);
  }
  EXPECT_EQ(names, (std::set<std::string>{"gray", "jit", "life", "mandelbrot", "serve", "streams"}));
  EXPECT_THROW((void)find("nothing"), std::out_of_range);
}

}  // namespace
}  // namespace streampipe::bench
