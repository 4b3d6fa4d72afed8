# SPDX-License-Identifier: Apache-2.0
# streampipe_add_library(<layer> <sources>...) defines one layer of the library: the target
# streampipe_<layer>, exported and aliased as streampipe::<layer>, with the public headers of
# include/ (and the generated version header), C++20 passed on to its consumers, and the
# project's warnings. Each layer then links only what it needs (src/<layer>/CMakeLists.txt).
# Define layers in dependency order: the install rules read what each links from its target
# and list the layers in that order.

function(streampipe_add_library layer)
  add_library(streampipe_${layer} ${ARGN})
  add_library(streampipe::${layer} ALIAS streampipe_${layer})
  set_target_properties(streampipe_${layer} PROPERTIES
    EXPORT_NAME ${layer}
    # Static layers go into shared objects too (the Python module, a consumer's library).
    POSITION_INDEPENDENT_CODE ON)
  target_include_directories(streampipe_${layer} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(streampipe_${layer} PUBLIC cxx_std_20)
  streampipe_target_defaults(streampipe_${layer})
  set_property(GLOBAL APPEND PROPERTY STREAMPIPE_LAYERS ${layer})
endfunction()
