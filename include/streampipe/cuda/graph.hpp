// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA graphs by stream capture. GraphCapture begins capturing a stream; end() returns the
// captured Graph. GraphExec is the instantiated, launchable form; update() swaps in a graph
// of the same topology (new pointers or sizes) without re-instantiating, and says whether
// that was possible. All three are move-only owners.

#include "streampipe/cuda/stream.hpp"

#include <cuda_runtime_api.h>

namespace streampipe {

class Graph {
 public:
  Graph() = default;
  explicit Graph(cudaGraph_t adopted) noexcept : handle_(adopted) {}
  ~Graph();
  Graph(Graph&& o) noexcept;
  Graph& operator=(Graph&& o) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  [[nodiscard]] cudaGraph_t handle() const;  // throws std::logic_error when empty
  [[nodiscard]] std::size_t node_count() const;
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  cudaGraph_t handle_ = nullptr;
};

class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(const Graph& graph);
  ~GraphExec();
  GraphExec(GraphExec&& o) noexcept;
  GraphExec& operator=(GraphExec&& o) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;

  void launch(StreamRef stream) const;
  // Tries an in-place update; false (and unchanged) when the topology differs.
  [[nodiscard]] bool update(const Graph& graph);
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  cudaGraphExec_t handle_ = nullptr;
};

enum class CaptureMode { global, thread_local_, relaxed };

class GraphCapture {
 public:
  explicit GraphCapture(StreamRef stream, CaptureMode mode = CaptureMode::thread_local_);
  // Ends an unfinished capture and discards it (for example when an exception unwinds).
  ~GraphCapture();
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

  [[nodiscard]] Graph end();

 private:
  StreamRef stream_;
  bool active_ = true;
};

}  // namespace streampipe
