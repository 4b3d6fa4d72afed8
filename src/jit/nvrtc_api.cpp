// SPDX-License-Identifier: Apache-2.0
#include "nvrtc_api.hpp"

#include "../cuda/entry_points.hpp"
#include "streampipe/jit/errors.hpp"
#include "streampipe/jit/program.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace streampipe::jit {
namespace {

#define SP_NVRTC_STRINGIFY2(x) #x
#define SP_NVRTC_STRINGIFY(x) SP_NVRTC_STRINGIFY2(x)
// NVRTC's soname carries the CUDA major version it was built for, as the runtime's does.
constexpr const char* kLibrary = "libnvrtc.so." SP_NVRTC_STRINGIFY(SP_CUDA_MAJOR);

// NVRTC cannot be used: not found, or lacking an entry point. status -1: no NVRTC status
// applies.
class NvrtcUnavailable : public NvrtcError {
 public:
  NvrtcUnavailable(std::string why, std::string call)
      : NvrtcError({.api = Error::Api::nvrtc,
                    .status = -1,
                    .status_name = "NVRTC_NOT_LOADED",
                    .description = std::move(why),
                    .call = std::move(call),
                    .file = {},
                    .line = 0,
                    .detail = {}},
                   {}) {}
};

std::mutex search_mutex;
std::vector<std::string>& search_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

struct Loaded {
  detail::NvrtcApi table;
  std::string path;     // the file loaded
  std::string failure;  // empty when every entry point was found
  std::string call;     // the loader call that failed
};

// The copy already in the process first (a library loaded before us: one NVRTC, not two),
// then the folders the program named, the dynamic loader's own search (LD_LIBRARY_PATH,
// RUNPATH, the system's cache), and the toolkit's usual homes.
void* open_library(std::string& path, std::vector<std::string>& tried) {
  if (void* h = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    path = kLibrary;
    return h;
  }
  std::vector<std::string> candidates;
  {
    std::lock_guard lock(search_mutex);
    for (const auto& d : search_dirs()) candidates.push_back((std::filesystem::path(d) / kLibrary).string());
  }
  candidates.emplace_back(kLibrary);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0')
      candidates.push_back((std::filesystem::path(v) / "lib64" / kLibrary).string());
  candidates.push_back(std::string("/usr/local/cuda/lib64/") + kLibrary);
  for (const auto& c : candidates) {
    if (void* h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = c;
      return h;
    }
    tried.push_back(::dlerror());
  }
  return nullptr;
}

Loaded load() {
  Loaded l;
  std::vector<std::string> tried;
  void* library = open_library(l.path, tried);  // never closed: any thread may compile until exit
  if (library == nullptr) {
    l.failure = fmt::format(
        "cannot load NVRTC ({}), which compiles runtime kernels: install it (pip install nvidia-cuda-nvrtc for "
        "CUDA {}, or the CUDA toolkit) or put the folder holding it on LD_LIBRARY_PATH; tried: {}",
        kLibrary, SP_CUDA_MAJOR, fmt::join(tried, "; "));
    l.call = fmt::format("dlopen(\"{}\")", kLibrary);
    return l;
  }
  if (Dl_info info{}; ::dladdr(::dlsym(library, "nvrtcVersion"), &info) != 0 && info.dli_fname != nullptr)
    l.path = info.dli_fname;  // the file itself, also when found by name
  detail::NvrtcApi& t = l.table;
  ::streampipe::detail::EntryPoints e(library, fmt::format("{} ({})", kLibrary, l.path));
  e.resolve("nvrtcVersion", t.version);
  e.resolve("nvrtcGetErrorString", t.get_error_string);
  e.resolve("nvrtcGetNumSupportedArchs", t.get_num_supported_archs);
  e.resolve("nvrtcGetSupportedArchs", t.get_supported_archs);
  e.resolve("nvrtcCreateProgram", t.create_program);
  e.resolve("nvrtcDestroyProgram", t.destroy_program);
  e.resolve("nvrtcAddNameExpression", t.add_name_expression);
  e.resolve("nvrtcCompileProgram", t.compile_program);
  e.resolve("nvrtcGetProgramLogSize", t.get_program_log_size);
  e.resolve("nvrtcGetProgramLog", t.get_program_log);
  e.resolve("nvrtcGetLoweredName", t.get_lowered_name);
  e.resolve("nvrtcGetCUBINSize", t.get_cubin_size);
  e.resolve("nvrtcGetCUBIN", t.get_cubin);
  e.resolve("nvrtcGetPTXSize", t.get_ptx_size);
  e.resolve("nvrtcGetPTX", t.get_ptx);
  l.failure = e.failure();
  l.call = e.call();
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

void set_nvrtc_search_dirs(std::vector<std::string> dirs) {
  std::lock_guard lock(search_mutex);
  search_dirs() = std::move(dirs);
}

std::string nvrtc_library_path() { return detail::nvrtc_path(); }

namespace detail {

const NvrtcApi& nvrtc() {
  const Loaded& l = loaded();
  if (!l.failure.empty()) throw NvrtcUnavailable(l.failure, l.call);
  return l.table;
}

const std::string& nvrtc_path() {
  (void)nvrtc();
  return loaded().path;
}

const char* nvrtc_status_name(int status) noexcept {
  try {
    return nvrtc().get_error_string(static_cast<nvrtcResult>(status));
  } catch (...) {
    return "NVRTC_ERROR_UNKNOWN";
  }
}

}  // namespace detail
}  // namespace streampipe::jit
