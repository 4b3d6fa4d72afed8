// SPDX-License-Identifier: Apache-2.0
// A user's program on streampipe::jit: a kernel source compiled by NVRTC to PTX. NVRTC needs
// no GPU, so this runs (and checks its result) on any machine with the CUDA toolkit.

#include "streampipe/jit/program.hpp"

#include <cstdio>
#include <string>

int main() {
  using namespace streampipe::jit;
  const Program program("consumer_add.cu", R"(extern "C" __global__ void add(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += a;
})");
  const CompileResult result = compile(program, "compute_90");
  const std::string ptx(reinterpret_cast<const char*>(result.binary.data()), result.binary.size());
  const bool ok = result.kind == BinaryKind::ptx && ptx.find(".entry add") != std::string::npos;
  std::printf("NVRTC compiled %s: %zu bytes of PTX%s\n", program.name().c_str(), ptx.size(),
              ok ? "" : " without the kernel's entry");
  return ok ? 0 : 1;
}
