// SPDX-License-Identifier: Apache-2.0
#include "mandelbrot_ranks.hpp"

#include "streampipe/cuda/device.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace streampipe::cli {

using tools::mandelbrot::BandRun;
using tools::mandelbrot::RowBand;
using tools::mandelbrot::SpreadRun;

std::optional<RankedImage> compute_ranked(const Ranks& ranks, const DeviceChoice& choice,
                                          const tools::mandelbrot::Params& p, tools::mandelbrot::Precision precision) {
  const auto& me = ranks.info();
  const auto rows_of = [&](int rank) {
    const auto shard = report::shard_range(p.height, rank, me.size);
    return RowBand{static_cast<std::uint32_t>(shard.begin), static_cast<std::uint32_t>(shard.size())};
  };
  const RowBand mine = rows_of(me.rank);
  SpreadRun run;
  std::string device = "host";
  if (choice.gpu()) {
    const Device gpu(choice.devices[static_cast<std::size_t>(
        report::local_device(me.local_rank, static_cast<int>(choice.devices.size())))]);
    device = fmt::format("GPU {} ({})", gpu.index(), gpu.name());
    const std::vector<Device> one{gpu};
    run = tools::mandelbrot::compute_bands(one, std::vector<RowBand>{mine}, p, precision);
  } else {
    run = tools::mandelbrot::compute_bands_host(std::vector<int>{me.rank}, std::vector<RowBand>{mine}, p, precision);
  }
  const nlohmann::json meta = {{"compute_ms", run.bands.front().compute_ms},
                               {"d2h_ms", run.bands.front().d2h_ms},
                               {"device", run.bands.front().device},
                               {"where", fmt::format("rank {} on {} {}", me.rank, ranks.host(), device)}};
  const auto* band_bytes = reinterpret_cast<const char*>(run.counts.data() + std::size_t{mine.first_row} * p.width);
  const std::vector<std::string> metas = ranks.gather(meta.dump());
  const std::vector<std::string> bands =
      ranks.gather(std::string(band_bytes, std::size_t{mine.rows} * p.width * sizeof(std::uint32_t)));
  if (!ranks.leader()) return std::nullopt;

  RankedImage image;
  image.run.counts.assign(p.pixels(), 0);
  std::vector<std::string> parts;
  for (int r = 0; r < me.size; ++r) {
    const RowBand band = rows_of(r);
    const auto& bytes = bands[static_cast<std::size_t>(r)];
    if (bytes.size() != std::size_t{band.rows} * p.width * sizeof(std::uint32_t))
      throw std::runtime_error(fmt::format("rank {} sent {} bytes for {} rows", r, bytes.size(), band.rows));
    if (!bytes.empty())
      std::memcpy(image.run.counts.data() + std::size_t{band.first_row} * p.width, bytes.data(), bytes.size());
    const auto m = nlohmann::json::parse(metas[static_cast<std::size_t>(r)]);
    image.run.bands.push_back({m.at("device").get<int>(), band, m.at("compute_ms").get<double>(),
                               m.at("d2h_ms").get<double>()});
    parts.push_back(m.at("where").get<std::string>());
    // The ranks run at once: the image takes as long as its slowest band.
    image.run.compute_ms = std::max(image.run.compute_ms, m.at("compute_ms").get<double>());
  }
  image.where = fmt::format("{} ranks ({})", me.size, fmt::join(parts, "; "));
  return image;
}

}  // namespace streampipe::cli
