#include "coinfer/runtime/stream_scheduler.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace coinfer;
using namespace std::chrono_literals;

namespace {

// A device whose work completes when the test says so. Each stream is an int; an event
// remembers which stream and how much of it was recorded; work queued on a stream is
// "done" once complete(stream) has been called that many times.
class FakeDevice {
 public:
  using Stream = int;
  struct Event {
    int stream = -1;
    int ticket = 0;
  };
  using HostBuffer = std::vector<std::byte>;

  Status create_stream(Stream& out) {
    std::lock_guard lock(mutex_);
    if (fail_stream_creation) return {Errc::unavailable, "cudaStreamCreate: out of resources"};
    out = static_cast<int>(queued_.size());
    queued_.push_back(0);
    completed_.push_back(0);
    return {};
  }
  Status create_event(Event& out) {
    out = {};
    return {};
  }
  Status allocate_host(std::size_t bytes, HostBuffer& out) {
    ++allocations;
    out.assign(bytes, std::byte{0});
    return {};
  }
  static std::size_t host_bytes(const HostBuffer& b) { return b.size(); }

  // Work queued by an Enqueue callback.
  void queue(int stream) {
    std::lock_guard lock(mutex_);
    ++queued_[static_cast<std::size_t>(stream)];
  }
  Status record(Event& event, Stream& stream) {
    std::lock_guard lock(mutex_);
    event = {stream, queued_[static_cast<std::size_t>(stream)]};
    return {};
  }
  Status wait(Event& event) {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] {
      return auto_complete || completed_[static_cast<std::size_t>(event.stream)] >= event.ticket;
    });
    --waiting_;
    if (!wait_error.ok()) {
      Status s = wait_error;
      if (!sticky) wait_error = {};
      return s;
    }
    return {};
  }
  void synchronize(Stream&) { ++synchronizations; }
  bool usable() { return !sticky; }

  // Test side.
  void complete(int stream) {
    std::lock_guard lock(mutex_);
    completed_[static_cast<std::size_t>(stream)] = queued_[static_cast<std::size_t>(stream)];
    changed_.notify_all();
  }
  void wait_for_waiters(int n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ >= n; });
  }

  bool auto_complete = true;
  bool fail_stream_creation = false;
  Status wait_error;
  bool sticky = false;
  std::atomic<int> allocations{0};
  std::atomic<int> synchronizations{0};

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int> queued_, completed_;
  int waiting_ = 0;
};

using Scheduler = StreamScheduler<FakeDevice>;
using Lane = Scheduler::Lane;

Status ok_finish(Lane&) {
  return {};
}

}  // namespace

TEST_CASE("batches go to the lanes in round-robin order") {
  FakeDevice device;
  Scheduler scheduler(device, 3);
  REQUIRE(scheduler.start().ok());
  std::vector<int> used;
  for (int i = 0; i < 7; ++i) {
    REQUIRE(scheduler
                .run(
                    [&](Lane& lane) {
                      used.push_back(lane.index);
                      device.queue(lane.stream);
                      return Status{};
                    },
                    ok_finish)
                .ok());
  }
  CHECK(used == std::vector<int>{0, 1, 2, 0, 1, 2, 0});
  CHECK(scheduler.lane(0).batches == 3);
  CHECK(scheduler.lane(2).batches == 2);
}

TEST_CASE("staging is sized once at load and reused by every batch") {
  FakeDevice device;
  Scheduler scheduler(device, 2);
  REQUIRE(scheduler.start().ok());
  REQUIRE(scheduler.reserve_staging(1024, 96).ok());
  CHECK(device.allocations == 4);                    // input + output per lane
  REQUIRE(scheduler.reserve_staging(512, 96).ok());  // smaller: nothing new
  CHECK(device.allocations == 4);
  std::vector<std::byte*> inputs;
  for (int i = 0; i < 6; ++i) {
    REQUIRE(scheduler
                .run(
                    [&](Lane& lane) {
                      inputs.push_back(lane.input.data());
                      CHECK(lane.input.size() == 1024);
                      CHECK(lane.output.size() == 96);
                      return Status{};
                    },
                    ok_finish)
                .ok());
  }
  CHECK(device.allocations == 4);
  CHECK(inputs[0] == inputs[2]);
  CHECK(inputs[1] == inputs[3]);
  CHECK(inputs[0] != inputs[1]);
}

TEST_CASE("while a lane computes, the next batch is staged on another lane") {
  FakeDevice device;
  device.auto_complete = false;
  Scheduler scheduler(device, 2);
  REQUIRE(scheduler.start().ok());
  std::atomic<int> first_lane{-1}, second_lane{-1};
  std::atomic<bool> first_done{false};
  std::thread first([&] {
    CHECK(scheduler
              .run(
                  [&](Lane& lane) {
                    first_lane = lane.index;
                    device.queue(lane.stream);
                    return Status{};
                  },
                  [&](Lane&) {
                    first_done = true;
                    return Status{};
                  })
              .ok());
  });
  device.wait_for_waiters(1);  // batch 1 is on the GPU
  std::thread second([&] {
    CHECK(scheduler
              .run(
                  [&](Lane& lane) {
                    second_lane = lane.index;
                    device.queue(lane.stream);
                    return Status{};
                  },
                  ok_finish)
              .ok());
  });
  device.wait_for_waiters(2);  // batch 2 was enqueued while batch 1 had not finished
  CHECK_FALSE(first_done);
  CHECK(first_lane != second_lane);
  // Completion order follows each lane's event, not submission: lane of batch 2 first.
  device.complete(second_lane);
  second.join();
  CHECK_FALSE(first_done);
  device.complete(first_lane);
  first.join();
  CHECK(first_done);
}

TEST_CASE("a lane's staging is not handed out again before its event completed") {
  FakeDevice device;
  device.auto_complete = false;
  Scheduler scheduler(device, 1);
  REQUIRE(scheduler.start().ok());
  std::atomic<int> entered{0};
  auto batch = [&] {
    CHECK(scheduler
              .run(
                  [&](Lane& lane) {
                    ++entered;
                    device.queue(lane.stream);
                    return Status{};
                  },
                  ok_finish)
              .ok());
  };
  std::thread first(batch);
  device.wait_for_waiters(1);
  std::thread second(batch);
  std::this_thread::sleep_for(50ms);
  CHECK(entered == 1);  // the only lane is still computing batch 1
  device.complete(0);
  first.join();
  device.wait_for_waiters(1);  // batch 2 now holds the lane
  CHECK(entered == 2);
  device.complete(0);
  second.join();
}

TEST_CASE("an enqueue error fails only its batch, after the lane's queued work finished") {
  FakeDevice device;
  Scheduler scheduler(device, 2);
  REQUIRE(scheduler.start().ok());
  bool finished = false;
  const Status failed = scheduler.run(
      [&](Lane& lane) {
        device.queue(lane.stream);  // an H2D copy was queued before the failure
        return Status{Errc::unavailable,
                      "launch of quantize_rows_kernel: cudaErrorInvalidConfiguration"};
      },
      [&](Lane&) {
        finished = true;
        return Status{};
      });
  CHECK(failed.code() == Errc::unavailable);
  CHECK(failed.message().find("quantize_rows_kernel") != std::string::npos);
  CHECK_FALSE(finished);                  // outputs are never read from a failed batch
  CHECK(scheduler.lane(0).batches == 1);  // waited for and released
  CHECK_FALSE(scheduler.failed());
  CHECK(scheduler.run([](Lane&) { return Status{}; }, ok_finish).ok());
}

TEST_CASE("a sticky device error fails that batch and every later one at once") {
  FakeDevice device;
  Scheduler scheduler(device, 2);
  REQUIRE(scheduler.start().ok());
  device.wait_error = {Errc::unavailable,
                       "batch on the GPU (cudaEventSynchronize): cudaErrorIllegalAddress"};
  device.sticky = true;
  const Status first = scheduler.run([](Lane&) { return Status{}; }, ok_finish);
  CHECK(first.message().find("cudaErrorIllegalAddress") != std::string::npos);
  CHECK(device.synchronizations == 1);
  CHECK(scheduler.failed());
  bool enqueued = false;
  const Status later = scheduler.run(
      [&](Lane&) {
        enqueued = true;
        return Status{};
      },
      ok_finish);
  CHECK_FALSE(enqueued);
  CHECK(later.code() == Errc::unavailable);
  CHECK(later.message().rfind("device unusable after an earlier error: ", 0) == 0);
}

TEST_CASE("a non-sticky wait error fails one batch and the next one runs") {
  FakeDevice device;
  Scheduler scheduler(device, 1);
  REQUIRE(scheduler.start().ok());
  device.wait_error = {Errc::unavailable, "cudaErrorNotReady"};
  CHECK_FALSE(scheduler.run([](Lane&) { return Status{}; }, ok_finish).ok());
  CHECK_FALSE(scheduler.failed());
  CHECK(scheduler.run([](Lane&) { return Status{}; }, ok_finish).ok());
}

TEST_CASE("a failure creating streams is a startup error naming the lane") {
  FakeDevice device;
  device.fail_stream_creation = true;
  Scheduler scheduler(device, 2);
  const Status s = scheduler.start();
  CHECK(s.message() == "lane 0: cudaStreamCreate: out of resources");
}
