# Required and optional dependencies. Optional ones are detected here, defined as
# STREAMPIPE_HAVE_<NAME> on the library, and reported at the end of configure.

find_package(CUDAToolkit 12.0 REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(PNG REQUIRED)
find_package(JPEG REQUIRED)

set(STREAMPIPE_OPTIONAL_REPORT "")
macro(streampipe_optional name found detail)
  if(${found})
    list(APPEND STREAMPIPE_OPTIONAL_REPORT "  ${name}: yes ${detail}")
  else()
    list(APPEND STREAMPIPE_OPTIONAL_REPORT "  ${name}: no  (${detail})")
  endif()
endmacro()

# NVTX v3 is header-only and ships with the toolkit.
find_path(STREAMPIPE_NVTX_INCLUDE nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
set(STREAMPIPE_HAVE_NVTX OFF)
if(STREAMPIPE_NVTX_INCLUDE)
  set(STREAMPIPE_HAVE_NVTX ON)
endif()
streampipe_optional("NVTX ranges" STREAMPIPE_HAVE_NVTX "nvtx3 headers in the CUDA toolkit")

set(STREAMPIPE_HAVE_NVJPEG OFF)
if(TARGET CUDA::nvjpeg)
  set(STREAMPIPE_HAVE_NVJPEG ON)
endif()
streampipe_optional("nvJPEG (gray --decode gpu)" STREAMPIPE_HAVE_NVJPEG "CUDA::nvjpeg")

set(STREAMPIPE_HAVE_NVRTC OFF)
if(TARGET CUDA::nvrtc)
  set(STREAMPIPE_HAVE_NVRTC ON)
endif()
streampipe_optional("NVRTC (runtime kernels)" STREAMPIPE_HAVE_NVRTC "CUDA::nvrtc")

set(STREAMPIPE_HAVE_CUBLAS OFF)
if(TARGET CUDA::cublasLt)
  set(STREAMPIPE_HAVE_CUBLAS ON)
endif()
streampipe_optional("cuBLASLt (serve-bench)" STREAMPIPE_HAVE_CUBLAS "CUDA::cublasLt")

find_package(MPI COMPONENTS CXX QUIET)
set(STREAMPIPE_HAVE_MPI ${MPI_CXX_FOUND})
streampipe_optional("MPI (multi-host)" STREAMPIPE_HAVE_MPI "MPI::MPI_CXX")

find_package(GIF QUIET)
set(STREAMPIPE_HAVE_GIF ${GIF_FOUND})
streampipe_optional("giflib (life animations)" STREAMPIPE_HAVE_GIF "GIF::GIF, else numbered PNGs")

if(STREAMPIPE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

function(streampipe_report_dependencies)
  message(STATUS "streampipe ${PROJECT_VERSION}: CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  message(STATUS "streampipe optional components:")
  foreach(line IN LISTS STREAMPIPE_OPTIONAL_REPORT)
    message(STATUS "${line}")
  endforeach()
  if(STREAMPIPE_SANITIZE)
    message(STATUS "streampipe host sanitizers: ${STREAMPIPE_SANITIZE}")
  endif()
endfunction()
