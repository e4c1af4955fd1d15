#include "coinfer/offline/generation_stage.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "coinfer/serving/generation_endpoint.hpp"

namespace coinfer::offline {
namespace asio = boost::asio;

namespace {

// Takes calls by index until none is left; each generation runs to its end.
asio::awaitable<void> generation_worker(GenerationEndpoint& endpoint,
                                        std::span<const GenerationCall> calls, std::size_t& next,
                                        std::vector<GeneratedText>& out) {
  auto executor = co_await asio::this_coro::executor;
  while (next < calls.size()) {
    const std::size_t i = next++;
    GeneratedText& result = out[i];
    GenerationRun run;
    GenerationCall call = calls[i];
    Status status = endpoint.submit(call, run, executor);
    // A full waiting queue (another job sharing the engine): wait a little and try again.
    for (int attempt = 0; status.code() == Errc::unavailable && attempt < 600; ++attempt) {
      asio::steady_timer timer(executor, std::chrono::milliseconds(50));
      co_await timer.async_wait(asio::use_awaitable);
      call = calls[i];
      status = endpoint.submit(call, run, executor);
    }
    if (!status.ok()) {
      result.error = std::move(status);
      continue;
    }
    generation::GenerationUpdate update;
    while (co_await run.next(update)) {
      result.text += update.text;
      result.completion_tokens = update.completion_tokens;
      if (update.finish == generation::FinishReason::error) {
        result.error =
            update.error.ok() ? Status(Errc::internal, "generation failed") : update.error;
      } else if (update.finish != generation::FinishReason::none) {
        result.finish = std::string(generation::to_string(update.finish));
      }
    }
    if (result.error.ok() && result.finish != "stop" && result.finish != "length")
      result.error = Status(Errc::internal, "generation ended: " + result.finish);
  }
}

}  // namespace

Status prepare_row(const GenerationEndpoint& endpoint, std::string_view text,
                   const GenerationOptions& options, GenerationCall& out) {
  // Fields set one by one on the caller's fresh call: `out = GenerationCall{}` here crashed
  // under ASan at -O1 (GCC 12: the move-assignment wrote through a wild pointer; not with a
  // print beside it, not without ASan), and the caller makes a new call per row anyway.
  out.route = "batch";
  out.chat = options.chat;
  if (options.chat) {
    out.messages.push_back(ChatMessage{"user", std::string(text)});
  } else {
    out.text = text;
  }
  out.request.sampling.temperature = 0.0f;  // greedy
  out.request.max_tokens = options.max_tokens;
  out.max_tokens_given = true;
  out.cacheable = false;
  if (!options.json_schema.empty()) {
    out.constraint.kind = generation::grammar::OutputConstraint::Kind::json_schema;
    out.constraint.source = options.json_schema;
    out.constraint.field = "--json-schema";
  }
  return endpoint.prepare(out);
}

void generate_all(GenerationEndpoint& endpoint, std::span<const GenerationCall> calls,
                  const GenerationOptions& options, std::vector<GeneratedText>& out) {
  out.assign(calls.size(), {});
  asio::io_context io(1);
  std::size_t next = 0;
  const std::size_t workers = std::min<std::size_t>(
      calls.size(), static_cast<std::size_t>(std::max(1, options.concurrency)));
  for (std::size_t w = 0; w < workers; ++w)
    asio::co_spawn(io, generation_worker(endpoint, calls, next, out), asio::detached);
  io.run();
}

}  // namespace coinfer::offline
