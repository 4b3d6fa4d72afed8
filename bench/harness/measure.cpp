// SPDX-License-Identifier: Apache-2.0
#include "harness/measure.hpp"

#include <chrono>

namespace streampipe::bench {

std::vector<Samples> measure_alternating(int warmup, int runs, std::span<const Trial> trials) {
  std::vector<Samples> out(trials.size());
  for (int i = 0; i < warmup + runs; ++i)
    for (std::size_t t = 0; t < trials.size(); ++t) {
      const Trial& trial = trials[t];
      if (trial.poison) trial.poison();
      const double figure = trial.run();
      if (trial.verify && !trial.verify()) out[t].verified = false;
      if (i >= warmup) out[t].values.push_back(figure);
    }
  return out;
}

Samples measure(int warmup, int runs, const Trial& trial) {
  return std::move(measure_alternating(warmup, runs, std::span<const Trial>(&trial, 1)).front());
}

double wall_ms(const std::function<void()>& body) {
  const auto t0 = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double EventTimer::ms(StreamRef stream, const std::function<void()>& body) {
  start_.record(stream);
  body();
  stop_.record(stream);
  stop_.synchronize();
  return elapsed(start_, stop_).count();
}

std::vector<double> per_second(std::span<const double> ms, double amount) {
  std::vector<double> rates;
  rates.reserve(ms.size());
  for (const double t : ms) rates.push_back(amount / (t / 1e3));
  return rates;
}

}  // namespace streampipe::bench
