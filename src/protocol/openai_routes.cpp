#include "coinfer/protocol/openai_routes.hpp"

#include <simdjson.h>

#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "coinfer/core/json_writer.hpp"
#include "coinfer/protocol/server_timing.hpp"
#include "openai_errors.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/tokenizers/bpe.hpp"

namespace coinfer {
namespace {

namespace asio = boost::asio;
namespace ondemand = simdjson::ondemand;
using net::HttpRequest;
using net::HttpResponse;
using net::Method;

using openai::fail;

// The body as a JSON object, parsed in place (the server reserves simdjson's padding).
Status parse_object(ondemand::parser& parser, const HttpRequest& req, ondemand::document& doc,
                    ondemand::object& object) {
  if (req.body_capacity < req.body.size() + simdjson::SIMDJSON_PADDING ||
      parser.iterate(req.body.data(), req.body.size(), req.body_capacity).get(doc) ||
      doc.get_object().get(object)) {
    return Status::invalid("body must be a JSON object");
  }
  return {};
}

// A text endpoint named by the request's "model".
Status find_text_model(const ModelRepository& repo, std::string_view model, const Tenant* tenant,
                       Endpoint*& out) {
  if (model.empty()) return Status::invalid("model: missing (the name of a served model)");
  if (auto status = repo.find(model, "", tenant, out); !status) return status;
  if (!out->text()) {
    return Status::invalid("model: '" + std::string(model) +
                           "' does not take text (it is not an embedding or language model)");
  }
  if (!out->text()->pair_input_name.empty()) {
    return Status::invalid("model: '" + std::string(model) +
                           "' is a cross-encoder: it scores text pairs (/v2/models/" +
                           std::string(model) + "/infer with inputs " + out->text()->input_name +
                           " and " + out->text()->pair_input_name + ")");
  }
  return {};
}

// Token ids: a JSON array of integers within int32.
Status read_ids(ondemand::array array, std::string_view where, std::vector<std::int32_t>& ids) {
  for (auto element : array) {
    std::int64_t id = 0;
    if (element.get_int64().get(id) || id < INT32_MIN || id > INT32_MAX) {
      return Status::invalid(std::string(where) + ": expected token ids (integers)");
    }
    ids.push_back(static_cast<std::int32_t>(id));
  }
  return {};
}

// An embeddings request, read whole before the model is known (its name may come last).
struct EmbeddingsRequest {
  std::string model;
  std::vector<std::string> texts;
  std::vector<std::vector<std::int32_t>> token_ids;
  bool base64 = false;
  Parameters parameters;
};

// "input": a string, an array of strings, an array of token ids, or an array of such arrays.
Status read_input(ondemand::value value, EmbeddingsRequest& out) {
  ondemand::json_type type;
  if (value.type().get(type)) return Status::invalid("input: invalid JSON");
  if (type == ondemand::json_type::string) {
    std::string_view text;
    if (value.get_string().get(text)) return Status::invalid("input: invalid string");
    out.texts.emplace_back(text);
    return {};
  }
  ondemand::array array;
  if (type != ondemand::json_type::array || value.get_array().get(array)) {
    return Status::invalid("input: expected a string, an array of strings or token-id arrays");
  }
  // The first element decides: strings, one row of ids, or rows of ids; the rest must agree.
  enum class Form { unknown, texts, one_row, rows } form = Form::unknown;
  std::size_t index = 0;
  for (auto element : array) {
    const std::string where = "input[" + std::to_string(index++) + "]";
    ondemand::json_type element_type;
    if (element.type().get(element_type)) return Status::invalid(where + ": invalid JSON");
    const Form this_form = element_type == ondemand::json_type::string   ? Form::texts
                           : element_type == ondemand::json_type::number ? Form::one_row
                           : element_type == ondemand::json_type::array  ? Form::rows
                                                                         : Form::unknown;
    if (this_form == Form::unknown || (form != Form::unknown && this_form != form)) {
      return Status::invalid(where +
                             ": inputs must all be strings, all token ids, or all "
                             "token-id arrays");
    }
    form = this_form;
    if (form == Form::texts) {
      std::string_view text;
      if (element.get_string().get(text)) return Status::invalid(where + ": invalid string");
      out.texts.emplace_back(text);
    } else if (form == Form::one_row) {
      std::int64_t id = 0;
      if (element.get_int64().get(id) || id < INT32_MIN || id > INT32_MAX) {
        return Status::invalid(where + ": expected a token id (an integer)");
      }
      if (out.token_ids.empty()) out.token_ids.emplace_back();
      out.token_ids.back().push_back(static_cast<std::int32_t>(id));
    } else {
      ondemand::array ids;
      if (element.get_array().get(ids)) return Status::invalid(where + ": invalid array");
      out.token_ids.emplace_back();
      if (auto status = read_ids(ids, where, out.token_ids.back()); !status) return status;
    }
  }
  if (out.texts.empty() && out.token_ids.empty()) return Status::invalid("input: empty");
  return {};
}

Status read_embeddings_request(const HttpRequest& req, EmbeddingsRequest& out) {
  thread_local ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  if (auto status = parse_object(parser, req, doc, object); !status) return status;
  bool has_input = false;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return Status::invalid("invalid JSON key");
    ondemand::value value;
    if (field.value().get(value)) return Status::invalid(std::string(key) + ": invalid JSON");
    if (key == "input") {
      has_input = true;
      if (auto status = read_input(value, out); !status) return status;
    } else if (key == "model") {
      std::string_view model;
      if (value.get_string().get(model)) return Status::invalid("model: expected a string");
      out.model = model;
    } else if (key == "encoding_format") {
      std::string_view format;
      if (value.get_string().get(format) || (format != "float" && format != "base64")) {
        return Status::invalid("encoding_format: expected \"float\" or \"base64\"");
      }
      out.base64 = format == "base64";
    } else if (key == "user") {
      std::string_view user;  // an end-user id for abuse monitoring: accepted, not used
      if (value.get_string().get(user)) return Status::invalid("user: expected a string");
    } else if (key == "truncate") {
      bool truncate = false;
      if (value.get_bool().get(truncate)) return Status::invalid("truncate: expected a boolean");
      out.parameters.emplace_back("truncate", truncate);
    } else {
      return Status::invalid(std::string(key) + ": not supported");
    }
  }
  if (!has_input) return Status::invalid("input: missing");
  return {};
}

// The embeddings request handed to the pipeline: texts or token ids, already read.
class EmbeddingsDecoder final : public RequestDecoder {
 public:
  explicit EmbeddingsDecoder(EmbeddingsRequest& parsed) : parsed_(parsed) {}
  Status decode(const ModelMetadata&, InferRequest& request, InputSink*) override {
    request.parameters = std::move(parsed_.parameters);
    if (!parsed_.token_ids.empty()) {
      request.token_ids = std::move(parsed_.token_ids);
      return {};
    }
    Tensor& text = request.inputs.emplace_back();
    text.resize(DType::Bytes, {static_cast<std::int64_t>(parsed_.texts.size())});
    text.strings() = std::move(parsed_.texts);
    return {};
  }

 private:
  EmbeddingsRequest& parsed_;
};

void append_base64(std::string& out, std::span<const std::byte> bytes) {
  static constexpr char digits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto v = (std::to_integer<std::uint32_t>(bytes[i]) << 16) |
                   (std::to_integer<std::uint32_t>(bytes[i + 1]) << 8) |
                   std::to_integer<std::uint32_t>(bytes[i + 2]);
    out += digits[v >> 18];
    out += digits[(v >> 12) & 63];
    out += digits[(v >> 6) & 63];
    out += digits[v & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    std::uint32_t v = std::to_integer<std::uint32_t>(bytes[i]) << 16;
    if (rest == 2) v |= std::to_integer<std::uint32_t>(bytes[i + 1]) << 8;
    out += digits[v >> 18];
    out += digits[(v >> 12) & 63];
    out += rest == 2 ? digits[(v >> 6) & 63] : '=';
    out += '=';
  }
}

asio::awaitable<void> embeddings(const ModelRepository& repo, const HttpRequest& req,
                                 HttpResponse& res) {
  EmbeddingsRequest parsed;
  Endpoint* endpoint = nullptr;
  Status status = read_embeddings_request(req, parsed);
  if (status.ok()) status = find_text_model(repo, parsed.model, req.tenant, endpoint);
  if (!status.ok()) {
    fail(res, status);
    co_return;
  }
  const bool base64 = parsed.base64;
  EmbeddingsDecoder decoder(parsed);
  InferRequest request;
  BatchTicket ticket;
  status = co_await endpoint->infer(decoder, request, ticket);
  if (!status.ok()) {
    fail(res, status);
    co_return;
  }
  const auto encode_started = std::chrono::steady_clock::now();
  // The model's first output: FP32 [rows, dimension].
  const Tensor& vectors = ticket.outputs().at(0);
  const auto rows = vectors.shape()[0];
  const auto dimension = static_cast<std::size_t>(vectors.shape()[1]);
  const auto values = vectors.values<float>();
  std::string& out = res.body;
  out.reserve(static_cast<std::size_t>(rows) * dimension * (base64 ? 6 : 12) + 256);
  out += R"({"object":"list","data":[)";
  for (std::int64_t r = 0; r < rows; ++r) {
    if (r > 0) out += ',';
    out += R"({"object":"embedding","index":)";
    json_append_number(out, r);
    out += R"(,"embedding":)";
    const auto row = values.subspan(static_cast<std::size_t>(r) * dimension, dimension);
    if (base64) {
      out += '"';
      append_base64(out, std::as_bytes(row));  // little-endian FP32, as OpenAI sends
      out += '"';
    } else {
      out += '[';
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i > 0) out += ',';
        json_append_number(out, row[i]);
      }
      out += ']';
    }
    out += '}';
  }
  out += R"(],"model":)";
  json_append_string(out, endpoint->metadata().name);
  out += R"(,"usage":{"prompt_tokens":)";
  json_append_number(out, request.token_count);
  out += R"(,"total_tokens":)";
  json_append_number(out, request.token_count);
  out += "}}";
  add_server_timing(request.timing, std::chrono::steady_clock::now() - encode_started, res.timing);
}

void models(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  res.body += R"({"object":"list","data":[)";
  bool first = true;
  for (const auto& endpoint : repo.endpoints()) {
    if (!ModelRepository::visible(*endpoint, req.tenant)) continue;
    if (!first) res.body += ',';
    first = false;
    res.body += R"({"id":)";
    json_append_string(res.body, endpoint->metadata().name);
    res.body += R"(,"object":"model","created":0,"owned_by":"coinfer")";
    if (const TextInput* text = endpoint->text()) {
      res.body += R"(,"max_model_len":)";
      json_append_number(res.body, text->max_input_tokens);
    }
    res.body += '}';
  }
  for (const auto& g : repo.language_models()) {
    if (req.tenant && !req.tenant->may_use(g->name())) continue;
    if (!first) res.body += ',';
    first = false;
    res.body += R"({"id":)";
    json_append_string(res.body, g->name());
    res.body += R"(,"object":"model","created":0,"owned_by":"coinfer","max_model_len":)";
    json_append_number(res.body, g->generator().max_model_len());
    res.body += '}';
  }
  res.body += "]}";
}

// The tokenizer and length limit of a text model: an embedding endpoint's or a language
// model's.
Status find_tokenizer(const ModelRepository& repo, std::string_view model, const Tenant* tenant,
                      const Tokenizer*& tokenizer, std::int64_t& max_model_len, bool& specials_wrap) {
  GenerationEndpoint* generation = nullptr;
  if (!model.empty() && repo.find_generation(model, tenant, generation).ok()) {
    tokenizer = &generation->tokenizer();
    max_model_len = generation->generator().max_model_len();
    specials_wrap = false;  // BPE adds no [CLS] ... [SEP] around a text
    return {};
  }
  Endpoint* endpoint = nullptr;
  if (auto status = find_text_model(repo, model, tenant, endpoint); !status) return status;
  tokenizer = endpoint->text()->tokenizer.get();
  max_model_len = endpoint->text()->max_input_tokens;
  specials_wrap = true;
  return {};
}

// vLLM's POST /tokenize: {"model", "prompt", "add_special_tokens"?: true}.
void tokenize(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  thread_local ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  std::string model, prompt;
  bool has_prompt = false;
  bool special = true;
  // A body that did not parse leaves `object` with no document behind it: iterating it
  // dereferences null (found by fuzz/openai_request_fuzzer).
  if (Status parsed = parse_object(parser, req, doc, object); !parsed) return fail(res, parsed);
  Status status;
  for (auto field : object) {
    if (!status.ok()) break;
    std::string_view key, text;
    ondemand::value value;
    if (field.unescaped_key().get(key) || field.value().get(value)) {
      status = Status::invalid("invalid JSON");
    } else if (key == "model") {
      if (value.get_string().get(text)) status = Status::invalid("model: expected a string");
      model = text;
    } else if (key == "prompt") {
      if (value.get_string().get(text)) status = Status::invalid("prompt: expected a string");
      prompt = text;
      has_prompt = true;
    } else if (key == "add_special_tokens") {
      if (value.get_bool().get(special)) {
        status = Status::invalid("add_special_tokens: expected a boolean");
      }
    } else {
      status = Status::invalid(std::string(key) + ": not supported");
    }
  }
  if (status.ok() && !has_prompt) status = Status::invalid("prompt: missing");
  const Tokenizer* tokenizer = nullptr;
  std::int64_t max_model_len = 0;
  bool specials_wrap = true;
  if (status.ok()) status = find_tokenizer(repo, model, req.tenant, tokenizer, max_model_len, specials_wrap);
  std::vector<std::int32_t> ids;
  if (status.ok()) {
    status = tokenizer->encode(prompt, ids, Tokenizer::no_truncation);
    if (!status.ok()) status = Status::invalid("prompt: " + status.message());
  }
  if (!status.ok()) return fail(res, status);
  std::span<const std::int32_t> tokens = ids;
  if (!special && specials_wrap && tokens.size() >= 2) tokens = tokens.subspan(1, tokens.size() - 2);
  res.body += R"({"count":)";
  json_append_number(res.body, tokens.size());
  res.body += R"(,"max_model_len":)";
  json_append_number(res.body, max_model_len);
  res.body += R"(,"tokens":[)";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) res.body += ',';
    json_append_number(res.body, tokens[i]);
  }
  res.body += "]}";
}

// vLLM's POST /detokenize: {"model", "tokens": [ids]} -> {"prompt"}.
void detokenize(const ModelRepository& repo, const HttpRequest& req, HttpResponse& res) {
  thread_local ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  std::string model;
  std::vector<std::int32_t> ids;
  bool has_tokens = false;
  // A body that did not parse leaves `object` with no document behind it: iterating it
  // dereferences null (found by fuzz/openai_request_fuzzer).
  if (Status parsed = parse_object(parser, req, doc, object); !parsed) return fail(res, parsed);
  Status status;
  for (auto field : object) {
    if (!status.ok()) break;
    std::string_view key, text;
    ondemand::value value;
    ondemand::array array;
    if (field.unescaped_key().get(key) || field.value().get(value)) {
      status = Status::invalid("invalid JSON");
    } else if (key == "model") {
      if (value.get_string().get(text)) status = Status::invalid("model: expected a string");
      model = text;
    } else if (key == "tokens") {
      has_tokens = true;
      status = value.get_array().get(array) ? Status::invalid("tokens: expected an array")
                                            : read_ids(array, "tokens", ids);
    } else {
      status = Status::invalid(std::string(key) + ": not supported");
    }
  }
  if (status.ok() && !has_tokens) status = Status::invalid("tokens: missing");
  const Tokenizer* tokenizer = nullptr;
  std::int64_t max_model_len = 0;
  bool specials_wrap = true;
  if (status.ok()) status = find_tokenizer(repo, model, req.tenant, tokenizer, max_model_len, specials_wrap);
  std::string prompt;
  if (status.ok()) {
    status = tokenizer->decode(ids, prompt, /*skip_special_tokens=*/true);
    if (!status.ok()) status = Status::invalid("tokens: " + status.message());
  }
  if (!status.ok()) return fail(res, status);
  res.body += R"({"prompt":)";
  json_append_string(res.body, prompt);
  res.body += '}';
}

}  // namespace

void add_openai_routes(net::Router& router, const ModelRepository& repository) {
  const ModelRepository* repo = &repository;
  router.add(Method::post, "/v1/embeddings",
             net::AsyncHandler([repo](const HttpRequest& req, HttpResponse& res) {
               return embeddings(*repo, req, res);
             }));
  router.add(Method::get, "/v1/models",
             [repo](const HttpRequest& req, HttpResponse& res) { models(*repo, req, res); });
  router.add(Method::post, "/tokenize",
             [repo](const HttpRequest& req, HttpResponse& res) { tokenize(*repo, req, res); });
  router.add(Method::post, "/detokenize",
             [repo](const HttpRequest& req, HttpResponse& res) { detokenize(*repo, req, res); });
  add_openai_completion_routes(router, repository);
}

}  // namespace coinfer
