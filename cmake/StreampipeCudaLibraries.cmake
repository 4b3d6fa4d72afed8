# SPDX-License-Identifier: Apache-2.0
# CUDA libraries as streampipe links them, after find_package(CUDAToolkit); used by the
# build and by the installed package alike.
#
# streampipe::nvrtc_library: NVRTC's library file alone. CUDA::nvrtc also links the libcuda
# stub, and a program that needs libcuda.so.1 does not start where there is no driver; the
# jit layer resolves the driver API at run time instead (cuda/driver_api.hpp).
if(NOT TARGET streampipe::nvrtc_library AND TARGET CUDA::nvrtc)
  get_target_property(_streampipe_nvrtc_file CUDA::nvrtc IMPORTED_LOCATION)
  add_library(streampipe::nvrtc_library INTERFACE IMPORTED)
  set_target_properties(streampipe::nvrtc_library PROPERTIES INTERFACE_LINK_LIBRARIES "${_streampipe_nvrtc_file}")
  unset(_streampipe_nvrtc_file)
endif()
