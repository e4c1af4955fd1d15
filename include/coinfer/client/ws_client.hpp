#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "coinfer/client/http_client.hpp"  // Failure
#include "coinfer/core/status.hpp"

namespace coinfer::client {

struct WsClientConfig {
  std::uint32_t connect_timeout_ms = 5'000;  // resolve, TCP connect and the upgrade handshake
  std::uint32_t idle_timeout_ms = 0;  // 0: none; else pinged at half, closed when silent this long
  std::size_t max_message_bytes = 64 * 1024 * 1024;  // larger incoming messages fail the read
  // Sent as the Authorization header of the upgrade request ("Bearer <API key>"); empty: none.
  std::string authorization{};
};

// WebSocket client on C++20 coroutines: one connection, text messages.
//
// send() and receive() may be awaited at the same time: one coroutine reading while any number
// of others write. Concurrent sends are serialized in call order (each waits for its turn and
// for its own message to be written); receive() must have one caller at a time. A client is
// single-use: connect once; after close() or a failure, make a new one.
//
// Not thread-safe: call it from one thread or strand (the executor given). Operations in flight
// keep the connection's state alive; destroying the client closes the socket, which ends them
// with an error.
class WsClient {
 public:
  explicit WsClient(boost::asio::any_io_executor executor, WsClientConfig config = {});
  ~WsClient();
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  // Resolves `host`, connects and upgrades GET `target` (e.g. "/v2/ws"). Errc::unavailable
  // when any step fails or passes connect_timeout_ms.
  boost::asio::awaitable<Status> connect(std::string host, std::uint16_t port, std::string target);
  // Writes one text message; `text` must stay valid until it completes.
  boost::asio::awaitable<Status> send(std::string_view text);
  // Reads the next message (text or binary) into `message`. Errc::unavailable once the
  // connection is closed (by either side) or fails.
  boost::asio::awaitable<Status> receive(std::string& message);
  // The closing handshake (code 1000), after any send in progress. A pending receive() then
  // ends with Errc::unavailable.
  boost::asio::awaitable<Status> close();

  bool is_open() const noexcept;  // connected, and neither closed nor failed yet

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// The outcome of one WsInferSession::infer.
struct WsInferResult {
  int status = 0;    // 200 for an infer response, the error reply's "status", 0 when none
  std::string body;  // the reply as the server sent it (keeps its capacity across calls)
  Failure failure = Failure::none;  // why no reply arrived: connect, timeout, closed
};

// KServe OIP v2 inference over the WebSocket endpoint /v2/ws: many requests in flight on one
// connection, replies matched to requests by id.
//
// infer() may be awaited from any number of coroutines at once. Each call gets a fresh id
// (decimal, unique in the session) spliced into its request together with "model_name"; one
// reader loop, started by connect(), reads the replies in completion order and hands each to
// the call waiting for its id. When the connection ends, every waiting call fails with
// Errc::unavailable (Failure::closed). Like WsClient: single-use, not thread-safe, and
// destroying it closes the connection.
class WsInferSession {
 public:
  explicit WsInferSession(boost::asio::any_io_executor executor, WsClientConfig config = {},
                          std::uint32_t request_timeout_ms = 30'000);
  ~WsInferSession();
  WsInferSession(const WsInferSession&) = delete;
  WsInferSession& operator=(const WsInferSession&) = delete;

  boost::asio::awaitable<Status> connect(std::string host, std::uint16_t port,
                                         std::string target = "/v2/ws");
  // Sends `request_json`, an OIP infer request object ({"inputs":[...], ...}) without an
  // "id" (the server rejects a duplicate one; a "model_name" in it is overridden by `model`),
  // and awaits its reply. Ok only for an infer response; an error reply becomes a Status with
  // the matching Errc and the server's message. `out` holds the reply either way. Times out
  // (Errc::deadline_exceeded) after request_timeout_ms (0: never), counted from the call.
  boost::asio::awaitable<Status> infer(std::string_view model, std::string_view request_json,
                                       WsInferResult& out);
  boost::asio::awaitable<Status> close();

  bool is_open() const noexcept;
  std::size_t in_flight() const noexcept;  // infer calls awaiting their reply
  // Replies whose id matched no waiting call: late replies to timed-out calls, or errors the
  // server could not attribute (a message so malformed that its id could not be read).
  std::uint64_t unmatched_replies() const noexcept;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace coinfer::client
