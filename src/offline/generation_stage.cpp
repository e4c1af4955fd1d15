#include "coinfer/offline/generation_stage.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "coinfer/generation/generator.hpp"

namespace coinfer::offline {
namespace asio = boost::asio;

namespace {

// Takes prompts by index until none is left; each generation runs to its end.
asio::awaitable<void> generation_worker(generation::Generator& generator,
                                        std::span<const std::vector<std::int32_t>> prompts,
                                        const GenerationOptions& options, std::size_t& next,
                                        std::vector<GeneratedText>& out) {
  auto executor = co_await asio::this_coro::executor;
  while (next < prompts.size()) {
    const std::size_t i = next++;
    GeneratedText& result = out[i];
    generation::GenerationRequest request;
    request.prompt = prompts[i];
    request.sampling.temperature = 0.0f;  // greedy
    request.max_tokens = options.max_tokens;
    std::shared_ptr<generation::GenerationStream> stream;
    Status status = generator.submit(std::move(request), executor, stream);
    // A full waiting queue (another job sharing the engine): wait a little and try again.
    for (int attempt = 0; status.code() == Errc::unavailable && attempt < 600; ++attempt) {
      asio::steady_timer timer(executor, std::chrono::milliseconds(50));
      co_await timer.async_wait(asio::use_awaitable);
      request.prompt = prompts[i];
      request.sampling.temperature = 0.0f;
      request.max_tokens = options.max_tokens;
      status = generator.submit(std::move(request), executor, stream);
    }
    if (!status.ok()) {
      result.error = std::move(status);
      continue;
    }
    generation::GenerationUpdate update;
    while (co_await stream->next(update)) {
      result.text += update.text;
      result.completion_tokens = update.completion_tokens;
      if (update.finish == generation::FinishReason::error) {
        result.error = update.error.ok() ? Status(Errc::internal, "generation failed") : update.error;
      } else if (update.finish != generation::FinishReason::none) {
        result.finish = std::string(generation::to_string(update.finish));
      }
    }
    if (result.error.ok() && result.finish != "stop" && result.finish != "length")
      result.error = Status(Errc::internal, "generation ended: " + result.finish);
  }
}

}  // namespace

void generate_all(generation::Generator& generator, std::span<const std::vector<std::int32_t>> prompts,
                  const GenerationOptions& options, std::vector<GeneratedText>& out) {
  out.assign(prompts.size(), {});
  asio::io_context io(1);
  std::size_t next = 0;
  const std::size_t workers = std::min<std::size_t>(prompts.size(), static_cast<std::size_t>(std::max(1, options.concurrency)));
  for (std::size_t w = 0; w < workers; ++w)
    asio::co_spawn(io, generation_worker(generator, prompts, options, next, out), asio::detached);
  io.run();
}

}  // namespace coinfer::offline
