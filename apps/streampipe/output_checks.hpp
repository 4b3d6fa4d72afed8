// SPDX-License-Identifier: Apache-2.0
#pragma once
// What Outputs checks of a file before it claims it as an output (outputs.hpp), each a
// UsageError naming the option: an existing file is replaced only by content of its own
// kind, and the folder a file would be created in lets this process create files.

#include <string>
#include <string_view>

namespace streampipe::cli {

// An existing file that `option` would replace holds content of its own kind (an image an
// option took as its value by mistake, "--json a.png b.png", is never replaced).
void check_content(std::string_view option, const std::string& path);
// The folder `path` would be created in (`path` itself when `is_folder`), or its nearest
// existing parent, must let this process create files: found before any work, not after it.
void check_writable_folder(std::string_view option, const std::string& path, bool is_folder);

}  // namespace streampipe::cli
