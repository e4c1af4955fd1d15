#pragma once

#include <chrono>

#include "coinfer/net/http_message.hpp"
#include "coinfer/serving/infer_request.hpp"

namespace coinfer {

// A request's pipeline timing as Server-Timing entries (decode, cache, preprocess, queue,
// compute; the stages it went through), then `encode`: the adapter's answer written.
inline void add_server_timing(const RequestTiming& timing, std::chrono::steady_clock::duration encode,
                              net::ServerTiming& out) {
  using std::chrono::nanoseconds;
  auto add = [&](std::string_view name, std::chrono::steady_clock::duration d) {
    if (d.count() > 0) out.add(name, std::chrono::duration_cast<nanoseconds>(d));
  };
  add("decode", timing.decode);
  add("cache", timing.cache);
  add("preprocess", timing.preprocess);
  add("queue", timing.queue);
  add("compute", timing.compute);
  add("encode", encode);
}

}  // namespace coinfer
