// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/aggregate_bandwidth.hpp"
#include "streampipe/cuda/bandwidth.hpp"
#include "support/gpu.hpp"

#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace streampipe {
namespace {

// Short probes: `mib` MiB per direction, `runs` runs after one warm-up.
BandwidthOptions quick(std::size_t mib, int runs, bool pageable = true) {
  BandwidthOptions o;
  o.bytes = mib << 20;
  o.runs = runs;
  o.warmup = 1;
  o.pageable = pageable;
  return o;
}

TEST(BandwidthGpu, MeasuresEveryPathWithSaneFigures) {
  SP_REQUIRE_GPU();
  // 64 MiB: at 16 MiB the two directions' copies overlapped only partly in some runs (both
  // directions 39 GB/s in two of five GPU checks), which says nothing about the engines.
  const BandwidthOptions o = quick(64, 5);
  const auto limits = measure_link(Device(0), o);
  ASSERT_EQ(limits.figures.size(), 6u);
  for (const auto& f : limits.figures) {
    EXPECT_GT(f.median_gbps, 0.1) << f.path;
    EXPECT_LE(f.min_gbps, f.median_gbps) << f.path;
    EXPECT_GE(f.max_gbps, f.median_gbps) << f.path;
  }
  EXPECT_GT(limits.gbps("pinned_h2d"), 0.0);
  EXPECT_EQ(limits.gbps("no_such_path"), 0.0);
  // Copy engines: both directions together move more than one alone. Compared on the best
  // runs: other traffic on a shared link can slow some runs of either.
  EXPECT_GT(limits.peak_gbps("bidirectional"), limits.peak_gbps("pinned_h2d"));
  EXPECT_GT(limits.peak_gbps("d2d"), limits.peak_gbps("pinned_h2d"));
}

TEST(BandwidthGpu, CachedLimitsAreMeasuredOnce) {
  SP_REQUIRE_GPU();
  const Device d(0);
  const auto& a = link_limits(d);
  const auto& b = link_limits(d);
  EXPECT_EQ(&a, &b);
  EXPECT_GT(a.gbps("pinned_d2h"), 0.0);
}

TEST(BandwidthGpu, AggregateOfOneGpuIsItsOwnLink) {
  SP_REQUIRE_GPU();
  const BandwidthOptions o = quick(64, 5, false);
  const Device d(0);
  const auto single = measure_link(d, o);
  const std::vector<Device> one{d};
  const auto all = measure_aggregate(one, o);
  EXPECT_EQ(all.devices, std::vector<int>{0});
  ASSERT_EQ(all.figures.size(), 3u);
  for (const auto& f : all.figures) {
    EXPECT_GT(f.median_gbps, 0.1) << f.path;
    EXPECT_LE(f.min_gbps, f.median_gbps) << f.path;
    EXPECT_GE(f.max_gbps, f.median_gbps) << f.path;
  }
  EXPECT_EQ(all.figures[2].bytes, 2 * o.bytes);
  // One GPU copying "at once" is that GPU's link, timed on the host clock instead of events:
  // within a sane factor of the single-GPU figure (the host clock adds the launch and wake-up
  // latency, microseconds against a copy of about a millisecond).
  for (const auto& [aggregate, link] : {std::pair{"aggregate_h2d", "pinned_h2d"}, std::pair{"aggregate_d2h", "pinned_d2h"},
                                        std::pair{"aggregate_bidirectional", "bidirectional"}}) {
    EXPECT_GT(all.gbps(aggregate), 0.5 * single.peak_gbps(link)) << aggregate;
    EXPECT_LT(all.gbps(aggregate), 1.5 * single.peak_gbps(link)) << aggregate;
  }
}

TEST(BandwidthGpu, AggregateTakesTheSameDeviceTwice) {
  SP_REQUIRE_GPU();
  const BandwidthOptions o = quick(16, 3);
  const std::vector<Device> twice{Device(0), Device(0)};
  const auto all = measure_aggregate(twice, o);
  EXPECT_EQ(all.devices, (std::vector<int>{0, 0}));
  EXPECT_EQ(all.figures[0].bytes, 2 * o.bytes);
  EXPECT_GT(all.gbps("aggregate_h2d"), 0.1);
  EXPECT_THROW((void)measure_aggregate(std::span<const Device>{}, o), std::invalid_argument);
}

}  // namespace
}  // namespace streampipe
