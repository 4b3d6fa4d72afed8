// SPDX-License-Identifier: Apache-2.0
#pragma once
// The declarations of the benchmarks in catalog() (harness/benchmark.hpp), one per file of
// bench/: each returns its name, description, parameters and function.

#include "harness/benchmark.hpp"

namespace streampipe::bench {

[[nodiscard]] Benchmark gray_benchmark();        // gray/gray.cpp: the gray tool end to end
[[nodiscard]] Benchmark jit_benchmark();         // jit.cpp: runtime kernels
[[nodiscard]] Benchmark life_benchmark();        // life.cpp: Conway's Life kernels
[[nodiscard]] Benchmark mandelbrot_benchmark();  // mandelbrot.cpp: float and double kernels
[[nodiscard]] Benchmark serve_benchmark();       // serve/serve.cpp: the MLP through the dynamic batcher
[[nodiscard]] Benchmark streams_benchmark();     // streams/streams.cpp: the classic experiments

}  // namespace streampipe::bench
