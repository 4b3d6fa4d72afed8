// SPDX-License-Identifier: Apache-2.0
// The command-line conventions every subcommand follows (apps/streampipe/outputs.hpp), on the
// host backend: `--json -` (and the other machine outputs) put only JSON on standard output
// and the human tables on standard error; two outputs on standard output are bad usage; an
// existing file is refused before any work (exit 2, unchanged) and replaced with --force;
// -o names a folder everywhere; every JSON names its version and schema; gray is quiet.
#include "report_cli.hpp"

#include "streampipe/version.hpp"

#include <algorithm>
#include <set>
#include <utility>
#include <sstream>
#include <vector>

namespace streampipe::testing {
namespace {

class CliConventions : public ReportCli {
 protected:
  // `args` writes `file` (relative to the test folder): refused while it exists (exit 2, the
  // error naming `option` and `shown`, the file byte for byte unchanged), then replaced with
  // --force.
  void refused_then_forced(const std::string& args, const std::string& option, const std::string& file,
                           const std::string& shown) {
    const std::string keep = "keep me\n";
    std::filesystem::create_directories((dir_ / file).parent_path());
    std::ofstream(dir_ / file, std::ios::binary) << keep;
    EXPECT_EQ(run(args), 2) << args << "\n" << context();
    EXPECT_NE(stderr_.find(option + " " + shown), std::string::npos) << args << "\n" << context();
    EXPECT_NE(stderr_.find("--force"), std::string::npos) << args << "\n" << context();
    EXPECT_EQ(read(file), keep) << args;
    EXPECT_EQ(run(args + " --force"), 0) << args << "\n" << context();
    EXPECT_NE(read(file), keep) << args;
  }
};

// Tiny runs of every command, to be completed with output options.
const char* const kServe = "serve-bench --backend host --layers 16,8 --concurrency 1 --window-ms 10 --runs 1 --warmup 0";
const char* const kBench = "bench streams --experiment overhead --overhead-items 20 --runs 1 --warmup 0";
const char* const kLife = "life --backend host --size 16x12 -g 3";
const char* const kMandelbrot = "mandelbrot --backend host --size 24x16 -i 50";
const char* const kGray = "gray in -o out --backend host -q --threads 1";

TEST_F(CliConventions, JsonDashPutsOnlyJsonOnStandardOutput) {
  make_images(2);
  struct Case {
    std::string args;
    std::string table;  // a piece of the human text, which must be on stderr
    std::string key;    // a key of the JSON on stdout
  };
  const std::vector<Case> cases = {
      {"info --no-measure --json -", "host: ", "host"},
      {std::string(kBench) + " --json -", "us/item", "tables"},
      {std::string(kServe) + " --json -", "mode     clients", "points"},
      {std::string(kLife) + " --json -", "universe", "final_populations"},
      {std::string(kLife) + " --report-json -", "universe", "queries"},
      {std::string(kMandelbrot) + " --no-image --json -", "pixel(s) differ", "iterations_total"},
      {"gray in -o out1 --backend host --threads 1 --json -", "file(s): 2 ok", "files"},
      {"gray in -o out2 --backend host --threads 1 --trace -", "file(s): 2 ok", "traceEvents"},
  };
  for (const auto& c : cases) {
    ASSERT_EQ(run(c.args), 0) << c.args << "\n" << context();
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(stdout_)) << c.args << "\n" << context();
    EXPECT_TRUE(j.contains(c.key)) << c.args;
    EXPECT_NE(stderr_.find(c.table), std::string::npos) << c.args << "\n" << context();
  }
  // serve-bench keeps the keys scripts/compare_ab.py reads.
  ASSERT_EQ(run(std::string(kServe) + " --json -"), 0) << context();
  const auto points = nlohmann::json::parse(stdout_).at("points");
  ASSERT_EQ(points.size(), 2u);  // none and dynamic (no graphs on the host)
  EXPECT_EQ(points[0].at("mode"), "none");
  EXPECT_EQ(points[0].at("clients"), 1);
  EXPECT_GT(points[0].at("throughput_rps").at("median").get<double>(), 0.0);
  // --population - is CSV, alone on standard output.
  ASSERT_EQ(run(std::string(kLife) + " --population -"), 0) << context();
  EXPECT_EQ(stdout_.rfind("generation,universe0\n0,", 0), 0u) << context();
  EXPECT_EQ(stdout_.find("universe  "), std::string::npos) << context();
  // Without "-" the human text stays on standard output.
  ASSERT_EQ(run(std::string(kLife) + " --json l.json"), 0) << context();
  EXPECT_NE(stdout_.find("universe"), std::string::npos) << context();
  EXPECT_TRUE(stderr_.empty()) << context();
}

TEST_F(CliConventions, TwoOutputsOnStandardOutputAreBadUsage) {
  make_images(1);
  for (const std::string& args : {std::string(kLife) + " --json - --population -",
                                 std::string(kLife) + " --json - --report-json -",
                                 std::string(kServe) + " --json - --svg -", std::string(kServe) + " --report-json - --json -",
                                 std::string(kMandelbrot) + " --json - --report-json -",
                                 std::string(kGray) + " --json - --gantt -"}) {
    EXPECT_EQ(run(args), 2) << args << "\n" << context();
    EXPECT_NE(stderr_.find("standard output"), std::string::npos) << args << "\n" << context();
    EXPECT_TRUE(stdout_.empty()) << args << "\n" << context();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
  EXPECT_EQ(run(std::string(kLife) + " --json same.json --report-json ./same.json"), 2) << context();
  EXPECT_NE(stderr_.find("both name"), std::string::npos) << context();
}

TEST_F(CliConventions, AnExistingFileIsRefusedUntilForced) {
  make_images(1);
  refused_then_forced("info --no-measure --json i.json", "--json", "i.json", "i.json");
  refused_then_forced(std::string(kBench) + " --json b.json", "--json", "b.json", "b.json");
  refused_then_forced(std::string(kServe) + " --json s.json", "--json", "s.json", "s.json");
  refused_then_forced(std::string(kServe) + " --svg s.svg", "--svg", "s.svg", "s.svg");
  refused_then_forced(std::string(kServe) + " --report-json r.json", "--report-json", "r.json", "r.json");
  refused_then_forced(std::string(kLife) + " --json l.json", "--json", "l.json", "l.json");
  refused_then_forced(std::string(kLife) + " --population p.csv", "--population", "p.csv", "p.csv");
  refused_then_forced(std::string(kLife) + " --snapshot-every 3 -o frames", "-o frames:",
                         "frames/life-u0-g000003.png", "life-u0-g000003.png");
  refused_then_forced(std::string(kMandelbrot) + " -o m --image m.png", "--image", "m/m.png", "m/m.png");
  refused_then_forced(std::string(kMandelbrot) + " --no-image --json m.json", "--json", "m.json", "m.json");
  refused_then_forced(std::string(kGray) + " --json g.json", "--json", "g.json", "g.json");
  refused_then_forced(std::string(kGray) + " --gantt g.svg", "--gantt", "g.svg", "g.svg");
}

TEST_F(CliConventions, DemoRefusesAnEarlierDemosFilesUntilForced) {
  refused_then_forced("demo -o d", "-o", "d/bench.json", "d/bench.json");
  EXPECT_FALSE(read("d/gray-engine-pageable.trace.json").empty());
  // A trace of the earlier run is refused as well, before any work.
  std::filesystem::remove(dir_ / "d" / "bench.json");
  EXPECT_EQ(run("demo -o d"), 2) << context();
  EXPECT_NE(stderr_.find("-o d/"), std::string::npos) << context();
  EXPECT_TRUE(stdout_.empty()) << context();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "d" / "bench.json"));
}

TEST_F(CliConventions, DashOIsAFolderEverywhere) {
  make_images(1);
  std::ofstream(dir_ / "file") << "a file";
  for (const std::string& args : {std::string("gray in -o file --backend host -q"), std::string("demo -o file"),
                                 std::string(kLife) + " --snapshot-every 1 -o file",
                                 std::string(kMandelbrot) + " -o file"}) {
    EXPECT_EQ(run(args), 2) << args << "\n" << context();
    EXPECT_NE(stderr_.find("-o file"), std::string::npos) << args << "\n" << context();
  }
  EXPECT_EQ(read("file"), "a file");
  // mandelbrot's -o was its PNG before: a name like one is explained, not made a folder.
  EXPECT_EQ(run(std::string(kMandelbrot) + " -o m.png"), 2) << context();
  EXPECT_NE(stderr_.find("--image"), std::string::npos) << context();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "m.png"));
  EXPECT_EQ(run(std::string(kMandelbrot) + " --image sub/m.png"), 2) << context();
  // The long names of before still work, with the folder meaning.
  ASSERT_EQ(run("gray in --output o1 --backend host -q"), 0) << context();
  EXPECT_TRUE(std::filesystem::exists(dir_ / "o1" / "img0.png"));
  ASSERT_EQ(run(std::string(kMandelbrot) + " --output-dir o2"), 0) << context();
  EXPECT_TRUE(std::filesystem::exists(dir_ / "o2" / "mandelbrot.png"));
}

TEST_F(CliConventions, EveryJsonOutputNamesItsVersionAndSchema) {
  make_images(2);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"info --no-measure --json -", "info"},
      {std::string(kBench) + " --json -", "bench"},
      {std::string(kServe) + " --json -", "bench"},
      {std::string(kLife) + " --json -", "life"},
      {std::string(kLife) + " --report-json -", "latency-report"},
      {std::string(kMandelbrot) + " --no-image --json -", "mandelbrot"},
      {"gray in -o out1 --backend host --threads 1 --json -", "gray"},
  };
  for (const auto& [args, kind] : cases) {
    ASSERT_EQ(run(args), 0) << args << "\n" << context();
    const auto j = nlohmann::json::parse(stdout_);
    EXPECT_EQ(j.value("streampipe_version", ""), streampipe::version_string) << args;
    EXPECT_EQ(j.value("schema", ""), "streampipe." + kind + "/1") << args;
  }
  ASSERT_EQ(run(std::string(kLife) + " --population p.json"), 0) << context();
  const auto population = json("p.json");
  EXPECT_EQ(population.value("schema", ""), "streampipe.life.population/1");
  EXPECT_EQ(population.value("streampipe_version", ""), streampipe::version_string);
  EXPECT_EQ(population.at("populations").at(0).size(), 4u);  // universe 0, generations 0 to 3
}

// Each row says how many timed runs it had; on the host no GPU limit or target is claimed
// and a mode left out is named.
TEST_F(CliConventions, BenchRowsCountTheirRunsAndTheHostClaimsNoGpuFigures) {
  ASSERT_EQ(run("bench streams --experiment chunked --chunked-mib 16 --runs 2 --warmup 0 --json b.json"), 0)
      << context();
  const bool host = stdout_.find("no GPU") != std::string::npos;
  const auto j = json("b.json");
  for (const auto& table : j.at("tables"))
    for (const auto& row : table.at("rows"))
      EXPECT_EQ(row.at("runs"), row.at("summary").at("count")) << row.dump();
  EXPECT_NE(stdout_.find("runs"), std::string::npos) << context();
  if (host) {
    EXPECT_EQ(stdout_.find("limit:"), std::string::npos) << context();
    for (const auto& table : j.at("tables")) EXPECT_TRUE(table.at("limit").is_null()) << table.dump();
  }
  ASSERT_EQ(run(std::string(kServe) + " --json s.json"), 0) << context();
  if (stdout_.find("no GPU") != std::string::npos) {
    EXPECT_EQ(stdout_.find("target:"), std::string::npos) << context();
    EXPECT_NE(stdout_.find("graphs mode"), std::string::npos) << context();
    EXPECT_TRUE(json("s.json").at("targets").empty());
  }
}

// Quiet by default, as convert and ffmpeg are: one line; the report behind -v.
TEST_F(CliConventions, GrayPrintsOneLineUnlessVerbose) {
  make_images(2);
  ASSERT_EQ(run("gray in -o o1 --backend host --threads 1"), 0) << context();
  EXPECT_EQ(std::count(stdout_.begin(), stdout_.end(), '\n'), 1) << context();
  EXPECT_EQ(stdout_.rfind("gray: 2 file(s): 2 ok, 0 failed in ", 0), 0u) << context();
  EXPECT_NE(stdout_.find("on the CPU"), std::string::npos) << context();
  EXPECT_TRUE(stderr_.empty()) << context();  // not a terminal: no progress bar
  ASSERT_EQ(run("gray in -o o2 --backend host --threads 1 -v"), 0) << context();
  EXPECT_EQ(stdout_.rfind("gray: 2 file(s): 2 ok", 0), 0u) << context();
  EXPECT_NE(stdout_.find("where the time went"), std::string::npos) << context();
  EXPECT_NE(stdout_.find("bound by: "), std::string::npos) << context();
  ASSERT_EQ(run("gray in -o o3 --backend host --threads 1 -q"), 0) << context();
  EXPECT_TRUE(stdout_.empty()) << context();
  EXPECT_EQ(run("gray in -o o4 --backend host -q -v"), 2) << context();
  // --report keeps its meaning: the latency report.
  ASSERT_EQ(run("gray in -o o5 --backend host --threads 1 --report"), 0) << context();
  EXPECT_NE(stdout_.find("latency"), std::string::npos) << context();
}

}  // namespace
}  // namespace streampipe::testing
