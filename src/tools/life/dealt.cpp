// SPDX-License-Identifier: Apache-2.0
#include "streampipe/tools/life/dealt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streampipe::tools::life {

DealtUniverses::DealtUniverses(std::vector<Device> gpus, std::uint32_t width, std::uint32_t height,
                               std::uint32_t count, Kernel kernel, Layout layout)
    : gpus_(std::move(gpus)), count_(count), layout_(layout) {
  if (gpus_.empty()) throw std::invalid_argument("universes need at least one GPU to be dealt to");
  if (count == 0) throw std::invalid_argument("no universes to deal out");
  if (layout == Layout::batched && kernel != Kernel::bit_packed)
    throw std::invalid_argument(
        fmt::format("the {} kernel steps each universe on its own stream; only bitpacked batches", to_string(kernel)));
  const std::size_t n = gpus_.size();
  if (layout == Layout::batched) {
    // GPU g holds universes g, g + n, g + 2n, ...; a GPU past the last universe holds none.
    for (std::size_t g = 0; g < n && g < count; ++g)
      batches_.push_back(std::make_unique<UniverseBatch>(gpus_[g], width, height,
                                                         static_cast<std::uint32_t>((count - g + n - 1) / n)));
  } else {
    for (std::uint32_t i = 0; i < count; ++i)
      each_.push_back(std::make_unique<DeviceUniverse>(gpus_[i % n], width, height, kernel));
  }
}

DealtUniverses::Place DealtUniverses::place(std::uint32_t index) const {
  if (index >= count_) throw std::out_of_range(fmt::format("universe {} of {}", index, count_));
  if (layout_ == Layout::stream_each) return {index, 0};
  return {index % gpus_.size(), static_cast<std::uint32_t>(index / gpus_.size())};
}

int DealtUniverses::device_of(std::uint32_t index) const {
  (void)place(index);
  return gpus_[index % gpus_.size()].index();
}

void DealtUniverses::set_rows_per_thread(unsigned rows) {
  for (auto& b : batches_) b->set_rows_per_thread(rows);
  for (auto& u : each_) u->set_rows_per_thread(rows);
}

void DealtUniverses::fill_random(std::uint32_t index, std::uint64_t seed, double density) {
  const Place p = place(index);
  if (layout_ == Layout::batched)
    batches_[p.group]->fill_random(p.slot, seed, density);
  else
    each_[p.group]->fill_random(seed, density);
}

void DealtUniverses::upload(std::uint32_t index, const Board& board) {
  const Place p = place(index);
  if (layout_ == Layout::batched)
    batches_[p.group]->upload(p.slot, board);
  else
    each_[p.group]->upload(board);
}

std::uint64_t DealtUniverses::population(std::uint32_t index) {
  const Place p = place(index);
  return layout_ == Layout::batched ? batches_[p.group]->population(p.slot) : each_[p.group]->population();
}

Board DealtUniverses::download(std::uint32_t index) {
  const Place p = place(index);
  return layout_ == Layout::batched ? batches_[p.group]->download(p.slot) : each_[p.group]->download();
}

void DealtUniverses::step(std::uint64_t generations) {
  // One host thread feeds every GPU, and a launch into a full launch queue blocks it: a long
  // step enqueued whole on one GPU left the next idle until the first had nearly finished
  // (64 universes over 4 GPUs, 100,000 generations: 1.47x one GPU). So the step is dealt out
  // in slices of 8 launches, each GPU's (or stream's) slice enqueued in turn.
  constexpr std::uint64_t kSlice = 64;
  for (std::uint64_t done = 0; done < generations;) {
    const std::uint64_t n = std::min(kSlice, generations - done);
    for (auto& b : batches_) b->step(n, true);
    for (auto& u : each_) u->step(n, true);
    done += n;
  }
}

std::vector<std::vector<std::uint64_t>> DealtUniverses::populations() {
  std::vector<std::vector<std::uint64_t>> out(count_);
  for (std::size_t g = 0; g < batches_.size(); ++g) {
    auto logs = batches_[g]->populations();
    for (std::size_t slot = 0; slot < logs.size(); ++slot) out[g + slot * gpus_.size()] = std::move(logs[slot]);
  }
  for (std::size_t i = 0; i < each_.size(); ++i) out[i] = each_[i]->populations();
  return out;
}

void DealtUniverses::time_steps(bool on) {
  if (layout_ == Layout::batched) throw std::logic_error("batched universes are not timed one generation at a time");
  for (auto& u : each_) u->time_steps(on);
}

std::vector<std::vector<DeviceUniverse::StepTiming>> DealtUniverses::step_timings() {
  if (layout_ == Layout::batched) throw std::logic_error("batched universes are not timed one generation at a time");
  std::vector<std::vector<DeviceUniverse::StepTiming>> out;
  for (auto& u : each_) out.push_back(u->step_timings());
  return out;
}

}  // namespace streampipe::tools::life
