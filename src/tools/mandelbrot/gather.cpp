// SPDX-License-Identifier: Apache-2.0
#include "gather.hpp"

#include "streampipe/cuda/device.hpp"
#include "streampipe/mpi/gather.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace streampipe::tools::mandelbrot {

std::optional<RankedImage> compute_ranked(const Options& o) {
  const mpi::Job& job = *o.job;
  const Params& p = o.params;
  const auto& me = job.info();
  const auto rows_of = [&](int rank) {
    const auto shard = mpi::shard_range(p.height, rank, me.size);
    return RowBand{static_cast<std::uint32_t>(shard.begin), static_cast<std::uint32_t>(shard.size())};
  };
  const RowBand mine = rows_of(me.rank);
  SpreadRun run;
  std::string device = "host";
  if (o.gpu) {
    const Device gpu(o.devices[static_cast<std::size_t>(
        mpi::local_device(me.local_rank, static_cast<int>(o.devices.size())))]);
    device = fmt::format("GPU {} ({})", gpu.index(), gpu.name());
    const std::vector<Device> one{gpu};
    run = compute_bands(one, std::vector<RowBand>{mine}, p, o.precision);
  } else {
    run = compute_bands_host(std::vector<int>{me.rank}, std::vector<RowBand>{mine}, p, o.precision);
  }
  const nlohmann::json meta = {{"compute_ms", run.bands.front().compute_ms},
                               {"d2h_ms", run.bands.front().d2h_ms},
                               {"device", run.bands.front().device},
                               {"where", mpi::rank_place(job, device)}};
  const auto* band_bytes = reinterpret_cast<const char*>(run.counts.data() + std::size_t{mine.first_row} * p.width);
  const auto parts =
      mpi::gather_parts(job, meta, std::string_view(band_bytes, std::size_t{mine.rows} * p.width * sizeof(std::uint32_t)));
  if (!parts) return std::nullopt;

  RankedImage image;
  image.run.counts.assign(p.pixels(), 0);
  std::vector<std::string> places;
  for (int r = 0; r < me.size; ++r) {
    const RowBand band = rows_of(r);
    const auto& [m, bytes] = (*parts)[static_cast<std::size_t>(r)];
    if (bytes.size() != std::size_t{band.rows} * p.width * sizeof(std::uint32_t))
      throw std::runtime_error(fmt::format("rank {} sent {} bytes for {} rows", r, bytes.size(), band.rows));
    if (!bytes.empty())
      std::memcpy(image.run.counts.data() + std::size_t{band.first_row} * p.width, bytes.data(), bytes.size());
    image.run.bands.push_back({m.at("device").get<int>(), band, m.at("compute_ms").get<double>(),
                               m.at("d2h_ms").get<double>()});
    places.push_back(m.at("where").get<std::string>());
    // The ranks run at once: the image takes as long as its slowest band.
    image.run.compute_ms = std::max(image.run.compute_ms, m.at("compute_ms").get<double>());
  }
  image.where = mpi::job_place(places);
  return image;
}

}  // namespace streampipe::tools::mandelbrot
