// SPDX-License-Identifier: Apache-2.0
// The corpus's `life` cases: broken and hostile patterns, inputs that are not files,
// outputs that would replace the pattern or a frame, bad numbers, and the memory a long run
// may use when nobody asked for every generation's population.
#include "bad_inputs.hpp"
#include "corpus.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

namespace streampipe::testing {

namespace fs = std::filesystem;

namespace {

void patterns(Dir d) {
  write_text(d / "glider.rle", "#N Glider\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n");
  write_text(d / "earlier.csv", "generation,universe0\n0,5\n");  // an earlier output
}

std::vector<std::string> life(std::vector<std::string> args) {
  args.insert(args.begin(), {"life", "--backend", "host"});
  return args;
}

// A check that the run's peak memory is that of a short run (`life(short_args)` in the same
// folder), give or take 16 MiB.
std::function<void(Dir, const RunResult&)> memory_of_a_short_run(std::vector<std::string> short_args) {
  return [short_args](Dir d, const RunResult& r) {
    const RunResult short_run = run_cli(life(short_args), d);
    ASSERT_EQ(short_run.exit_code, 0) << short_run.describe();
    EXPECT_LT(r.max_rss_kib, short_run.max_rss_kib + 16 * 1024)
        << "long run " << r.max_rss_kib << " KiB, short run " << short_run.max_rss_kib << " KiB";
  };
}

// Bad usage beside the patterns: refused before any work.
Case life_refused(std::string name, std::vector<std::string> args, std::vector<std::string> mentions,
                  std::function<void(Dir)> extra_setup = {}) {
  return refused_case(std::move(name), patterns, life(std::move(args)), std::move(mentions), std::move(extra_setup));
}

// A run beside the patterns that succeeds (exit 0), then passes `check`.
Case life_succeeds(std::string name, std::vector<std::string> args, std::function<void(Dir, const RunResult&)> check) {
  Case c;
  c.name = std::move(name);
  c.setup = patterns;
  c.args = life(std::move(args));
  c.exit_code = 0;
  c.check = std::move(check);
  return c;
}

}  // namespace

std::vector<Case> life_cases() {
  std::vector<Case> cases;
  // --devices: malformed lists are bad usage on every backend (here the host's).
  cases.push_back(life_refused("life_devices_named_twice", {"--devices", "0,1,0"}, {"--devices", "GPU 0 is named twice"}));
  cases.push_back(life_refused("life_devices_empty_entry", {"--devices", "0,,1"}, {"--devices", "empty entry"}));
  cases.push_back(life_refused("life_devices_negative", {"--devices", "1,-2"}, {"--devices", "-2 is negative"}));
  cases.push_back(life_refused("life_devices_not_a_number", {"--devices", "gpu0"}, {"--devices", "'gpu0' is not a GPU index"}));
  cases.push_back(life_refused("life_device_option_is_gone", {"--device", "0"}, {"--device"}));
  // A negative seed would wrap around to a huge one: refused, not reinterpreted.
  cases.push_back(life_refused("life_seed_negative", {"--seed", "-1"}, {"--seed", "'-1' is negative"}));
  // On the host backend a list names simulated devices the engine deals the universes to.
  cases.push_back(life_succeeds("life_devices_simulated_on_the_host",
                                {"--devices", "0,2", "-u", "3", "-g", "4", "--size", "16x16"},
                                [](Dir, const RunResult& r) {
                                  EXPECT_NE(r.out.find("dealt to 2 simulated device(s)"), std::string::npos)
                                      << r.describe();
                                  EXPECT_NE(r.out.find("simulated device"), std::string::npos) << r.describe();
                                }));
  // Patterns.
  cases.push_back(life_refused("life_pattern_corrupt", {"-p", "bad.rle"}, {"bad.rle:2"},
                          [](Dir d) { write_text(d / "bad.rle", "x = 3, y = 3\nbob$2bq$3o!\n"); }));
  cases.push_back(life_refused("life_pattern_missing", {"-p", "nothing.rle"}, {"nothing.rle"}));
  cases.push_back(life_refused("life_pattern_empty_file", {"-p", "empty.rle"}, {"empty.rle"},
                          [](Dir d) { write_text(d / "empty.rle", ""); }));
  cases.push_back(life_refused("life_pattern_fifo", {"-p", "pipe.rle"}, {"pipe.rle", "FIFO"},
                          [](Dir d) { ASSERT_EQ(::mkfifo((d / "pipe.rle").c_str(), 0644), 0); }));
  cases.push_back(life_refused("life_pattern_device", {"-p", "/dev/zero"}, {"/dev/zero", "character device"}));
  {
    Case c = life_refused("life_pattern_huge_header", {"-p", "huge.rle", "--size", "64x64"}, {"huge.rle"}, [](Dir d) {
      write_text(d / "huge.rle", "x = 2000000000, y = 2000000000, rule = B3/S23\n2000000000o!\n");
    });
    c.address_space_limit = std::uint64_t{4} << 30;
    cases.push_back(c);
  }
  cases.push_back(life_refused("life_pattern_above_max_cells", {"-p", "glider.rle", "--max-cells", "4"},
                          {"glider.rle", "--max-cells"}));
  cases.push_back(
      life_refused("life_pattern_larger_than_board", {"-p", "glider.rle", "--size", "2x2"}, {"glider.rle", "does not fit"}));
  {
    Case c = life_refused("life_pattern_unreadable", {"-p", "glider.rle"}, {"glider.rle", "Permission denied"});
    run_unprivileged(c, "glider.rle");
    cases.push_back(c);
  }

  // Outputs against the pattern, earlier outputs, frames and special files.
  cases.push_back(life_refused("life_population_is_the_pattern",
                          {"-p", "glider.rle", "--population", "glider.rle", "--force"},
                          {"--population", "glider.rle", "input"}));
  cases.push_back(life_refused("life_json_is_the_pattern_through_a_link",
                          {"-p", "glider.rle", "--json", "alias.rle", "--force", "--allow-special-outputs"},
                          {"--json", "alias.rle", "input"},
                          [](Dir d) { fs::create_symlink("glider.rle", d / "alias.rle"); }));
  cases.push_back(life_refused("life_population_exists_without_force", {"-g", "3", "--population", "earlier.csv"},
                          {"--population", "earlier.csv", "--force"}));
  cases.push_back(life_refused("life_json_dev_stdout_forced", {"-g", "3", "--json", "/dev/stdout", "--force"},
                          {"--json", "/dev/stdout", "symbolic link"}));
  cases.push_back(
      life_refused("life_population_is_a_frame",
              {"-g", "4", "--snapshot-every", "2", "-o", "frames", "--population", "frames/life-u0-g000002.png"},
              {"--population", "frame"}));
  cases.push_back(life_refused("life_frame_exists_without_force", {"-g", "4", "--snapshot-every", "2", "-o", "frames"},
                          {"-o frames", "life-u0-g000004.png"},
                          [](Dir d) { write_png(d / "frames" / "life-u0-g000004.png", 4, 4); }));
  cases.push_back(life_refused("life_frame_is_a_symlink_forced",
                          {"-g", "4", "--snapshot-every", "2", "-o", "frames", "--force"},
                          {"life-u0-g000002.png", "symbolic link"}, [](Dir d) {
                            fs::create_directories(d / "frames");
                            fs::create_symlink("../earlier.csv", d / "frames" / "life-u0-g000002.png");
                          }));

  // Numbers and names.
  cases.push_back(life_refused("life_size_not_wxh", {"--size", "10"}, {"--size"}));
  cases.push_back(life_refused("life_size_without_cells", {"--size", "0x5"}, {"--size"}));
  cases.push_back(life_refused("life_size_no_board_can_have", {"--size", "4294967295x4294967295"}, {"--size", "too large"}));
  cases.push_back(life_refused("life_density_nan", {"--density", "nan"}, {"--density", "nan"}));
  cases.push_back(life_refused("life_density_infinite", {"--density", "inf"}, {"--density"}));
  cases.push_back(life_refused("life_density_negative", {"--density", "-0.5"}, {"--density"}));
  cases.push_back(life_refused("life_fps_nan", {"--fps", "nan"}, {"--fps", "nan"}));
  cases.push_back(life_refused("life_generations_negative", {"-g", "-5"}, {"--generations"}));
  cases.push_back(life_refused("life_universes_zero", {"-u", "0"}, {"--universes"}));
  cases.push_back(life_refused("life_kernel_unknown", {"--kernel", "warp"}, {"--kernel", "warp"}));
  cases.push_back(
      life_refused("life_offset_outside", {"-p", "glider.rle", "--size", "8x8", "--offset", "9,0"}, {"--offset"}));
  cases.push_back(life_refused("life_snapshots_without_folder", {"--snapshot-every", "2"}, {"--snapshot-every"}));
  cases.push_back(life_refused("life_json_empty_name", {"--json", ""}, {"--json", "''"}));

  // Population to a standard output that cannot take it.
  cases.push_back(to_a_full_standard_output("life_population_to_a_full_standard_output", patterns,
                                            life({"-g", "3", "--population", "-"})));
  // A long run keeps no per-generation population nobody asked for: its peak memory is that
  // of a short one (the log of 4 million generations alone would be 32 MB).
  cases.push_back(life_succeeds("life_long_run_memory_stays_flat", {"--size", "3x3", "-g", "4000000"},
                                memory_of_a_short_run({"--size", "3x3", "-g", "10"})));

  // Issue 36. Class 13: boards beyond the memory there is are refused before any is made,
  // with the bytes needed and available (2048 states of 4 GiB: more than any machine has;
  // the address-space limit keeps a build without the check from taking the machine).
  {
    Case c = life_refused("life_boards_beyond_the_memory_available", {"--size", "65536x65536", "-u", "1024"},
                     {"1024 universe(s) of 65536x65536 cells", "needs", "is available"});
    c.address_space_limit = std::uint64_t{4} << 30;
    cases.push_back(c);
  }
  cases.push_back(life_refused("life_boards_beyond_max_memory", {"--size", "4096x4096", "-u", "64", "--max-memory-mib", "256"},
                          {"needs", "--max-memory-mib 256"}));
  // Class 21: a frame too large for --scale is refused up front (exit 2), not after the work.
  {
    Case c = life_refused("life_frame_too_large_for_scale",
                     {"--size", "50000x50000", "-g", "0", "--snapshot-every", "1", "-o", "frames"},
                     {"--scale 1", "too large"});
    c.address_space_limit = std::uint64_t{8} << 30;
    cases.push_back(c);
  }
  // Class 18: a flag taken as a file name.
  cases.push_back(life_refused("life_population_takes_a_flag_as_its_name", {"-g", "3", "--population", "--force"},
                          {"--population", "'--force' looks like an option"}));
  // Class 2: --population never replaces an image an option took by mistake.
  cases.push_back(life_refused("life_population_over_an_image_forced", {"-g", "3", "--population", "pic.png", "--force"},
                          {"--population", "pic.png", "a PNG image"}, [](Dir d) { write_png(d / "pic.png"); }));
  // Class 19: a limit of -1 is not "no limit", a seed past 2^64 - 1 is not saturated, and a
  // leading zero is not octal.
  cases.push_back(life_refused("life_max_cells_negative", {"-p", "glider.rle", "--max-cells", "-1"},
                          {"--max-cells", "'-1' is negative"}));
  cases.push_back(life_refused("life_seed_beyond_64_bits", {"--seed", "18446744073709551616"}, {"--seed", "out of range"}));
  cases.push_back(life_succeeds("life_generations_with_a_leading_zero_are_decimal", {"--size", "8x8", "-g", "010"},
                                [](Dir, const RunResult& r) {
                                  EXPECT_NE(r.out.find(", 10 generation(s)"), std::string::npos) << r.describe();
                                }));
  // Class 14: --population streams its rows: a closed standard output stops the run at once
  // (it used to compute every generation, then die of SIGPIPE), and a long run's memory
  // stays that of a short one.
  {
    Case c;
    c.name = "life_population_to_a_closed_pipe_stops_at_once";
    c.setup = patterns;
    c.args = life({"--size", "8x8", "-g", "100000000", "--population", "-"});
    c.exit_code = 1;
    c.mentions = {"standard output", "Broken pipe"};
    c.stdout_closed_pipe = true;
    c.address_space_limit = std::uint64_t{4} << 30;
    c.check = [](Dir, const RunResult& r) { EXPECT_EQ(r.out, ""); };
    cases.push_back(c);
  }
  {
    const auto flat = memory_of_a_short_run({"--size", "3x3", "-g", "10", "--population", "short.csv"});
    Case c = life_succeeds("life_population_of_a_long_run_keeps_memory_flat",
                           {"--size", "3x3", "-g", "4000000", "--population", "long.csv"},
                           [flat](Dir d, const RunResult& r) {
                             EXPECT_GT(fs::file_size(d / "long.csv"), 4000000u * 4);
                             flat(d, r);
                           });
    c.may_create = {"long.csv"};
    cases.push_back(c);
  }
  return cases;
}

}  // namespace streampipe::testing
