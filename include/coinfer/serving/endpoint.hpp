#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>

#include "coinfer/batching/dynamic_batcher.hpp"
#include "coinfer/core/config.hpp"
#include "coinfer/core/metrics.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/models/text_input.hpp"
#include "coinfer/serving/infer_request.hpp"
#include "coinfer/serving/input_sink.hpp"

namespace coinfer {

class CacheStage;

enum class ModelState { loading, ready, unavailable };
std::string_view to_string(ModelState state) noexcept;

// How a protocol adapter turns its wire request into an InferRequest: validated against
// `model` (the endpoint's metadata as clients see it). With a sink, the adapter writes the
// fixed-size inputs straight into the batch's rows through it (calling allocate exactly once);
// without one (a text endpoint) every input goes to request.inputs.
class RequestDecoder {
 public:
  virtual Status decode(const ModelMetadata& model, InferRequest& request, InputSink* sink) = 0;

 protected:
  ~RequestDecoder() = default;
};

// A served model and its request pipeline: decode -> (cache) -> preprocess (tokenize) ->
// batch -> compute. Every front end (OIP over HTTP and WebSocket, OpenAI, an app's own route)
// runs its requests through infer(), so they share the limits, the metrics and the stages; an
// adapter only translates wire <-> InferRequest and encodes ticket.outputs() (postprocess).
class Endpoint {
 public:
  Endpoint(std::shared_ptr<Model> model, boost::asio::any_io_executor io, Executor& executor,
           BatchPolicy policy, std::optional<TextInput> text = std::nullopt);

  // What clients see: the model's metadata, with a text endpoint's BYTES input in place of
  // the token ids.
  const ModelMetadata& metadata() const noexcept { return metadata_; }
  Model& model() noexcept { return *model_; }
  const TextInput* text() const noexcept { return text_ ? &*text_ : nullptr; }
  DynamicBatcher& batcher() noexcept { return batcher_; }
  ModelMetrics& metrics() noexcept { return metrics_; }
  const ModelMetrics& metrics() const noexcept { return metrics_; }
  ModelState state() const noexcept { return state_; }
  void set_state(ModelState state) noexcept { state_ = state; }
  // Answers from the response cache ([models.NAME] cache = "exact"): requests that carry
  // CacheDirectives are looked up by their exact inputs and parameters, and stored.
  void set_cache(CacheStage* stage) noexcept { cache_ = stage; }
  bool cached() const noexcept { return cache_ != nullptr; }

  // Runs one request through the pipeline. On success ticket.outputs() holds its rows of
  // every model output and request.token_count the token ids computed (text endpoints).
  // `request` and `ticket` must live until the returned awaitable completes.
  boost::asio::awaitable<Status> infer(RequestDecoder& decoder, InferRequest& request,
                                       BatchTicket& ticket);

  // Tokenizes every row of `texts` as infer() would (limits, truncation), appending the ids
  // to `ids` and each row's length to `lengths`. Text endpoints only; a cross-encoder's
  // (TextInput::pair_input_name) with `pairs`, one per text.
  Status tokenize(std::span<const std::string> texts, const Parameters& parameters,
                  std::vector<std::int32_t>& ids, std::vector<std::int64_t>& lengths,
                  std::span<const std::string> pairs = {}) const;

 private:
  Status preprocess(InferRequest& request, BatchTicket& ticket, SubmitOptions& options);
  Status tokenize_pairs(std::span<const std::string> texts, std::span<const std::string> pairs,
                        bool truncate, std::vector<std::int32_t>& ids,
                        std::vector<std::int64_t>& lengths) const;
  // The request's exact cache key (its inputs as the model gets them, its parameters and the
  // outputs asked for); false when it has none (an input kind the cache does not key).
  bool cache_key(const InferRequest& request, BatchTicket& ticket, std::string& scope,
                 std::string& text) const;

  std::shared_ptr<Model> model_;
  std::optional<TextInput> text_;
  ModelMetadata metadata_;
  ModelMetrics metrics_;
  DynamicBatcher batcher_;
  std::atomic<ModelState> state_{ModelState::ready};
  CacheStage* cache_ = nullptr;
};

// The batching fields of a [models.NAME] section.
BatchPolicy batch_policy(const ModelConfig& config);

// Reads the OIP parameters "priority" (int) and "timeout" (µs, int) into `options`.
Status submit_options(const Parameters& parameters, SubmitOptions& options);

// The InputSink of one request to an endpoint: reserves the request's rows in the batcher.
class BatchInputSink final : public InputSink {
 public:
  BatchInputSink(DynamicBatcher& batcher, BatchTicket& ticket)
      : batcher_(batcher), ticket_(ticket) {}
  Status allocate(std::span<const Shape> shapes, const Parameters& parameters,
                  std::span<std::span<std::byte>> destinations) override;
  const SubmitOptions& options() const noexcept { return options_; }

 private:
  DynamicBatcher& batcher_;
  BatchTicket& ticket_;
  SubmitOptions options_;
};

}  // namespace coinfer
