#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "coinfer/core/status.hpp"

namespace coinfer {

// Which lane (stream + staging) runs each batch, and when a lane may be reused: the policy
// half of CudaExecutor, written against an abstract device so that it is tested on the CPU
// with a fake one (tests/unit/stream_scheduler_test.cpp) and runs on CUDA with
// CudaStreamDevice.
//
// What a Device provides (types default-constructible and movable):
//   typename Device::Stream, Device::Event, Device::HostBuffer
//   Status create_stream(Stream&);    Status create_event(Event&);
//   Status allocate_host(std::size_t bytes, HostBuffer&);   // page-locked staging
//   static std::size_t host_bytes(const HostBuffer&);
//   Status record(Event&, Stream&);   // marks the end of the work queued so far
//   Status wait(Event&);              // blocks the calling thread until that work is done
//   void synchronize(Stream&);        // best effort, after a failure
//   bool usable();                    // false once the device failed for good (sticky error)
//
// A lane is one stream with its own pinned input and output staging. With two or more lanes
// batches are double-buffered: while one lane's kernels run, the next batch is staged into
// another lane's pinned memory and copied in on that lane's stream.
template <class Device>
class StreamScheduler {
 public:
  struct Lane {
    int index = 0;
    typename Device::Stream stream{};
    typename Device::Event done{};
    typename Device::HostBuffer input{};   // pinned, host -> device; reserve_staging bytes
    typename Device::HostBuffer output{};  // pinned, device -> host
    std::uint64_t batches = 0;             // batches this lane has run
  };

  StreamScheduler(Device& device, int lanes) : device_(device), lanes_(lanes < 1 ? 1 : lanes) {
    for (std::size_t i = 0; i < lanes_.size(); ++i) lanes_[i].index = static_cast<int>(i);
    busy_.assign(lanes_.size(), false);
  }
  StreamScheduler(const StreamScheduler&) = delete;
  StreamScheduler& operator=(const StreamScheduler&) = delete;

  // Creates each lane's stream and event. Its error is a startup error.
  Status start() {
    for (Lane& lane : lanes_) {
      const std::string where = "lane " + std::to_string(lane.index) + ": ";
      if (auto s = device_.create_stream(lane.stream); !s) return prefixed(s, where);
      if (auto s = device_.create_event(lane.done); !s) return prefixed(s, where);
    }
    return {};
  }

  // Grows every lane's pinned staging to at least these sizes. Called when a model loads,
  // before batches run (never concurrently with run()).
  Status reserve_staging(std::size_t input_bytes, std::size_t output_bytes) {
    for (Lane& lane : lanes_) {
      if (Device::host_bytes(lane.input) < input_bytes) {
        if (auto s = device_.allocate_host(input_bytes, lane.input); !s) return s;
      }
      if (Device::host_bytes(lane.output) < output_bytes) {
        if (auto s = device_.allocate_host(output_bytes, lane.output); !s) return s;
      }
    }
    return {};
  }

  // Runs one batch on the next free lane in round-robin order, waiting while every lane is
  // busy (callers are the executor's own threads, at most lanes() of them):
  //   enqueue(lane) -> Status   copies into lane.input, queues H2D, kernels and D2H on
  //                             lane.stream
  //   record + wait lane.done   this thread sleeps until the lane's work is done
  //   finish(lane) -> Status    reads lane.output (only when everything before succeeded)
  // The lane, and so its staging, is handed out again only after its event completed, even
  // when enqueue failed half-way (a copy queued before the failure may still read the
  // staging). Every device error ends as the returned Status; after one that leaves the device
  // unusable, this and every later batch fail at once with that error.
  template <class Enqueue, class Finish>
  Status run(Enqueue&& enqueue, Finish&& finish) {
    Lane* lane = acquire();
    if (lane == nullptr) return failed_status();
    Status status = enqueue(*lane);
    Status done = device_.record(lane->done, lane->stream);
    if (done) done = device_.wait(lane->done);
    if (!done) device_.synchronize(lane->stream);
    if (status && !done) status = std::move(done);
    if (status) status = finish(*lane);
    release(*lane, status);
    return status;
  }

  int lanes() const noexcept { return static_cast<int>(lanes_.size()); }
  const Lane& lane(int i) const noexcept { return lanes_[static_cast<std::size_t>(i)]; }
  bool failed() const {
    std::lock_guard lock(mutex_);
    return !failed_.ok();
  }

 private:
  static Status prefixed(const Status& s, const std::string& where) {
    return {s.code(), where + s.message()};
  }

  Lane* acquire() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (!failed_.ok()) return nullptr;
      for (std::size_t n = 0; n < lanes_.size(); ++n) {
        const std::size_t i = (next_ + n) % lanes_.size();
        if (!busy_[i]) {
          busy_[i] = true;
          next_ = (i + 1) % lanes_.size();
          return &lanes_[i];
        }
      }
      lane_free_.wait(lock);
    }
  }

  void release(Lane& lane, const Status& status) {
    const bool broken = !status.ok() && !device_.usable();
    {
      std::lock_guard lock(mutex_);
      ++lane.batches;
      busy_[static_cast<std::size_t>(lane.index)] = false;
      if (broken && failed_.ok()) failed_ = status;
    }
    if (broken) {
      lane_free_.notify_all();
    } else {
      lane_free_.notify_one();
    }
  }

  Status failed_status() const {
    std::lock_guard lock(mutex_);
    return {Errc::unavailable, "device unusable after an earlier error: " + failed_.message()};
  }

  Device& device_;
  std::vector<Lane> lanes_;
  mutable std::mutex mutex_;
  std::condition_variable lane_free_;
  std::vector<bool> busy_;  // guarded by mutex_
  std::size_t next_ = 0;    // round-robin cursor, guarded by mutex_
  Status failed_;           // first error after which the device was unusable; guarded
};

}  // namespace coinfer
