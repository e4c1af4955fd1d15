// WebSocket connections: many messages in flight per connection, answers in completion order.
//
// Two coroutines share a connection: the reader reads a message, spawns its handler and reads
// the next; the writer sends replies as handlers finish. A message counts as in flight from
// the moment it is read until its reply is written, and the reader stops reading at
// ws_max_in_flight: so a client that sends faster than it reads holds at most that many
// requests and replies in server memory, and TCP pushes back on it (backpressure). A handler
// that streams (WebSocketStream::send) waits while ws_max_in_flight messages are unsent.
//
// On stop the reader goes on reading for kDrainReadWindow, up to twice ws_max_in_flight, so
// the messages a client wrote before the stop (already in the socket, or in the reader's
// buffer while it waited for a slot) are answered like the ones read before it; then it
// stops, and the writer closes with 1001 once the last reply is written.
#include <spdlog/spdlog.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>

#include "coinfer/core/json_writer.hpp"
#include "connection.hpp"

namespace coinfer::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kMessagePadding = 64;  // for in-place JSON parsing (simdjson)
// How long after stop() messages are still read: those already on the wire when it came.
constexpr auto kDrainReadWindow = std::chrono::milliseconds(100);

struct Outgoing {
  std::string text;
  bool final = true;  // a message's reply (else one of the messages it streamed before it)
};

struct SessionState {
  SessionState(const asio::any_io_executor& ex, std::size_t max_unsent)
      : max_unsent(max_unsent), reader_wake(ex), writer_wake(ex), sent(ex), drain_window(ex) {
    sent.expires_at(asio::steady_timer::time_point::max());  // an event with many waiters
  }

  std::deque<Outgoing> replies;  // computed, not yet written
  std::size_t in_flight = 0;     // read and not yet written back
  const std::size_t max_unsent;  // streamed messages wait for room below this
  bool reading_done = false;
  bool drain_read_over = false;  // stop() came and kDrainReadWindow has passed
  bool close_sent = false;       // what is read after this cannot be answered
  bool writer_done = false;
  bool broken = false;  // a write failed: what is left is dropped
  websocket::close_code close_code = websocket::close_code::normal;
  // Each loop waits on its own timer; cancelling it wakes that loop (an event).
  asio::steady_timer reader_wake;
  asio::steady_timer writer_wake;
  // Cancelled after every write: wakes all the handlers waiting in WebSocketStream::send.
  // Its expiry never changes, so waiting does not cancel the other waiters.
  asio::steady_timer sent;
  asio::steady_timer drain_window;  // ends the reading after stop()
  // One per message being handled: a client that goes away cancels them (queued requests are
  // then dropped before compute).
  std::list<asio::cancellation_signal> cancellations;
};

asio::awaitable<void> wait(asio::steady_timer& event) {
  event.expires_at(asio::steady_timer::time_point::max());
  co_await event.async_wait(use_tuple);
}

std::string error_reply(std::string_view message) {
  std::string reply = R"({"error":)";
  json_append_string(reply, message);
  return reply + '}';
}

// The connection's WebSocketStream: queues a handler's messages for the writer.
class SessionStream final : public WebSocketStream {
 public:
  explicit SessionStream(SessionState& state) : state_(state) {}

  asio::awaitable<bool> send(std::string message) override {
    if (state_.broken) co_return false;
    state_.replies.push_back({std::move(message), /*final=*/false});
    state_.writer_wake.cancel();
    while (state_.replies.size() >= state_.max_unsent && !state_.broken) {
      // The writer's cancel() ends the wait with operation_aborted, as does the handler's
      // own cancellation (the client went away): tell them apart by the latter's state.
      (void)co_await state_.sent.async_wait(use_tuple);
      const auto cancellation = co_await asio::this_coro::cancellation_state;
      if (cancellation.cancelled() != asio::cancellation_type::none) co_return false;
    }
    co_return !state_.broken;
  }

 private:
  SessionState& state_;
};

asio::awaitable<std::string> handle(const WebSocketHandler& handler, std::string message,
                                    const Tenant* tenant, WebSocketStream* stream) {
  std::string reply;
  co_await handler(message, message.capacity(), tenant, stream, reply);
  co_return reply;
}

// Writes replies as they come. On stop (Connection::stopping), once the drain's reading window
// is over and nothing is in flight it sends the close (1001) itself: the reader may be parked
// in a read the client never completes, and Beast finishes that read when the client's close
// frame arrives.
template <class Stream>
asio::awaitable<void> write_replies(Stream& ws, std::shared_ptr<SessionState> state) {
  for (;;) {
    if (!state->replies.empty()) {
      const Outgoing reply = std::move(state->replies.front());
      state->replies.pop_front();
      if (!state->broken) {
        ws.text(true);
        auto [ec, n] = co_await ws.async_write(asio::buffer(reply.text), use_tuple);
        state->broken = static_cast<bool>(ec);
      }
      state->sent.cancel();
      if (reply.final) {
        --state->in_flight;
        state->reader_wake.cancel();
      }
      continue;
    }
    if (state->in_flight == 0 && (state->reading_done || state->drain_read_over)) break;
    co_await wait(state->writer_wake);
  }
  if (!state->reading_done) state->close_code = websocket::close_code::going_away;
  state->close_sent = true;
  if (!state->broken && ws.is_open()) co_await ws.async_close(state->close_code, use_tuple);
  state->writer_done = true;
  state->reader_wake.cancel();
}

// The session over `next`: the TCP stream itself, or TLS over it (wss://).
template <class Next>
asio::awaitable<void> run_websocket_over(Connection& c, Next& next,
                                         ParsedRequest request,
                                         const WebSocketHandler& handler,
                                         const ServerConfig& config, const Tenant* tenant) {
  websocket::stream<Next&> ws(next);
  c.stream.expires_never();  // the websocket stream keeps its own timers
  websocket::stream_base::timeout timeouts{};
  timeouts.handshake_timeout = std::chrono::seconds(10);
  timeouts.idle_timeout = std::chrono::milliseconds(config.ws_idle_timeout_ms);
  timeouts.keep_alive_pings = true;  // pinged at half the idle timeout; silent peers are closed
  ws.set_option(timeouts);
  ws.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& res) { res.set(beast::http::field::server, "coinfer"); }));
  ws.read_message_max(config.ws_max_message_bytes);
  if (auto [ec] = co_await ws.async_accept(request, use_tuple); ec) co_return;

  const auto executor = c.stream.get_executor();
  auto state = std::make_shared<SessionState>(executor, config.ws_max_in_flight);
  SessionStream stream(*state);  // outlives the handlers: the session waits for the writer
  // stop() must not cancel the stream's I/O, which would abort a reply being written: it
  // wakes the reader (which may take up to twice as many messages in flight while the
  // window lasts), and when the window ends the reader stops and the writer closes once done.
  c.on_stop = [state] {
    state->reader_wake.cancel();
    state->drain_window.expires_after(kDrainReadWindow);
    state->drain_window.async_wait([state](boost::system::error_code) {
      state->drain_read_over = true;
      state->reader_wake.cancel();
      state->writer_wake.cancel();
    });
  };
  asio::co_spawn(executor, write_replies(ws, state), asio::detached);

  beast::flat_buffer buffer;
  bool peer_gone = false;
  for (;;) {
    while (state->in_flight >= (c.stopping ? 2 : 1) * config.ws_max_in_flight &&
           !state->drain_read_over) {
      co_await wait(state->reader_wake);
    }
    if (state->drain_read_over) {
      state->close_code = websocket::close_code::going_away;
      break;
    }
    auto [ec, n] = co_await ws.async_read(buffer, use_tuple);
    if (ec) {
      // Closed by the peer, idle timeout, a protocol violation (Beast has already sent the
      // close code it calls for), or stop(): then say we are going away.
      state->close_code = c.stopping ? websocket::close_code::going_away
                                     : websocket::close_code::normal;
      peer_gone = !c.stopping;
      break;
    }
    if (state->close_sent) break;  // written after our close reached the client: unanswered
    if (!ws.got_text()) {
      state->close_code = websocket::close_code::unknown_data;  // 1003
      break;
    }
    std::string message;
    message.reserve(n + kMessagePadding);
    message.append(static_cast<const char*>(buffer.data().data()), n);
    buffer.consume(n);

    ++state->in_flight;
    auto slot = state->cancellations.emplace(state->cancellations.end());
    asio::co_spawn(executor, handle(handler, std::move(message), tenant, &stream),
                   asio::bind_cancellation_slot(
                       slot->slot(), [state, slot](std::exception_ptr e, std::string reply) {
                         state->cancellations.erase(slot);
                         if (e) {
                           try {
                             std::rethrow_exception(e);
                           } catch (const boost::system::system_error& ex) {
                             // A handler cancelled because its client went away.
                             if (ex.code() != asio::error::operation_aborted) {
                               spdlog::error("websocket handler threw: {}", ex.what());
                             }
                             reply = error_reply(std::string("internal error: ") + ex.what());
                           } catch (const std::exception& ex) {
                             spdlog::error("websocket handler threw: {}", ex.what());
                             reply = error_reply(std::string("internal error: ") + ex.what());
                           } catch (...) {
                             spdlog::error("websocket handler threw a non-standard exception");
                             reply = error_reply("internal error");
                           }
                         }
                         state->replies.push_back({std::move(reply), /*final=*/true});
                         state->writer_wake.cancel();
                       }));
  }
  if (peer_gone) {
    for (auto it = state->cancellations.begin(); it != state->cancellations.end();) {
      auto& signal = *it++;  // a completion may erase its own entry
      signal.emit(asio::cancellation_type::terminal);
    }
  }
  state->reading_done = true;
  state->writer_wake.cancel();
  while (!state->writer_done) co_await wait(state->reader_wake);
  c.on_stop = nullptr;
}

}  // namespace

asio::awaitable<void> run_websocket(Connection& c, beast::tcp_stream& stream,
                                    ParsedRequest request,
                                    const WebSocketHandler& handler, const ServerConfig& config,
                                    const Tenant* tenant) {
  return run_websocket_over(c, stream, std::move(request), handler, config, tenant);
}

asio::awaitable<void> run_websocket(Connection& c, TlsStream& stream,
                                    ParsedRequest request,
                                    const WebSocketHandler& handler, const ServerConfig& config,
                                    const Tenant* tenant) {
  return run_websocket_over(c, stream, std::move(request), handler, config, tenant);
}

}  // namespace coinfer::net
