// SPDX-License-Identifier: Apache-2.0
// The list is spelled out (no self-registration): the benchmarks live in a static library,
// whose objects the linker would drop if nothing referred to them.
#include "benchmarks.hpp"

namespace streampipe::bench {

const std::vector<Benchmark>& catalog() {
  static const std::vector<Benchmark> all = {gray_benchmark(), jit_benchmark(), life_benchmark(),
                                             mandelbrot_benchmark(), serve_benchmark(), streams_benchmark()};
  return all;
}

}  // namespace streampipe::bench
