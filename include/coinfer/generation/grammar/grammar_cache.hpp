#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/grammar/sources.hpp"

namespace coinfer {
class ByteLevelBpeTokenizer;
}  // namespace coinfer

namespace coinfer::generation::grammar {

class CompiledGrammar;
class TokenVocabulary;

// What a request asks its output to be, as the protocol read it: OpenAI's response_format,
// vLLM's structured_outputs (and its older guided_* fields).
struct OutputConstraint {
  enum class Kind : std::uint8_t { none, json_object, json_schema, regex, choice, grammar, tool_calls };
  Kind kind = Kind::none;
  std::string source;                // the schema's JSON, the pattern, or the GBNF text
  std::vector<std::string> choices;  // Kind::choice
  std::string field;                 // the request field it came from, for errors
  std::vector<ToolFunction> functions;  // Kind::tool_calls: the functions a call may name
  bool parallel = true;                 // Kind::tool_calls: one call or several
  std::string whitespace;  // JSON kinds: a regex for whitespace around punctuation; empty: none
  bool empty() const noexcept { return kind == Kind::none; }
};

// A model's compiled grammars by their source, the least recently used dropped beyond
// `capacity`: a schema sent with every request compiles once, and the token sets its positions
// computed on the first request serve the later ones (each grammar keeps at most
// CompiledGrammar::kMaxContextBytes of them, so the cache holds at most capacity x that). The
// vocabulary trie is built with the cache (15-25 ms for SmolLM2's 49,152 tokens, at start
// rather than on a request's I/O thread). Safe from any thread.
class GrammarCache {
 public:
  explicit GrammarCache(const ByteLevelBpeTokenizer& tokenizer, std::size_t capacity = 64);
  ~GrammarCache();

  // The constraint compiled (from the cache when it was seen); errors are 400s prefixed with
  // the field ("response_format.json_schema.schema: keyword 'uniqueItems' is not supported").
  Status get(const OutputConstraint& constraint, std::shared_ptr<const CompiledGrammar>& out);
  std::size_t size() const;

 private:
  const std::size_t capacity_;
  const std::shared_ptr<const TokenVocabulary> vocabulary_;
  mutable std::mutex mutex_;
  std::list<std::string> order_;  // keys, most recently used first
  struct Entry {
    std::shared_ptr<const CompiledGrammar> grammar;
    std::list<std::string>::iterator position;
  };
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace coinfer::generation::grammar
