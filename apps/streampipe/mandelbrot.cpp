// SPDX-License-Identifier: Apache-2.0
// `streampipe mandelbrot`: a PNG of the Mandelbrot set in float or double, its bands of rows
// dealt by the engine over the CPU and every GPU (tools::mandelbrot::run), checked against
// the host double reference: the number of differing pixels is reported, and how many of
// them lie on escape boundaries.

#include "commands.hpp"
#include "engine_options.hpp"
#include "json_text.hpp"
#include "mandelbrot_options.hpp"
#include "memory_option.hpp"
#include "outputs.hpp"
#include "ranks.hpp"
#include "report_option.hpp"
#include "tool_command.hpp"

#include "streampipe/io/image.hpp"
#include "streampipe/tools/mandelbrot/report.hpp"

#include <fmt/format.h>

#include <memory>

namespace streampipe::cli {
namespace {

int run_mandelbrot(const MandelbrotFlags& f, const ReportOptions& report_options) {
  tools::mandelbrot::Options o = mandelbrot_options(f);
  const auto& p = o.params;
  Outputs out(f.force, f.allow_special);
  const std::string image_path = image_path_of(f);
  out.claim_regular("--image", image_path);  // io::write_image replaces it by a rename
  out.claim("--json", f.json_path);
  out.claim("--report-json", report_options.json_path);

  o.engine = engine_options(EngineFlags{.backend = f.backend, .devices = f.devices}, o.engine);
  // On the host, before any of it is allocated: the escape counts (4 bytes a pixel), the
  // reference they are checked against, and the colour image with its encoding (3 + 3).
  check_memory(product({p.width, p.height, 4u + (f.verify ? 4u : 0u) + (image_path.empty() ? 0u : 6u)}),
               f.max_memory_mib, fmt::format("a {}x{} image", p.width, p.height),
               "try a smaller --size, --no-verify or --no-image");
  const mpi::Job& ranks = Ranks::get();
  if (ranks.several() && report_options.wanted())
    throw UsageError("--report describes one process: under mpirun, --json reports the whole image and every rank");
  o.job = &ranks;

  const tools::mandelbrot::Summary s = tools::mandelbrot::run(o);
  if (!s.reports) return ranks.max_over_ranks(0);  // its band went to rank 0, which checks and writes
  out.print("{}", tools::mandelbrot::report_text(o, s));
  const int status = s.double_differs(o) ? 1 : 0;
  if (status != 0) fmt::print(stderr, "streampipe: double-precision result differs from the reference\n");
  if (!image_path.empty()) {
    io::write_image(image_path, tools::mandelbrot::colorize(s.counts, p.width, p.height, p.max_iterations),
                    io::ImageFormat::png, 90, out.overwrite());
    out.print("  wrote {}\n", image_path);
  }
  out.write(f.json_path, json_text(tools::mandelbrot::report_json(o, s), 2));
  if (report_options.wanted()) emit_report(report_options, tools::mandelbrot::latency_run(o, s), "mandelbrot", out);
  return ranks.several() ? ranks.max_over_ranks(status) : status;
}

Command add_mandelbrot(CLI::App& parent) {
  return add_tool(parent,
                  {"mandelbrot",
                   "Render the Mandelbrot set to a PNG on the CPU and every GPU, its bands of rows dealt by the "
                   "engine, checked against a double-precision reference on the host. See docs/mandelbrot.md.",
                   "the whole image, its bands dealt by the engine: H2D the bands' descriptors, D2H their counts "
                   "(busy time), compute the first kernel's start to the last one's end; the first band's "
                   "submission -> the last band's delivery"},
                  add_mandelbrot_flags, run_mandelbrot,
                  {"streampipe mandelbrot", "streampipe mandelbrot --size 3840x2160 --precision float --backend gpu",
                   "streampipe mandelbrot --center -0.743,0.131 --width 0.01 -i 5000 -o renders/ --image zoom.png"});
}

}  // namespace

STREAMPIPE_COMMAND(add_mandelbrot);

}  // namespace streampipe::cli
