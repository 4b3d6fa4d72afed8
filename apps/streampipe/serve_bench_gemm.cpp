#include "serve_bench_gemm.hpp"

#if defined(STREAMPIPE_HAVE_CUBLAS)
#include "streampipe/batching/mlp_reference.hpp"
#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace streampipe::cli::serve {

MlpRate measure_mlp_rate(const Device& device, batching::MlpModel& model, const InputPool& pool, std::size_t rows,
                         int runs) {
  const CurrentDeviceGuard guard(device);
  const std::size_t in = model.input_size(), out = model.output_size();
  Stream stream(device);
  auto lane = model.make_lane(stream.ref(), rows);
  lane->prepare(rows);
  DeviceBuffer<float> d_in(device, rows * in), d_out(device, rows * out);
  PinnedBuffer<float> h_in(rows * in), h_out(rows * out);
  for (std::size_t i = 0; i < h_in.size(); ++i) h_in[i] = pool.rows[(i / in) % pool.rows.size()][i % in];
  std::fill(h_out.begin(), h_out.end(), std::numeric_limits<float>::quiet_NaN());
  SP_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), h_in.data(), h_in.bytes(), cudaMemcpyHostToDevice, stream.handle()));
  SP_CUDA_CHECK(cudaMemcpyAsync(d_out.data(), h_out.data(), h_out.bytes(), cudaMemcpyHostToDevice, stream.handle()));
  for (int i = 0; i < 3; ++i) lane->enqueue(d_in.data(), d_out.data(), rows);
  Event start(device), stop(device);
  std::vector<double> tflops;
  constexpr int kPerRun = 10;  // a forward pass can be ~50 us: several per run smooth the event resolution
  const double flops = model.flops_per_row() * static_cast<double>(rows) * kPerRun;
  for (int r = 0; r < std::max(5, runs); ++r) {
    start.record(stream.ref());
    for (int i = 0; i < kPerRun; ++i) lane->enqueue(d_in.data(), d_out.data(), rows);
    stop.record(stream.ref());
    stop.synchronize();
    tflops.push_back(flops / (elapsed(start, stop).count() * 1e-3) / 1e12);
  }
  SP_CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.data(), h_out.bytes(), cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  MlpRate rate;
  rate.rows = rows;
  rate.tflops = report::summarize(tflops);
  rate.verified = true;
  for (std::size_t r = 0; r < rows; ++r) {
    double e = 0;
    const std::span<const float> got(h_out.data() + r * out, out);
    if (!batching::mlp_output_matches(got, pool.expected[r % pool.rows.size()], 0.03, &e)) rate.verified = false;
    rate.worst_error = std::max(rate.worst_error, e);
  }
  return rate;
}

}  // namespace streampipe::cli::serve
#endif
