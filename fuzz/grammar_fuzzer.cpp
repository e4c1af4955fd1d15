// The structured-output sources and the matcher they compile for: JSON Schema, GBNF and
// regular expressions (the first byte picks which; the rest up to a 0xFF byte is the source),
// then the bytes after 0xFF fed to the matcher one at a time.
//
// A refused source says why. A compiled one never hangs or grows past its bound, and at every
// step its token mask over a small vocabulary (single bytes and a few JSON-shaped tokens) is
// exactly the set of tokens the matcher accepts when tried one by one.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/generation/grammar/matcher.hpp"
#include "coinfer/generation/grammar/sources.hpp"
#include "coinfer/tokenizers/bpe.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using namespace coinfer::generation::grammar;
using coinfer::fuzz::check;

namespace {

std::shared_ptr<const TokenVocabulary> vocabulary() {
  static const auto built = [] {
    BpeVocabulary v;
    v.tokens = {"<|im_end|>", "{\"", "\":", "\",\"", "\"}", "true", "null", "12", "Ġ\"", "ab"};
    for (char c = '!'; c <= '~'; ++c) v.tokens.emplace_back(1, c);
    v.tokens.emplace_back("Ġ");
    v.tokens.emplace_back("Ċ");
    v.tokens.emplace_back("Ã");
    v.tokens.emplace_back("©");
    v.token_types.assign(v.tokens.size(), BpeVocabulary::normal);
    v.token_types[0] = BpeVocabulary::control;
    v.eos_id = 0;
    std::unique_ptr<ByteLevelBpeTokenizer> tokenizer;
    check(ByteLevelBpeTokenizer::create(std::move(v), tokenizer).ok(), "the vocabulary builds");
    auto vocab = std::make_shared<const TokenVocabulary>(*tokenizer);
    static auto keep = std::move(tokenizer);
    return vocab;
  }();
  return built;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto split = input.find('\xFF');
  const auto source = input.substr(0, split);
  const auto text = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  Grammar g;
  Status status;
  switch (data[0] % 3) {
    case 0: status = json_schema_grammar(source, g); break;
    case 1: status = gbnf_grammar(source, g); break;
    default: status = regex_grammar(source, g); break;
  }
  if (!status.ok()) {
    check(!status.message().empty(), "a refused grammar says why");
    return 0;
  }
  check(g.elements() <= Grammar::kMaxElements, "a grammar stays within its bound");
  std::shared_ptr<const CompiledGrammar> compiled;
  check(CompiledGrammar::compile(std::move(g), vocabulary(), compiled).ok(), "a finished grammar compiles");
  Matcher matcher(compiled);
  const auto& v = *compiled->vocabulary;
  TokenMask mask;
  for (std::size_t i = 0; i <= std::min<std::size_t>(text.size(), 12); ++i) {
    matcher.fill_mask(mask);
    for (std::int32_t id = 0; id < v.size(); ++id) {
      Matcher copy = matcher;
      const bool allowed = (mask[static_cast<std::size_t>(id) >> 6] >> (id & 63)) & 1;
      check(allowed == copy.accept_token(id), "the mask is the set of tokens the matcher accepts");
    }
    if (i == text.size() || !matcher.accept_bytes(text.substr(i, 1))) break;
  }
  return 0;
}
