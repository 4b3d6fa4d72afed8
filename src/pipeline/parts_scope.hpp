// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which PartQueue run_parts() uses on this thread: the engine's, while one of its host stages
// runs there (host_stages.cpp).

#include "streampipe/pipeline/parts.hpp"

namespace streampipe::pipeline::detail {

class PartsScope {
 public:
  explicit PartsScope(PartQueue& parts) noexcept;
  ~PartsScope();
  PartsScope(const PartsScope&) = delete;
  PartsScope& operator=(const PartsScope&) = delete;

 private:
  PartQueue* previous_;
};

}  // namespace streampipe::pipeline::detail
