// SPDX-License-Identifier: Apache-2.0
#include "item_validation.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace streampipe::pipeline::detail {

std::string item_name(std::size_t index, const std::string& label) {
  return label.empty() ? fmt::format("item {}", index) : fmt::format("item {} ({})", index, label);
}

void validate_item(const Item& item, std::size_t index, const Operation& op) {
  const std::string name = item_name(index, item.label);
  if (item.produce && !item.in.empty())
    throw std::invalid_argument(name + ": give either an input span or a produce stage, not both");
  if (!item.produce && item.in.empty()) throw std::invalid_argument(name + ": empty input");
  if (item.consume && !item.out.empty())
    throw std::invalid_argument(name + ": give either an output span or a consume stage, not both");
  if (item.consume && !item.produce && !op.output_bytes)
    throw std::invalid_argument(name + ": a consume stage on a span input needs Operation::output_bytes");
  // Host stages size their own output (produce) or take whatever comes (consume); only a
  // span to span item must match what the operation produces.
  if (!op.output_bytes || item.produce || item.consume) return;
  const std::size_t want = op.output_bytes(item.in.size());
  if (item.out.empty() && want != 0) throw std::invalid_argument(name + ": empty output");
  if (item.out.size() != want)
    throw std::invalid_argument(fmt::format("{}: output is {} bytes but operation '{}' produces {} from {} input bytes",
                                            name, item.out.size(), op.name, want, item.in.size()));
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
