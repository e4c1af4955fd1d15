#include "coinfer/serving/endpoint.hpp"

namespace coinfer {

std::string_view to_string(ModelState state) noexcept {
  switch (state) {
    case ModelState::loading:
      return "LOADING";
    case ModelState::ready:
      return "READY";
    case ModelState::unavailable:
      return "UNAVAILABLE";
  }
  return "UNAVAILABLE";
}

Endpoint::Endpoint(std::shared_ptr<Model> model, boost::asio::any_io_executor io,
                   Executor& executor, BatchPolicy policy)
    : model_(std::move(model)), batcher_(std::move(io), executor, *model_, std::move(policy), &metrics_) {}

BatchPolicy batch_policy(const ModelConfig& config) {
  BatchPolicy policy;
  policy.max_batch_size = config.max_batch_size;
  policy.max_queue_delay = std::chrono::microseconds(config.max_queue_delay_us);
  policy.preferred_batch_sizes = config.preferred_batch_sizes;
  policy.max_queue_size = config.max_queue_size;
  policy.default_timeout = std::chrono::microseconds(config.default_timeout_us);
  policy.priority_levels = config.priority_levels;
  policy.default_priority = config.default_priority;
  return policy;
}

Status submit_options(const Parameters& parameters, SubmitOptions& options) {
  for (const auto& [name, value] : parameters) {
    if (name != "priority" && name != "timeout") continue;
    const auto* number = std::get_if<std::int64_t>(&value);
    if (!number || *number < 0) {
      return Status::invalid("parameters." + name + ": expected a non-negative integer");
    }
    if (name == "priority") {
      options.priority = *number > 1'000'000 ? 1'000'000 : static_cast<int>(*number);
    } else {
      options.timeout = std::chrono::microseconds(*number);
    }
  }
  return {};
}

Status BatchInputSink::allocate(std::span<const Shape> shapes, const Parameters& parameters,
                                std::span<std::span<std::byte>> destinations) {
  if (auto status = submit_options(parameters, options_); !status.ok()) return status;
  if (auto status = batcher_.reserve(shapes, options_, ticket_); !status.ok()) return status;
  for (std::size_t i = 0; i < destinations.size(); ++i) destinations[i] = ticket_.input(i);
  return {};
}

}  // namespace coinfer
