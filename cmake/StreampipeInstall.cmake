# SPDX-License-Identifier: Apache-2.0
# Install rules and the CMake package:
#   find_package(streampipe 0.2 CONFIG REQUIRED COMPONENTS pipeline jit)
# Each layer is a component with its own export set (streampipe-<layer>-targets.cmake), so
# a consumer loads, and finds the dependencies of, only the layers it asks for and those
# below them. What each layer needs is read from its target: the streampipe layers it links
# and the packages its imported targets come from. Opt-in layers (mpi) are installed alike but
# loaded only when named in COMPONENTS, so only their users find their packages (MPI).

include(CMakePackageConfigHelpers)

set(STREAMPIPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/streampipe CACHE STRING
    "Where the CMake package files go, relative to the prefix")

# Imported-target namespace -> the find_package() name that defines it.
set(_streampipe_package_of_CUDA CUDAToolkit)
set(_streampipe_package_of_Threads Threads)
set(_streampipe_package_of_fmt fmt)
set(_streampipe_package_of_nlohmann_json nlohmann_json)
set(_streampipe_package_of_PNG PNG)
set(_streampipe_package_of_JPEG JPEG)
set(_streampipe_package_of_ZLIB ZLIB)
set(_streampipe_package_of_OpenSSL OpenSSL)
set(_streampipe_package_of_MPI MPI)

get_property(_streampipe_layers GLOBAL PROPERTY STREAMPIPE_LAYERS)
get_property(_streampipe_opt_in_layers GLOBAL PROPERTY STREAMPIPE_OPT_IN_LAYERS)
set(STREAMPIPE_PACKAGE_LAYERS "")
foreach(layer IN LISTS _streampipe_layers _streampipe_opt_in_layers)
  get_target_property(_direct streampipe_${layer} LINK_LIBRARIES)
  get_target_property(_interface streampipe_${layer} INTERFACE_LINK_LIBRARIES)
  set(_layers "")
  set(_packages "")
  foreach(item IN LISTS _direct _interface)
    string(REGEX MATCHALL "[A-Za-z0-9_]+::[A-Za-z0-9_]+|streampipe_[a-z]+" _names "${item}")
    foreach(name IN LISTS _names)
      if(name MATCHES "^streampipe_([a-z]+)$")
        list(APPEND _layers ${CMAKE_MATCH_1})
      elseif(name MATCHES "^([A-Za-z0-9_]+)::")
        set(_ns ${CMAKE_MATCH_1})
        if(_ns STREQUAL "streampipe")
          continue()  # our own targets: the layers' export sets define them
        elseif(NOT DEFINED _streampipe_package_of_${_ns})
          message(FATAL_ERROR "streampipe_${layer} links ${name}: add its package to StreampipeInstall.cmake")
        endif()
        list(APPEND _packages ${_streampipe_package_of_${_ns}})
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _layers)
  list(REMOVE_DUPLICATES _packages)
  string(APPEND STREAMPIPE_PACKAGE_LAYERS
         "set(_streampipe_layer_${layer}_layers ${_layers})\n"
         "set(_streampipe_layer_${layer}_packages ${_packages})\n")

  install(TARGETS streampipe_${layer} EXPORT streampipe-${layer}-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT streampipe-${layer}-targets NAMESPACE streampipe::
          DESTINATION ${STREAMPIPE_INSTALL_CMAKEDIR} COMPONENT development)
endforeach()
set(STREAMPIPE_PACKAGE_LAYER_ORDER ${_streampipe_layers})
set(STREAMPIPE_PACKAGE_OPT_IN_LAYERS ${_streampipe_opt_in_layers})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/streampipe ${PROJECT_BINARY_DIR}/include/streampipe
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
# The docs travel with the package: a user of the installed library reads the engine's,
# the jit's and the tools' contracts without the source tree.
file(GLOB _streampipe_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md ${_streampipe_docs}
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/streampipeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/streampipeConfig.cmake
  INSTALL_DESTINATION ${STREAMPIPE_INSTALL_CMAKEDIR})
# 0.x: a minor release may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/streampipeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/streampipeConfig.cmake ${PROJECT_BINARY_DIR}/streampipeConfigVersion.cmake
        DESTINATION ${STREAMPIPE_INSTALL_CMAKEDIR} COMPONENT development)
include(StreampipePkgConfig)
