// SPDX-License-Identifier: Apache-2.0
#pragma once
// The items of one Engine.map() call, prepared one at a time under the GIL, so that the
// engine (engine_map.cpp) submits the first while later ones are still to be prepared.
//
// Plain numpy inputs and outputs are described in C++ (NumpyItems, numpy_item.hpp), without
// a Python object per item but the outputs made. Every other item (CuPy, PyTorch, DLPack,
// buffer-protocol objects, numpy subclasses) and every item NumpyItems declines goes to the
// package's `prepare(index, array, out)`, which returns (in_ptr, in_bytes, out_ptr,
// out_bytes, device_memory, out, keep) or raises the ValueError naming the bad item. item()
// throws what `prepare` raised (nb::python_error); a KeyboardInterrupt inside output_for
// propagates the same way.
#include "bindings.hpp"
#include "numpy_item.hpp"

#include "streampipe/pipeline/item.hpp"

#include <cstddef>
#include <vector>

namespace streampipe::python {

class MapItems {
 public:
  // inputs and outputs: lists of one length (std::invalid_argument otherwise); an output
  // None is replaced by the one made. `numpy` outlives the MapItems.
  MapItems(nb::list inputs, nb::list outputs, nb::callable prepare, NumpyItems& numpy);

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // Item k, its output in outputs[k] from then on. Needs the GIL.
  [[nodiscard]] pipeline::Item item(std::size_t k);

 private:
  nb::list inputs_, outputs_;
  nb::callable prepare_;
  NumpyItems& numpy_;
  std::size_t size_ = 0;
  std::vector<nb::object> keep_;  // what `prepare` said the engine needs alive
};

}  // namespace streampipe::python
