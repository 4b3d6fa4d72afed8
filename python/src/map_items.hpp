// SPDX-License-Identifier: Apache-2.0
#pragma once
// The items of one Engine.map() call, prepared one at a time under the GIL, so that the
// engine (engine.cpp) submits the first while later ones are still to be prepared.
//
// The fast path takes a plain numpy input (the exact type: C-contiguous, not empty, in
// pageable or pinned host memory) with a plain numpy output of the right shape and dtype,
// writable and C-contiguous, or none: the buffer protocol gives the pointers, the
// operation's `output_for(shape, dtype)` is asked once per distinct input dtype and shape
// of the call, a missing output is made with numpy.empty, and where a GPU is usable each
// pointer is classified with cudaPointerGetAttributes, without a Python object per item.
// Nothing is remembered across calls: freed memory may come back as another kind.
//
// Every other item (CuPy, PyTorch, DLPack, buffer-protocol objects, numpy subclasses) and
// every item the fast path does not accept goes to the package's `prepare(index, array,
// out)`, which returns (in_ptr, in_bytes, out_ptr, out_bytes, device_memory, out, keep) or
// raises the ValueError naming the bad item. item() throws what `prepare` raised
// (nb::python_error); a KeyboardInterrupt inside output_for propagates the same way.
#include "bindings.hpp"

#include "streampipe/pipeline/item.hpp"

#include <cstddef>
#include <vector>

namespace streampipe::python {

class MapItems {
 public:
  // inputs and outputs: lists of one length; an output None is replaced by the one made.
  MapItems(nb::list inputs, nb::list outputs, nb::callable prepare, nb::callable output_for);

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // Item k, its output in outputs[k] from then on. Needs the GIL.
  [[nodiscard]] pipeline::Item item(std::size_t k);

 private:
  struct Rule {  // output_for's answer for one input dtype and shape
    nb::object in_dtype;
    std::vector<Py_ssize_t> in_shape;
    nb::object out_dtype;
    nb::object out_shape;  // the tuple, for numpy.empty
    std::vector<Py_ssize_t> out_dims;
    std::size_t out_bytes = 0;
  };

  [[nodiscard]] bool fast(std::size_t k, pipeline::Item& item);
  [[nodiscard]] const Rule* rule_for(PyObject* dtype, const Py_buffer& view);
  [[nodiscard]] bool in_host_memory(const void* p) const;

  nb::list inputs_, outputs_;
  nb::callable prepare_, output_for_;
  nb::object ndarray_, empty_;  // numpy.ndarray, numpy.empty
  nb::str dtype_name_{"dtype"};
  std::size_t size_ = 0;
  bool gpu_usable_ = false;
  std::vector<Rule> rules_;
  Rule uncached_;  // the answer for a shape past the ones kept
  std::vector<nb::object> keep_;  // what `prepare` said the engine needs alive
};

}  // namespace streampipe::python
