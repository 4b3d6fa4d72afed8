// SPDX-License-Identifier: Apache-2.0
// The lesson's Conway's Life, rewritten with streampipe.
//
// The lesson launched one thread per cell (a 2-D grid of 2-D blocks), each reading its
// eight neighbours from global memory, swapped two buffers every generation and showed
// the board as an image. Here the same kernel runs through DeviceUniverse (on its own
// stream, with an explicit device), next to the shared-memory and bit-packed versions;
// each result is checked against the CPU reference and the final board is saved as PNG.
// Without a GPU the CPU reference runs alone.
//
//   example_life [SIZE=512] [GENERATIONS=200] [OUT=life.png]

#include "streampipe/cuda/device.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/tools/life/board.hpp"
#include "streampipe/tools/life/image.hpp"
#include "streampipe/tools/life/universe.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  using namespace streampipe;
  using namespace streampipe::tools::life;
  try {
    const auto size = static_cast<std::uint32_t>(argc > 1 ? std::stoul(argv[1]) : 512);
    const std::uint64_t generations = argc > 2 ? std::stoull(argv[2]) : 200;
    const std::string out = argc > 3 ? argv[3] : "life.png";

    const Board start = random_board(size, size, 0.25, 42);
    const auto t0 = std::chrono::steady_clock::now();
    const Board want = advance_host(start, generations, 0);
    const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("CPU reference: {} generations of {}x{} in {:.1f} ms, population {} -> {}\n", generations, size,
               size, host_ms, start.population(), want.population());

    if (Device::count() == 0) {
      fmt::print("no GPU ({}): only the CPU reference ran\n", Device::unavailable_reason().value_or("?"));
    } else {
      const Device gpu(0);
      for (const Kernel kernel : {Kernel::global_memory, Kernel::shared_memory, Kernel::bit_packed}) {
        DeviceUniverse universe(gpu, size, size, kernel);
        universe.upload(start);
        Event begin(gpu), end(gpu);
        begin.record(universe.stream());
        universe.step(generations);
        end.record(universe.stream());
        const Board got = universe.download();
        const double ms = elapsed(begin, end).count();
        fmt::print("{:>9} kernel on {}: {:.2f} ms, {:.3g} cell updates/s, {}\n", to_string(kernel), gpu.name(), ms,
                   static_cast<double>(size) * size * static_cast<double>(generations) / (ms / 1e3),
                   got == want ? "matches the CPU" : "DIFFERS FROM THE CPU");
        if (got != want) return 1;
      }
    }
    io::write_image(out, render_image(want, 2), io::ImageFormat::png, 90, host::Overwrite::allow);
    fmt::print("wrote {}\n", out);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "example_life: {}\n", e.what());
    return 1;
  }
}
