// SPDX-License-Identifier: Apache-2.0
// Two definitions of a glibc newer than 2.28, in terms of glibc 2.28, compiled into the
// portable wheel's module alone (python/CMakeLists.txt, STREAMPIPE_PYTHON_GLIBC_STUBS). That
// module is compiled with the build machine's glibc headers and C++ library, which use them,
// but linked against glibc 2.28's symbols, so that it loads on every glibc since. They are
// local to the module (exports.map): they never stand in for the process's own glibc.
// Every other symbol of a later glibc is a link error or an unversioned undefined symbol,
// which scripts/build-wheel reports by name.
#include <cerrno>
#include <climits>
#include <ctime>

#include <pthread.h>
#include <sys/single_threaded.h>

#define STREAMPIPE_LOCAL __attribute__((visibility("hidden")))

extern "C" {

// glibc 2.32: true while the process has one thread, when libstdc++ skips the atomic
// operations on reference counts. Always false here: atomics are right in every case, and
// they are what a C++ library built for glibc 2.28 (the manylinux_2_28 image's) always uses.
STREAMPIPE_LOCAL char __libc_single_threaded = 0;

// glibc 2.30: a condition wait whose deadline is on a given clock; libstdc++'s
// condition_variable waits on steady_clock through it with CLOCK_MONOTONIC. glibc 2.28 waits
// on the condition's clock, CLOCK_REALTIME for std::condition_variable's: the monotonic
// deadline becomes the realtime instant as far from now, which is what libstdc++ does itself
// where this function is missing (its caller then checks steady_clock and waits again if
// early). Results as glibc's: 0, ETIMEDOUT, EINVAL for another clock or a bad deadline.
STREAMPIPE_LOCAL int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                            const struct timespec* deadline) {
  constexpr long kNanos = 1000000000L;
  if (deadline->tv_nsec < 0 || deadline->tv_nsec >= kNanos) return EINVAL;
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, deadline);
  if (clock != CLOCK_MONOTONIC) return EINVAL;
  timespec monotonic{};
  timespec realtime{};
  clock_gettime(CLOCK_MONOTONIC, &monotonic);
  clock_gettime(CLOCK_REALTIME, &realtime);
  // realtime + (deadline - monotonic), in seconds and nanoseconds apart, saturating: a
  // deadline of time_point::max() is "never", not an overflow into the past.
  long nanos = realtime.tv_nsec + (deadline->tv_nsec - monotonic.tv_nsec);
  time_t seconds = 0;
  if (__builtin_sub_overflow(deadline->tv_sec, monotonic.tv_sec, &seconds) ||
      __builtin_add_overflow(seconds, realtime.tv_sec, &seconds)) {
    seconds = deadline->tv_sec > monotonic.tv_sec ? LONG_MAX : LONG_MIN;
    nanos = 0;
  }
  if (nanos >= kNanos) {
    nanos -= kNanos;
    if (seconds != LONG_MAX) ++seconds;
  } else if (nanos < 0) {
    nanos += kNanos;
    if (seconds != LONG_MIN) --seconds;
  }
  const timespec on_realtime{seconds, nanos};
  return pthread_cond_timedwait(cond, mutex, &on_realtime);
}

}  // extern "C"
