# SPDX-License-Identifier: Apache-2.0
# The CUDA architectures of streampipe's targets when it is a subproject. A parent that
# enabled CUDA before us without choosing architectures left CMake's compiler default in the
# cache (sm_52 or sm_75, with the help string "CUDA architectures"): that is no choice, so
# our targets get 90 (sm_90 + compute_90 PTX), as a top-level build does. A parent's own
# value (a normal variable, -D on the command line, CUDAARCHS) is kept. The variable is set
# in this directory scope only: the parent's targets are untouched.
if(NOT PROJECT_IS_TOP_LEVEL AND NOT DEFINED ENV{CUDAARCHS})
  get_property(_streampipe_arch_help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
  if(_streampipe_arch_help STREQUAL "CUDA architectures"
     AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  unset(_streampipe_arch_help)
endif()
