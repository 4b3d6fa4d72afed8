// SPDX-License-Identifier: Apache-2.0
// A user's program on streampipe::pipeline alone: 64 items through an engine on the host
// backend (the same engine drives GPU lanes), every output checked. Exit status 0 only when
// every item came back right and the headers' version is the package's.

#include "streampipe/pipeline/engine.hpp"
#include "streampipe/version.hpp"

#include <cstdio>
#include <cstring>
#include <future>
#include <vector>

int main() {
  using namespace streampipe::pipeline;
  static_assert(STREAMPIPE_VERSION_MAJOR == 0 && STREAMPIPE_VERSION_MINOR == 2, "the version found is 0.2");

  Operation square;
  square.name = "square";
  square.output_bytes = [](std::size_t n) { return n; };
  square.host = [](const Batch& batch) {
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const auto& item = batch.items()[k];
      const auto* in = reinterpret_cast<const int*>(batch.in() + item.in_offset);
      auto* out = reinterpret_cast<int*>(batch.out() + item.out_offset);
      for (std::size_t i = 0; i < item.in_bytes / sizeof(int); ++i) out[i] = in[i] * in[i];
    }
  };

  constexpr int items = 64, n = 1000;
  std::vector<std::vector<int>> inputs(items, std::vector<int>(n)), outputs(items, std::vector<int>(n, -1));
  for (int k = 0; k < items; ++k)
    for (int i = 0; i < n; ++i) inputs[k][i] = k - i;

  EngineOptions options;
  options.backend = Backend::host;
  options.lanes = 3;
  options.delivery = Delivery::in_order;
  Engine engine(square, options);
  std::vector<std::future<ItemResult>> results;
  for (int k = 0; k < items; ++k)
    results.push_back(engine.submit(make_item(std::span<const int>(inputs[k]), std::span<int>(outputs[k]))));
  const RunStats stats = engine.drain();

  int wrong = 0;
  for (int k = 0; k < items; ++k) {
    const ItemResult r = results[k].get();
    if (!r.ok()) {
      std::fprintf(stderr, "item %d failed: %s\n", k, r.error.c_str());
      ++wrong;
      continue;
    }
    for (int i = 0; i < n; ++i)
      if (outputs[k][i] != inputs[k][i] * inputs[k][i]) {
        std::fprintf(stderr, "item %d, element %d: %d, want %d\n", k, i, outputs[k][i], inputs[k][i] * inputs[k][i]);
        ++wrong;
        break;
      }
  }
  if (stats.done != items) ++wrong;
  std::printf("streampipe %s: %zu of %d items through %s\n", streampipe::version_string, stats.done, items,
              engine.describe().c_str());
  return wrong == 0 ? 0 : 1;
}
