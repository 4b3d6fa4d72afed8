// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/per_device.hpp"

#include "streampipe/jit/module.hpp"

#include <algorithm>

namespace streampipe::jit {

Program generated_program(const std::string& name, const std::string& source, const std::vector<std::string>& options) {
  Program p(name + ".cu", source);
  for (const auto& o : options) p.option(o);
  return p;
}

unsigned resident_grid(const Device& device, const Kernel& kernel, unsigned block) {
  return static_cast<unsigned>(device.multiprocessors()) *
         static_cast<unsigned>(std::max(1, kernel.max_active_blocks_per_sm(block)));
}

}  // namespace streampipe::jit
