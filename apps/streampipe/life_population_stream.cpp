// SPDX-License-Identifier: Apache-2.0
#include "life_population_stream.hpp"

#include "streampipe/report/json_schema.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace streampipe::cli {
namespace {

constexpr std::size_t kBlock = std::size_t{1} << 16;

[[noreturn]] void spill_failed(const char* what) {
  throw std::runtime_error(fmt::format("--population: cannot {} the temporary file of a universe's populations: {}",
                                       what, std::strerror(errno)));
}

}  // namespace

PopulationStream::PopulationStream(const Outputs& out, const std::string& path, std::size_t universes,
                                   std::uint32_t width, std::uint32_t height, std::uint64_t generations)
    : json_(std::filesystem::path(path).extension() == ".json"), universes_(universes), sink_(out.open(path)) {
  if (json_) {
    // The object's head as the one stamping helper writes it; the populations stream after.
    const nlohmann::json head =
        report::stamped({{"width", width}, {"height", height}, {"generations", generations}}, "life.population");
    text_ = "{";
    for (const auto& item : head.items())
      text_ += fmt::format("{}: {}, ", nlohmann::json(item.key()).dump(), item.value().dump());
    text_ += "\"populations\": [";
    if (universes_ > 1)
      for (std::size_t u = 0; u < universes_; ++u) {
        std::FILE* f = std::tmpfile();
        if (f == nullptr) spill_failed("create");
        spills_.emplace_back(f);
      }
    else
      text_ += "[";
  } else {
    text_ = "generation";
    for (std::size_t u = 0; u < universes_; ++u) text_ += fmt::format(",universe{}", u);
    text_ += '\n';
  }
}

void PopulationStream::row(std::uint64_t generation, std::span<const std::uint64_t> populations) {
  if (populations.size() != universes_) throw std::logic_error("--population: a row without every universe");
  if (!json_) {
    fmt::format_to(std::back_inserter(text_), "{}", generation);
    for (const auto p : populations) fmt::format_to(std::back_inserter(text_), ",{}", p);
    text_ += '\n';
  } else if (universes_ == 1) {
    fmt::format_to(std::back_inserter(text_), "{}{}", rows_ == 0 ? "" : ", ", populations[0]);
  } else {
    for (std::size_t u = 0; u < universes_; ++u)
      if (std::fwrite(&populations[u], sizeof populations[u], 1, spills_[u].get()) != 1) spill_failed("write");
  }
  ++rows_;
  flush_text(false);
}

void PopulationStream::flush_text(bool always) {
  if (text_.empty() || (!always && text_.size() < kBlock)) return;
  sink_.write(text_);
  text_.clear();
}

void PopulationStream::finish() {
  if (json_ && universes_ == 1) text_ += "]";
  if (json_ && universes_ > 1) {
    for (std::size_t u = 0; u < universes_; ++u) {
      std::FILE* f = spills_[u].get();
      if (std::fflush(f) != 0 || std::fseek(f, 0, SEEK_SET) != 0) spill_failed("read back");
      text_ += u == 0 ? "[" : ", [";
      std::uint64_t p = 0;
      for (std::uint64_t g = 0; g < rows_; ++g) {
        if (std::fread(&p, sizeof p, 1, f) != 1) spill_failed("read back");
        fmt::format_to(std::back_inserter(text_), "{}{}", g == 0 ? "" : ", ", p);
        flush_text(false);
      }
      text_ += "]";
      spills_[u].reset();  // its disk space back at once
    }
  }
  if (json_) text_ += "]}\n";
  flush_text(true);
  sink_.commit();
}

void write_populations(const Outputs& out, const std::string& path, const tools::life::Options& o,
                       const tools::life::Summary& s) {
  PopulationStream gathered(out, path, s.universes.size(), o.width, o.height, o.generations);
  std::vector<std::uint64_t> row(s.universes.size());
  for (std::uint64_t g = 0; g <= o.generations; ++g) {
    for (std::size_t k = 0; k < s.universes.size(); ++k) row[k] = s.universes[k].populations.all()[g];
    gathered.row(g, row);
  }
  gathered.finish();
}

}  // namespace streampipe::cli
