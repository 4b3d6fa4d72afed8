// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where an engine's work runs: its device set. The CPU's own lanes (running an operation's
// host form) and GPUs (its device form) are members of one set, and each batch goes to the
// member expected to finish it first. This header resolves what a user asked for (a
// backend and a device list) into a set, once, for the engine, the tools, the CLI and
// Python alike; and describes what each member of a running set did.
//
//   backend   members
//   host      the CPU
//   gpu       the GPUs in `devices` (empty: every usable GPU)
//   automatic the CPU when the operation has a host form, and every usable GPU (or those in
//             `devices`) when it has a device form; the GPUs are found and started while
//             the CPU already works
// With `simulate_gpus` the GPUs are stood in for by host threads running the host form
// (tests of spreading, late joining and device loss without a GPU): `devices` names them
// (empty: one, GPU 0).

#include "streampipe/pipeline/item.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace streampipe::pipeline {

enum class Backend { automatic, gpu, host };

// "auto", "gpu", "host".
[[nodiscard]] const char* backend_name(Backend b) noexcept;
// The inverse of backend_name. Throws std::invalid_argument naming `name` and the choices.
[[nodiscard]] Backend parse_backend(std::string_view name);

// The device number of the CPU's lanes in results and timelines (GPUs are 0, 1, ...; -1 is
// "no device": a host stage, or an item that never ran).
inline constexpr int kCpuDevice = -2;

struct DeviceSet {
  bool cpu = false;        // the CPU's lanes are a member
  std::vector<int> gpus;   // GPUs (or simulated GPUs) named or found, in the set's order; may repeat
  bool find_gpus = false;  // every usable GPU, found when the engine starts (gpus then empty)
  bool simulated = false;  // the GPUs are simulated on host threads

  // Resolves `backend` and `devices` for an operation with the given forms. Named GPUs are
  // checked against the machine now (CUDA starts), unless simulated; with automatic and no
  // list, nothing is asked of CUDA here. Throws std::invalid_argument for a negative index,
  // a backend the operation has no form for, or a device list on the host backend;
  // std::out_of_range naming a GPU that does not exist, or when the gpu backend finds none.
  [[nodiscard]] static DeviceSet resolve(Backend backend, const std::vector<int>& devices, bool simulate_gpus,
                                         bool has_host_form, bool has_device_form);

  // For an operation whose host and device forms cannot share a run (their data differ, as
  // Life's states do): this set's GPUs when it has any, else the CPU alone. An automatic
  // set's GPUs are found now (CUDA starts), so the result names every member.
  [[nodiscard]] DeviceSet unmixed() const;

  [[nodiscard]] bool empty() const noexcept { return !cpu && gpus.empty() && !find_gpus; }
  // Real GPUs are members (named; a set still to find its GPUs is not counted).
  [[nodiscard]] bool on_gpus() const noexcept { return !simulated && !gpus.empty(); }
};

// What one member of a running set is and did (Engine::device_report()).
struct DeviceReport {
  enum class State { starting, ready, failed, lost, not_started };
  int device = kCpuDevice;      // the GPU's index, or kCpuDevice
  bool simulated = false;
  std::string name;             // "CPU", "GPU 0 (NVIDIA H100 80GB HBM3)", "simulated GPU 1"
  State state = State::starting;
  std::string reason;           // why it failed to start, was lost or was not started
  int lanes = 0;
  double joined_ms = -1;        // when it joined the set and could take work (Timeline::now_ms); -1: never
  double start_ms = 0;          // how long its start took (context, pools, the operation's set-up)
  double setup_ms = 0;          // of which the operation's own set-up (Operation::start_device)
  std::size_t batches = 0;      // batches it ran
  std::size_t items = 0;        // items in them
  // What the scheduler measured: milliseconds per unit of work of each kind (Item::work_kind),
  // from taking a slot to giving it back, recent batches weighted most; 0 where not measured.
  std::array<double, kWorkKinds> ms_per_unit{};
};

[[nodiscard]] const char* device_state_name(DeviceReport::State s) noexcept;

}  // namespace streampipe::pipeline
