// SPDX-License-Identifier: Apache-2.0
// An item's result for Python (item_result.hpp).
#include "item_result.hpp"

namespace streampipe::python {
namespace {

const char* status_name(pipeline::ItemStatus s) {
  switch (s) {
    case pipeline::ItemStatus::done: return "done";
    case pipeline::ItemStatus::failed: return "failed";
    case pipeline::ItemStatus::cancelled: return "cancelled";
  }
  return "unknown";
}

}  // namespace

nb::tuple result_tuple(const pipeline::ItemResult& r) {
  nb::dict t;
  t["queued_ms"] = r.timing.queued_ms;
  t["stage_in_ms"] = r.timing.stage_in_ms;
  t["h2d_ms"] = r.timing.h2d_ms;
  t["compute_ms"] = r.timing.compute_ms;
  t["d2h_ms"] = r.timing.d2h_ms;
  t["stage_out_ms"] = r.timing.stage_out_ms;
  t["latency_ms"] = r.timing.latency_ms;
  t["enqueue_ms"] = r.timing.enqueue_ms;
  nb::object exc = r.exception ? to_python_exception(r.exception) : nb::none();
  return nb::make_tuple(r.index, r.label, status_name(r.status), r.error, exc, r.lane, r.device, r.batch_size, t);
}

}  // namespace streampipe::python
