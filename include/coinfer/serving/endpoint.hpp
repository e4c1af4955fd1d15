#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <memory>

#include "coinfer/batching/dynamic_batcher.hpp"
#include "coinfer/core/config.hpp"
#include "coinfer/core/metrics.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/serving/input_sink.hpp"

namespace coinfer {

enum class ModelState { loading, ready, unavailable };
std::string_view to_string(ModelState state) noexcept;

// A served model: the model, its batcher (which runs it on an executor) and its metrics.
class Endpoint {
 public:
  Endpoint(std::shared_ptr<Model> model, boost::asio::any_io_executor io, Executor& executor,
           BatchPolicy policy);

  const ModelMetadata& metadata() const noexcept { return model_->metadata(); }
  Model& model() noexcept { return *model_; }
  DynamicBatcher& batcher() noexcept { return batcher_; }
  ModelMetrics& metrics() noexcept { return metrics_; }
  const ModelMetrics& metrics() const noexcept { return metrics_; }
  ModelState state() const noexcept { return state_; }
  void set_state(ModelState state) noexcept { state_ = state; }

 private:
  std::shared_ptr<Model> model_;
  ModelMetrics metrics_;
  DynamicBatcher batcher_;
  std::atomic<ModelState> state_{ModelState::ready};
};

// The batching fields of a [models.NAME] section.
BatchPolicy batch_policy(const ModelConfig& config);

// Reads the OIP parameters "priority" (int) and "timeout" (µs, int) into `options`.
Status submit_options(const Parameters& parameters, SubmitOptions& options);

// The InputSink of one request to an endpoint: reserves the request's rows in the batcher.
class BatchInputSink final : public InputSink {
 public:
  BatchInputSink(DynamicBatcher& batcher, BatchTicket& ticket) : batcher_(batcher), ticket_(ticket) {}
  Status allocate(std::span<const Shape> shapes, const Parameters& parameters,
                  std::span<std::span<std::byte>> destinations) override;
  const SubmitOptions& options() const noexcept { return options_; }

 private:
  DynamicBatcher& batcher_;
  BatchTicket& ticket_;
  SubmitOptions options_;
};

}  // namespace coinfer
