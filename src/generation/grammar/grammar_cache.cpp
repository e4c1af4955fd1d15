#include "coinfer/generation/grammar/grammar_cache.hpp"

#include "coinfer/generation/grammar/matcher.hpp"
#include "coinfer/generation/grammar/sources.hpp"

namespace coinfer::generation::grammar {

GrammarCache::GrammarCache(const ByteLevelBpeTokenizer& tokenizer, std::size_t capacity)
    : capacity_(capacity), vocabulary_(std::make_shared<const TokenVocabulary>(tokenizer)) {}

GrammarCache::~GrammarCache() = default;

std::size_t GrammarCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

Status GrammarCache::get(const OutputConstraint& c, std::shared_ptr<const CompiledGrammar>& out) {
  std::string key(1, static_cast<char>(c.kind));
  key += c.source;
  for (const auto& choice : c.choices) {
    key += '\0';
    key += choice;
  }
  for (const auto& f : c.functions) {
    key += '\1';
    key += f.name;
    key += '\0';
    key += f.parameters;
  }
  key += c.parallel ? '\2' : '\3';
  key += c.whitespace;
  {
    std::lock_guard lock(mutex_);
    if (const auto it = entries_.find(key); it != entries_.end()) {
      order_.splice(order_.begin(), order_, it->second.position);
      out = it->second.grammar;
      return {};
    }
  }
  // Compiled outside the lock: two first requests for one schema both compile, and one keeps.
  Grammar g;
  Status status;
  switch (c.kind) {
    case OutputConstraint::Kind::json_object: status = json_object_grammar(g, c.whitespace); break;
    case OutputConstraint::Kind::json_schema: status = json_schema_grammar(c.source, g, c.whitespace); break;
    case OutputConstraint::Kind::regex: status = regex_grammar(c.source, g); break;
    case OutputConstraint::Kind::choice: status = choice_grammar(c.choices, g); break;
    case OutputConstraint::Kind::grammar: status = gbnf_grammar(c.source, g); break;
    case OutputConstraint::Kind::tool_calls: status = tool_calls_grammar(c.functions, c.parallel, g); break;
    case OutputConstraint::Kind::none: return Status::invalid(c.field + ": no constraint");
  }
  if (status.ok()) status = CompiledGrammar::compile(std::move(g), vocabulary_, out);
  if (!status.ok()) return Status::invalid(c.field + ": " + std::string(status.message()));
  std::lock_guard lock(mutex_);
  if (const auto it = entries_.find(key); it != entries_.end()) {
    out = it->second.grammar;
    return {};
  }
  order_.push_front(key);
  entries_.emplace(std::move(key), Entry{out, order_.begin()});
  while (entries_.size() > capacity_) {
    entries_.erase(order_.back());
    order_.pop_back();
  }
  return {};
}

}  // namespace coinfer::generation::grammar
