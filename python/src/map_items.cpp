// SPDX-License-Identifier: Apache-2.0
// Engine.map()'s items: plain numpy arrays described in C++, the rest by the package's
// `prepare` (map_items.hpp).
#include "map_items.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace streampipe::python {

MapItems::MapItems(nb::list inputs, nb::list outputs, nb::callable prepare, NumpyItems& numpy)
    : inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      prepare_(std::move(prepare)),
      numpy_(numpy),
      size_(nb::len(inputs_)) {
  if (nb::len(outputs_) != size_)
    throw std::invalid_argument(fmt::format("{} inputs but {} outputs", size_, nb::len(outputs_)));
}

pipeline::Item MapItems::item(std::size_t k) {
  const auto at = static_cast<Py_ssize_t>(k);
  // Borrowed from the lists, which only this call changes (outputs_[k] below, after use).
  PyObject* array = PyList_GET_ITEM(inputs_.ptr(), at);
  PyObject* out = PyList_GET_ITEM(outputs_.ptr(), at);
  pipeline::Item item;
  nb::object made;
  if (numpy_.take(array, out, item, made)) {
    if (made.is_valid()) outputs_[k] = made;
    return item;
  }
  const auto r = nb::cast<nb::tuple>(prepare_(k, nb::handle(array), nb::handle(out)));
  item.in = {reinterpret_cast<const std::byte*>(nb::cast<std::uintptr_t>(r[0])), nb::cast<std::size_t>(r[1])};
  item.out = {reinterpret_cast<std::byte*>(nb::cast<std::uintptr_t>(r[2])), nb::cast<std::size_t>(r[3])};
  item.device_memory = nb::cast<bool>(r[4]);
  outputs_[k] = r[5];
  keep_.emplace_back(r[6]);
  return item;
}

}  // namespace streampipe::python
