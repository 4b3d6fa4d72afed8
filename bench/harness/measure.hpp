// SPDX-License-Identifier: Apache-2.0
#pragma once
// How every benchmark measures (DESIGN.md, "How to measure"): untimed warm-up runs, then
// timed runs; each run's outputs poisoned before it and checked after it, both outside the
// figure; several variants alternated run by run so a drifting machine hurts them alike.
//
//   const Samples ms = measure(warmup, runs, {.poison = poison_outputs,
//                                            .run = [&] { return wall_ms(work); },
//                                            .verify = outputs_match});
//   ms.summary().median;  // report::summarize: the one median, min and max
//
// Figures are whatever `run` returns (milliseconds, a rate); one sample per timed run.

#include "streampipe/cuda/event.hpp"
#include "streampipe/report/statistics.hpp"

#include <functional>
#include <span>
#include <vector>

namespace streampipe::bench {

// One variant to measure. Empty poison/verify: nothing to poison or to check.
struct Trial {
  std::function<void()> poison;  // before every run, warm-up included
  std::function<double()> run;   // one run; returns its figure
  std::function<bool()> verify;  // after every run, warm-up included: false when an output is wrong
};

struct Samples {
  std::vector<double> values;  // the timed runs' figures, in run order
  bool verified = true;        // every run's verify() held
  [[nodiscard]] report::Summary summary() const { return report::summarize(values); }
};

// `warmup` untimed runs, then `runs` timed ones. Exceptions from the trial propagate.
[[nodiscard]] Samples measure(int warmup, int runs, const Trial& trial);

// The same for several variants, alternated: run i of every trial before run i + 1 of any.
[[nodiscard]] std::vector<Samples> measure_alternating(int warmup, int runs, std::span<const Trial> trials);

// Host clock around `body`, in ms; `body` must return only when its work is done.
[[nodiscard]] double wall_ms(const std::function<void()>& body);

// GPU time of the work `body` enqueues on `stream`, between two events (ms). Waits for it.
class EventTimer {
 public:
  explicit EventTimer(const Device& device) : start_(device), stop_(device) {}
  [[nodiscard]] double ms(StreamRef stream, const std::function<void()>& body);

 private:
  Event start_, stop_;
};

// amount / seconds for each sample in ms: a rate per second (bytes -> B/s, cells -> cells/s).
[[nodiscard]] std::vector<double> per_second(std::span<const double> ms, double amount);

}  // namespace streampipe::bench
