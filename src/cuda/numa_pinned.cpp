// SPDX-License-Identifier: Apache-2.0
#include "numa_pinned.hpp"

#include "streampipe/cuda/error.hpp"

#include <cuda_runtime_api.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace streampipe::detail {

int host_numa_node_count() noexcept {
  static const int count = [] {
    int n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() > 4 && name.compare(0, 4, "node") == 0 && name.find_first_not_of("0123456789", 4) == std::string::npos)
        ++n;
    }
    return n > 0 ? n : 1;
  }();
  return count;
}

void* numa_pinned_malloc(std::size_t bytes, int node) {
  if (node < 0) throw std::invalid_argument("numa_pinned_malloc: negative NUMA node");
  if (bytes == 0) return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // A node mask wide enough for `node`; the kernel reads maxnode bits of it.
  constexpr std::size_t kBits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(static_cast<std::size_t>(node) / kBits + 1, 0);
  mask[static_cast<std::size_t>(node) / kBits] = 1ul << (static_cast<std::size_t>(node) % kBits);
  // Where the kernel refuses (no NUMA support, a node without memory) the pages go where
  // they would anyway: placement is a preference, never a reason to fail.
  (void)syscall(SYS_mbind, p, bytes, MPOL_PREFERRED, mask.data(), mask.size() * kBits + 1, 0);
  std::memset(p, 0, bytes);  // fault every page in under that policy before pinning
  const cudaError_t status = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
  if (status != cudaSuccess) {
    munmap(p, bytes);
    throw CudaError(status, "cudaHostRegister", __FILE__, __LINE__);
  }
  return p;
}

void numa_pinned_free(void* ptr, std::size_t bytes) noexcept {
  if (ptr == nullptr) return;
  SP_CUDA_CHECK_NOTHROW(cudaHostUnregister(ptr));
  munmap(ptr, bytes);
}

}  // namespace streampipe::detail
