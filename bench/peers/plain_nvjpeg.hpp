// SPDX-License-Identifier: Apache-2.0
#pragma once
// The nvJPEG probes' error check, written the plain way: a call that fails ends the program
// naming the call and nvJPEG's status.
#include "plain_cuda.hpp"

#include <nvjpeg.h>

#define NVJ(x)                                                                                          \
  do {                                                                                                  \
    nvjpegStatus_t s_ = (x);                                                                            \
    if (s_ != NVJPEG_STATUS_SUCCESS) {                                                                  \
      std::fprintf(stderr, "%s failed: nvJPEG status %d (%s:%d)\n", #x, int(s_), __FILE__, __LINE__); \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)
