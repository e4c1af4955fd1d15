#include "coinfer/net/read_watchdog.hpp"

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <thread>

using namespace coinfer;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

struct Target {
  int cancels = 0;
  void cancel() { ++cancels; }
};

// Lets a 1 ms limit pass while the io_context is not running, then posts `step`: Asio reaps
// the expired timer before `step` runs and queues its expiry after it, so a cancel() inside
// `step` comes too late to revoke it (the read completed just as its watchdog fired).
template <class Step>
void expire_then_run(asio::io_context& io, Step step) {
  std::this_thread::sleep_for(5ms);
  asio::post(io, step);
  io.run_for(200ms);
}

}  // namespace

TEST_CASE("a plain timer's queued expiry survives cancel(): the case the watchdog handles") {
  asio::io_context io;
  asio::steady_timer timer(io, 1ms);
  bool expired_after_cancel = false;
  timer.async_wait([&](boost::system::error_code ec) { expired_after_cancel = !ec; });
  expire_then_run(io, [&] { timer.cancel(); });
  CHECK(expired_after_cancel);
}

TEST_CASE("a stale expiry does not touch the next read phase") {
  asio::io_context io;
  Target target;
  net::ReadWatchdog watchdog(io.get_executor());
  watchdog.arm(1ms, target);
  expire_then_run(io, [&] {
    watchdog.disarm();            // the request arrived
    watchdog.arm(10s, target);    // the next one is being read
  });
  CHECK(target.cancels == 0);
  CHECK_FALSE(watchdog.expired());
  watchdog.disarm();
}

TEST_CASE("a stale expiry after the watchdog is gone touches nothing") {
  asio::io_context io;
  auto target = std::make_unique<Target>();
  auto watchdog = std::make_unique<net::ReadWatchdog>(io.get_executor());
  watchdog->arm(1ms, *target);
  expire_then_run(io, [&] {
    watchdog.reset();
    target.reset();  // a use after free under ASan if the expiry still acted
  });
  CHECK_FALSE(target);
}

TEST_CASE("an armed watchdog cancels its target once when the limit passes") {
  asio::io_context io;
  Target target;
  net::ReadWatchdog watchdog(io.get_executor());
  watchdog.arm(1ms, target);
  io.run_for(100ms);
  CHECK(target.cancels == 1);
  CHECK(watchdog.expired());
  watchdog.arm(10s, target);  // a new phase starts clean
  CHECK_FALSE(watchdog.expired());
  watchdog.disarm();
  io.restart();
  io.run_for(20ms);
  CHECK(target.cancels == 1);
}
