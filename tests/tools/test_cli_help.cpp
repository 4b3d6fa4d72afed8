// SPDX-License-Identifier: Apache-2.0
// Every --help reads as help_format.hpp makes it: a short description, placeholders a user
// understands (no CLI11 type names such as TEXT or UINT:..., no flag defaults such as
// {false}), and an Examples section of the command itself; a mistyped option or command is
// answered with what was probably meant and where the help is.
#include "report_cli.hpp"

#include "streampipe/version.hpp"

#include <regex>
#include <sstream>
#include <vector>

namespace streampipe::testing {
namespace {

class CliHelp : public ReportCli {
 protected:
  // The subcommands `--help` of `command` lists, in its order.
  std::vector<std::string> subcommands(const std::string& command) {
    std::vector<std::string> names;
    EXPECT_EQ(run(command + " --help"), 0) << context();
    const auto at = stdout_.find("Subcommands:\n");
    if (at == std::string::npos) return names;
    std::istringstream lines(stdout_.substr(at + 13));
    for (std::string line; std::getline(lines, line) && line.rfind("  ", 0) == 0;) {
      const auto begin = line.find_first_not_of(' ');
      if (begin == 2) names.push_back(line.substr(begin, line.find(' ', begin) - begin));
    }
    return names;
  }
  // Every command and subcommand, as typed after "streampipe" ("" for the top level). The
  // top level lists them alphabetically, whatever order the linker ran their registrations in.
  std::vector<std::string> every_command() {
    const std::vector<std::string> top = subcommands("");
    EXPECT_EQ(top, (std::vector<std::string>{"bench", "demo", "gray", "info", "life", "mandelbrot", "serve-bench"}));
    const std::vector<std::string> benchmarks = subcommands("bench");
    EXPECT_EQ(benchmarks, (std::vector<std::string>{"gray", "jit", "life", "mandelbrot", "serve", "streams"}));
    std::vector<std::string> commands = {""};
    for (const auto& c : top) commands.push_back(c);
    for (const auto& b : benchmarks) commands.push_back("bench " + b);
    return commands;
  }
};

TEST_F(CliHelp, VersionAndExamplesInEveryHelp) {
  ASSERT_EQ(run("--version"), 0) << context();
  EXPECT_NE(stdout_.find(std::string("streampipe ") + streampipe::version_string), std::string::npos) << context();
  for (const auto& c : every_command()) {
    ASSERT_EQ(run(c + " --help"), 0) << c << "\n" << context();
    const auto at = stdout_.find("\nExamples:\n");
    ASSERT_NE(at, std::string::npos) << c << "\n" << stdout_;
    // Two or three, each of this command.
    std::istringstream lines(stdout_.substr(at + 11));
    int examples = 0;
    for (std::string line; std::getline(lines, line) && line.rfind("  ", 0) == 0; ++examples)
      EXPECT_EQ(line.rfind("  streampipe " + c, 0), 0u) << c << ": " << line;
    EXPECT_GE(examples, 2) << c << "\n" << stdout_;
    EXPECT_LE(examples, 3) << c << "\n" << stdout_;
  }
}

TEST_F(CliHelp, NoTypeNamesOfCli11AndShortDescriptions) {
  const std::regex type_name(R"(\b(TEXT|INT|UINT|FLOAT|NUMBER|BOOLEAN|NOT NEGATIVE)\b|\{(true|false)\})");
  for (const auto& c : every_command()) {
    ASSERT_EQ(run(c + " --help"), 0) << c << "\n" << context();
    std::smatch m;
    EXPECT_FALSE(std::regex_search(stdout_, m, type_name)) << c << ": '" << m.str() << "' in\n" << stdout_;
    // The description, before "Usage:", is a sentence or two, not a paragraph.
    const std::string description = stdout_.substr(0, stdout_.find("Usage:"));
    std::istringstream words(description);
    std::size_t n = 0;
    for (std::string w; words >> w;) ++n;
    EXPECT_LE(n, 45u) << c << "\n" << description;
  }
  // The placeholders that replace them.
  ASSERT_EQ(run("gray --help"), 0) << context();
  for (const char* shown : {"-o,--output-dir,--output DIR", "--json FILE", "--quality N", "--devices LIST"})
    EXPECT_NE(stdout_.find(shown), std::string::npos) << shown << "\n" << stdout_;
  ASSERT_EQ(run("mandelbrot --help"), 0) << context();
  EXPECT_NE(stdout_.find("--no-verify "), std::string::npos) << stdout_;
}

TEST_F(CliHelp, AMistypedOptionOrCommandIsAnsweredWithWhatWasMeant) {
  make_images(1);
  EXPECT_EQ(run("gray in -o out --fromat jpeg"), 2) << context();
  EXPECT_NE(stderr_.find("'--fromat' is not an option of streampipe gray; did you mean '--format'?"), std::string::npos)
      << context();
  EXPECT_NE(stderr_.find("streampipe gray --help"), std::string::npos) << context();
  EXPECT_EQ(run("life --generatoins 3"), 2) << context();
  EXPECT_NE(stderr_.find("did you mean '--generations'?"), std::string::npos) << context();
  EXPECT_EQ(run("grya in -o out"), 2) << context();
  EXPECT_NE(stderr_.find("did you mean 'gray'?"), std::string::npos) << context();
  EXPECT_EQ(run("bench stream"), 2) << context();
  EXPECT_NE(stderr_.find("did you mean 'streams'?"), std::string::npos) << context();
  // Nothing near: no guess, but the help.
  EXPECT_EQ(run("gray in -o out --zzzzzzzz"), 2) << context();
  EXPECT_EQ(stderr_.find("did you mean"), std::string::npos) << context();
  EXPECT_NE(stderr_.find("streampipe gray --help"), std::string::npos) << context();
  // Bad values point to the command's help as well.
  EXPECT_EQ(run("gray in -o out --format gif"), 2) << context();
  EXPECT_NE(stderr_.find("streampipe gray --help"), std::string::npos) << context();
  EXPECT_EQ(run("mandelbrot --iterations 0"), 2) << context();
  EXPECT_NE(stderr_.find("streampipe mandelbrot --help"), std::string::npos) << context();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
}

}  // namespace
}  // namespace streampipe::testing
