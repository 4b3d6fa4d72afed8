# SPDX-License-Identifier: Apache-2.0
# streampipe_add_library(<layer> <sources>...) defines one layer of the library: the target
# streampipe_<layer>, exported and aliased as streampipe::<layer>, with the public headers of
# include/ (and the generated version header), C++20 passed on to its consumers, and the
# project's warnings. Each layer then links only what it needs (src/<layer>/CMakeLists.txt).
# Define layers in dependency order: the install rules read what each links from its target
# and list the layers in that order.
# streampipe_add_library(<layer> OPT_IN <sources>...) defines a layer that stays out of
# streampipe::streampipe and out of find_package(streampipe) without COMPONENTS: one that
# brings a dependency (MPI) that programs not asking for it must never link.

function(streampipe_add_library layer)
  set(sources ${ARGN})
  set(layers_property STREAMPIPE_LAYERS)
  if(sources AND "${ARGV1}" STREQUAL "OPT_IN")
    list(POP_FRONT sources)
    set(layers_property STREAMPIPE_OPT_IN_LAYERS)
  endif()
  add_library(streampipe_${layer} ${sources})
  add_library(streampipe::${layer} ALIAS streampipe_${layer})
  set_target_properties(streampipe_${layer} PROPERTIES EXPORT_NAME ${layer})
  # Position-independent code (CMAKE_POSITION_INDEPENDENT_CODE=ON, needed to put the static
  # layers into a shared object) lets GCC assume any global function may be replaced at load
  # time, so it stops inlining and specializing calls between our own functions; nothing of
  # ours is meant to be interposed. Even so, PIC cost serve-bench's light-load rows 1-3% on an
  # H100 (docs/architecture.md), so it is off unless asked for.
  target_compile_options(streampipe_${layer} PRIVATE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-fno-semantic-interposition>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CXX_COMPILER_ID:GNU>>:-Xcompiler=-fno-semantic-interposition>)
  # Linked into the Python module (a shared object): nothing of a layer is part of the
  # module's interface, so its symbols are hidden (python/CMakeLists.txt exports the module's
  # init alone). Static programs are unaffected; shared layers (BUILD_SHARED_LIBS) keep theirs.
  if(STREAMPIPE_BUILD_PYTHON AND NOT BUILD_SHARED_LIBS)
    set_target_properties(streampipe_${layer} PROPERTIES
      CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  endif()
  target_include_directories(streampipe_${layer} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(streampipe_${layer} PUBLIC cxx_std_20)
  streampipe_target_defaults(streampipe_${layer})
  set_property(GLOBAL APPEND PROPERTY ${layers_property} ${layer})
endfunction()
