#include "coinfer/runtime/work_queue.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <vector>

using namespace coinfer;

TEST_CASE("a work queue runs work in order across its ring's growth and wrap-around") {
  WorkQueue queue;
  std::mutex mutex;
  std::vector<int> order;
  // The worker is held on the first item while 40 more queue behind it (the ring grows from
  // 16 to 64 with its head past slot 0), then drained; then rounds that wrap the ring.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  queue.start(1);
  queue.push([&, released] {
    released.wait();
    std::lock_guard lock(mutex);
    order.push_back(0);
  });
  for (int i = 1; i <= 40; ++i) {
    queue.push([&, i] {
      std::lock_guard lock(mutex);
      order.push_back(i);
    });
  }
  release.set_value();
  for (int round = 0; round < 10; ++round) {
    std::promise<void> done;
    for (int i = 0; i < 7; ++i) {
      const int value = 41 + round * 7 + i;
      queue.push([&, value] {
        std::lock_guard lock(mutex);
        order.push_back(value);
      });
    }
    queue.push([&done] { done.set_value(); });
    done.get_future().wait();
  }
  queue.stop();
  std::vector<int> expected;
  for (int i = 0; i < 41 + 70; ++i) expected.push_back(i);
  CHECK(order == expected);
}

TEST_CASE("stopping a work queue runs everything already queued") {
  std::atomic<int> ran{0};
  {
    WorkQueue queue;
    queue.start(2);
    for (int i = 0; i < 100; ++i) queue.push([&ran] { ++ran; });
    queue.stop();
    CHECK(ran.load() == 100);
    queue.stop();  // idempotent
  }
  CHECK(ran.load() == 100);
}
