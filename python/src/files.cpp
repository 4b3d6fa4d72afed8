// SPDX-License-Identifier: Apache-2.0
// Paths and texts from Python that reach C strings, and text files written for Python the
// way the CLI writes its outputs. A NUL byte would cut a path or a source short where the C
// library reads it ("ok.jpg\0.png" opened ok.jpg): refused, as Python's open() refuses it.
#include "bindings.hpp"

#include "streampipe/host/atomic_file.hpp"

#include <stdexcept>

namespace streampipe::python {

const std::string& without_nul(const std::string& text, const char* what) {
  if (text.find('\0') != std::string::npos)
    throw std::invalid_argument(std::string(what) + ": embedded null byte");
  return text;
}

void bind_files(nb::module_& m) {
  m.def(
      "write_text_file",
      [](const std::string& path, const std::string& text) {
        without_nul(path, "path");
        nb::gil_scoped_release release;
        // A temporary file renamed into place: a full disk leaves the old file, not a cut one;
        // an existing link, device or FIFO is refused, never written through or replaced.
        host::write_file_atomically(path, text, host::Overwrite::allow);
      },
      nb::arg("path"), nb::arg("text"), "Writes `text` to `path` atomically (as the CLI writes its outputs).");
}

}  // namespace streampipe::python
