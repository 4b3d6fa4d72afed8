// SPDX-License-Identifier: Apache-2.0
#pragma once
// The name of each output file of the gray tool, from a pattern (the CLI's --name), so that
// a folder holding both x.jpg and x.png can be converted: the default "{stem}" writes both
// to x.png, "{stem}.{ext}" writes x.jpg.png and x.png.png. Pure.
//
// Fields: {stem} the input's file name without its extension, {ext} the input's extension
// without the dot (as written, e.g. "JPG"); any other text is kept. The output format's
// extension (.png or .jpg) is added unless the pattern already ends with it (in any case).
// A pattern names a file, not a folder (no '/'): folder inputs keep their relative paths.

#include "streampipe/io/image.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace streampipe::tools::gray {

inline constexpr std::string_view kDefaultOutputName = "{stem}";

// The output file name of `input` (only its file name is read) under `pattern`. Throws
// PlanError (gray_plan.hpp) for a pattern that is empty, holds '/' or a field other than
// {stem} and {ext}, or whose braces do not pair.
[[nodiscard]] std::string output_file_name(const std::filesystem::path& input, std::string_view pattern,
                                           io::ImageFormat format);

}  // namespace streampipe::tools::gray
