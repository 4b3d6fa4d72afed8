// SPDX-License-Identifier: Apache-2.0
// `streampipe bench streams`: the classic stream experiments against their peers.

#include "commands.hpp"
#include "stream_experiments.hpp"

#include "streampipe/report/atomic_file.hpp"
#include "streampipe/report/host_info.hpp"

#include <fmt/format.h>

#include <memory>

namespace streampipe::cli {
namespace {

Command add_bench_streams(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "streams",
      "The classic CUDA-streams experiments side by side: images to gray (naive loop, one stream per "
      "image, engine from pinned and pageable input), 200 arrays with a single-block kernel (naive, "
      "stream per array, batched engine), one large array chunked over 1-8 lanes, and the engine's "
      "per-item host overhead. Every output is verified against a CPU reference.");
  auto common = add_bench_options(*sub);
  auto c = std::make_shared<StreamExperimentConfig>();
  sub->add_option("--experiment", c->which, "which experiment to run")
      ->check(CLI::IsMember({"all", "gray", "arrays", "chunked", "overhead"}))->capture_default_str();
  sub->add_option("--images", c->images, "images in the gray experiment")->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_option("--arrays", c->arrays, "arrays in the arrays experiment")->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_option("--chunked-mib", c->chunked_mib, "size of the chunked array in MiB")->check(CLI::Range(16, 65536))->capture_default_str();
  sub->add_option("--overhead-items", c->overhead_items, "tiny items in the overhead experiment")->check(CLI::Range(1, 10000000))->capture_default_str();
  sub->add_option("--lanes", c->lanes, "engine lanes for every experiment (default: each chooses)")->check(CLI::Range(1, 64));
  sub->add_option("--batch", c->batch, "arrays per launch in the arrays experiment")->check(CLI::Range(1, 4096));
  sub->add_option("--depth", c->depth, "slots per engine lane (work in flight) in the gray and arrays experiments")->check(CLI::Range(1, 16));
  sub->add_option("--host-threads", c->host_threads, "engine staging workers in the gray and arrays experiments (default: one per core)")->check(CLI::Range(1, 64));
  sub->add_option("--staging-mib", c->staging_mib,
                  "pinned staging the engine lends at once for pageable input in the gray and arrays experiments "
                  "(default: the engine's 48; 0: a block per slot, held until the slot completes)")
      ->check(CLI::Range(0, 65536));
  sub->add_option("--trace-dir", c->trace_dir, "write Chrome traces and SVG Gantt charts of the engine runs here");
  return {sub, [c, common] {
            c->runs = common->runs;
            c->warmup = common->warmup;
            c->device = common->device;
            bool verified = true;
            nlohmann::json j = run_stream_experiments(*c, verified);
            j["host"] = report::describe_host();
            j["benchmark"] = "streams";
            if (!common->json_path.empty()) report::write_file_atomically(common->json_path, j.dump(2) + "\n");
            if (!verified) fmt::print(stderr, "streampipe: some outputs did not match their CPU reference\n");
            return verified ? 0 : 1;
          }};
}

}  // namespace

STREAMPIPE_BENCHMARK(add_bench_streams);

}  // namespace streampipe::cli
