// OpenAI's /v1/completions and /v1/chat/completions over the generation engine, with
// Server-Sent Events streaming.
#include <simdjson.h>

#include <algorithm>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "cache_fields.hpp"
#include "coinfer/core/json_writer.hpp"
#include "coinfer/generation/generator.hpp"
#include "coinfer/protocol/openai_routes.hpp"
#include "coinfer/protocol/openai_tools.hpp"
#include "coinfer/serving/cache_stage.hpp"
#include "coinfer/serving/generation_endpoint.hpp"
#include "coinfer/serving/model_repository.hpp"
#include "coinfer/tokenizers/bpe.hpp"
#include "generation_fields.hpp"
#include "openai_errors.hpp"

namespace coinfer {
namespace {

namespace asio = boost::asio;
namespace ondemand = simdjson::ondemand;
using generation::FinishReason;
using generation::GenerationUpdate;
using net::HttpRequest;
using net::HttpResponse;

using openai::fail;
constexpr auto error_json = openai::append_error;
using generation_fields::append_usage;
using generation_fields::finish_status;
using generation_fields::read_bool;
using generation_fields::read_number;
using generation_fields::read_string;

struct CompletionRequest {
  bool chat = false;
  std::string model;
  bool has_prompt = false;
  GenerationCall call;  // the prompt (text, token ids or messages) and the engine's fields
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
  int top_logprobs = 0;
  openai_tools::Tools tools;  // chat
  int n = 1;        // choices
  int best_of = 0;  // candidates generated, the n likeliest returned; 0: n
  bool echo = false;  // completions: the text starts with the prompt
};

// Choices per request: each is a sequence in the engine.
constexpr int kMaxChoices = 16;

// "content": a string, or an array of {"type": "text", "text"} parts.
Status read_content(ondemand::value& value, const std::string& where, std::string& out) {
  ondemand::json_type type;
  if (value.type().get(type)) return Status::invalid(where + ": invalid JSON");
  if (type == ondemand::json_type::string) return read_string(value, where, out);
  if (type == ondemand::json_type::null) return {};
  ondemand::array parts;
  if (type != ondemand::json_type::array || value.get_array().get(parts)) {
    return Status::invalid(where + ": expected a string or an array of text parts");
  }
  for (auto part : parts) {
    ondemand::object object;
    if (part.get_object().get(object)) return Status::invalid(where + ": expected text parts");
    std::string kind, text;
    for (auto field : object) {
      std::string_view key;
      ondemand::value v;
      if (field.unescaped_key().get(key) || field.value().get(v)) return Status::invalid(where + ": invalid JSON");
      if (key == "type") {
        if (auto s = read_string(v, where + ".type", kind); !s.ok()) return s;
      } else if (key == "text") {
        if (auto s = read_string(v, where + ".text", text); !s.ok()) return s;
      } else {
        return Status::invalid(where + "." + std::string(key) + ": not supported (text parts only)");
      }
    }
    if (kind != "text") return Status::invalid(where + ": only parts of type \"text\" are supported");
    out += text;
  }
  return {};
}

// An assistant message's tool_calls: [{"id", "type": "function", "function": {"name", "arguments"}}].
Status read_history_calls(ondemand::value& value, const std::string& where,
                          std::vector<std::pair<std::string, std::string>>& out) {
  ondemand::array array;
  if (value.get_array().get(array)) return Status::invalid(where + ": expected an array");
  for (auto element : array) {
    ondemand::object call;
    if (element.get_object().get(call)) return Status::invalid(where + ": expected objects");
    std::string name, arguments, ignored;
    for (auto field : call) {
      std::string_view key;
      ondemand::value v;
      if (field.unescaped_key().get(key) || field.value().get(v)) return Status::invalid(where + ": invalid JSON");
      if (key == "id" || key == "type") {
        if (auto s = read_string(v, where + "." + std::string(key), ignored); !s.ok()) return s;
      } else if (key == "function") {
        ondemand::object function;
        if (v.get_object().get(function)) return Status::invalid(where + ".function: expected an object");
        for (auto f : function) {
          std::string_view k;
          ondemand::value fv;
          if (f.unescaped_key().get(k) || f.value().get(fv)) return Status::invalid(where + ".function: invalid JSON");
          if (k == "name") {
            if (auto s = read_string(fv, where + ".function.name", name); !s.ok()) return s;
          } else if (k == "arguments") {
            if (auto s = read_string(fv, where + ".function.arguments", arguments); !s.ok()) return s;
          } else {
            return Status::invalid(where + ".function." + std::string(k) + ": not supported");
          }
        }
      } else {
        return Status::invalid(where + "." + std::string(key) + ": not supported");
      }
    }
    if (name.empty()) return Status::invalid(where + ".function.name: missing");
    out.emplace_back(std::move(name), std::move(arguments));
  }
  return {};
}

Status read_messages(ondemand::value& value, std::vector<ChatMessage>& out) {
  ondemand::array array;
  if (value.get_array().get(array)) return Status::invalid("messages: expected an array");
  std::size_t index = 0;
  bool after_tool = false;  // the last message was a tool's result: the next one joins its turn
  for (auto element : array) {
    const std::string where = "messages[" + std::to_string(index++) + "]";
    ondemand::object object;
    if (element.get_object().get(object)) return Status::invalid(where + ": expected an object");
    ChatMessage message;
    bool has_role = false;
    std::vector<std::pair<std::string, std::string>> calls;
    for (auto field : object) {
      std::string_view key;
      ondemand::value v;
      if (field.unescaped_key().get(key) || field.value().get(v)) return Status::invalid(where + ": invalid JSON");
      if (key == "role") {
        if (auto s = read_string(v, where + ".role", message.role); !s.ok()) return s;
        has_role = true;
      } else if (key == "content") {
        if (auto s = read_content(v, where + ".content", message.content); !s.ok()) return s;
      } else if (key == "name" || key == "tool_call_id") {
        std::string ignored;
        if (auto s = read_string(v, where + "." + std::string(key), ignored); !s.ok()) return s;
      } else if (key == "tool_calls") {
        ondemand::json_type type;
        if (v.type().get(type)) return Status::invalid(where + ".tool_calls: invalid JSON");
        if (type == ondemand::json_type::null) continue;
        if (auto s = read_history_calls(v, where + ".tool_calls", calls); !s.ok()) return s;
      } else {
        return Status::invalid(where + "." + std::string(key) + ": not supported");
      }
    }
    if (!has_role) return Status::invalid(where + ".role: missing");
    if (message.role != "system" && message.role != "user" && message.role != "assistant" &&
        message.role != "developer" && message.role != "tool") {
      return Status::invalid(where + ".role: '" + message.role +
                             "' is not one of system, developer, user, assistant, tool");
    }
    if (!calls.empty() && message.role != "assistant") {
      return Status::invalid(where + ".tool_calls: only on assistant messages");
    }
    if (message.role == "developer") message.role = "system";
    if (!calls.empty()) {
      if (!message.content.empty()) message.content += '\n';
      message.content += openai_tools::render_calls(calls);
    }
    if (message.role == "tool") {
      // Tool results reach the model as the user's turn, consecutive ones in one.
      const auto rendered = openai_tools::render_response(message.content);
      if (after_tool) {
        out.back().content += '\n';
        out.back().content += rendered;
        continue;
      }
      message.role = "user";
      message.content = rendered;
      after_tool = true;
    } else {
      after_tool = false;
    }
    out.push_back(std::move(message));
  }
  if (out.empty()) return Status::invalid("messages: empty");
  return {};
}

Status read_request(const HttpRequest& req, bool chat, CompletionRequest& out) {
  thread_local ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  if (req.body_capacity < req.body.size() + simdjson::SIMDJSON_PADDING ||
      parser.iterate(req.body.data(), req.body.size(), req.body_capacity).get(doc) ||
      doc.get_object().get(object)) {
    return Status::invalid("body must be a JSON object");
  }
  out.chat = chat;
  bool has_messages = false;
  for (auto field : object) {
    std::string_view key;
    ondemand::value value;
    if (field.unescaped_key().get(key)) return Status::invalid("invalid JSON key");
    if (field.value().get(value)) return Status::invalid(std::string(key) + ": invalid JSON");
    ondemand::json_type type;
    if (value.type().get(type)) return Status::invalid(std::string(key) + ": invalid JSON");
    // OpenAI's clients send null for options left unset.
    if (type == ondemand::json_type::null && key != "model" && key != "messages" && key != "prompt") continue;
    Status s;
    if (key == "model") {
      s = read_string(value, key, out.model);
    } else if (key == "prompt" && !chat) {
      out.has_prompt = true;
      if (type == ondemand::json_type::string) {
        s = read_string(value, key, out.call.text);
      } else if (type == ondemand::json_type::array) {
        s = generation_fields::read_token_ids(
            value,
            "prompt: expected a string or one array of token ids (batches of prompts are not "
            "supported)",
            out.call.token_ids);
      } else {
        s = Status::invalid("prompt: expected a string or an array of token ids");
      }
    } else if (key == "messages" && chat) {
      has_messages = true;
      s = read_messages(value, out.call.messages);
    } else if (key == "n") {
      s = read_number(value, key, out.n, 1, kMaxChoices);
    } else if (key == "best_of") {
      s = read_number(value, key, out.best_of, 1, kMaxChoices);
    } else if (key == "stream") {
      s = read_bool(value, key, out.stream);
    } else if (key == "stream_options") {
      ondemand::object options;
      if (value.get_object().get(options)) return Status::invalid("stream_options: expected an object");
      for (auto option : options) {
        std::string_view name;
        ondemand::value v;
        if (option.unescaped_key().get(name) || option.value().get(v)) return Status::invalid("stream_options: invalid JSON");
        if (name == "include_usage") {
          if (auto st = read_bool(v, "stream_options.include_usage", out.include_usage); !st.ok()) return st;
        } else if (name == "continuous_usage_stats") {
          bool ignored = false;
          if (auto st = read_bool(v, "stream_options.continuous_usage_stats", ignored); !st.ok()) return st;
          if (ignored) return Status::invalid("stream_options.continuous_usage_stats: not supported");
        } else {
          return Status::invalid("stream_options." + std::string(name) + ": not supported");
        }
      }
    } else if (key == "logprobs") {
      if (chat) {
        s = read_bool(value, key, out.logprobs);
      } else {
        s = read_number(value, key, out.top_logprobs, 0, 20);
        out.logprobs = s.ok();
      }
    } else if (key == "top_logprobs" && chat) {
      s = read_number(value, key, out.top_logprobs, 0, 20);
    } else if (key == "echo") {
      s = read_bool(value, key, out.echo);
      if (s.ok() && out.echo && chat) s = Status::invalid("echo: only for completions");
    } else if (key == "user") {
      std::string ignored;
      s = read_string(value, key, ignored);
    } else if (key == "add_generation_prompt" && chat) {
      s = read_bool(value, key, out.call.add_generation_prompt);
    } else if (key == "tools" && chat) {
      s = openai_tools::read_tools(value, out.tools);
    } else if (key == "tool_choice" && chat) {
      s = openai_tools::read_tool_choice(value, out.tools);
    } else if (key == "parallel_tool_calls" && chat) {
      s = openai_tools::read_parallel_tool_calls(value, out.tools);
    } else {
      bool known = false;
      s = generation_fields::read_field(key, value, out.call, known);
      if (s.ok() && !known) s = Status::invalid(std::string(key) + ": not supported");
    }
    if (!s.ok()) return s;
  }
  if (chat && !has_messages) return Status::invalid("messages: missing");
  if (!chat && !out.has_prompt) return Status::invalid("prompt: missing");
  if (out.logprobs) out.call.request.sampling.logprobs = out.top_logprobs;
  if (out.include_usage && !out.stream) return Status::invalid("stream_options: only allowed with stream");
  if (out.echo && out.logprobs) {
    return Status::invalid("echo: not with logprobs (the prompt's logprobs are not computed)");
  }
  if (out.best_of == 0) out.best_of = out.n;
  if (out.best_of < out.n) return Status::invalid("best_of: must be at least n");
  if (out.best_of > out.n) {
    if (out.stream) return Status::invalid("best_of: not with stream (the best are known only at the end)");
    // Candidates are ranked by the log-probability of their tokens.
    auto& logprobs = out.call.request.sampling.logprobs;
    logprobs = std::max(logprobs, 0);
  }
  return openai_tools::apply(out.tools, out.call);
}

std::atomic<std::uint64_t> next_completion_id{1};

// The text of one token for logprobs (its bytes; invalid UTF-8 is escaped by the writer).
std::string token_string(const ByteLevelBpeTokenizer& tokenizer, std::int32_t id) {
  std::string text;
  (void)tokenizer.token_bytes(id, text);
  return text;
}

void append_bytes_array(std::string& out, std::string_view bytes) {
  out += '[';
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0) out += ',';
    json_append_number(out, static_cast<int>(static_cast<unsigned char>(bytes[i])));
  }
  out += ']';
}

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}]}.
void append_chat_logprobs(std::string& out, const ByteLevelBpeTokenizer& tokenizer,
                          const std::vector<generation::GeneratedToken>& tokens) {
  out += R"({"content":[)";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += ',';
    const auto& t = tokens[i];
    const std::string text = token_string(tokenizer, t.id);
    out += R"({"token":)";
    json_append_string(out, text);
    out += R"(,"logprob":)";
    json_append_number(out, t.logprob);
    out += R"(,"bytes":)";
    append_bytes_array(out, text);
    out += R"(,"top_logprobs":[)";
    for (std::size_t k = 0; k < t.top.size(); ++k) {
      if (k > 0) out += ',';
      const std::string alt = token_string(tokenizer, t.top[k].id);
      out += R"({"token":)";
      json_append_string(out, alt);
      out += R"(,"logprob":)";
      json_append_number(out, t.top[k].logprob);
      out += R"(,"bytes":)";
      append_bytes_array(out, alt);
      out += '}';
    }
    out += "]}";
  }
  out += "]}";
}

// Completions: {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}], "text_offset"}.
void append_completion_logprobs(std::string& out, const ByteLevelBpeTokenizer& tokenizer,
                                const std::vector<generation::GeneratedToken>& tokens,
                                std::size_t& offset) {
  out += R"({"tokens":[)";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += ',';
    json_append_string(out, token_string(tokenizer, tokens[i].id));
  }
  out += R"(],"token_logprobs":[)";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += ',';
    json_append_number(out, tokens[i].logprob);
  }
  out += R"(],"top_logprobs":[)";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += ',';
    out += '{';
    for (std::size_t k = 0; k < tokens[i].top.size(); ++k) {
      if (k > 0) out += ',';
      json_append_string(out, token_string(tokenizer, tokens[i].top[k].id));
      out += ':';
      json_append_number(out, tokens[i].top[k].logprob);
    }
    out += '}';
  }
  out += R"(],"text_offset":[)";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += ',';
    json_append_number(out, offset);
    offset += token_string(tokenizer, tokens[i].id).size();
  }
  out += "]}";
}

std::string_view finish_text(FinishReason reason, bool called_tools = false) {
  if (reason == FinishReason::length) return "length";
  return called_tools ? "tool_calls" : "stop";
}

// {"id": "call_...", "type": "function", "function": {"name", "arguments"}} (with "index" in a
// stream's delta).
void append_tool_call(std::string& out, const openai_tools::ToolCall& call, const std::string& id,
                      std::size_t index, bool with_index) {
  out += '{';
  if (with_index) {
    out += R"("index":)";
    json_append_number(out, index);
    out += ',';
  }
  out += R"("id":)";
  json_append_string(out, "call_" + id.substr(id.find('-') + 1) + "_" + std::to_string(index));
  out += R"(,"type":"function","function":{"name":)";
  json_append_string(out, call.name);
  out += R"(,"arguments":)";
  json_append_string(out, call.arguments);
  out += "}}";
}

// {"id", "object", "created", "model": what every response and streamed chunk starts with.
void append_head(std::string& out, const CompletionRequest& r, const std::string& id,
                 std::int64_t created, bool chunk) {
  out += R"({"id":)";
  json_append_string(out, id);
  out += !r.chat  ? R"(,"object":"text_completion","created":)"
         : chunk ? R"(,"object":"chat.completion.chunk","created":)"
                 : R"(,"object":"chat.completion","created":)";
  json_append_number(out, created);
  out += R"(,"model":)";
  json_append_string(out, r.model);
}

// One streamed chunk's JSON (without the SSE framing).
void chunk_json(std::string& out, const CompletionRequest& r, const std::string& id,
                std::int64_t created, const ByteLevelBpeTokenizer& tokenizer,
                const GenerationUpdate& u, bool first, std::size_t& text_offset,
                bool called_tools, std::size_t index) {
  append_head(out, r, id, created, true);
  out += R"(,"choices":[{"index":)";
  json_append_number(out, index);
  out += ',';
  if (r.chat) {
    out += R"("delta":{)";
    if (first) out += R"("role":"assistant",)";
    out += R"("content":)";
    json_append_string(out, u.text);
    out += '}';
  } else {
    out += R"("text":)";
    json_append_string(out, u.text);
  }
  out += R"(,"logprobs":)";
  if (r.logprobs && !u.tokens.empty()) {
    if (r.chat) {
      append_chat_logprobs(out, tokenizer, u.tokens);
    } else {
      append_completion_logprobs(out, tokenizer, u.tokens, text_offset);
    }
  } else {
    out += "null";
  }
  out += R"(,"finish_reason":)";
  if (u.finish == FinishReason::stop || u.finish == FinishReason::length) {
    json_append_string(out, finish_text(u.finish, called_tools));
  } else {
    out += "null";
  }
  out += "}]}";
}

// One choice of a response: its run, and what its text has made so far.
struct Choice {
  GenerationRun run;
  std::optional<openai_tools::StreamSplitter> splitter;  // chat with tools, streamed
  std::string whole;                                     // not streamed: the text
  std::vector<generation::GeneratedToken> tokens;        // not streamed: with logprobs
  GenerationUpdate last;                                 // the final update
  std::size_t text_offset = 0;
  bool first = true;  // streamed: no chunk sent yet
};

// The SSE events of one streamed update of choice `index`: text (with tools: until a call
// begins), each call completed in it, and the finish reason after the calls.
void stream_events(std::string& event, const CompletionRequest& r, const std::string& id,
                   std::int64_t created, const ByteLevelBpeTokenizer& tokenizer, Choice& c,
                   GenerationUpdate& update, std::size_t index) {
  std::vector<openai_tools::ToolCall> calls;
  const FinishReason finish = update.finish;
  if (c.splitter) {
    std::string said;
    c.splitter->feed(update.text, said, calls);
    if (finish != FinishReason::none) c.splitter->finish(said);
    update.text = std::move(said);
    if (!calls.empty()) update.finish = FinishReason::none;  // the calls come first
  }
  const bool called = c.splitter && c.splitter->calls_made() > 0;
  if (!update.text.empty() || !update.tokens.empty() || update.finish != FinishReason::none || c.first) {
    event += "data: ";
    chunk_json(event, r, id, created, tokenizer, update, c.first, c.text_offset, called, index);
    event += "\n\n";
    c.first = false;
  }
  for (std::size_t k = 0; k < calls.size(); ++k) {
    event += "data: ";
    append_head(event, r, id, created, true);
    event += R"(,"choices":[{"index":)";
    json_append_number(event, index);
    event += R"(,"delta":{"tool_calls":[)";
    append_tool_call(event, calls[k], id, c.splitter->calls_made() - calls.size() + k, true);
    event += R"(]},"logprobs":null,"finish_reason":null}]})";
    event += "\n\n";
  }
  if (!calls.empty() && finish != FinishReason::none) {
    GenerationUpdate last_chunk;
    last_chunk.finish = finish;
    event += "data: ";
    chunk_json(event, r, id, created, tokenizer, last_chunk, false, c.text_offset, true, index);
    event += "\n\n";
  }
  update.finish = finish;
}

// One choice of a whole response: {"index", "message" | "text", "logprobs", "finish_reason"}.
void append_choice(std::string& out, const CompletionRequest& r, const std::string& id,
                   const ByteLevelBpeTokenizer& tokenizer, Choice& c, std::size_t index) {
  out += R"({"index":)";
  json_append_number(out, index);
  out += ',';
  std::vector<openai_tools::ToolCall> calls;
  if (r.chat) {
    std::string content = std::move(c.whole);
    if (r.tools.active()) {
      const std::string text = std::move(content);
      openai_tools::parse(text, r.tools.parallel, content, calls);
    }
    out += R"("message":{"role":"assistant","content":)";
    if (calls.empty() || !content.empty()) {
      json_append_string(out, content);
    } else {
      out += "null";
    }
    if (!calls.empty()) {
      out += R"(,"tool_calls":[)";
      for (std::size_t k = 0; k < calls.size(); ++k) {
        if (k > 0) out += ',';
        append_tool_call(out, calls[k], id, k, false);
      }
      out += ']';
    }
    out += '}';
  } else {
    out += R"("text":)";
    json_append_string(out, c.whole);
  }
  out += R"(,"logprobs":)";
  if (r.logprobs) {
    if (r.chat) {
      append_chat_logprobs(out, tokenizer, c.tokens);
    } else {
      append_completion_logprobs(out, tokenizer, c.tokens, c.text_offset);
    }
  } else {
    out += "null";
  }
  out += R"(,"finish_reason":)";
  json_append_string(out, finish_text(c.last.finish, !calls.empty()));
  out += '}';
}

// The usage of all choices: the prompt once, every choice's completion tokens.
GenerationUpdate total_usage(const std::vector<std::unique_ptr<Choice>>& choices) {
  GenerationUpdate total = choices.front()->last;
  total.completion_tokens = 0;
  for (const auto& c : choices) total.completion_tokens += c->last.completion_tokens;
  return total;
}

asio::awaitable<void> completions(const ModelRepository& repo, const HttpRequest& req,
                                  HttpResponse& res, bool chat) {
  CompletionRequest r;
  GenerationEndpoint* endpoint = nullptr;
  Status status = read_request(req, chat, r);
  if (status.ok()) {
    if (r.model.empty()) status = Status::invalid("model: missing (the name of a served model)");
    if (status.ok()) status = repo.find_generation(r.model, req.tenant, endpoint);
  }
  GenerationCall& call = r.call;
  call.route = chat ? "chat" : "completions";
  call.chat = chat;
  // OpenAI's default for completions is 16; chat's is what the context leaves.
  call.default_max_tokens = 16;
  call.default_max_tokens_fill_context = chat;
  // Answers with logprobs, and several choices, are not kept.
  call.cacheable = call.cacheable && !r.logprobs && r.best_of == 1;
  if (status.ok()) status = endpoint->prepare(call);
  const bool caching = status.ok() && endpoint->caches(call);
  if (caching) status = cache_fields::read_directives(req, call.directives);
  // Awaited apart from the call: GCC 12 destroys a full-expression's temporaries twice when
  // the expression also holds a co_await.
  const auto executor = co_await asio::this_coro::executor;
  std::vector<std::unique_ptr<Choice>> choices;
  choices.push_back(std::make_unique<Choice>());
  if (caching && status.ok()) {
    const auto lookup_started = std::chrono::steady_clock::now();
    co_await endpoint->lookup(call, choices[0]->run);
    res.timing.add("cache", std::chrono::steady_clock::now() - lookup_started);
  }
  const auto generation_started = std::chrono::steady_clock::now();
  if (status.ok() && r.best_of > 1) {
    // The others first take their copies (and the prefill group) of the prepared call.
    std::vector<GenerationCall> others;
    for (int i = 1; i < r.best_of; ++i) others.push_back(endpoint->choice(call, i));
    if (status.ok()) status = endpoint->submit(call, choices[0]->run, executor);
    for (auto& other : others) {
      if (!status.ok()) break;
      choices.push_back(std::make_unique<Choice>());
      status = endpoint->submit(other, choices.back()->run, executor);
    }
  } else if (status.ok()) {
    status = endpoint->submit(call, choices[0]->run, executor);
  }
  if (!status.ok()) {
    fail(res, status);
    co_return;
  }
  const ByteLevelBpeTokenizer& tokenizer = endpoint->tokenizer();

  // echo: the prompt as text (a prompt of token ids decoded).
  std::string echo_text;
  if (r.echo) {
    if (!call.token_ids.empty()) {
      (void)tokenizer.decode(call.token_ids, echo_text, false);
    } else {
      echo_text = call.text;
    }
  }
  const std::string id = (chat ? "chatcmpl-" : "cmpl-") + std::to_string(next_completion_id++);
  const std::int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  GenerationUpdate update;

  if (r.stream && res.stream) {
    HttpResponse head = generation_fields::event_stream_head();
    cache_fields::annotate(head, choices[0]->run.outcome());
    if (!co_await res.stream->begin(head)) co_return;
    std::string event;
    for (auto& c : choices) {
      if (chat && r.tools.active()) c->splitter.emplace(r.tools.parallel);
    }
    // Round robin: each choice's updates accumulate in its stream while another is awaited.
    std::vector<bool> open(choices.size(), true);
    for (std::size_t left = choices.size(); left > 0;) {
      for (std::size_t i = 0; i < choices.size(); ++i) {
        if (!open[i]) continue;
        Choice& c = *choices[i];
        if (!co_await c.run.next(update)) {
          open[i] = false;
          --left;
          continue;
        }
        event.clear();
        if (update.finish != FinishReason::none && update.finish != FinishReason::stop &&
            update.finish != FinishReason::length) {
          event += "data: ";
          error_json(event, finish_status(update));
          event += "\n\n";
          (void)co_await res.stream->write(event);
          co_return;
        }
        if (c.first && !echo_text.empty()) update.text.insert(0, echo_text);
        stream_events(event, r, id, created, tokenizer, c, update, i);
        if (update.finish != FinishReason::none) c.last = std::move(update);
        if (!event.empty() && !co_await res.stream->write(event)) co_return;
      }
    }
    event.clear();
    if (r.include_usage) {
      event += "data: ";
      append_head(event, r, id, created, true);
      event += R"(,"choices":[],)";
      append_usage(event, total_usage(choices));
      event += "}\n\n";
    }
    event += "data: [DONE]\n\n";
    (void)co_await res.stream->write(event);
    co_return;
  }

  // Whole response: gather each choice's text (and logprobs) to the end; they all run at once.
  bool first_token = true;
  for (auto& c : choices) {
    c->whole = echo_text;
    while (co_await c->run.next(update)) {
      if (first_token && (!update.text.empty() || !update.tokens.empty())) {
        first_token = false;
        res.timing.add("first_token", std::chrono::steady_clock::now() - generation_started);
      }
      c->whole += update.text;
      if (r.logprobs || r.best_of > r.n) {
        for (auto& t : update.tokens) c->tokens.push_back(std::move(t));
      }
      if (update.finish != FinishReason::none) c->last = std::move(update);
    }
    if (Status s = finish_status(c->last); !s.ok()) {
      fail(res, s);
      co_return;
    }
  }
  res.timing.add("generation", std::chrono::steady_clock::now() - generation_started);
  cache_fields::annotate(res, choices[0]->run.outcome());
  std::string& out = res.body;
  append_head(out, r, id, created, false);
  // best_of: the n candidates whose tokens the model found likeliest (summed log-probability),
  // likeliest first.
  std::vector<std::size_t> order(choices.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (r.best_of > r.n) {
    std::vector<double> score(choices.size(), 0.0);
    for (std::size_t i = 0; i < choices.size(); ++i) {
      for (const auto& t : choices[i]->tokens) score[i] += t.logprob;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
    order.resize(static_cast<std::size_t>(r.n));
  }
  out += R"(,"choices":[)";
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0) out += ',';
    append_choice(out, r, id, tokenizer, *choices[order[i]], i);
  }
  out += "],";
  append_usage(out, total_usage(choices));  // every candidate's tokens, as OpenAI counts them
  out += '}';
}

}  // namespace

void add_openai_completion_routes(net::Router& router, const ModelRepository& repository) {
  const ModelRepository* repo = &repository;
  router.add(net::Method::post, "/v1/completions",
             net::AsyncHandler([repo](const HttpRequest& req, HttpResponse& res) {
               return completions(*repo, req, res, false);
             }));
  router.add(net::Method::post, "/v1/chat/completions",
             net::AsyncHandler([repo](const HttpRequest& req, HttpResponse& res) {
               return completions(*repo, req, res, true);
             }));
}

}  // namespace coinfer
