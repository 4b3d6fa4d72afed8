// SPDX-License-Identifier: Apache-2.0
// Engine.map()'s items: plain numpy arrays described through the buffer protocol, the rest
// by the package's `prepare` (map_items.hpp).
#include "map_items.hpp"

#include "streampipe/cuda/pinned_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>

namespace streampipe::python {
namespace {

// Beyond this many distinct input shapes in one call, output_for is asked for each item.
constexpr std::size_t kMaxRules = 16;

// An object's buffer (pointer, shape, strides, read-only flag), released with the view.
class BufferView {
 public:
  explicit BufferView(PyObject* obj) noexcept : ok_(PyObject_GetBuffer(obj, &view_, PyBUF_RECORDS_RO) == 0) {
    if (!ok_) PyErr_Clear();  // numpy exports no buffer for some dtypes: `prepare` describes those
  }
  ~BufferView() {
    if (ok_) PyBuffer_Release(&view_);
  }
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] const Py_buffer& get() const noexcept { return view_; }

  // C order without gaps; a dimension of one may have any stride, as numpy's flag allows.
  [[nodiscard]] bool c_contiguous() const noexcept {
    if (view_.strides == nullptr) return true;
    Py_ssize_t expected = view_.itemsize;
    for (int d = view_.ndim - 1; d >= 0; --d) {
      if (view_.shape[d] != 1 && view_.strides[d] != expected) return false;
      expected *= view_.shape[d];
    }
    return true;
  }
  [[nodiscard]] bool has_shape(const std::vector<Py_ssize_t>& dims) const noexcept {
    if (static_cast<std::size_t>(view_.ndim) != dims.size()) return false;
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (view_.shape[d] != dims[d]) return false;
    return true;
  }

 private:
  Py_buffer view_{};
  bool ok_;
};

// Python's `a == b` for two dtypes, false where the comparison fails.
bool same_dtype(PyObject* a, PyObject* b) noexcept {
  if (a == b) return true;
  const int equal = PyObject_RichCompareBool(a, b, Py_EQ);
  if (equal < 0) PyErr_Clear();
  return equal == 1;
}

}  // namespace

MapItems::MapItems(nb::list inputs, nb::list outputs, nb::callable prepare, nb::callable output_for)
    : inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      prepare_(std::move(prepare)),
      output_for_(std::move(output_for)),
      size_(nb::len(inputs_)),
      gpu_usable_(!Device::unavailable_reason()) {
  if (nb::len(outputs_) != size_)
    throw std::invalid_argument(fmt::format("{} inputs but {} outputs", size_, nb::len(outputs_)));
  nb::module_ numpy = nb::module_::import_("numpy");
  ndarray_ = numpy.attr("ndarray");
  empty_ = numpy.attr("empty");
}

pipeline::Item MapItems::item(std::size_t k) {
  pipeline::Item item;
  if (fast(k, item)) return item;
  const nb::handle array(PyList_GET_ITEM(inputs_.ptr(), static_cast<Py_ssize_t>(k)));
  const nb::handle out(PyList_GET_ITEM(outputs_.ptr(), static_cast<Py_ssize_t>(k)));
  const auto r = nb::cast<nb::tuple>(prepare_(k, array, out));
  item.in = {reinterpret_cast<const std::byte*>(nb::cast<std::uintptr_t>(r[0])), nb::cast<std::size_t>(r[1])};
  item.out = {reinterpret_cast<std::byte*>(nb::cast<std::uintptr_t>(r[2])), nb::cast<std::size_t>(r[3])};
  item.device_memory = nb::cast<bool>(r[4]);
  outputs_[k] = r[5];
  keep_.emplace_back(r[6]);
  return item;
}

bool MapItems::fast(std::size_t k, pipeline::Item& item) {
  PyObject* in = PyList_GET_ITEM(inputs_.ptr(), static_cast<Py_ssize_t>(k));
  PyObject* out = PyList_GET_ITEM(outputs_.ptr(), static_cast<Py_ssize_t>(k));
  const auto* ndarray = reinterpret_cast<PyTypeObject*>(ndarray_.ptr());
  if (Py_TYPE(in) != ndarray || (out != Py_None && Py_TYPE(out) != ndarray)) return false;
  const BufferView source(in);
  if (!source.ok() || source.get().len == 0 || !source.c_contiguous() || !in_host_memory(source.get().buf)) return false;
  const nb::object dtype = nb::steal(PyObject_GetAttr(in, dtype_name_.ptr()));
  if (!dtype.is_valid()) {
    PyErr_Clear();
    return false;
  }
  const Rule* rule = rule_for(dtype.ptr(), source.get());
  if (rule == nullptr) return false;
  nb::object made;
  if (out == Py_None) {
    try {
      made = empty_(rule->out_shape, rule->out_dtype);
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_Exception)) throw;
      return false;  // `prepare` raises it again, naming the item
    }
    out = made.ptr();
  }
  const BufferView target(out);
  if (!target.ok() || target.get().readonly || !target.c_contiguous() || !target.has_shape(rule->out_dims) ||
      static_cast<std::size_t>(target.get().len) != rule->out_bytes || !in_host_memory(target.get().buf))
    return false;
  if (!made.is_valid()) {
    const nb::object out_dtype = nb::steal(PyObject_GetAttr(out, dtype_name_.ptr()));
    if (!out_dtype.is_valid()) {
      PyErr_Clear();
      return false;
    }
    if (!same_dtype(out_dtype.ptr(), rule->out_dtype.ptr())) return false;
  }
  item.in = {static_cast<const std::byte*>(source.get().buf), static_cast<std::size_t>(source.get().len)};
  item.out = {static_cast<std::byte*>(target.get().buf), rule->out_bytes};
  if (made.is_valid()) outputs_[k] = made;
  return true;
}

const MapItems::Rule* MapItems::rule_for(PyObject* dtype, const Py_buffer& view) {
  const std::span<const Py_ssize_t> in_shape(view.shape, static_cast<std::size_t>(view.ndim));
  for (const Rule& r : rules_)
    if (r.in_dtype.ptr() == dtype && std::ranges::equal(r.in_shape, in_shape)) return &r;
  Rule rule;
  try {
    nb::list shape;
    for (const Py_ssize_t n : in_shape) shape.append(n);
    const auto answer = nb::cast<nb::tuple>(output_for_(nb::tuple(shape), nb::handle(dtype)));
    rule.out_shape = nb::cast<nb::tuple>(answer[0]);
    rule.out_dtype = answer[1];
    std::size_t bytes = nb::cast<std::size_t>(rule.out_dtype.attr("itemsize"));
    for (const nb::handle n : rule.out_shape) {
      const auto dim = nb::cast<Py_ssize_t>(n);
      if (dim < 0) return nullptr;
      rule.out_dims.push_back(dim);
      bytes *= static_cast<std::size_t>(dim);
    }
    rule.out_bytes = bytes;
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_Exception)) throw;  // a KeyboardInterrupt is no verdict on the item
    return nullptr;  // `prepare` asks again and raises it, naming the item
  } catch (const nb::cast_error&) {
    return nullptr;
  }
  rule.in_dtype = nb::borrow(dtype);  // held: its identity is the key
  rule.in_shape.assign(in_shape.begin(), in_shape.end());
  if (rules_.size() < kMaxRules) {
    rules_.push_back(std::move(rule));
    return &rules_.back();
  }
  uncached_ = std::move(rule);
  return &uncached_;
}

bool MapItems::in_host_memory(const void* p) const {
  if (!gpu_usable_) return true;
  const MemoryKind kind = memory_place(p).kind;
  return kind == MemoryKind::pageable || kind == MemoryKind::pinned;
}

}  // namespace streampipe::python
