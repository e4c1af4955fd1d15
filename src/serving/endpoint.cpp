#include "coinfer/serving/endpoint.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cassert>
#include <chrono>
#include <cstring>

#include "coinfer/core/byte_io.hpp"
#include "coinfer/serving/cache_stage.hpp"

namespace coinfer {
namespace asio = boost::asio;

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

namespace {

// A text endpoint's metadata: the model's, with its token ids input replaced by text.
ModelMetadata wire_metadata(const ModelMetadata& model, const std::optional<TextInput>& text) {
  ModelMetadata wire = model;
  if (text) wire.inputs = {{text->input_name, DType::Bytes, {-1}}};
  if (text && !text->pair_input_name.empty()) {
    wire.inputs.push_back({text->pair_input_name, DType::Bytes, {-1}});
  }
  return wire;
}

// A request's outputs as the cache keeps them: u32 count, then per tensor u8 dtype, u32 rank,
// rank x i64 dims, u64 size, bytes. Tensors of strings are not kept (false).
bool encode_outputs(const std::vector<Tensor>& outputs, std::string& out) {
  append_raw<std::uint32_t>(out, static_cast<std::uint32_t>(outputs.size()));
  for (const Tensor& t : outputs) {
    if (t.dtype() == DType::Bytes) return false;
    append_raw<std::uint8_t>(out, static_cast<std::uint8_t>(t.dtype()));
    append_raw<std::uint32_t>(out, static_cast<std::uint32_t>(t.shape().size()));
    for (std::int64_t d : t.shape()) append_raw<std::int64_t>(out, d);
    append_raw<std::uint64_t>(out, t.bytes().size());
    out.append(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size());
  }
  return true;
}

bool decode_outputs(std::string_view payload, std::vector<Tensor>& out) {
  ByteReader in(payload);
  std::uint32_t count = 0;
  if (!in.get(count)) return false;
  out.clear();
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint8_t dtype = 0;
    std::uint32_t rank = 0;
    if (!in.get(dtype) || !in.get(rank) || rank > 8) return false;
    Shape shape(rank);
    for (auto& d : shape) {
      if (!in.get(d) || d < 0) return false;
    }
    std::uint64_t size = 0;
    std::string_view data;
    if (!in.get(size) || !in.get_bytes(size, data)) return false;
    Tensor& t = out.emplace_back();
    t.resize(static_cast<DType>(dtype), shape);
    if (t.bytes().size() != size) return false;
    std::memcpy(t.bytes().data(), data.data(), size);
  }
  return in.left() == 0;
}

void append_value(std::string& out, const ParameterValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out += std::to_string(v.size());
          out += ':';
          out += v;
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "true" : "false";
        } else {
          out += std::to_string(v);
        }
      },
      value);
}

}  // namespace

bool Endpoint::cache_key(const InferRequest& request, BatchTicket& ticket, std::string& scope,
                         std::string& text) const {
  scope += "infer\x1e";
  scope += metadata_.name;
  scope += '\x1e';
  scope += metadata_.version;
  scope += "\x1eoutputs=";
  for (std::size_t i : request.requested_outputs) scope += std::to_string(i) + ",";
  scope += "\x1eparameters=";
  // Every parameter but those that only schedule (priority, timeout) or shape the encoding.
  for (const auto& [name, value] : request.parameters) {
    if (name == "priority" || name == "timeout" || name == "binary_data_output") continue;
    scope += std::to_string(name.size());
    scope += ':';
    scope += name;
    scope += '=';
    append_value(scope, value);
    scope += ';';
  }
  // The inputs: a dense model's rows as the model receives them (rows x the model's row
  // shape), or a text endpoint's texts (or token id rows), each with its length.
  append_raw<std::int32_t>(text, ticket.rows());
  if (!text_) {
    for (std::size_t i = 0; i < metadata_.inputs.size(); ++i) {
      const std::span<std::byte> bytes = ticket.input(i);
      append_raw<std::uint64_t>(text, bytes.size());
      text.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
  } else if (!request.token_ids.empty()) {
    for (const auto& row : request.token_ids) {
      append_raw<std::uint64_t>(text, row.size());
      text.append(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(std::int32_t));
    }
  } else {
    for (const Tensor& input : request.inputs) {  // the texts (and a cross-encoder's pairs)
      for (const std::string& row : input.strings()) {
        append_raw<std::uint64_t>(text, row.size());
        text += row;
      }
    }
  }
  return true;
}

Endpoint::Endpoint(std::shared_ptr<Model> model, asio::any_io_executor io, Executor& executor,
                   BatchPolicy policy, std::optional<TextInput> text)
    : model_(std::move(model)),
      text_(std::move(text)),
      metadata_(wire_metadata(model_->metadata(), text_)),
      batcher_(std::move(io), executor, *model_, std::move(policy), &metrics_) {
  // A text endpoint's model takes exactly one input: ragged INT32 token ids.
  assert(!text_ || (text_->tokenizer && model_->metadata().inputs.size() == 1 &&
                    model_->metadata().inputs[0].ragged &&
                    model_->metadata().inputs[0].dtype == DType::Int32));
}

asio::awaitable<Status> Endpoint::infer(RequestDecoder& decoder, InferRequest& request,
                                        BatchTicket& ticket) {
  const auto started = std::chrono::steady_clock::now();
  Status status;
  SubmitOptions options;
  if (state() != ModelState::ready) {
    status = Status(Errc::unavailable, "model '" + metadata_.name + "' is not ready");
  } else if (text_) {
    status = decoder.decode(metadata_, request, nullptr);
    const auto decoded = std::chrono::steady_clock::now();
    request.timing.decode = decoded - started;
    if (status.ok()) {
      status = preprocess(request, ticket, options);
      request.timing.preprocess = std::chrono::steady_clock::now() - decoded;
    }
  } else {
    // Elements go from the wire straight into the request's rows of a staging buffer; if
    // decoding fails after the rows were reserved, the ticket gives them back.
    BatchInputSink sink(batcher_, ticket);
    status = decoder.decode(metadata_, request, &sink);
    options = sink.options();
    request.timing.decode = std::chrono::steady_clock::now() - started;
  }
  // The cache stage: the request's rows are in the ticket; a hit answers without the batch
  // (the ticket gives the rows back).
  const auto cache_started = std::chrono::steady_clock::now();
  std::string scope, key_text;
  const bool cache =
      status.ok() && cache_ && request.cache && cache_key(request, ticket, scope, key_text);
  const cache::CacheKey key{cache ? std::string_view(request.cache->ns) : std::string_view(), scope,
                            key_text};
  CacheStage::Lookup found;
  if (cache) {
    request.cache_outcome.looked = true;
    const bool hit = cache_->lookup_exact(key, *request.cache, found) &&
                     decode_outputs(*found.entry.payload, ticket.outputs());
    request.timing.cache = std::chrono::steady_clock::now() - cache_started;
    if (hit) {
      request.cache_outcome.hit = true;
      request.cache_outcome.entry = found.entry.id;
      metrics_.request_success.add();
      metrics_.request_duration.observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      co_return status;
    }
  }
  if (status.ok()) {
    status = co_await batcher_.async_submit(ticket, options, asio::use_awaitable);
    if (status.ok()) {
      request.timing.queue = ticket.queue_time();
      request.timing.compute = ticket.compute_time();
    }
  }
  if (!status.ok()) {
    metrics_.request_failure.add();
    metrics_.failure_ns.add(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started)
            .count()));
    co_return status;
  }
  if (cache && request.cache->store) {
    std::string payload;
    if (encode_outputs(ticket.outputs(), payload)) {
      request.cache_outcome.entry = cache_->store(key, *request.cache, found, std::move(payload));
    }
  }
  metrics_.request_success.add();
  metrics_.request_duration.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  co_return status;
}

Status Endpoint::tokenize(std::span<const std::string> texts, const Parameters& parameters,
                          std::vector<std::int32_t>& ids, std::vector<std::int64_t>& lengths,
                          std::span<const std::string> pairs) const {
  assert(text_);
  bool truncate = text_->truncate;
  if (const ParameterValue* value = find_parameter(parameters, "truncate")) {
    const bool* flag = std::get_if<bool>(value);
    if (!flag) return Status::invalid("parameters.truncate: expected a boolean");
    truncate = *flag;
  }
  const auto max_tokens = static_cast<std::size_t>(text_->max_input_tokens);
  if (!pairs.empty()) return tokenize_pairs(texts, pairs, truncate, ids, lengths);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string& text = texts[i];
    const std::string where = text_->input_name + "[" + std::to_string(i) + "]";
    if (text.empty()) return Status::invalid(where + ": empty text");
    const std::size_t before = ids.size();
    // Without truncation one id past the limit is enough to refuse.
    Status status = text_->tokenizer->encode(text, ids, truncate ? max_tokens : max_tokens + 1);
    if (!status.ok()) return Status::invalid(where + ": " + status.message());
    const std::size_t count = ids.size() - before;
    if (count > max_tokens) {
      std::vector<std::int32_t> all;
      (void)text_->tokenizer->encode(text, all, Tokenizer::no_truncation);
      return Status::invalid(where + ": " + std::to_string(all.size()) +
                             " tokens exceed max_input_tokens " + std::to_string(max_tokens) +
                             " (send \"truncate\": true to cut it)");
    }
    lengths.push_back(static_cast<std::int64_t>(count));
  }
  return {};
}

Status Endpoint::tokenize_pairs(std::span<const std::string> texts,
                                std::span<const std::string> pairs, bool truncate,
                                std::vector<std::int32_t>& ids,
                                std::vector<std::int64_t>& lengths) const {
  const auto max_tokens = static_cast<std::size_t>(text_->max_input_tokens);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string where = text_->input_name + "[" + std::to_string(i) + "]";
    const std::string pair_where = text_->pair_input_name + "[" + std::to_string(i) + "]";
    if (texts[i].empty()) return Status::invalid(where + ": empty text");
    if (pairs[i].empty()) return Status::invalid(pair_where + ": empty text");
    const std::size_t before = ids.size();
    std::size_t needed = 0;
    const Status status =
        encode_pair(*text_->tokenizer, texts[i], pairs[i],
                    truncate ? max_tokens : Tokenizer::no_truncation, ids, needed);
    if (!status.ok()) return Status::invalid(where + " and " + pair_where + ": " + status.message());
    if (ids.size() == before || needed > max_tokens) {
      if (!truncate || ids.size() == before) {
        ids.resize(before);
        return Status::invalid(where + " and " + pair_where + ": " + std::to_string(needed) +
                               " tokens exceed max_input_tokens " + std::to_string(max_tokens) +
                               (truncate ? "" : " (send \"truncate\": true to cut them)"));
      }
    }
    lengths.push_back(static_cast<std::int64_t>(ids.size() - before));
  }
  return {};
}

// Tokenizes the request's text (or takes its token ids) into its rows of the batch.
Status Endpoint::preprocess(InferRequest& request, BatchTicket& ticket, SubmitOptions& options) {
  if (auto status = submit_options(request.parameters, options); !status.ok()) return status;
  thread_local std::vector<std::int32_t> ids;
  thread_local std::vector<std::int64_t> lengths;
  ids.clear();
  lengths.clear();
  if (!request.token_ids.empty()) {
    const auto vocab = static_cast<std::int64_t>(text_->tokenizer->vocab_size());
    for (std::size_t i = 0; i < request.token_ids.size(); ++i) {
      const auto& row = request.token_ids[i];
      const std::string where = text_->input_name + "[" + std::to_string(i) + "]";
      if (row.empty()) return Status::invalid(where + ": no token ids");
      if (static_cast<std::int64_t>(row.size()) > text_->max_input_tokens) {
        return Status::invalid(where + ": " + std::to_string(row.size()) +
                               " tokens exceed max_input_tokens " +
                               std::to_string(text_->max_input_tokens));
      }
      for (std::int32_t id : row) {
        if (id < 0 || id >= vocab) {
          return Status::invalid(where + ": token id " + std::to_string(id) +
                                 " is outside the vocabulary (0.." + std::to_string(vocab - 1) +
                                 ")");
        }
      }
      ids.insert(ids.end(), row.begin(), row.end());
      lengths.push_back(static_cast<std::int64_t>(row.size()));
    }
  } else {
    const Tensor& text = request.inputs.at(0);
    if (text.strings().empty()) return Status::invalid(text_->input_name + ": no texts");
    const std::span<const std::string> second =
        text_->pair_input_name.empty() || request.inputs.size() < 2
            ? std::span<const std::string>()
            : std::span<const std::string>(request.inputs[1].strings());
    if (!text_->pair_input_name.empty() && second.size() != text.strings().size()) {
      return Status::invalid(text_->pair_input_name + ": " + std::to_string(second.size()) +
                             " texts for the " + std::to_string(text.strings().size()) +
                             " of " + text_->input_name + " (one pair per row)");
    }
    if (auto status = tokenize(text.strings(), request.parameters, ids, lengths, second);
        !status.ok()) {
      return status;
    }
  }
  const Shape shape{static_cast<std::int64_t>(lengths.size()), -1};
  if (auto status = batcher_.reserve({&shape, 1}, options, ticket, lengths, &request.parameters);
      !status.ok()) {
    return status;
  }
  std::memcpy(ticket.input(0).data(), ids.data(), ids.size() * sizeof(std::int32_t));
  request.token_count = static_cast<std::int64_t>(ids.size());
  return {};
}

BatchPolicy batch_policy(const ModelConfig& config) {
  BatchPolicy policy;
  policy.max_batch_size = config.max_batch_size;
  policy.max_queue_delay = std::chrono::microseconds(config.max_queue_delay_us);
  policy.preferred_batch_sizes = config.preferred_batch_sizes;
  policy.max_queue_size = config.max_queue_size;
  policy.max_batch_bytes = config.max_batch_bytes;
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
  if (auto status = batcher_.reserve(shapes, options_, ticket_, {}, &parameters); !status.ok()) {
    return status;
  }
  for (std::size_t i = 0; i < destinations.size(); ++i) destinations[i] = ticket_.input(i);
  return {};
}

}  // namespace coinfer
