// SPDX-License-Identifier: Apache-2.0
// Files taken in job order by whoever is ready (FileCursor), host threads that convert whole
// files while the engine starts (HostStart), and a whole run with and without them: every
// file converted once, the outputs the host backend gives, the summary's items and records
// numbered without collisions.

#include "test_gray_files.hpp"

#include "gray_file_cursor.hpp"
#include "gray_host_start.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace streampipe::tools::gray {
namespace {
using namespace testing;
using detail::FileCursor;
using detail::FileRange;
using detail::HostStart;

TEST(GrayFileCursor, HandsOutEveryFileOnceInOrder) {
  FileCursor c(7);
  const auto a = c.claim(1), b = c.claim(4), d = c.claim(4);
  ASSERT_TRUE(a && b && d);
  EXPECT_EQ(a->first, 0u);
  EXPECT_EQ(a->count, 1u);
  EXPECT_EQ(b->first, 1u);
  EXPECT_EQ(b->count, 4u);
  EXPECT_EQ(d->first, 5u);
  EXPECT_EQ(d->count, 2u);  // the last group is short
  EXPECT_FALSE(c.claim(1));
  EXPECT_EQ(c.claimed(), 7u);
  EXPECT_FALSE(FileCursor(0).claim(3));
}

TEST(GrayFileCursor, CloseStopsLaterClaims) {
  FileCursor c(10);
  ASSERT_TRUE(c.claim(3));
  c.close();
  EXPECT_FALSE(c.claim(1));
  EXPECT_EQ(c.claimed(), 3u);  // [3, 10) were never handed out
}

TEST(GrayFileCursor, ConcurrentClaimsCoverEveryFileExactlyOnce) {
  constexpr std::size_t files = 10007;
  FileCursor c(files);
  std::vector<int> seen(files, 0);
  std::mutex m;
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      while (const auto r = c.claim(t % 2 ? 16 : 1)) {
        const std::lock_guard lock(m);
        for (std::size_t i = r->first; i < r->first + r->count; ++i) ++seen[i];
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(files));
}

std::vector<FileResult> results_for(const std::vector<Job>& jobs) {
  std::vector<FileResult> files(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    files[i].input = jobs[i].input;
    files[i].output = jobs[i].output;
  }
  return files;
}

TEST(GrayHostStart, ConvertsWholeFilesUntilTheCursorIsEmpty) {
  TempDir d;
  auto files = write_every_variant(d / "in");
  write_bytes(d / "in/bad.png", "not an image", 12);
  files.push_back(d / "in/bad.png");
  const auto jobs = jobs_for(files, d / "out");
  auto results = results_for(jobs);
  FileCursor cursor(jobs.size());
  std::mutex m;
  std::vector<std::size_t> finished;
  Options o;
  HostStart early(results, o, report::Overwrite::refuse, cursor, 3, [&](std::size_t f) {
    const std::lock_guard lock(m);
    finished.push_back(f);
  });
  early.join();
  ASSERT_EQ(early.files().size(), jobs.size());
  EXPECT_EQ(std::set<std::size_t>(finished.begin(), finished.end()).size(), jobs.size());
  std::size_t in = 0, out = 0;
  for (const auto& r : early.records()) {
    EXPECT_EQ(r.lane, -1);
    EXPECT_EQ(r.device, -1);
    EXPECT_LE(r.start_ms, r.end_ms);
    (r.stage == pipeline::Stage::stage_in ? in : out) += 1;
  }
  EXPECT_EQ(in, jobs.size());
  EXPECT_EQ(out, jobs.size() - 1);  // the bad file never reached encoding
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(results[i].host_start);
    if (jobs[i].input.filename() == "bad.png") {
      EXPECT_FALSE(results[i].ok);
      EXPECT_EQ(results[i].error.rfind(jobs[i].input.string() + ": ", 0), 0u) << results[i].error;
      EXPECT_FALSE(fs::exists(jobs[i].output));
      continue;
    }
    ASSERT_TRUE(results[i].ok) << results[i].error;
    EXPECT_EQ(results[i].decoder, "cpu");
    EXPECT_EQ(results[i].bytes_out, fs::file_size(jobs[i].output));
    EXPECT_GT(results[i].write_ms, 0.0);
    expect_exact(jobs[i].input, jobs[i].output);
  }
}

TEST(GrayHostStart, StopLeavesTheRestToWhoeverClaimsNext) {
  TempDir d;
  const std::vector<fs::path> files = write_random_pngs(d.path(), 12, 29, 13);
  const auto jobs = jobs_for(files, d / "out");
  auto results = results_for(jobs);
  FileCursor cursor(jobs.size());
  Options o;
  std::size_t finished = 0;
  // One thread, stopped from its own callback after the fourth file: it takes no fifth.
  std::atomic<HostStart*> self{nullptr};
  std::optional<HostStart> early;
  early.emplace(results, o, report::Overwrite::refuse, cursor, 1, [&](std::size_t) {
    while (self.load() == nullptr) std::this_thread::yield();  // the constructor has returned
    if (++finished == 4) self.load()->stop();
  });
  self = &*early;
  early->join();
  EXPECT_EQ(early->files(), (std::vector<std::size_t>{0, 1, 2, 3}));
  const auto next = cursor.claim(16);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->first, 4u);
  EXPECT_EQ(next->count, 8u);
  for (std::size_t i = 4; i < jobs.size(); ++i) {
    EXPECT_FALSE(results[i].host_start);
    EXPECT_FALSE(fs::exists(jobs[i].output));
  }
}

TEST(GrayHostStart, RefusesNoThreads) {
  std::vector<FileResult> none;
  FileCursor cursor(0);
  Options o;
  EXPECT_THROW(HostStart(none, o, report::Overwrite::refuse, cursor, 0, [](std::size_t) {}), std::invalid_argument);
}

// A whole run: whichever files the host-start threads took (on the host backend the engine
// is ready within milliseconds, so few or none), each file is converted exactly once, and the
// summary numbers the engine's items and the host-start files apart.
TEST(GrayHostStart, RunConvertsEveryFileOnceEitherWay) {
  TempDir d;
  std::vector<fs::path> files;
  for (int i = 0; i < 30; ++i) {
    files.push_back(d / ("in/f" + std::to_string(i) + (i % 2 ? ".png" : ".jpg")));
    const auto img = random_image(static_cast<std::uint32_t>(40 + i), 31, 3, 8, static_cast<unsigned>(i));
    if (i % 2) write_png(files.back(), img);
    else write_jpeg(files.back(), img);
  }
  for (const bool host_start : {true, false}) {
    SCOPED_TRACE(host_start ? "host start" : "no host start");
    Options o;
    o.backend = pipeline::Backend::host;
    o.threads = 3;
    o.host_start = host_start;
    std::size_t reports = 0;
    o.on_file = [&](const FileResult&, std::size_t) { ++reports; };  // one call at a time
    const auto jobs = jobs_for(files, d / (host_start ? "out-a" : "out-b"));
    const RunSummary s = convert(jobs, o);
    ASSERT_EQ(s.ok, files.size());
    EXPECT_EQ(reports, files.size());
    EXPECT_EQ(s.host_start, host_start);
    const auto marked = static_cast<std::size_t>(
        std::count_if(s.files.begin(), s.files.end(), [](const FileResult& f) { return f.host_start; }));
    EXPECT_EQ(marked, s.host_start_files);
    if (!host_start) {
      EXPECT_EQ(s.host_start_files, 0u);
    }
    EXPECT_LE(s.setup_ms, s.engine_ready_ms);
    // Items: host-start files numbered after the engine's, no two files of the run sharing one
    // (no groups on the host backend).
    std::set<std::size_t> indices;
    for (const auto& item : s.items) indices.insert(item.index);
    EXPECT_EQ(indices.size(), files.size());
    EXPECT_EQ(*indices.rbegin(), files.size() - 1);
    for (const auto& r : s.records) EXPECT_LT(r.first_item, files.size());
    for (const auto& j : jobs) expect_exact(j.input, j.output);
  }
}

// Backend::automatic with host start keeps a run shorter than the GPU's start repays on the
// host, without asking for a GPU at all, and says why; without host start it asks as before.
TEST(GrayHostStart, AutomaticKeepsAShortRunOnTheHostAndSaysWhy) {
  TempDir d;
  const std::vector<fs::path> files = write_random_pngs(d.path(), 5, 33, 17);
  Options o;
  o.threads = 2;  // 200 files would be needed for the GPU
  const RunSummary s = convert(jobs_for(files, d / "out"), o);
  ASSERT_EQ(s.ok, files.size());
  EXPECT_EQ(s.backend, "host");
  EXPECT_NE(s.backend_note.find("auto chose the host: 5 file(s) are fewer than the GPU's start repays (200, 100 per "
                                "host thread)"),
            std::string::npos)
      << s.backend_note;
  o.host_start = false;
  const RunSummary t = convert(jobs_for(files, d / "out-b"), o);
  ASSERT_EQ(t.ok, files.size());
  EXPECT_EQ(t.backend_note.find("auto chose"), std::string::npos) << t.backend_note;
}

}  // namespace
}  // namespace streampipe::tools::gray
