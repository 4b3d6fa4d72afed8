// SPDX-License-Identifier: Apache-2.0
// The corpus's `gray` cases: broken images, inputs that are not files, permissions, outputs
// that would replace an input or another output, special files, bad options, a full disk
// and a full standard output.
#include "bad_inputs.hpp"
#include "corpus.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace streampipe::testing {

namespace fs = std::filesystem;

namespace {

// Two good images (in/a.png, in/b.jpg), and an earlier output no case may touch.
void good_inputs(Dir d) {
  write_png(d / "in" / "a.png");
  write_jpeg(d / "in" / "b.jpg", 31, 19);
  write_png(d / "out" / "earlier.png", 9, 9);
}

// The good images of good_inputs were converted, completely.
void good_ones_converted(Dir d, const RunResult&) {
  expect_valid_image(d / "out" / "a.png");
  expect_valid_image(d / "out" / "b.png");
}

std::function<void(Dir, const RunResult&)> absent(std::string name) {
  return [name](Dir d, const RunResult& r) {
    good_ones_converted(d, r);
    EXPECT_FALSE(fs::exists(d / "out" / name)) << name;
  };
}

// One bad file among the good ones: it is named, the others finish, exit 1.
Case bad_image(std::string name, std::string file, std::function<void(const fs::path&)> make,
               std::vector<std::string> mentions = {}, std::uint64_t memory_limit = 0) {
  Case c;
  c.name = std::move(name);
  c.setup = [file, make](Dir d) {
    good_inputs(d);
    make(d / "in" / file);
  };
  c.args = gray_args({"in", "-o", "out"});
  c.exit_code = 1;
  c.mentions = {"in/" + file};
  c.mentions.insert(c.mentions.end(), mentions.begin(), mentions.end());
  c.may_create = {"out/"};
  c.address_space_limit = memory_limit;
  c.check = absent(fs::path(file).replace_extension(".png").string());
  return c;
}

// Bad usage: refused before any work (exit 2), naming what is wrong.
Case refused(std::string name, std::vector<std::string> args, std::vector<std::string> mentions,
             std::function<void(Dir)> extra_setup = {}) {
  return refused_case(std::move(name), good_inputs, gray_args(std::move(args)), std::move(mentions),
                      std::move(extra_setup));
}

constexpr std::uint64_t kBombLimit = std::uint64_t{4} << 30;  // a bomb may not take more

// A folder its user (and everyone) may list and enter but not write into.
constexpr fs::perms kReadOnlyFolder =
    fs::perms::owner_read | fs::perms::owner_exec | fs::perms::others_read | fs::perms::others_exec;

}  // namespace

std::vector<Case> gray_cases() {
  std::vector<Case> cases;
  // Broken images: each fails alone, named.
  cases.push_back(bad_image("gray_png_truncated", "cut.png", [](Dir p) { write_truncated_png(p, 300); }));
  cases.push_back(bad_image("gray_png_cut_in_signature", "sig.png", [](Dir p) { write_truncated_png(p, 5); }));
  cases.push_back(bad_image("gray_png_wrong_magic", "text.png", [](Dir p) { write_text(p, "not an image at all\n"); }));
  cases.push_back(bad_image("gray_png_zero_size", "empty.png", [](Dir p) { write_text(p, ""); }));
  cases.push_back(bad_image("gray_png_bad_crc", "crc.png", [](Dir p) { write_png_bad_crc(p); }));
  cases.push_back(bad_image(
      "gray_png_declares_1e10_pixels", "bomb.png", [](Dir p) { write_png_declaring(p, 100000, 100000); }, {},
      kBombLimit));
  cases.push_back(bad_image(
      "gray_png_declares_width_2e9", "wide.png", [](Dir p) { write_png_declaring(p, 2000000000, 1); }, {}, kBombLimit));
  cases.push_back(bad_image(
      "gray_image_above_max_pixels", "big.png", [](Dir p) { write_png(p, 64, 64); }, {"--max-pixels"}));
  cases.back().args = gray_args({"in", "-o", "out", "--max-pixels", "1000"});
  cases.push_back(bad_image("gray_jpeg_truncated", "cut.jpg", [](Dir p) { write_truncated_jpeg(p); }));
  cases.push_back(bad_image("gray_jpeg_garbage_after_magic", "junk.jpg",
                            [](Dir p) { write_text(p, "\xff\xd8\xff\xe0 this is no JPEG"); }));
  cases.push_back(bad_image(
      "gray_jpeg_declares_4e9_pixels", "bomb.jpg", [](Dir p) { write_jpeg_declaring(p, 65500, 65500); }, {},
      kBombLimit));

  // Inputs that are not image files.
  cases.push_back(refused("gray_input_missing", {"nothing.png", "-o", "out"}, {"nothing.png"}));
  cases.push_back(refused("gray_input_empty_name", {"", "-o", "out"}, {"''"}));
  cases.push_back(refused("gray_input_fifo", {"pipe.png", "-o", "out"}, {"pipe.png", "FIFO"},
                          [](Dir d) { ASSERT_EQ(::mkfifo((d / "pipe.png").c_str(), 0644), 0); }));
  cases.push_back(refused("gray_input_device", {"/dev/null", "-o", "out"}, {"/dev/null", "character device"}));
  cases.push_back(refused("gray_input_dangling_link", {"gone.png", "-o", "out"}, {"gone.png"},
                          [](Dir d) { fs::create_symlink("nowhere.png", d / "gone.png"); }));
  cases.push_back(refused("gray_input_folder_without_images", {"empty.png", "-o", "out"}, {"empty.png", "no *.png"},
                          [](Dir d) { fs::create_directories(d / "empty.png"); }));

  // Permissions (as an unprivileged user): named with the system's reason.
  {
    Case c = bad_image("gray_input_unreadable", "secret.png", [](Dir p) { write_png(p); }, {"Permission denied"});
    run_unprivileged(c, "in/secret.png");
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "gray_recursive_unreadable_subfolder";
    c.setup = [](Dir d) {
      good_inputs(d);
      write_png(d / "in" / "locked" / "hidden.png");
    };
    c.args = gray_args({"-r", "in", "-o", "out"});
    c.exit_code = 1;
    c.mentions = {"in/locked", "Permission denied"};
    c.may_create = {"out/"};
    run_unprivileged(c, "in/locked");
    c.check = good_ones_converted;
    cases.push_back(c);
  }
  {
    Case c = refused("gray_input_folder_unreadable", {"in", "-o", "out"}, {"in", "Permission denied"});
    run_unprivileged(c, "in");
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "gray_output_folder_unwritable";
    c.setup = good_inputs;
    c.args = gray_args({"in", "-o", "out"});
    c.exit_code = 2;  // found before any work (issue 36, class 21)
    c.mentions = {"-o out", "Permission denied"};
    run_unprivileged(c, "out", kReadOnlyFolder);
    cases.push_back(c);
  }

  // Outputs that would replace an input or another output, --force or not.
  cases.push_back(refused("gray_json_is_an_input", {"in", "-o", "out", "--json", "in/a.png", "--force"},
                          {"--json", "in/a.png", "input"}));
  cases.push_back(refused("gray_json_hard_link_to_input", {"in", "-o", "out", "--json", "hard.json", "--force"},
                          {"--json", "hard.json", "input"},
                          [](Dir d) { fs::create_hard_link(d / "in" / "a.png", d / "hard.json"); }));
  cases.push_back(refused("gray_json_symlink_to_input", {"in", "-o", "out", "--json", "link.json", "--force"},
                          {"--json", "link.json", "symbolic link"},
                          [](Dir d) { fs::create_symlink("in/a.png", d / "link.json"); }));
  cases.push_back(refused("gray_json_symlink_allowed_still_not_input",
                          {"in", "-o", "out", "--json", "link.json", "--force", "--allow-special-outputs"},
                          {"--json", "link.json", "input"},
                          [](Dir d) { fs::create_symlink("in/a.png", d / "link.json"); }));
  cases.push_back(refused("gray_json_dev_null_forced", {"in", "-o", "out", "--json", "/dev/null", "--force"},
                          {"--json", "/dev/null", "character device", "--allow-special-outputs"}));
  cases.push_back(refused("gray_trace_dev_stdout_forced", {"in", "-o", "out", "--trace", "/dev/stdout", "--force"},
                          {"--trace", "/dev/stdout"}));
  cases.push_back(refused("gray_gantt_fifo_forced", {"in", "-o", "out", "--gantt", "g.fifo", "--force"},
                          {"--gantt", "g.fifo", "FIFO"},
                          [](Dir d) { ASSERT_EQ(::mkfifo((d / "g.fifo").c_str(), 0644), 0); }));
  cases.push_back(refused("gray_json_is_an_image_output", {"in", "-o", "out", "--json", "out/a.png"},
                          {"--json", "out/a.png", "both name"}));
  cases.push_back(refused("gray_trace_and_gantt_one_file",
                          {"in", "-o", "out", "--trace", "t.json", "--gantt", "./t.json"},
                          {"--trace", "--gantt", "both name"}));
  cases.push_back(refused("gray_outputs_meet_through_folder_link",
                          {"in", "-o", "out", "--trace", "real/t.json", "--json", "alias/t.json"}, {"both name"},
                          [](Dir d) {
                            fs::create_directories(d / "real");
                            fs::create_directory_symlink("real", d / "alias");
                          }));
  cases.push_back(refused("gray_existing_output_without_force", {"in", "-o", "out"}, {"out/a.png", "--force"},
                          [](Dir d) { write_png(d / "out" / "a.png", 5, 5); }));
  cases.push_back(refused("gray_output_image_is_symlink_forced", {"in", "-o", "out", "--force"},
                          {"out/a.png", "symbolic link"}, [](Dir d) {
                            write_text(d / "keep.txt", "precious\n");
                            fs::create_symlink("../keep.txt", d / "out" / "a.png");
                          }));
  cases.push_back(refused("gray_two_inputs_one_output", {"in/a.png", "other/a.jpg", "-o", "out"},
                          {"in/a.png", "other/a.jpg", "out/a.png"}, [](Dir d) { write_jpeg(d / "other" / "a.jpg"); }));
  cases.push_back(refused("gray_output_folder_is_input_folder", {"in", "-o", "in", "--force"}, {"in/a.png", "input"}));
  cases.push_back(refused("gray_output_folder_is_a_file", {"in", "-o", "in/a.png"}, {"-o", "in/a.png"}));

  // Options.
  cases.push_back(refused("gray_format_unknown", {"in", "-o", "out", "--format", "gif"}, {"--format", "gif"}));
  cases.push_back(refused("gray_quality_out_of_range", {"in", "-o", "out", "--quality", "0"}, {"--quality"}));
  cases.push_back(refused("gray_quality_not_a_number", {"in", "-o", "out", "--quality", "high"}, {"--quality"}));
  cases.push_back(refused("gray_compression_nan", {"in", "-o", "out", "--compression", "nan"}, {"--compression"}));
  cases.push_back(refused("gray_threads_negative", {"in", "-o", "out", "--threads", "-3"}, {"--threads"}));
  cases.push_back(refused("gray_option_unknown", {"in", "-o", "out", "--colour", "red"}, {"--colour"}));
  cases.push_back(refused("gray_json_empty_name", {"in", "-o", "out", "--json", ""}, {"--json", "''"}));
  {
    Case c = refused("gray_backend_unknown", {}, {"--backend", "tpu"});
    c.args = {"gray", "in", "-o", "out", "--backend", "tpu"};
    cases.push_back(c);
  }
  cases.push_back(refused("gray_no_output_folder", {"in"}, {"--output-dir"}));

  // A name that is not UTF-8 is written into the JSON (replaced), not a failure after the work.
  {
    Case c;
    c.name = "gray_json_with_a_non_utf8_file_name";
    c.setup = [](Dir d) { write_png(d / "in" / "caf\xe9.png"); };
    c.args = gray_args({"in", "-o", "out", "--json", "r.json"});
    c.exit_code = 0;
    c.may_create = {"out", "r.json"};
    c.check = [](Dir d, const RunResult&) {
      expect_valid_image(d / "out" / "caf\xe9.png");
      std::ifstream in(d / "r.json");
      std::stringstream s;
      s << in.rdbuf();
      nlohmann::json j;
      ASSERT_NO_THROW(j = nlohmann::json::parse(s.str())) << s.str();
      EXPECT_NE(s.str().find("caf\xef\xbf\xbd.png"), std::string::npos) << "U+FFFD in place of the bad byte";
    };
    cases.push_back(c);
  }
  // Standard output that cannot be written: exit 1, said.
  {
    Case c = to_a_full_standard_output("gray_json_to_a_full_standard_output", good_inputs,
                                       gray_args({"in", "-o", "out", "--json", "-"}), {"No space left"});
    c.may_create = {"out/"};
    cases.push_back(c);
  }
  {
    Case c = cases.back();
    c.name = "gray_summary_to_a_full_standard_output";
    c.args = {"gray", "in", "-o", "out", "--backend", "host", "--threads", "2"};
    cases.push_back(c);
  }
  // A full disk: the files that fit are complete, the others named with the reason.
  {
    Case c;
    c.name = "gray_output_disk_full";
    c.setup = [](Dir d) {
      for (int i = 0; i < 4; ++i) write_png(d / "in" / ("big" + std::to_string(i) + ".png"), 160 + i, 160);
      mount_small_tmpfs(d / "small", 48 << 10);
    };
    c.args = gray_args({"in", "-o", "small/out", "--compression", "0"});
    c.exit_code = 1;
    c.mentions = {"small/out/", "No space left on device"};
    c.may_create = {"small/out"};
    c.check = [](Dir d, const RunResult&) {
      for (const auto& f : files_under(d / "small" / "out")) expect_valid_image(f);
    };
    cases.push_back(c);
  }

  // Issue 36. Class 1: an output folder inside the tree -r scans is left out of the scan,
  // which must not make its original images outputs to replace, --force or not.
  cases.push_back(refused("gray_force_spares_originals_in_an_output_folder_inside_the_tree",
                          {"-r", "in", "-o", "in/sub", "--force"},
                          {"in/sub/a.png", "not an earlier gray output", "outside in"},
                          [](Dir d) { write_png(d / "in" / "sub" / "a.png", 40, 30); }));
  // Class 2: a side output never replaces a file of another kind (an option that took an
  // input as its value), --force or not.
  cases.push_back(refused("gray_json_swallows_an_input_forced", {"--json", "in/a.png", "in/b.jpg", "-o", "out", "--force"},
                          {"--json", "in/a.png", "a PNG image"}));
  cases.push_back(refused("gray_trace_over_a_jpeg_forced", {"in", "-o", "out", "--trace", "photo.jpg", "--force"},
                          {"--trace", "photo.jpg", "a JPEG image"}, [](Dir d) { write_jpeg(d / "photo.jpg"); }));
  cases.push_back(refused("gray_gantt_over_binary_data_forced", {"in", "-o", "out", "--gantt", "notes.gz", "--force"},
                          {"--gantt", "notes.gz", "binary data"},
                          [](Dir d) { write_text(d / "notes.gz", std::string_view("\x1f\x8b\x08\0\0\0\0\0", 8)); }));
  // Class 18: a value that begins with '-' is an option, not a file name.
  cases.push_back(refused("gray_json_takes_a_flag_as_its_name", {"in", "-o", "out", "--json", "--force"},
                          {"--json", "'--force' looks like an option", "./--force"}));
  cases.push_back(refused("gray_output_folder_takes_a_flag_as_its_name", {"in", "-o", "--force"},
                          {"--output-dir", "'--force' looks like an option"}));
  // Class 24: an input that looks like an option is named, with the way to give it.
  {
    Case c = refused("gray_input_that_looks_like_an_option", {}, {"'-x.png'", "./-x.png"},
                     [](Dir d) { write_png(d / "-x.png"); });
    c.args = {"gray", "-x.png", "-o", "out", "--backend", "host"};
    cases.push_back(c);
  }
  // Class 19: negative, out-of-range and octal-looking counts are refused, naming the range.
  cases.push_back(refused("gray_max_pixels_negative", {"in", "-o", "out", "--max-pixels", "-1"},
                          {"--max-pixels", "'-1' is negative", "18446744073709551615"}));
  cases.push_back(refused("gray_max_pixels_beyond_64_bits", {"in", "-o", "out", "--max-pixels", "18446744073709551616"},
                          {"--max-pixels", "out of range"}));
  cases.push_back(refused("gray_threads_in_hexadecimal", {"in", "-o", "out", "--threads", "0x10"},
                          {"--threads", "'0x10' is not a whole number from 0 to 1024"}));
  // Class 21: a target that cannot be written is found before the work, not after it.
  {
    Case c = refused("gray_json_into_a_read_only_folder", {"in", "-o", "out", "--json", "ro/r.json"},
                     {"--json", "ro/r.json", "Permission denied"});
    c.setup = [](Dir d) {
      good_inputs(d);
      fs::create_directories(d / "ro");
    };
    run_unprivileged(c, "ro", kReadOnlyFolder);
    cases.push_back(c);
  }
  // Class 20: a failure at the final flush to disk (here: the folder cannot be opened to be
  // flushed) is named on standard error like any other, -q or not.
  {
    Case c;
    c.name = "gray_failure_at_the_final_flush_is_named";
    c.setup = [](Dir d) {
      write_png(d / "in" / "a.png");
      fs::create_directories(d / "out");
    };
    c.args = gray_args({"in", "-o", "out"});
    c.exit_code = 1;
    c.mentions = {"in/a.png", "not to disk", "Permission denied"};
    c.may_create = {"out/"};
    run_unprivileged(c, "out",
                     fs::perms::owner_write | fs::perms::owner_exec | fs::perms::others_write |
                         fs::perms::others_exec | fs::perms::group_write | fs::perms::group_exec);
    cases.push_back(c);
  }
  // Class 22: names of 244-255 bytes are converted (the temporary name is cut short).
  for (const std::size_t length : {244u, 255u}) {
    Case c;
    c.name = fmt::format("gray_input_named_with_{}_bytes", length);
    const std::string name = std::string(length - 4, 'n') + ".png";
    c.setup = [name](Dir d) { write_png(d / "in" / name); };
    c.args = gray_args({"in", "-o", "out"});
    c.exit_code = 0;
    c.may_create = {"out"};
    c.check = [name](Dir d, const RunResult&) { expect_valid_image(d / "out" / name); };
    cases.push_back(c);
  }
  // Class 9: a thread that cannot start (a process limit) is an error naming the step and
  // the count, and leaves nothing behind.
  {
    Case c;
    c.name = "gray_threads_beyond_the_process_limit";
    c.setup = good_inputs;
    c.args = {"gray", "in", "-o", "out", "--backend", "host", "-q", "--threads", "48"};
    c.exit_code = 1;
    c.mentions = {"cannot start host worker thread", "of 48"};
    c.may_create = {"out"};
    run_unprivileged(c);
    c.extra_threads_limit = 12;
    cases.push_back(c);
  }
  // Class 15: the decoded images of all threads share a budget; an image beyond all of it
  // fails alone, named with the budget.
  cases.push_back(bad_image("gray_image_decoding_beyond_the_memory_budget", "wide.png",
                            [](Dir p) { write_png(p, 700, 500); }, {"--max-memory-mib 1", "all decoding threads"}));
  cases.back().args = gray_args({"in", "-o", "out", "--max-memory-mib", "1"});
  return cases;
}

}  // namespace streampipe::testing
