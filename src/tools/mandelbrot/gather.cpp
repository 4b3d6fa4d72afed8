// SPDX-License-Identifier: Apache-2.0
#include "gather.hpp"

#include "bands_json.hpp"
#include "part.hpp"

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
  const BandsRun run = compute_part(o, rows_of(me.rank));
  const nlohmann::json meta = {{"compute_ms", run.compute_ms},
                               {"bands", run.bands},
                               {"devices", run.devices},
                               {"engine", run.engine},
                               {"where", mpi::rank_place(job, where_of(run.devices, "host"))}};
  const auto parts = mpi::gather_parts(
      job, meta,
      std::string_view(reinterpret_cast<const char*>(run.counts.data()), run.counts.size() * sizeof(std::uint32_t)));
  if (!parts) return std::nullopt;

  RankedImage image;
  image.counts.assign(p.pixels(), 0);
  std::vector<std::string> places;
  for (int r = 0; r < me.size; ++r) {
    const RowBand rows = rows_of(r);
    const auto& [m, bytes] = (*parts)[static_cast<std::size_t>(r)];
    if (bytes.size() != std::size_t{rows.rows} * p.width * sizeof(std::uint32_t))
      throw std::runtime_error(fmt::format("rank {} sent {} bytes for {} rows", r, bytes.size(), rows.rows));
    if (!bytes.empty())
      std::memcpy(image.counts.data() + std::size_t{rows.first_row} * p.width, bytes.data(), bytes.size());
    for (const auto& b : m.at("bands")) image.bands.push_back(b.get<BandRun>());
    for (const auto& d : m.at("devices")) {
      image.devices.push_back(d.get<DeviceShare>());
      image.devices.back().rank = r;
    }
    places.push_back(m.at("where").get<std::string>());
    if (r == 0) image.engine = m.at("engine").get<std::string>();
    // The ranks run at once: the image takes as long as its slowest part.
    image.compute_ms = std::max(image.compute_ms, m.at("compute_ms").get<double>());
  }
  image.where = mpi::job_place(places);
  return image;
}

}  // namespace streampipe::tools::mandelbrot
