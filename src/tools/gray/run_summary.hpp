// SPDX-License-Identifier: Apache-2.0
#pragma once
// A gray run's results gathered: each file settled from its engine item's result, then the
// run's totals and what each member of the device set did.

#include "streampipe/pipeline/device_set.hpp"
#include "streampipe/pipeline/item.hpp"
#include "streampipe/tools/gray/convert.hpp"

#include <vector>

namespace streampipe::tools::gray::detail {

// `f` as its item `r` ended: ok (unless the file failed alone inside its group), cancelled,
// or failed with its error named after the file; the device that ran it.
void settle_file(FileResult& f, const pipeline::ItemResult& r);

// After the run: counts and bytes, the members that converted files (backend, device), where
// JPEGs were decoded and encoded and to what, fallbacks by reason, and each member's share of the files
// and rate. `call_ms` is when convert() was called (Timeline::now_ms), from which the
// members' joined_ms are counted; `gpu_encode` whether nvJPEG could encode this run's outputs.
void total_up(RunSummary& summary, const std::vector<pipeline::DeviceReport>& members, double call_ms, bool gpu_encode);

}  // namespace streampipe::tools::gray::detail
