// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which sanitizer a test program was built with, for gcc (__SANITIZE_*__) and clang
// (__has_feature): tests whose subject a sanitizer's runtime takes over (impossible
// allocations end the process; its shadow memory takes terabytes of address space) skip.

#if defined(__SANITIZE_ADDRESS__)
#define STREAMPIPE_TEST_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define STREAMPIPE_TEST_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STREAMPIPE_TEST_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define STREAMPIPE_TEST_TSAN 1
#endif
#if __has_feature(memory_sanitizer)
#define STREAMPIPE_TEST_MSAN 1
#endif
#endif
#if defined(STREAMPIPE_TEST_ASAN) || defined(STREAMPIPE_TEST_TSAN) || defined(STREAMPIPE_TEST_MSAN)
#define STREAMPIPE_TEST_SANITIZED 1
#endif

namespace streampipe::testing_support {
#if defined(STREAMPIPE_TEST_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
}  // namespace streampipe::testing_support
