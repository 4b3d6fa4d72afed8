// SPDX-License-Identifier: Apache-2.0
// python/portable/glibc_compat.cpp's pthread_cond_clockwait, the definition linked into this
// program (a program's own definition comes before the C library's), and libstdc++'s
// condition_variable waits on steady_clock, which reach it.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <thread>

#include <pthread.h>

namespace {

using namespace std::chrono_literals;

timespec from_now(clockid_t clock, std::chrono::nanoseconds ahead) {
  timespec now{};
  clock_gettime(clock, &now);
  const auto total = std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec) + ahead;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(total);
  return timespec{static_cast<time_t>(seconds.count()), static_cast<long>((total - seconds).count())};
}

class ClockWait : public ::testing::Test {
 protected:
  void SetUp() override {
    pthread_cond_init(&cond_, nullptr);
    pthread_mutex_init(&mutex_, nullptr);
    pthread_mutex_lock(&mutex_);
  }
  void TearDown() override {
    // Every return leaves the mutex held by the caller.
    EXPECT_EQ(pthread_mutex_trylock(&mutex_), EBUSY);
    pthread_mutex_unlock(&mutex_);
    pthread_mutex_destroy(&mutex_);
    pthread_cond_destroy(&cond_);
  }
  int wait(clockid_t clock, const timespec& deadline) { return pthread_cond_clockwait(&cond_, &mutex_, clock, &deadline); }

  pthread_cond_t cond_{};
  pthread_mutex_t mutex_{};
};

TEST_F(ClockWait, AMonotonicDeadlineIsWaitedForInFull) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(wait(CLOCK_MONOTONIC, from_now(CLOCK_MONOTONIC, 40ms)), ETIMEDOUT);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 39ms);
}

TEST_F(ClockWait, ARealtimeDeadlineIsWaitedForInFull) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(wait(CLOCK_REALTIME, from_now(CLOCK_REALTIME, 40ms)), ETIMEDOUT);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 39ms);
}

TEST_F(ClockWait, APastDeadlineTimesOutAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(wait(CLOCK_MONOTONIC, timespec{0, 0}), ETIMEDOUT);
  EXPECT_EQ(wait(CLOCK_MONOTONIC, from_now(CLOCK_MONOTONIC, -1s)), ETIMEDOUT);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST_F(ClockWait, OtherClocksAndBadDeadlinesAreRefused) {
  EXPECT_EQ(wait(CLOCK_PROCESS_CPUTIME_ID, from_now(CLOCK_MONOTONIC, 1ms)), EINVAL);
  EXPECT_EQ(wait(CLOCK_MONOTONIC, timespec{1, 1000000000L}), EINVAL);
  EXPECT_EQ(wait(CLOCK_MONOTONIC, timespec{1, -1}), EINVAL);
}

TEST_F(ClockWait, TheFarthestDeadlineWaitsForASignalInsteadOfOverflowing) {
  bool signalled = false;
  std::thread signaller([&] {
    std::this_thread::sleep_for(50ms);
    pthread_mutex_lock(&mutex_);
    signalled = true;
    pthread_cond_signal(&cond_);
    pthread_mutex_unlock(&mutex_);
  });
  const timespec never{LONG_MAX, 999999999L};
  int result = 0;
  while (!signalled && result == 0) result = wait(CLOCK_MONOTONIC, never);
  pthread_mutex_unlock(&mutex_);
  signaller.join();
  pthread_mutex_lock(&mutex_);
  EXPECT_EQ(result, 0);
  EXPECT_TRUE(signalled);
}

TEST(ConditionVariable, StdWaitsOnSteadyClockTimeOutAndWake) {
  std::mutex mutex;
  std::condition_variable cond;
  std::unique_lock lock(mutex);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(cond.wait_for(lock, 30ms), std::cv_status::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
  bool ready = false;
  std::thread notifier([&] {
    std::this_thread::sleep_for(20ms);
    const std::lock_guard guard(mutex);
    ready = true;
    cond.notify_one();
  });
  EXPECT_TRUE(cond.wait_until(lock, std::chrono::steady_clock::now() + 60s, [&] { return ready; }));
  lock.unlock();
  notifier.join();
}

}  // namespace
