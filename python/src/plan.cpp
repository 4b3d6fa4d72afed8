// SPDX-License-Identifier: Apache-2.0
// The planner from Python: the lanes, depth and batching an engine would choose for items
// like a sample (Engine starts with them when the user left them out).
#include "bindings.hpp"
#include "operations.hpp"

#include "streampipe/pipeline/engine.hpp"
#include "streampipe/pipeline/planner.hpp"

#include <cstdint>
#include <string>

namespace streampipe::python {
namespace {

nb::dict plan(const PyOperation& op, std::uintptr_t sample, std::size_t sample_bytes, std::size_t out_bytes,
              std::size_t count, const pipeline::EngineOptions& base) {
  pipeline::Plan p;
  {
    nb::gil_scoped_release release;
    p = pipeline::plan_items(op.op, {reinterpret_cast<const std::byte*>(sample), sample_bytes}, out_bytes, count, base);
  }
  nb::dict d;
  d["lanes"] = p.options.lanes;
  d["depth"] = p.options.depth;
  d["batch_items"] = p.options.batch_items;
  d["batch_bytes"] = p.options.batch_bytes;
  d["staging_bytes"] = p.options.staging_bytes;
  d["backend"] = std::string(pipeline::backend_name(p.options.backend));
  d["reason"] = p.reason;
  return d;
}

}  // namespace

void bind_plan(nb::module_& m) {
  m.def("plan", &plan, nb::arg("operation"), nb::arg("sample_ptr"), nb::arg("sample_bytes"), nb::arg("out_bytes"),
        nb::arg("count"), nb::arg("base"),
        "The planner's choice of lanes, depth and batching for `count` items like the sample.");
}

}  // namespace streampipe::python
