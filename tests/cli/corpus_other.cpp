// SPDX-License-Identifier: Apache-2.0
// The corpus's cases for mandelbrot, info, bench, serve-bench, demo and the top level:
// numbers that are not finite, outputs that are special files, full standard outputs.
#include "bad_inputs.hpp"
#include "corpus.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

namespace streampipe::testing {

namespace fs = std::filesystem;

namespace {

void earlier_outputs(Dir d) {
  write_text(d / "earlier.json", "{\"an\": \"earlier output\"}\n");
  write_png(d / "renders" / "earlier.png", 8, 8);
}

// Bad usage beside earlier outputs: refused before any work.
Case refused_beside_outputs(std::string name, std::vector<std::string> args, std::vector<std::string> mentions,
                            std::function<void(Dir)> extra_setup = {}) {
  return refused_case(std::move(name), earlier_outputs, std::move(args), std::move(mentions), std::move(extra_setup));
}

// A check that `device` is still the character device it was before the run.
std::function<void(Dir, const RunResult&)> still_a_device(std::string device) {
  return [device](Dir, const RunResult&) {
    struct stat st {};
    ASSERT_EQ(::stat(device.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << device << " is no longer a device";
  };
}

std::vector<std::string> mandelbrot(std::vector<std::string> args) {
  args.insert(args.begin(), {"mandelbrot", "--backend", "host", "--size", "24x16", "-i", "50"});
  return args;
}

}  // namespace

std::vector<Case> other_cases() {
  std::vector<Case> cases;
  // mandelbrot: numbers.
  cases.push_back(
      refused_beside_outputs("mandelbrot_width_nan", mandelbrot({"--center", "0,0", "--width", "nan"}), {"--width", "nan"}));
  cases.push_back(refused_beside_outputs("mandelbrot_width_infinite", mandelbrot({"--center", "0,0", "--width", "inf"}), {"--width"}));
  cases.push_back(refused_beside_outputs("mandelbrot_width_negative", mandelbrot({"--center", "0,0", "--width", "-2"}), {"--width"}));
  cases.push_back(refused_beside_outputs("mandelbrot_width_without_center", mandelbrot({"--width", "2"}), {"--width", "--center"}));
  cases.push_back(refused_beside_outputs("mandelbrot_region_nan", mandelbrot({"--region", "-2,1,nan,1"}), {"--region", "nan"}));
  cases.push_back(refused_beside_outputs("mandelbrot_center_infinite", mandelbrot({"--center", "inf,0"}), {"--center", "inf"}));
  cases.push_back(refused_beside_outputs("mandelbrot_size_not_wxh", mandelbrot({"--size", "12"}), {"--size"}));
  cases.push_back(refused_beside_outputs("mandelbrot_iterations_zero", mandelbrot({"-i", "0"}), {"--iterations"}));
  cases.push_back(
      refused_beside_outputs("mandelbrot_precision_unknown", mandelbrot({"--precision", "half"}), {"--precision", "half"}));
  cases.push_back(refused_beside_outputs("mandelbrot_image_name_with_folder", mandelbrot({"--image", "sub/m.png"}), {"--image"}));
  // mandelbrot: outputs.
  cases.push_back(refused_beside_outputs("mandelbrot_image_is_dev_null_forced",
                          mandelbrot({"-o", "/dev", "--image", "null", "--force"}),
                          {"--image", "/dev/null", "character device"}));
  cases.push_back(refused_beside_outputs("mandelbrot_json_symlink_forced", mandelbrot({"--no-image", "--json", "l.json", "--force"}),
                          {"--json", "l.json", "symbolic link"},
                          [](Dir d) { fs::create_symlink("earlier.json", d / "l.json"); }));
  cases.push_back(refused_beside_outputs("mandelbrot_image_exists_without_force",
                          mandelbrot({"-o", "renders", "--image", "earlier.png"}),
                          {"--image", "renders/earlier.png", "--force"}));
  cases.push_back(
      refused_beside_outputs("mandelbrot_output_folder_is_a_file", mandelbrot({"-o", "earlier.json"}), {"-o", "earlier.json"}));
  {
    Case c;
    c.name = "mandelbrot_json_into_a_full_device";
    c.setup = earlier_outputs;
    c.args = mandelbrot({"--no-image", "--json", "/dev/full", "--allow-special-outputs"});
    c.exit_code = 1;
    c.mentions = {"/dev/full", "No space left"};
    c.check = still_a_device("/dev/full");
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "mandelbrot_json_into_dev_null_allowed";
    c.setup = earlier_outputs;
    c.args = mandelbrot({"--no-image", "--json", "/dev/null", "--allow-special-outputs"});
    c.exit_code = 0;
    c.check = still_a_device("/dev/null");
    cases.push_back(c);
  }

  // mandelbrot --devices.
  cases.push_back(refused_beside_outputs("mandelbrot_devices_named_twice", mandelbrot({"--no-image", "--devices", "2,2"}),
                          {"--devices", "GPU 2 is named twice"}));
  cases.push_back(refused_beside_outputs("mandelbrot_devices_too_large", mandelbrot({"--no-image", "--devices", "12345678901"}),
                          {"--devices", "too large"}));
  // --backend auto: a list names GPUs; 999 is missing here with or without a GPU, and the
  // message says what there is.
  cases.push_back(refused_beside_outputs("mandelbrot_devices_missing_gpu",
                          {"mandelbrot", "--size", "24x16", "-i", "50", "--no-image", "--devices", "999"},
                          {"--devices 999", "this machine has"}));
  {
    // Simulated GPUs on the host: the engine deals them the bands (a row each here: more
    // bands than the 16 rows were wanted), and the image is the same.
    Case c;
    c.name = "mandelbrot_devices_simulated_on_the_host";
    c.setup = earlier_outputs;
    c.args = mandelbrot({"--no-image", "--devices", "1,0,2"});
    c.exit_code = 0;
    c.check = [](Dir, const RunResult& r) {
      // The title names the GPUs that took bands: which of the three do depends on timing.
      EXPECT_NE(r.out.find(" simulated GPU"), std::string::npos) << r.describe();
      EXPECT_NE(r.out.find("16 bands of rows"), std::string::npos) << r.describe();
      for (const char* line : {"    simulated GPU 0: ", "    simulated GPU 1: ", "    simulated GPU 2: "})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << r.describe();
      EXPECT_NE(r.out.find(": 0 pixel(s) differ"), std::string::npos) << r.describe();
    };
    cases.push_back(std::move(c));
  }
  // info, bench, serve-bench, demo.
  cases.push_back(refused_beside_outputs("info_devices_missing_gpu", {"info", "--no-measure", "--devices", "0,999"},
                          {"--devices 0,999", "this machine has"}));
  cases.push_back(refused_beside_outputs("info_devices_empty", {"info", "--no-measure", "--devices", ""}, {"--devices is empty"}));
  cases.push_back(refused_beside_outputs("info_devices_all_in_a_list", {"info", "--no-measure", "--devices", "all,1"},
                          {"--devices", "'all' is not a GPU index"}));
  cases.push_back(refused_beside_outputs("info_device_option_is_gone", {"info", "-d", "0"}, {"-d"}));
  cases.push_back(refused_beside_outputs("info_runs_zero", {"info", "--runs", "0"}, {"--runs"}));
  cases.push_back(refused_beside_outputs("info_size_not_a_number", {"info", "--size-mib", "lots"}, {"--size-mib"}));
  cases.push_back(refused_beside_outputs("info_json_exists_without_force", {"info", "--no-measure", "--json", "earlier.json"},
                          {"--json", "earlier.json", "--force"}));
  cases.push_back(to_a_full_standard_output("info_to_a_full_standard_output", earlier_outputs,
                                            {"info", "--no-measure"}, {"No space left"}));
  cases.push_back(refused_beside_outputs("bench_unknown_benchmark", {"bench", "frobnicate"}, {"frobnicate"}));
  cases.push_back(refused_beside_outputs("bench_runs_zero", {"bench", "streams", "--runs", "0"}, {"--runs"}));
  cases.push_back(refused_beside_outputs("serve_bench_json_and_svg_one_file",
                          {"serve-bench", "--backend", "host", "--json", "s.out", "--svg", "s.out"},
                          {"--json", "--svg", "both name"}));
  cases.push_back(refused_beside_outputs("demo_output_folder_is_a_file", {"demo", "-o", "earlier.json"}, {"-o", "earlier.json"}));

  // The top level.
  cases.push_back(refused_beside_outputs("top_no_command", {}, {"subcommand"}));
  cases.push_back(refused_beside_outputs("top_unknown_command", {"frobnicate"}, {"frobnicate"}));
  cases.push_back(to_a_full_standard_output("top_help_to_a_full_standard_output", earlier_outputs, {"--help"}));

  // Issue 36. Class 13: the largest image mandelbrot allows (2^32 pixels) needs 56 GiB:
  // refused up front against the memory the run may take (here --max-memory-mib, so that
  // the case is the same on every machine; life's case checks the machine's own figure).
  {
    Case c = refused_beside_outputs("mandelbrot_largest_size_beyond_max_memory",
                     {"mandelbrot", "--backend", "host", "--size", "65536x65536", "-i", "50", "--max-memory-mib",
                      "1024"},
                     {"a 65536x65536 image needs", "(--max-memory-mib 1024)"});
    c.address_space_limit = std::uint64_t{4} << 30;
    cases.push_back(c);
  }
  // Classes 2 and 18: --json over an image, and a flag taken as a file name.
  cases.push_back(refused_beside_outputs("mandelbrot_json_over_an_image_forced",
                          mandelbrot({"--no-image", "--json", "renders/earlier.png", "--force"}),
                          {"--json", "renders/earlier.png", "a PNG image"}));
  cases.push_back(refused_beside_outputs("mandelbrot_image_takes_a_flag_as_its_name", mandelbrot({"--image", "--force"}),
                          {"--image", "'--force' looks like an option"}));
  cases.push_back(refused_beside_outputs("info_json_takes_a_flag_as_its_name", {"info", "--no-measure", "--json", "--force"},
                          {"--json", "'--force' looks like an option"}));
  // Class 19: a count of 010 is ten, not octal eight, and hexadecimal is not a count.
  cases.push_back(refused_beside_outputs("info_runs_in_hexadecimal", {"info", "--no-measure", "--runs", "0x10"},
                          {"--runs", "'0x10' is not a whole number"}));
  return cases;
}

}  // namespace streampipe::testing
