#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/generation/generator.hpp"
#include "coinfer/generation/grammar/grammar_cache.hpp"
#include "coinfer/serving/cache_directives.hpp"
#include "coinfer/tokenizers/bpe.hpp"

namespace coinfer {

// One generation as a protocol decoded it: what to continue and how. The protocol fills the
// prompt (one of the three forms) and the engine's fields; the endpoint does the rest.
struct GenerationCall {
  // Names the protocol in the response cache's key ("chat", "completions", "generate"): two
  // routes never share answers.
  std::string_view route = "completions";

  // The prompt: chat messages (rendered with the model's chat template), a text, or token ids.
  bool chat = false;
  std::vector<ChatMessage> messages;
  // Appended to the system message (the default one when the conversation has none): what
  // the model is told of the tools it may call.
  std::string system_suffix;
  bool add_generation_prompt = true;  // chat: end with the assistant's turn opened
  std::string text;
  std::vector<std::int32_t> token_ids;

  // The engine's request; prepare() fills its prompt, its max_tokens when none was given, and
  // its deadline from timeout_s.
  generation::GenerationRequest request;
  bool max_tokens_given = false;
  // max_tokens when none was given: a number, or what the context leaves (chat, as OpenAI).
  std::int32_t default_max_tokens = 16;
  bool default_max_tokens_fill_context = false;
  double timeout_s = 0;  // 0: none
  // A structured output (JSON schema, regex, choices, GBNF): prepare() compiles it into a
  // grammar stage of the sampler chain.
  generation::grammar::OutputConstraint constraint;
  std::shared_ptr<const generation::grammar::CompiledGrammar> grammar;  // prepare()'s, if any

  // The response cache: the caller's namespace and Cache-Control; `cacheable` false bypasses
  // it (answers with logprobs are not kept).
  CacheDirectives directives;
  bool cacheable = true;
};

}  // namespace coinfer
