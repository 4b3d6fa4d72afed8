// SPDX-License-Identifier: Apache-2.0
#pragma once
// A compiled program loaded on one device, and its kernels.
//   Module m(gpu, compile(program, default_arch(gpu)));       // or load_module() (cached)
//   auto k = m.kernel<void(const float*, float*, int)>("scale");
//   k.launch(stream.ref(), LaunchConfig::for_elements(gpu, n), d_in, d_out, int(n));
// Typed kernels check at compile time that arguments convert to the parameters and that
// the parameters are trivially copyable, and at lookup that the kernel really takes that
// many parameters of those sizes. Untyped kernels check count and sizes at launch.
// Module and Kernel share ownership of the loaded module: a kernel keeps it loaded. The
// module lives in the device's primary context (the one the runtime API uses); launches
// from any thread work.

#include "streampipe/cuda/launch.hpp"
#include "streampipe/cuda/stream.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/program.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace streampipe::jit {

namespace detail {
struct LoadedModule;
}

class Kernel {
 public:
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] int device_index() const noexcept { return device_; }
  // Parameter sizes in bytes as the driver reports them; nullopt on drivers that cannot.
  [[nodiscard]] const std::optional<std::vector<std::size_t>>& parameter_sizes() const noexcept {
    return param_sizes_;
  }
  // Resident blocks per SM for this block size (the grid size of a grid-stride loop).
  [[nodiscard]] int max_active_blocks_per_sm(unsigned block, std::size_t dynamic_shared = 0) const;

  // Untyped launch: every argument must be trivially copyable; the count (and, where the
  // driver reports them, each size) must match the kernel's parameters, else JitError.
  template <typename... Args>
  void launch(StreamRef stream, const LaunchConfig& config, const Args&... args) const {
    static_assert((std::is_trivially_copyable_v<Args> && ...), "kernel arguments must be trivially copyable");
    void* pointers[] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
    const std::size_t sizes[] = {sizeof(Args)..., 0};
    launch_raw(stream, config, pointers, sizes, sizeof...(Args));
  }

  // `args[i]` points at argument i; `sizes` (may be null) gives their sizes for checking.
  void launch_raw(StreamRef stream, const LaunchConfig& config, void** args, const std::size_t* sizes,
                  std::size_t count) const;

  // Throws JitError unless the kernel takes exactly these parameter sizes.
  void check_signature(const std::vector<std::size_t>& sizes, const char* what) const;

 private:
  friend class Module;
  Kernel(std::shared_ptr<const detail::LoadedModule> module, void* function, std::string name, int device);
  std::shared_ptr<const detail::LoadedModule> module_;
  void* function_ = nullptr;  // CUfunction
  std::string name_;
  int device_ = 0;
  std::optional<std::vector<std::size_t>> param_sizes_;
};

template <typename Signature>
class TypedKernel;

template <typename... Params>
class TypedKernel<void(Params...)> {
  static_assert((std::is_trivially_copyable_v<std::decay_t<Params>> && ...),
                "kernel parameters must be trivially copyable");

 public:
  explicit TypedKernel(Kernel kernel) : kernel_(std::move(kernel)) {
    kernel_.check_signature({sizeof(std::decay_t<Params>)...}, "the declared signature");
  }

  template <typename... Args>
  void launch(StreamRef stream, const LaunchConfig& config, Args&&... args) const {
    static_assert(sizeof...(Params) == sizeof...(Args), "wrong number of kernel arguments");
    static_assert((std::is_convertible_v<Args&&, Params> && ...),
                  "a kernel argument does not convert to the parameter type");
    std::tuple<std::decay_t<Params>...> values(static_cast<Params>(std::forward<Args>(args))...);
    std::apply(
        [&](auto&... v) {
          void* pointers[] = {static_cast<void*>(&v)..., nullptr};
          kernel_.launch_raw(stream, config, pointers, nullptr, sizeof...(Params));
        },
        values);
  }

  [[nodiscard]] const Kernel& untyped() const noexcept { return kernel_; }

 private:
  Kernel kernel_;
};

class Module {
 public:
  // Loads a CUBIN or PTX on `device` (PTX is JIT-compiled by the driver). Throws CudaError
  // when there is no usable driver (is_no_device_status() of its status), DriverError when
  // the driver is too old or rejects the image, JitError for an empty binary.
  Module(const Device& device, CompileResult compiled);

  // Looks up a kernel by name or by one of the program's name expressions. Throws JitError
  // naming the kernel and listing those the module has.
  [[nodiscard]] Kernel kernel(const std::string& name) const;
  template <typename Signature>
  [[nodiscard]] TypedKernel<Signature> kernel(const std::string& name) const {
    return TypedKernel<Signature>(kernel(name));
  }
  // Size in bytes of a __device__ variable (JitError when there is none of that name).
  [[nodiscard]] std::size_t global_size(const std::string& name) const;
  // The names of the module's kernels (empty on drivers that cannot list them).
  [[nodiscard]] std::vector<std::string> kernel_names() const;

  [[nodiscard]] int device_index() const noexcept;
  [[nodiscard]] const CompileResult& compiled() const noexcept;

 private:
  std::shared_ptr<const detail::LoadedModule> state_;
};

}  // namespace streampipe::jit
