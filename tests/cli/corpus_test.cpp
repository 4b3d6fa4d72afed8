// SPDX-License-Identifier: Apache-2.0
// Runs every case of the bad-input corpus (corpus.hpp) as its own test.
#include "corpus.hpp"
#include "tree_snapshot.hpp"

#include "streampipe/io/image.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/mount.h>
#include <unistd.h>

namespace streampipe::testing {

namespace fs = std::filesystem;

namespace {
std::vector<fs::path>& mounted() {
  static std::vector<fs::path> list;
  return list;
}
}  // namespace

void share_with_everyone(const fs::path& dir) {
  fs::permissions(dir, fs::perms::all);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_symlink()) continue;
    if (e.is_directory())
      fs::permissions(e.path(), fs::perms::all);
    else if (e.is_regular_file())
      fs::permissions(e.path(),
                      fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  }
}

void mount_small_tmpfs(const fs::path& where, std::size_t bytes) {
  fs::create_directories(where);
  const std::string options = fmt::format("size={},mode=0777", bytes);
  if (::mount("tmpfs", where.c_str(), "tmpfs", 0, options.c_str()) != 0)
    throw CaseUnavailable(
        fmt::format("cannot mount a small tmpfs here ({}): the full-disk case needs one", std::strerror(errno)));
  mounted().push_back(where);
}

void unmount_small_tmpfs_all() {
  for (const auto& m : mounted()) ::umount2(m.c_str(), MNT_DETACH);
  mounted().clear();
}

void expect_valid_image(const fs::path& path) {
  try {
    const io::Image img = io::read_image(path);
    EXPECT_GT(img.width, 0u) << path;
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << " is not a complete image: " << e.what();
  }
}

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  return files;
}

Case refused_case(std::string name, const std::function<void(Dir)>& base, std::vector<std::string> args,
                  std::vector<std::string> mentions, std::function<void(Dir)> extra_setup) {
  Case c;
  c.name = std::move(name);
  c.setup = [base, extra_setup = std::move(extra_setup)](Dir d) {
    base(d);
    if (extra_setup) extra_setup(d);
  };
  c.args = std::move(args);
  c.exit_code = 2;
  c.mentions = std::move(mentions);
  return c;
}

Case to_a_full_standard_output(std::string name, std::function<void(Dir)> setup, std::vector<std::string> args,
                               const std::vector<std::string>& more_mentions) {
  Case c;
  c.name = std::move(name);
  c.setup = std::move(setup);
  c.args = std::move(args);
  c.exit_code = 1;
  c.mentions = {"standard output"};
  c.mentions.insert(c.mentions.end(), more_mentions.begin(), more_mentions.end());
  c.stdout_path = "/dev/full";
  return c;
}

void run_unprivileged(Case& c, const std::string& path, fs::perms perms) {
  c.setup = [setup = c.setup, path, perms](Dir d) {
    if (setup) setup(d);
    share_with_everyone(d);
    if (!path.empty()) fs::permissions(d / path, perms);
  };
  c.unprivileged = true;
}

std::vector<std::string> gray_args(std::vector<std::string> args) {
  args.insert(args.begin(), "gray");
  for (const char* a : {"--backend", "host", "-q", "--threads", "2"}) args.emplace_back(a);
  return args;
}

namespace {

std::vector<Case> all_cases() {
  std::vector<Case> cases = gray_cases();
  for (auto* more : {&life_cases, &other_cases}) {
    auto c = (*more)();
    cases.insert(cases.end(), c.begin(), c.end());
  }
  return cases;
}

class Corpus : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("sp-corpus-{}-{}", ::getpid(), GetParam().name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    unmount_small_tmpfs_all();
    std::error_code ec;
    // Locked folders made by a case are opened again so that they can be removed.
    for (auto it = fs::recursive_directory_iterator(dir_, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec))
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_P(Corpus, ExitStatusMessageAndNothingLost) {
  const Case& c = GetParam();
  if (c.unprivileged) {
    std::string why;
    if (!permissions_testable(why)) GTEST_SKIP() << why;
  }
  try {
    if (c.setup) c.setup(dir_);
  } catch (const CaseUnavailable& e) {
    GTEST_SKIP() << e.what();
  }
  const TreeSnapshot before = TreeSnapshot::of(dir_);
  RunOptions options;
  options.unprivileged = c.unprivileged;
  options.stdout_path = c.stdout_path;
  options.address_space_limit = c.address_space_limit;
  options.stdout_closed_pipe = c.stdout_closed_pipe;
  options.extra_threads_limit = c.extra_threads_limit;
  const RunResult r = run_cli(c.args, dir_, options);
  const std::string command = "streampipe " + fmt::format("{}", fmt::join(c.args, " "));
  ASSERT_FALSE(r.timed_out) << command << "\n" << r.describe();
  ASSERT_EQ(r.signal, 0) << command << "\n" << r.describe();
  EXPECT_EQ(r.exit_code, c.exit_code) << command << "\n" << r.describe();
  for (const auto& m : c.mentions)
    EXPECT_NE(r.err.find(m), std::string::npos) << "'" << m << "' not named\n" << command << "\n" << r.describe();

  const TreeSnapshot after = TreeSnapshot::of(dir_);
  for (const auto& change : before.changed(after)) ADD_FAILURE() << "changed: " << change << "\n" << command;
  for (const auto& path : before.added(after)) {
    EXPECT_EQ(path.find(".tmp-"), std::string::npos) << "temporary file left: " << path << "\n" << command;
    const bool allowed = c.exit_code != 2 && std::any_of(c.may_create.begin(), c.may_create.end(),
                                                         [&](const std::string& p) { return path.rfind(p, 0) == 0; });
    EXPECT_TRUE(allowed) << "created: " << path << "\n" << command << "\n" << r.describe();
  }
  if (c.check) c.check(dir_, r);
}

INSTANTIATE_TEST_SUITE_P(Cases, Corpus, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

TEST(CorpusSize, AtLeastSixtyDistinctCases) {
  const auto cases = all_cases();
  std::vector<std::string> names;
  for (const auto& c : cases) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "two cases share a name";
  EXPECT_GE(cases.size(), 60u);
}

}  // namespace
}  // namespace streampipe::testing
