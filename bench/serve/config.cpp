// SPDX-License-Identifier: Apache-2.0
#include "serve/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace streampipe::bench::serve {
namespace {

std::vector<std::size_t> parse_layers(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v == 0 || v > (1u << 16))
      throw ParameterError(fmt::format("--layers '{}': '{}' is not a size in [1, 65536]", text, item));
    sizes.push_back(v);
    pos = comma + 1;
  }
  if (sizes.size() < 2)
    throw ParameterError(fmt::format("--layers '{}': give the input size and at least one layer's output size", text));
  return sizes;
}

void require_one_of(const std::string& option, const std::string& value, std::initializer_list<const char*> choices) {
  for (const char* c : choices)
    if (value == c) return;
  throw ParameterError(fmt::format("--{} '{}': not one of {}", option, value, fmt::join(choices, ", ")));
}

std::vector<int> ints(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

const std::vector<ModeSpec>& all_modes() {
  static const std::vector<ModeSpec> modes = {
      {"none", "no batching (1 at a time, plain launches)", "one at a time", false, false},
      {"dynamic", "dynamic batching, plain launches", "batching", true, false},
      {"graphs", "dynamic batching, CUDA graph per bucket", "batching + graphs", true, true},
  };
  return modes;
}

std::vector<Parameter> parameters() {
  using I = std::int64_t;
  using Is = std::vector<std::int64_t>;
  return {
      {"layers", "the MLP: input size, then each layer's output size, comma-separated (multiples of 8)",
       std::string("4096,4096,4096,4096,4096")},
      {"concurrency", "closed-loop client counts to sweep", Is{1, 2, 4, 8, 16, 32, 64, 128, 256}, 1, 4096},
      {"rate", "open loop: sweep these offered request rates (per second) instead of --concurrency",
       std::vector<double>{}, 1, 1e8, {}, false},
      {"modes", "none (one at a time), dynamic (batching, plain launches), graphs (batching, a CUDA graph per bucket)",
       std::vector<std::string>{"none", "dynamic", "graphs"}, 0, 0, {"none", "dynamic", "graphs"}},
      {"max-batch", "largest batch (and largest bucket)", I{256}, 1, 65536},
      {"preferred", "preferred batch sizes (the buckets; default: powers of two)", Is{}, 1, 65536, {}, false},
      {"max-delay-us", "longest a request waits for company while a lane is idle", I{0}, 0, 10000000},
      {"lanes", "execution lanes (streams with their own buffers) for batching modes", I{2}, 1, 64},
      {"queue", "bounded queue size (requests beyond it are rejected)", I{4096}, 1, 1 << 24},
      {"sync", "how lanes wait for the GPU: spin or blocking", std::string("spin"), 0, 0, {"spin", "blocking"}},
      {"io",
       "how a batch reaches the GPU: copy (H2D and D2H copies into device buffers) or mapped (the model's first "
       "and last kernels read and write each request's row through the link: in place for pinned requests, else "
       "in the batcher's pinned staging)",
       std::string("mapped"), 0, 0, {"copy", "mapped"}},
      {"request-memory",
       "where clients keep their requests' inputs and outputs: pinned (page-locked; with mapped I/O the GPU reads "
       "and writes them in place) or pageable (ordinary memory, copied through the batcher's staging); on the host "
       "backend always pageable",
       std::string("pinned"), 0, 0, {"pinned", "pageable"}},
      {"client",
       "closed-loop client model: sync (a thread per client waiting on a future, a wake-up per request) or async "
       "(clients resubmit from the completion callback, like perf_analyzer --async)",
       std::string("async"), 0, 0, {"sync", "async"}},
      {"idle-spin-us",
       "how long an idle lane polls the queue before it sleeps (0: at once); polling spares a thread wake-up per "
       "batch and costs a busy core per polling lane",
       I{500}, 0, 10000000},
      {"backend", "auto, gpu or host (the host backend runs the CPU reference)", std::string("auto"), 0, 0,
       {"auto", "gpu", "host"}},
      {"window-ms", "length of one timing window (--runs measured, --warmup untimed)", 200.0, 1.0, 600000.0},
      {"seed", "seed of the random weights and inputs", I{42}, 0, 1e18},
      {"report", "print the full latency report (enqueue, H2D, compute, D2H) of every point", false, 0, 0, {}, false},
  };
}

Config read_config(const State& state) {
  Config c;
  c.runs = state.runs();
  c.warmup = state.warmup();
  c.device = state.device();
  c.layers = state.get<std::string>("layers");
  c.sizes = parse_layers(c.layers);
  c.concurrency = ints(state.get<std::vector<std::int64_t>>("concurrency"));
  c.rates = state.get<std::vector<double>>("rate");
  if (c.concurrency.empty()) throw ParameterError("--concurrency: give at least one client count");
  for (const int n : c.concurrency)
    if (n < 1 || n > 4096) throw ParameterError(fmt::format("--concurrency {}: must be in [1, 4096]", n));
  for (const double r : c.rates)
    if (!(r >= 1 && r <= 1e8)) throw ParameterError(fmt::format("--rate {}: must be in [1, 1e8] requests/s", r));
  c.sync = state.get<std::string>("sync");
  c.client = state.get<std::string>("client");
  c.io = state.get<std::string>("io");
  c.request_memory = state.get<std::string>("request-memory");
  c.backend = state.get<std::string>("backend");
  require_one_of("sync", c.sync, {"spin", "blocking"});
  require_one_of("client", c.client, {"sync", "async"});
  require_one_of("io", c.io, {"copy", "mapped"});
  require_one_of("request-memory", c.request_memory, {"pinned", "pageable"});
  require_one_of("backend", c.backend, {"auto", "gpu", "host"});
  for (const auto& m : state.get<std::vector<std::string>>("modes")) {
    const auto& known = all_modes();
    const auto it = std::find_if(known.begin(), known.end(), [&](const ModeSpec& s) { return s.key == m; });
    if (it == known.end()) throw ParameterError(fmt::format("--modes: unknown mode '{}' (none, dynamic, graphs)", m));
    c.modes.push_back(*it);
  }
  c.max_batch = state.get<int>("max-batch");
  c.preferred = ints(state.get<std::vector<std::int64_t>>("preferred"));
  c.max_delay_us = state.get<int>("max-delay-us");
  c.policy.max_batch_size = static_cast<std::size_t>(c.max_batch);
  for (const int p : c.preferred) c.policy.preferred_batch_sizes.push_back(static_cast<std::size_t>(p));
  c.policy.max_queue_delay = std::chrono::microseconds(c.max_delay_us);
  try {
    validate(c.policy);
  } catch (const std::invalid_argument& e) {
    throw ParameterError(e.what());
  }
  c.lanes = state.get<int>("lanes");
  c.queue = state.get<int>("queue");
  const int max_clients = *std::max_element(c.concurrency.begin(), c.concurrency.end());
  if (!c.open_loop() && c.queue < max_clients)
    throw ParameterError(fmt::format("--queue {} is smaller than {} clients: closed-loop clients would be rejected",
                                     c.queue, max_clients));
  c.idle_spin_us = state.get<int>("idle-spin-us");
  c.window_ms = state.get<double>("window-ms");
  c.seed = state.get<std::uint64_t>("seed");
  c.report = state.get<bool>("report");
  return c;
}

}  // namespace streampipe::bench::serve
