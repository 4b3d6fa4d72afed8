# SPDX-License-Identifier: Apache-2.0
# Warning and sanitizer flags, applied per target through streampipe_target_defaults().
# Host code (CXX, and the host side of .cu files) builds clean under -Wall -Wextra.

function(streampipe_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr -lineinfo>)
  if(STREAMPIPE_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  if(STREAMPIPE_SANITIZE)
    # Only host code is instrumented: nvcc-generated stubs do not take ASan/TSan flags well,
    # and device code is checked with compute-sanitizer instead.
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${STREAMPIPE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all>)
    target_link_options(${target} PRIVATE -fsanitize=${STREAMPIPE_SANITIZE})
  endif()
endfunction()
