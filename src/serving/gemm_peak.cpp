// SPDX-License-Identifier: Apache-2.0
#include "cublaslt_handles.hpp"
#include "mlp_convert.cuh"
#include "streampipe/serving/mlp_model.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/report/statistics.hpp"

#include <stdexcept>
#include <vector>

namespace streampipe::serving {

GemmPeak measure_bf16_gemm_peak(const Device& device, std::size_t size, int runs) {
  if (size == 0 || size % 8 != 0) throw std::invalid_argument("GEMM peak: size must be a positive multiple of 8");
  if (runs < 1) throw std::invalid_argument("GEMM peak: at least one run");
  const CurrentDeviceGuard guard(device);
  Stream stream(device);
  const StreamRef s = stream.ref();
  const std::size_t n = size * size;
  DeviceBuffer<std::uint16_t> a(device, n), b(device, n), d(device, n);
  DeviceBuffer<std::byte> workspace(device, detail::kWorkspaceBytes);
  detail::fill_bf16_pattern(s, a.data(), n, 0.05f, 1u);
  detail::fill_bf16_pattern(s, b.data(), n, 0.05f, 2u);

  auto handle = detail::make_handle();
  auto desc = detail::make_tn_desc();
  const auto m = static_cast<std::uint64_t>(size);
  const auto ld = static_cast<std::int64_t>(size);
  auto la = detail::make_layout(m, m, ld), lb = detail::make_layout(m, m, ld), ld_ = detail::make_layout(m, m, ld);
  auto pref = detail::make_preference(detail::kWorkspaceBytes);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  SP_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle.get(), desc.get(), la.get(), lb.get(), ld_.get(), ld_.get(),
                                                 pref.get(), 1, &result, &found));
  if (found == 0) throw std::runtime_error("cuBLASLt has no bf16 algorithm for the peak GEMM");
  const float alpha = 1.0f, beta = 0.0f;
  const auto gemm = [&] {
    SP_CUBLAS_CHECK(cublasLtMatmul(handle.get(), desc.get(), &alpha, a.data(), la.get(), b.data(), lb.get(), &beta,
                                   d.data(), ld_.get(), d.data(), ld_.get(), &result.algo, workspace.data(),
                                   workspace.bytes(), s.handle()));
  };
  constexpr int kPerRun = 5;  // one 8192^3 GEMM is ~2 ms: several per run smooth the clock
  for (int i = 0; i < 3; ++i) gemm();
  stream.synchronize();
  Event start(device), stop(device);
  std::vector<double> tflops;
  const double flops = 2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size) * kPerRun;
  for (int r = 0; r < runs; ++r) {
    start.record(s);
    for (int i = 0; i < kPerRun; ++i) gemm();
    stop.record(s);
    stop.synchronize();
    tflops.push_back(flops / (elapsed(start, stop).count() * 1e-3) / 1e12);
  }
  const auto summary = report::summarize(tflops);
  return {summary.median, summary.min, summary.max, size};
}

}  // namespace streampipe::serving
