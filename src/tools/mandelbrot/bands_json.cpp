// SPDX-License-Identifier: Apache-2.0
#include "bands_json.hpp"

namespace streampipe::tools::mandelbrot {

void to_json(nlohmann::json& j, const BandRun& b) {
  j = {{"device", b.device}, {"first_row", b.band.first_row}, {"rows", b.band.rows}, {"compute_ms", b.compute_ms},
       {"d2h_ms", b.d2h_ms}};
}

void from_json(const nlohmann::json& j, BandRun& b) {
  b.device = j.at("device").get<int>();
  b.band = {j.at("first_row").get<std::uint32_t>(), j.at("rows").get<std::uint32_t>()};
  b.compute_ms = j.at("compute_ms").get<double>();
  b.d2h_ms = j.at("d2h_ms").get<double>();
}

void to_json(nlohmann::json& j, const DeviceShare& d) {
  j = {{"index", d.device}, {"simulated", d.simulated}, {"rank", d.rank},   {"name", d.name},
       {"state", d.state},  {"reason", d.reason},       {"bands", d.bands}, {"rows", d.rows}};
}

void from_json(const nlohmann::json& j, DeviceShare& d) {
  d.device = j.at("index").get<int>();
  d.simulated = j.at("simulated").get<bool>();
  d.rank = j.at("rank").get<int>();
  d.name = j.at("name").get<std::string>();
  d.state = j.at("state").get<std::string>();
  d.reason = j.at("reason").get<std::string>();
  d.bands = j.at("bands").get<std::size_t>();
  d.rows = j.at("rows").get<std::size_t>();
}

}  // namespace streampipe::tools::mandelbrot
