#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>

namespace coinfer::net {

// Bounds one read phase (a whole HTTP request, say): arm() before the reads, disarm() after.
// If the limit passes while armed, the target's cancel() is called once (a socket's, so the
// pending read ends with operation_aborted) and expired() turns true.
//
// Cancelling a timer cannot revoke an expiry that Asio has already queued: such a stale
// expiry runs after disarm(), perhaps during a later phase or after the connection is gone.
// Each arm() starts a new generation, and an expiry acts only if its generation is still the
// armed one; the state it checks is shared with the pending wait, so outliving the watchdog
// is safe. All calls, and the expiry, run on the timer's executor (the connection's).
class ReadWatchdog {
 public:
  explicit ReadWatchdog(boost::asio::any_io_executor executor)
      : timer_(std::move(executor)), state_(std::make_shared<State>()) {}
  ~ReadWatchdog() { disarm(); }
  ReadWatchdog(const ReadWatchdog&) = delete;
  ReadWatchdog& operator=(const ReadWatchdog&) = delete;

  template <class Cancellable>
  void arm(std::chrono::steady_clock::duration limit, Cancellable& target) {
    arm(limit, &target, [](void* t) { static_cast<Cancellable*>(t)->cancel(); });
  }

  void disarm() {
    state_->armed = false;
    state_->target = nullptr;
    timer_.cancel();
  }

  // The armed phase's limit passed (its target was cancelled).
  bool expired() const noexcept { return state_->expired; }

 private:
  struct State {
    std::uint64_t generation = 0;
    bool armed = false;
    bool expired = false;
    void* target = nullptr;
    void (*cancel)(void*) = nullptr;
  };

  void arm(std::chrono::steady_clock::duration limit, void* target, void (*cancel)(void*)) {
    State& s = *state_;
    s.generation += 1;
    s.armed = true;
    s.expired = false;
    s.target = target;
    s.cancel = cancel;
    timer_.expires_after(limit);
    timer_.async_wait([state = state_, generation = s.generation](boost::system::error_code ec) {
      if (ec || !state->armed || state->generation != generation) return;  // stale: touch nothing
      state->expired = true;
      state->cancel(state->target);
    });
  }

  boost::asio::steady_timer timer_;
  std::shared_ptr<State> state_;
};

}  // namespace coinfer::net
