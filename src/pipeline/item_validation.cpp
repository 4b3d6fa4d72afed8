// SPDX-License-Identifier: Apache-2.0
#include "item_validation.hpp"

#include "device_choice.hpp"

#include <fmt/format.h>

#include <cmath>

#include <stdexcept>
#include <string_view>

namespace streampipe::pipeline::detail {

std::string item_name(std::size_t index, const std::string& label) {
  return label.empty() ? fmt::format("item {}", index) : fmt::format("item {} ({})", index, label);
}

std::size_t kind_of(const Item& item) noexcept {
  const bool in_range = item.work_kind >= 0 && static_cast<std::size_t>(item.work_kind) < DeviceChoice::kKinds;
  return in_range ? static_cast<std::size_t>(item.work_kind) : 0;
}

std::size_t validate_item(const Item& item, std::size_t index, const Operation& op) {
  // The name is made only for a refusal: submit() runs this for every item.
  const auto refuse = [&](std::string_view why) {
    throw std::invalid_argument(fmt::format("{}: {}", item_name(index, item.label), why));
  };
  if (!(item.work > 0) || !std::isfinite(item.work))
    refuse(fmt::format("work {} is not a positive finite number", item.work));
  if (kind_of(item) != static_cast<std::size_t>(item.work_kind))
    refuse(fmt::format("work kind {} is not in 0-{}", item.work_kind, DeviceChoice::kKinds - 1));
  if (item.produce && !item.in.empty()) refuse("give either an input span or a produce stage, not both");
  if (!item.produce && item.in.empty()) refuse("empty input");
  if (item.consume && !item.out.empty()) refuse("give either an output span or a consume stage, not both");
  if (item.consume && !item.produce && !op.output_bytes)
    refuse("a consume stage on a span input needs Operation::output_bytes");
  // A produce stage sizes its own output when it allocates; a consume stage takes whatever
  // the operation makes of the input; only a span to span item must match it.
  if (item.produce) return 0;
  if (item.consume) return op.output_bytes(item.in.size());
  if (!op.output_bytes) return item.out.size();
  const std::size_t want = op.output_bytes(item.in.size());
  if (item.out.empty() && want != 0) refuse("empty output");
  if (item.out.size() != want)
    refuse(fmt::format("output is {} bytes but operation '{}' produces {} from {} input bytes", item.out.size(),
                       op.name, want, item.in.size()));
  return want;
}

std::string describe_exception(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace streampipe::pipeline::detail
