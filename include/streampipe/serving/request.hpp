// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a client hands the dynamic batcher and what it gets back. A request points at the
// client's own input and output (row-major float rows of the model's fixed sizes); both
// must stay valid until its future is ready. The future always yields a RequestResult; its
// status says whether the request ran, and if not why (error holds the message).
// throw_if_error() turns a failure into a RequestError for callers who prefer exceptions.
// (Errors travel as values: an exception_ptr shared across threads is invisible to
// ThreadSanitizer in an uninstrumented libstdc++, and the batcher must be TSan-clean.)

#include <chrono>
#include <cstddef>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>

namespace streampipe::serving {

using Clock = std::chrono::steady_clock;

enum class RequestStatus {
  ok,          // it ran; the output is written
  rejected,    // bad request (wrong shape, priority out of range): rejected alone, at once
  queue_full,  // the bounded queue was full: rejected at once
  timed_out,   // waited in the queue past its timeout; never ran
  cancelled,   // the batcher shut down with ShutdownMode::cancel before it ran
  shut_down,   // submitted after shutdown began
  failed,      // its batch failed (the message names the cause)
};
[[nodiscard]] const char* to_string(RequestStatus status) noexcept;

class RequestError : public std::runtime_error {
 public:
  RequestError(RequestStatus status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  [[nodiscard]] RequestStatus status() const noexcept { return status_; }

 private:
  RequestStatus status_;
};

struct Request {
  std::span<const float> input;   // exactly the model's input size
  std::span<float> output;        // exactly the model's output size
  int priority = 0;               // 0 is the highest; below BatcherOptions::priority_levels
  std::chrono::microseconds timeout{0};  // time allowed in the queue; 0: the batcher's default
  // Input and output are page-locked host memory mapped for the device (cudaMallocHost,
  // cudaHostRegister, PinnedPool...): a GPU executor with mapped I/O then has its kernels
  // read and write them in place, with no host copy through its staging. The executor
  // checks the claim at submit and rejects a request whose memory is not.
  bool pinned = false;
};

struct RequestResult {
  RequestStatus status = RequestStatus::ok;
  std::string error;           // why, when status != ok
  std::size_t batch_size = 0;  // requests in its batch
  std::size_t bucket = 0;      // the plan it ran on (batch padded to this size)
  std::size_t lane = 0;
  Clock::time_point submitted, dispatched, completed;  // dispatched/completed: when it ran

  [[nodiscard]] bool ok() const noexcept { return status == RequestStatus::ok; }
  void throw_if_error() const {
    if (!ok()) throw RequestError(status, error);
  }
};

// The asynchronous form of a request's completion (DynamicBatcher::submit with a callback).
using Completion = std::function<void(RequestResult&&)>;

}  // namespace streampipe::serving
