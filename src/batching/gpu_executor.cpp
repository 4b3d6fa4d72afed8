#include "streampipe/batching/gpu_executor.hpp"

#include "streampipe/cuda/device_buffer.hpp"
#include "streampipe/cuda/error.hpp"
#include "streampipe/cuda/event.hpp"
#include "streampipe/cuda/graph.hpp"
#include "streampipe/cuda/nvtx.hpp"
#include "streampipe/cuda/pinned_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

namespace streampipe::batching {

struct GpuExecutor::Lane {
  Lane(const Device& d, EventWait wait)
      : stream(d), start(d), copied_in(d), computed(d), done(d, EventTiming::enabled, wait) {}
  Stream stream;
  PinnedBuffer<float> h_in, h_out;
  DeviceBuffer<float> d_in, d_out;
  std::unique_ptr<ModelLane> model;
  std::map<std::size_t, GraphExec> plans;  // bucket -> graph (graphs on)
  std::vector<std::size_t> prepared;       // buckets prepared (graphs off)
  Event start, copied_in, computed, done;
};

GpuExecutor::GpuExecutor(const Device& device, DeviceModel& model, GpuExecutorOptions options)
    : device_(device), model_(model), options_(options) {
  if (options_.lanes == 0) throw std::invalid_argument("GpuExecutor: at least one lane");
  if (model_.input_size() == 0 || model_.output_size() == 0)
    throw std::invalid_argument("GpuExecutor: the model's input and output sizes must be positive");
  const CurrentDeviceGuard guard(device_);
  const EventWait wait = options_.sync == report::SyncMode::blocking ? EventWait::blocking : EventWait::spin;
  for (std::size_t i = 0; i < options_.lanes; ++i) lanes_.push_back(std::make_unique<Lane>(device_, wait));
}

GpuExecutor::~GpuExecutor() {
  // Work may still be in flight if a run threw after enqueueing: let it finish before the
  // buffers it uses are freed.
  for (auto& lane : lanes_)
    if (lane->stream) SP_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(lane->stream.handle()));
}

std::size_t GpuExecutor::lanes() const { return lanes_.size(); }

void GpuExecutor::prepare(std::span<const std::size_t> buckets) {
  if (buckets.empty()) throw std::invalid_argument("GpuExecutor::prepare: no buckets");
  const std::size_t largest = *std::max_element(buckets.begin(), buckets.end());
  const CurrentDeviceGuard guard(device_);
  const NvtxRange range("GpuExecutor::prepare");
  const std::size_t in = model_.input_size(), out = model_.output_size();
  for (auto& lane_ptr : lanes_) {
    Lane& lane = *lane_ptr;
    lane.h_in = PinnedBuffer<float>(largest * in);
    lane.h_out = PinnedBuffer<float>(largest * out);
    lane.d_in = DeviceBuffer<float>(device_, largest * in);
    lane.d_out = DeviceBuffer<float>(device_, largest * out);
    std::fill(lane.h_in.begin(), lane.h_in.end(), 0.0f);
    // Warm-up runs compute on zeros, never on uninitialized memory.
    SP_CUDA_CHECK(cudaMemsetAsync(lane.d_in.data(), 0, lane.d_in.bytes(), lane.stream.handle()));
    lane.model = model_.make_lane(lane.stream.ref(), largest);
    lane.plans.clear();
    lane.prepared.clear();
    for (const std::size_t b : buckets) {
      lane.model->prepare(b);
      // One eager run first: lazy module loading and library set-up happen outside capture.
      lane.model->enqueue(lane.d_in.data(), lane.d_out.data(), b);
      lane.stream.synchronize();
      if (options_.graphs) {
        Graph graph;
        {
          GraphCapture capture(lane.stream.ref());
          lane.model->enqueue(lane.d_in.data(), lane.d_out.data(), b);
          graph = capture.end();
        }
        lane.plans.emplace(b, GraphExec(graph));
      }
      lane.prepared.push_back(b);
      // The plan's first use, copies included, happens here and not in a measured request.
      (void)execute(lane, b, b);
    }
  }
}

BatchTiming GpuExecutor::execute(Lane& lane, std::size_t rows, std::size_t bucket) {
  const std::size_t in = model_.input_size(), out = model_.output_size();
  const StreamRef s = lane.stream.ref();
  lane.start.record(s);
  SP_CUDA_CHECK(cudaMemcpyAsync(lane.d_in.data(), lane.h_in.data(), bucket * in * sizeof(float),
                                cudaMemcpyHostToDevice, s.handle()));
  lane.copied_in.record(s);
  // Enqueue time covers the compute only (as trtexec's does): one graph launch, or the
  // model's launches one by one.
  const auto t0 = std::chrono::steady_clock::now();
  if (options_.graphs)
    lane.plans.at(bucket).launch(s);
  else
    lane.model->enqueue(lane.d_in.data(), lane.d_out.data(), bucket);
  const auto t1 = std::chrono::steady_clock::now();
  lane.computed.record(s);
  // Only the real rows come back; padding rows are computed but never copied.
  SP_CUDA_CHECK(cudaMemcpyAsync(lane.h_out.data(), lane.d_out.data(), rows * out * sizeof(float),
                                cudaMemcpyDeviceToHost, s.handle()));
  lane.done.record(s);
  lane.done.synchronize();
  BatchTiming t;
  t.enqueue_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  t.h2d_ms = elapsed(lane.start, lane.copied_in).count();
  t.compute_ms = elapsed(lane.copied_in, lane.computed).count();
  t.d2h_ms = elapsed(lane.computed, lane.done).count();
  return t;
}

BatchTiming GpuExecutor::run(std::size_t lane_index, const Batch& batch) {
  if (lane_index >= lanes_.size()) throw std::out_of_range(fmt::format("GpuExecutor: no lane {}", lane_index));
  Lane& lane = *lanes_[lane_index];
  if (std::find(lane.prepared.begin(), lane.prepared.end(), batch.bucket) == lane.prepared.end())
    throw std::logic_error(fmt::format("GpuExecutor: bucket {} has no prepared plan", batch.bucket));
  if (batch.size() == 0 || batch.size() > batch.bucket)
    throw std::invalid_argument(fmt::format("GpuExecutor: a batch of {} does not fit bucket {}", batch.size(), batch.bucket));
  const CurrentDeviceGuard guard(device_);
  const NvtxRange range("GpuExecutor::run");
  gather_inputs(batch, lane.h_in.span(), model_.input_size());
  BatchTiming t;
  try {
    t = execute(lane, batch.size(), batch.bucket);
  } catch (...) {
    // Copies may still be reading the staging buffers: the next batch must not refill them
    // under a running transfer.
    SP_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(lane.stream.handle()));
    throw;
  }
  scatter_outputs(lane.h_out.span(), batch, model_.output_size());
  return t;
}

}  // namespace streampipe::batching
