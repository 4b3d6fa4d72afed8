// SPDX-License-Identifier: Apache-2.0
#pragma once
// One engine item from a plain numpy input and output, described in C++ through the buffer
// protocol: what Engine.map() (map_items.hpp) and Engine.submit() (engine.cpp) take without
// describing the arrays in Python.
//
// Taken: an input of the exact type numpy.ndarray, C-contiguous, not empty, in pageable or
// pinned host memory, with an output of the exact type numpy.ndarray of the operation's
// shape and dtype, writable, C-contiguous and in host memory, or None (then made with
// numpy.empty). Where a GPU is usable each pointer is classified with
// cudaPointerGetAttributes at every item: freed memory may come back as another kind.
// The operation's `output_for(shape, dtype)` is asked once per distinct input dtype and
// shape: the answers are kept for the engine's life (an operation's output rule depends on
// the input's shape and dtype alone), up to a bound past which it is asked for every item.
//
// Everything else is declined (take() returns false, nothing raised): the package then
// describes the item in Python and raises the error naming it, as it always did. Needs the
// GIL; a KeyboardInterrupt inside output_for or numpy.empty propagates (nb::python_error).
#include "bindings.hpp"

#include "streampipe/pipeline/item.hpp"

#include <cstddef>
#include <vector>

namespace streampipe::python {

class NumpyItems {
 public:
  explicit NumpyItems(nb::callable output_for);

  // Fills item.in and item.out for (in, out) when both are taken; `made` then holds the
  // output numpy.empty made when `out` was None (else it is left alone).
  [[nodiscard]] bool take(PyObject* in, PyObject* out, pipeline::Item& item, nb::object& made);

 private:
  struct Rule {  // output_for's answer for one input dtype and shape
    nb::object in_dtype;  // held: its identity is the key
    std::vector<Py_ssize_t> in_shape;
    nb::object out_dtype;
    nb::object out_shape;  // the tuple, for numpy.empty
    std::vector<Py_ssize_t> out_dims;
    std::size_t out_bytes = 0;
  };

  // The kept rule, or `spare` filled when no more are kept; nullptr where output_for
  // refused the input (the package asks again and raises, naming the item).
  [[nodiscard]] const Rule* rule_for(PyObject* dtype, const Py_buffer& view, Rule& spare);
  [[nodiscard]] bool in_host_memory(const void* p) const;

  nb::callable output_for_;
  nb::object ndarray_, empty_;  // numpy.ndarray, numpy.empty
  nb::str dtype_name_{"dtype"};
  bool gpu_usable_ = false;
  std::vector<Rule> rules_;  // reserved: a rule stays where it is while an item uses it
};

}  // namespace streampipe::python
