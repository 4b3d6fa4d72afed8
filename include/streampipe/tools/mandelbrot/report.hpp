// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a Mandelbrot run reports (tools/mandelbrot/run.hpp), for the CLI to print and write:
// the summary lines (the image, where it ran, the rate, each band, the check against the
// reference), the JSON summary and the latency report of its one query (the whole image).
// Pure: no clock, no device.

#include "streampipe/report/latency_report.hpp"
#include "streampipe/tools/mandelbrot/run.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace streampipe::tools::mandelbrot {

// Lines ending with a newline: "mandelbrot 1920x1080, region ..., 1000 iterations, double on GPU 0 (...)" first.
[[nodiscard]] std::string report_text(const Options& options, const Summary& summary);
// The summary, stamped with the "mandelbrot" schema (report/json_schema.hpp).
[[nodiscard]] nlohmann::json report_json(const Options& options, const Summary& summary);
// Summary::query as a latency run of one query.
[[nodiscard]] report::LatencyRun latency_run(const Options& options, const Summary& summary);

}  // namespace streampipe::tools::mandelbrot
