#pragma once
// OpenAI's tools on the chat route: reading `tools`, `tool_choice` and `parallel_tool_calls`;
// how they reach a model whose chat template has no tool syntax (the functions listed in the
// system message, calls written as <tool_call>{"name","arguments"}</tool_call>, the format of
// Hermes and Qwen's ChatML templates); the calls read back out of the generated text, whole or
// as it streams. docs/LLM.md, Tools.
#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/grammar/sources.hpp"
#include "coinfer/serving/generation_call.hpp"

namespace coinfer::openai_tools {

struct Tools {
  std::vector<generation::grammar::ToolFunction> functions;
  std::vector<std::string> listings;  // each tool as the prompt lists it (compact JSON)
  enum class Choice { none, automatic, required, named };
  Choice choice = Choice::automatic;
  std::string named;     // Choice::named: the function
  bool parallel = true;  // parallel_tool_calls
  bool choice_given = false;
  // The model is told of the tools and its text is read for calls.
  bool active() const noexcept { return !functions.empty() && choice != Choice::none; }
};

Status read_tools(simdjson::ondemand::value& value, Tools& out);
Status read_tool_choice(simdjson::ondemand::value& value, Tools& out);
Status read_parallel_tool_calls(simdjson::ondemand::value& value, Tools& out);

// Checks the request's tools as a whole and applies them to the call: the tools' listing for
// the system message, and with `required` or a named function a constraint to tool calls.
// The listing becomes part of the messages, and so of the response cache's key.
Status apply(const Tools& tools, GenerationCall& call);

// An assistant message's tool calls as the model would have written them (history).
std::string render_calls(std::span<const std::pair<std::string, std::string>> name_arguments);
// A tool message's content as the model sees tool results.
std::string render_response(std::string_view content);

struct ToolCall {
  std::string name;
  std::string arguments;  // JSON text
};

// Splits generated text into what is said and the calls made: every complete
// <tool_call>...</tool_call> block whose JSON has a string "name" and an object "arguments" is a
// call; the rest (trimmed) is content. Without `parallel` only the first call counts.
void parse(std::string_view text, bool parallel, std::string& content, std::vector<ToolCall>& calls);

// The same over a stream: text that cannot begin a call goes out as it comes; from "<tool_call>"
// on it is held until the block closes and comes out as a call.
class StreamSplitter {
 public:
  explicit StreamSplitter(bool parallel) : parallel_(parallel) {}
  void feed(std::string_view piece, std::string& content, std::vector<ToolCall>& calls);
  // The end: a block left open is text after all.
  void finish(std::string& content);
  std::size_t calls_made() const noexcept { return made_; }

 private:
  bool parallel_;
  std::string pending_;
  std::size_t made_ = 0;
};

}  // namespace coinfer::openai_tools
