// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/program.hpp"

#include "nvrtc_api.hpp"
#include "streampipe/jit/errors.hpp"

#include "signal_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <source_location>
#include <stdexcept>

namespace streampipe::jit {
namespace {

// file:line name the call site.
void check(nvrtcResult status, const char* call, const std::string& program,
           const std::source_location where = std::source_location::current()) {
  if (status != NVRTC_SUCCESS) [[unlikely]]
    throw NvrtcError(static_cast<int>(status), call, program, {}, where.file_name(), static_cast<int>(where.line()));
}

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const noexcept { detail::nvrtc().destroy_program(&p); }
};
using ProgramHandle = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

bool valid_arch(const std::string& arch) {
  const auto digits = [&](std::size_t from) {
    return arch.size() > from &&
           std::all_of(arch.begin() + static_cast<std::ptrdiff_t>(from), arch.end(),
                       [](char c) { return (c >= '0' && c <= '9') || c == 'a' || c == 'f'; });
  };
  return (arch.rfind("sm_", 0) == 0 && digits(3)) || (arch.rfind("compute_", 0) == 0 && digits(8));
}

}  // namespace

Program::Program(std::string name, std::string source) : name_(std::move(name)), source_(std::move(source)) {
  if (name_.empty()) throw JitError("a program needs a name (it appears in NVRTC's log)");
}
Program& Program::option(std::string opt) {
  options_.push_back(std::move(opt));
  return *this;
}
Program& Program::include_dir(std::string dir) {
  include_dirs_.push_back(std::move(dir));
  return *this;
}
Program& Program::header(std::string name, std::string contents) {
  headers_.push_back({std::move(name), std::move(contents)});
  return *this;
}
Program& Program::name_expression(std::string expr) {
  name_expressions_.push_back(std::move(expr));
  return *this;
}
Program& Program::arch(std::string a) {
  if (!a.empty() && !valid_arch(a))
    throw JitError(fmt::format("architecture '{}' for {} is not sm_XY or compute_XY", a, name_));
  arch_ = std::move(a);
  return *this;
}

std::string CompileResult::symbol(const std::string& name) const {
  const auto it = lowered.find(name);
  return it == lowered.end() ? name : it->second;
}

CompileResult compile(const Program& program, const std::string& arch) {
  if (!valid_arch(arch))
    throw JitError(fmt::format("architecture '{}' for {} is not sm_XY or compute_XY", arch, program.name()));
  const auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_sources, header_names;
  for (const auto& h : program.headers()) {
    header_sources.push_back(h.contents.c_str());
    header_names.push_back(h.name.c_str());
  }
  const detail::NvrtcApi& nvrtc = detail::nvrtc();
  nvrtcProgram raw = nullptr;
  check(nvrtc.create_program(&raw, program.source().c_str(), program.name().c_str(),
                           static_cast<int>(header_sources.size()), header_sources.data(),
                           header_names.data()),
        "nvrtcCreateProgram", program.name());
  const ProgramHandle handle(raw);
  for (const auto& e : program.name_expressions())
    check(nvrtc.add_name_expression(raw, e.c_str()), "nvrtcAddNameExpression", program.name());

  std::vector<std::string> opts;
  opts.push_back("--gpu-architecture=" + arch);
  for (const auto& d : program.include_dirs()) opts.push_back("-I" + d);
  for (const auto& o : program.options()) opts.push_back(o);
  std::vector<const char*> opt_ptrs;
  for (const auto& o : opts) opt_ptrs.push_back(o.c_str());
  nvrtcResult status = NVRTC_SUCCESS;
  {
    const detail::CompileSignalGuard signals;  // NVRTC's own handlers, only while it compiles
    status = nvrtc.compile_program(raw, static_cast<int>(opt_ptrs.size()), opt_ptrs.data());
  }

  CompileResult result;
  result.program_name = program.name();
  result.arch = arch;
  std::size_t log_size = 0;
  check(nvrtc.get_program_log_size(raw, &log_size), "nvrtcGetProgramLogSize", program.name());
  result.log.resize(log_size);
  if (log_size > 0) check(nvrtc.get_program_log(raw, result.log.data()), "nvrtcGetProgramLog", program.name());
  while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n')) result.log.pop_back();
  if (status != NVRTC_SUCCESS) {
    std::string call = fmt::format("nvrtcCompileProgram({}, options [{}])", program.name(), fmt::join(opts, " "));
    if (status == NVRTC_ERROR_COMPILATION)
      throw CompileError(program.name(), result.log, program.source(), std::move(call));
    throw NvrtcError(static_cast<int>(status), std::move(call), program.name(), result.log, __FILE__, __LINE__);
  }

  for (const auto& e : program.name_expressions()) {
    const char* lowered = nullptr;
    check(nvrtc.get_lowered_name(raw, e.c_str(), &lowered), "nvrtcGetLoweredName", program.name());
    result.lowered[e] = lowered;
  }
  std::size_t size = 0;
  if (arch.rfind("sm_", 0) == 0) {
    result.kind = BinaryKind::cubin;
    check(nvrtc.get_cubin_size(raw, &size), "nvrtcGetCUBINSize", program.name());
    result.binary.resize(size);
    check(nvrtc.get_cubin(raw, reinterpret_cast<char*>(result.binary.data())), "nvrtcGetCUBIN", program.name());
  } else {
    result.kind = BinaryKind::ptx;
    check(nvrtc.get_ptx_size(raw, &size), "nvrtcGetPTXSize", program.name());
    result.binary.resize(size);
    check(nvrtc.get_ptx(raw, reinterpret_cast<char*>(result.binary.data())), "nvrtcGetPTX", program.name());
  }
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

int nvrtc_version() {
  static const int version = [] {
    int major = 0, minor = 0;
    try {
      if (detail::nvrtc().version(&major, &minor) != NVRTC_SUCCESS) return 0;
    } catch (const NvrtcError&) {
      return 0;  // not installed: compile() says so, naming where it looked
    }
    return major * 1000 + minor * 10;
  }();
  return version;
}

const std::vector<int>& nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    int n = 0;
    std::vector<int> v;
    const detail::NvrtcApi* nvrtc = nullptr;
    try {
      nvrtc = &detail::nvrtc();
    } catch (const NvrtcError&) {
      return v;  // not installed: arch_for() says so
    }
    if (nvrtc->get_num_supported_archs(&n) != NVRTC_SUCCESS || n <= 0) return v;
    v.resize(static_cast<std::size_t>(n));
    if (nvrtc->get_supported_archs(v.data()) != NVRTC_SUCCESS) v.clear();
    std::sort(v.begin(), v.end());
    return v;
  }();
  return archs;
}

std::string arch_for(int sm) {
  (void)detail::nvrtc();  // NVRTC not installed: say so, not "no architectures"
  const auto& archs = nvrtc_supported_archs();
  if (archs.empty()) throw std::runtime_error("NVRTC reports no supported architectures");
  if (std::find(archs.begin(), archs.end(), sm) != archs.end()) return fmt::format("sm_{}", sm);
  // Newer than this NVRTC: PTX for the newest it knows, which the driver JIT-compiles.
  const auto below = std::find_if(archs.rbegin(), archs.rend(), [&](int a) { return a < sm; });
  if (below == archs.rend())
    throw JitError(fmt::format("sm_{} is older than every architecture NVRTC {} supports (oldest sm_{})",
                               sm, nvrtc_version(), archs.front()));
  return fmt::format("compute_{}", *below);
}

std::string default_arch(const Device& device) {
  const auto& p = device.properties();
  return arch_for(p.major * 10 + p.minor);
}

std::string cuda_include_dir() {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
#ifdef STREAMPIPE_CUDA_INCLUDE_DIR
  candidates.emplace_back(STREAMPIPE_CUDA_INCLUDE_DIR);
#endif
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') candidates.push_back(std::string(v) + "/include");
  candidates.emplace_back("/usr/local/cuda/include");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(fs::path(c) / "cuda_runtime.h", ec)) return c;
  }
  return {};
}

}  // namespace streampipe::jit
