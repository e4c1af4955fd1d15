#include "coinfer/ops/compute_threads.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace coinfer;

namespace {

// Runs the test's body on a thread of its own, whose compute team has `threads` threads (the
// team size is per calling thread, as an executor's compute threads set it).
template <class F>
void with_team(int threads, F&& f) {
  std::thread t([&] {
    set_compute_threads(threads);
    f();
  });
  t.join();
}

}  // namespace

TEST_CASE("parallel_for runs every index exactly once, on the team's threads") {
  with_team(2, [] {
    CHECK(compute_team_size() == 2);  // libdnnl brings the OpenMP runtime
    for (const std::int64_t n : {0, 1, 15, 16, 17, 1000}) {
      CAPTURE(n);
      std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
      std::mutex mutex;
      std::set<std::thread::id> workers;
      std::atomic<int> bad_thread{0};
      parallel_for(n, 16, 0, [&](int thread, std::int64_t begin, std::int64_t end) {
        if (thread < 0 || thread >= 2) bad_thread += 1;
        CHECK_LE(end - begin, 16);
        for (std::int64_t i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)] += 1;
        std::lock_guard lock(mutex);
        workers.insert(std::this_thread::get_id());
      });
      for (const auto& s : seen) CHECK(s.load() == 1);
      CHECK(bad_thread == 0);
      CHECK(workers.size() <= 2);
    }
  });
}

TEST_CASE("parallel_for stays on the calling thread for one chunk, a team of one or max_threads 1") {
  const auto caller_only = [](std::int64_t n, std::int64_t grain, int max_threads) {
    const auto caller = std::this_thread::get_id();
    bool elsewhere = false;
    int calls = 0;
    parallel_for(n, grain, max_threads, [&](int thread, std::int64_t begin, std::int64_t end) {
      elsewhere |= std::this_thread::get_id() != caller || thread != 0 || begin != 0 || end != n;
      ++calls;
    });
    return !elsewhere && calls == 1;
  };
  with_team(2, [&] {
    CHECK(caller_only(16, 16, 0));
    CHECK(caller_only(100, 4, 1));
  });
  with_team(1, [&] { CHECK(caller_only(100, 4, 0)); });
}
