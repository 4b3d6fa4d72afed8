// SPDX-License-Identifier: Apache-2.0
#pragma once
// Scoped NVTX range for Nsight Systems timelines. Compiles to nothing when the build has
// no NVTX (reported at configure time).

#if defined(STREAMPIPE_HAVE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

namespace streampipe {

// NVTX initializes itself lazily on first use, which races when several threads make their
// first call together; call this once before starting threads that use NvtxRange.
inline void nvtx_initialize() noexcept {
#if defined(STREAMPIPE_HAVE_NVTX)
  nvtxInitialize(nullptr);
#endif
}

class NvtxRange {
 public:
  explicit NvtxRange([[maybe_unused]] const char* name) noexcept {
#if defined(STREAMPIPE_HAVE_NVTX)
    nvtxRangePushA(name);
#endif
  }
  ~NvtxRange() {
#if defined(STREAMPIPE_HAVE_NVTX)
    nvtxRangePop();
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace streampipe
