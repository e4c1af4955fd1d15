#include "coinfer/tokenizers/bert_pre_tokenizer.hpp"

#include <array>

#include "bert_unicode.hpp"
#include "utf8.hpp"

namespace coinfer {
namespace {

enum class Split : unsigned char { none, whitespace, punctuation };

constexpr std::array<Split, 128> kAsciiSplit = [] {
  std::array<Split, 128> table{};
  for (char32_t c = 0; c < 128; ++c) {
    if (c == ' ' || (c >= '\t' && c <= '\r')) {
      table[c] = Split::whitespace;
    } else if ((c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
               (c >= 0x7B && c <= 0x7E)) {
      table[c] = Split::punctuation;
    }
  }
  return table;
}();

}  // namespace

void BertPreTokenizer::pre_tokenize(std::string_view text,
                                    std::vector<std::string_view>& words) const {
  std::size_t word_begin = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at]);
    Split split;
    std::size_t length = 1;
    if (byte < 0x80) {
      split = kAsciiSplit[byte];
    } else {
      char32_t cp;
      length = utf8::decode(text, at, cp);
      if (length == 0) {
        length = 1;  // not UTF-8 (a broken precondition): keep the byte inside its word
        split = Split::none;
      } else {
        split = bert::is_whitespace(cp)    ? Split::whitespace
                : bert::is_punctuation(cp) ? Split::punctuation
                                           : Split::none;
      }
    }
    if (split != Split::none) {
      if (at > word_begin) words.push_back(text.substr(word_begin, at - word_begin));
      if (split == Split::punctuation) words.push_back(text.substr(at, length));
      word_begin = at + length;
    }
    at += length;
  }
  if (at > word_begin) words.push_back(text.substr(word_begin, at - word_begin));
}

}  // namespace coinfer
