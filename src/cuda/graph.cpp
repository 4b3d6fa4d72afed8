// SPDX-License-Identifier: Apache-2.0
#include "streampipe/cuda/graph.hpp"

#include "streampipe/cuda/error.hpp"

#include <stdexcept>
#include <utility>

namespace streampipe {

Graph::~Graph() {
  if (handle_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaGraphDestroy(handle_));
}
Graph::Graph(Graph&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
Graph& Graph::operator=(Graph&& o) noexcept {
  if (this != &o) {
    if (handle_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaGraphDestroy(handle_));
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

cudaGraph_t Graph::handle() const {
  if (handle_ == nullptr) throw std::logic_error("use of an empty or moved-from streampipe::Graph");
  return handle_;
}

std::size_t Graph::node_count() const {
  std::size_t n = 0;
  SP_CUDA_CHECK(cudaGraphGetNodes(handle(), nullptr, &n));
  return n;
}

GraphExec::GraphExec(const Graph& graph) {
  SP_CUDA_CHECK(cudaGraphInstantiate(&handle_, graph.handle(), 0));
}
GraphExec::~GraphExec() {
  if (handle_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(handle_));
}
GraphExec::GraphExec(GraphExec&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
GraphExec& GraphExec::operator=(GraphExec&& o) noexcept {
  if (this != &o) {
    if (handle_ != nullptr) SP_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(handle_));
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

void GraphExec::launch(StreamRef stream) const {
  if (handle_ == nullptr) throw std::logic_error("launch of an empty or moved-from GraphExec");
  SP_CUDA_CHECK(cudaGraphLaunch(handle_, stream.handle()));
}

bool GraphExec::update(const Graph& graph) {
  if (handle_ == nullptr) throw std::logic_error("update of an empty or moved-from GraphExec");
  cudaGraphExecUpdateResultInfo info{};
  const cudaError_t status = cudaGraphExecUpdate(handle_, graph.handle(), &info);
  if (status == cudaErrorGraphExecUpdateFailure) {
    detail::clear_expected_error();
    return false;
  }
  SP_CUDA_CHECK(status);
  return true;
}

namespace {
cudaStreamCaptureMode to_cuda(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::global: return cudaStreamCaptureModeGlobal;
    case CaptureMode::relaxed: return cudaStreamCaptureModeRelaxed;
    case CaptureMode::thread_local_: break;
  }
  return cudaStreamCaptureModeThreadLocal;
}
}  // namespace

GraphCapture::GraphCapture(StreamRef stream, CaptureMode mode) : stream_(stream) {
  SP_CUDA_CHECK(cudaStreamBeginCapture(stream.handle(), to_cuda(mode)));
}

GraphCapture::~GraphCapture() {
  if (!active_) return;
  cudaGraph_t discarded = nullptr;
  // Capture may already be invalidated by the error that is unwinding; that is expected.
  if (cudaStreamEndCapture(stream_.handle(), &discarded) == cudaSuccess && discarded != nullptr)
    SP_CUDA_CHECK_NOTHROW(cudaGraphDestroy(discarded));
  detail::clear_expected_error();
}

Graph GraphCapture::end() {
  if (!active_) throw std::logic_error("GraphCapture::end() called twice");
  active_ = false;
  cudaGraph_t graph = nullptr;
  SP_CUDA_CHECK(cudaStreamEndCapture(stream_.handle(), &graph));
  return Graph(graph);
}

}  // namespace streampipe
