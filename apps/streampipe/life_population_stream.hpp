// SPDX-License-Identifier: Apache-2.0
#pragma once
// life's --population, written as the run goes: a row per generation, so that neither the
// memory nor the time before the first byte grows with the generations (100 million
// generations kept 4.9 GB), and a closed standard output (| head) stops the run at once.
//   CSV:  generation,universe0,universe1,...  then one line per generation;
//   JSON: {"width","height","generations","populations":[[universe 0's], [universe 1's], ...]}:
//         one universe streams straight out; with several, each universe's values wait in
//         a temporary file (8 bytes a generation, on disk) until finish() writes them in turn.
// A run that ends early (a signal, a failure) never commits a file: the target is left as it
// was (standard output has had the rows so far).

#include "outputs.hpp"

#include "streampipe/tools/life/run.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace streampipe::cli {

class PopulationStream {
 public:
  // `path` was claimed through `out` ("-": standard output, CSV). Throws what Outputs::open
  // throws, and std::runtime_error when a temporary file cannot be made.
  PopulationStream(const Outputs& out, const std::string& path, std::size_t universes, std::uint32_t width,
                   std::uint32_t height, std::uint64_t generations);
  // The populations of every universe at `generation`, generations in order from 0.
  void row(std::uint64_t generation, std::span<const std::uint64_t> populations);
  // The output complete (a file renamed into place).
  void finish();

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const noexcept { std::fclose(f); }
  };
  bool json_;
  std::size_t universes_;
  std::uint64_t rows_ = 0;
  OutputSink sink_;
  std::string text_;  // built up to a block, then written
  std::vector<std::unique_ptr<std::FILE, FileCloser>> spills_;
  void flush_text(bool always);
};

// --population of a job under mpirun, at rank 0: every universe's populations, gathered
// (every generation's kept: Options::every_population), written whole.
void write_populations(const Outputs& out, const std::string& path, const tools::life::Options& options,
                       const tools::life::Summary& summary);

}  // namespace streampipe::cli
