// SPDX-License-Identifier: Apache-2.0
// A plain numpy input and output as an engine item, through the buffer protocol
// (numpy_item.hpp).
#include "numpy_item.hpp"

#include "streampipe/cuda/pinned_buffer.hpp"

#include <algorithm>
#include <span>
#include <utility>

namespace streampipe::python {
namespace {

// Beyond this many distinct input dtypes and shapes, output_for is asked for each item.
constexpr std::size_t kMaxRules = 16;

// An object's buffer (pointer, shape, strides, read-only flag), released with the view. No
// format string is asked for: numpy would build one for every request, and the dtype says
// it all.
class BufferView {
 public:
  explicit BufferView(PyObject* obj) noexcept : ok_(PyObject_GetBuffer(obj, &view_, PyBUF_STRIDES) == 0) {
    if (!ok_) PyErr_Clear();  // numpy exports no buffer for some dtypes: the package describes those
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

NumpyItems::NumpyItems(nb::callable output_for)
    : output_for_(std::move(output_for)), gpu_usable_(!Device::unavailable_reason()) {
  nb::module_ numpy = nb::module_::import_("numpy");
  ndarray_ = numpy.attr("ndarray");
  empty_ = numpy.attr("empty");
  rules_.reserve(kMaxRules);
}

bool NumpyItems::take(PyObject* in, PyObject* out, pipeline::Item& item, nb::object& made) {
  const auto* ndarray = reinterpret_cast<PyTypeObject*>(ndarray_.ptr());
  if (Py_TYPE(in) != ndarray || (out != Py_None && Py_TYPE(out) != ndarray)) return false;
  const BufferView source(in);
  if (!source.ok() || source.get().len == 0 || !source.c_contiguous() || !in_host_memory(source.get().buf)) return false;
  const nb::object dtype = nb::steal(PyObject_GetAttr(in, dtype_name_.ptr()));
  if (!dtype.is_valid()) {
    PyErr_Clear();
    return false;
  }
  Rule spare;
  const Rule* rule = rule_for(dtype.ptr(), source.get(), spare);
  if (rule == nullptr) return false;
  nb::object fresh;
  if (out == Py_None) {
    try {
      fresh = empty_(rule->out_shape, rule->out_dtype);
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_Exception)) throw;
      return false;  // the package raises it again, naming the item
    }
    out = fresh.ptr();
  }
  const BufferView target(out);
  if (!target.ok() || target.get().readonly || !target.c_contiguous() || !target.has_shape(rule->out_dims) ||
      static_cast<std::size_t>(target.get().len) != rule->out_bytes || !in_host_memory(target.get().buf))
    return false;
  if (!fresh.is_valid()) {
    const nb::object out_dtype = nb::steal(PyObject_GetAttr(out, dtype_name_.ptr()));
    if (!out_dtype.is_valid()) {
      PyErr_Clear();
      return false;
    }
    if (!same_dtype(out_dtype.ptr(), rule->out_dtype.ptr())) return false;
  }
  item.in = {static_cast<const std::byte*>(source.get().buf), static_cast<std::size_t>(source.get().len)};
  item.out = {static_cast<std::byte*>(target.get().buf), rule->out_bytes};
  if (fresh.is_valid()) made = std::move(fresh);
  return true;
}

const NumpyItems::Rule* NumpyItems::rule_for(PyObject* dtype, const Py_buffer& view, Rule& spare) {
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
    return nullptr;  // the package asks again and raises it, naming the item
  } catch (const nb::cast_error&) {
    return nullptr;
  }
  rule.in_dtype = nb::borrow(dtype);
  rule.in_shape.assign(in_shape.begin(), in_shape.end());
  // output_for ran Python code: another call may have kept this very rule meanwhile.
  for (const Rule& r : rules_)
    if (r.in_dtype.ptr() == dtype && std::ranges::equal(r.in_shape, in_shape)) return &r;
  if (rules_.size() < kMaxRules) {
    rules_.push_back(std::move(rule));
    return &rules_.back();
  }
  spare = std::move(rule);
  return &spare;
}

bool NumpyItems::in_host_memory(const void* p) const {
  if (!gpu_usable_) return true;
  const MemoryKind kind = memory_place(p).kind;
  return kind == MemoryKind::pageable || kind == MemoryKind::pinned;
}

}  // namespace streampipe::python
