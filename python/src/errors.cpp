// SPDX-License-Identifier: Apache-2.0
// Exception classes: streampipe.Error (a RuntimeError) carries api, status, status_name and
// call; CudaError adds sticky; CompileError adds log (NVRTC's). Misuse that the library
// reports as std::invalid_argument (JitError among them) is a ValueError. A file the system
// refused (io::ImageError with an errno) is the OSError Python's own functions raise for that
// errno (FileNotFoundError, PermissionError, ...); an image file refused for its bytes or its
// kind is streampipe.ImageError, an OSError as Pillow's are.
#include "bindings.hpp"

#include "streampipe/cuda/error.hpp"
#include "streampipe/io/image.hpp"
#include "streampipe/jit/errors.hpp"

#include <cstring>
#include <stdexcept>

namespace streampipe::python {
namespace {

struct Classes {
  nb::object error, cuda_error, compile_error, image_error;
};

Classes& classes() {
  static Classes c;  // set once at import; the module keeps the objects alive
  return c;
}

nb::object make_new_class(nb::module_& m, const char* name, nb::handle base, const char* doc) {
  const std::string qualified = std::string("streampipe.") + name;
  nb::object type = nb::steal(PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base.ptr(), nullptr));
  if (!type.is_valid()) throw nb::python_error();
  m.attr(name) = type;
  return type;
}

nb::object with_fields(const nb::object& type, const Error& e) {
  nb::object exc = type(nb::str(e.what()));
  exc.attr("api") = e.api_name();
  exc.attr("status") = e.status();
  exc.attr("status_name") = e.status_name();
  exc.attr("call") = e.call();
  return exc;
}

// OSError(errno, strerror, filename): Python picks the subclass from the errno, as open() does.
nb::object os_error(int error_number, const std::string& filename) {
  const nb::str text(std::strerror(error_number));
  if (filename.empty()) return nb::borrow(PyExc_OSError)(error_number, text);
  return nb::borrow(PyExc_OSError)(error_number, text, filename);
}

}  // namespace

nb::object to_python_exception(const std::exception_ptr& error) {
  const Classes& c = classes();
  try {
    std::rethrow_exception(error);
  } catch (const nb::python_error& e) {
    return nb::borrow(e.value());  // a Python callback's own exception, traceback and all
  } catch (const jit::CompileError& e) {
    nb::object exc = with_fields(c.compile_error, e);
    exc.attr("log") = e.log();
    return exc;
  } catch (const CudaError& e) {
    nb::object exc = with_fields(c.cuda_error, e);
    exc.attr("sticky") = e.sticky();
    return exc;
  } catch (const Error& e) {
    return with_fields(c.error, e);
  } catch (const io::ImageError& e) {
    if (e.error_number() != 0) return os_error(e.error_number(), e.source());
    nb::object exc = c.image_error(nb::str(e.what()));
    exc.attr("filename") = e.source();
    return exc;
  } catch (const std::invalid_argument& e) {
    return nb::borrow(PyExc_ValueError)(nb::str(e.what()));
  } catch (const std::out_of_range& e) {
    return nb::borrow(PyExc_IndexError)(nb::str(e.what()));
  } catch (const std::bad_alloc&) {
    return nb::borrow(PyExc_MemoryError)();
  } catch (const std::exception& e) {
    return nb::borrow(PyExc_RuntimeError)(nb::str(e.what()));
  } catch (...) {
    return nb::borrow(PyExc_RuntimeError)(nb::str("unknown C++ exception"));
  }
}

void bind_errors(nb::module_& m) {
  Classes& c = classes();
  c.error = make_new_class(m, "Error", PyExc_RuntimeError,
                           "A CUDA library call failed: api, status, status_name, call.");
  c.cuda_error = make_new_class(m, "CudaError", c.error,
                                "A CUDA runtime call failed; sticky: the device's context is lost.");
  c.compile_error = make_new_class(m, "CompileError", c.error,
                                   "NVRTC rejected the source; log holds its full log.");
  c.image_error = make_new_class(m, "ImageError", PyExc_OSError,
                                 "An image file streampipe refused: corrupt, not PNG or JPEG, too large, or not a "
                                 "regular file; filename names it.");
  // OSError's own str() shows "[Errno None] None: <filename>" once filename is set: the
  // message says more (what was wrong, and the file).
  c.image_error.attr("__str__") = nb::borrow(PyExc_BaseException).attr("__str__");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    const auto raise = [&] {
      nb::object exc = to_python_exception(p);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    };
    try {
      std::rethrow_exception(p);
    } catch (const Error&) {
      raise();
    } catch (const io::ImageError&) {
      raise();
    }
    // Anything else goes on to nanobind's own translation.
  });
}

}  // namespace streampipe::python
