#pragma once

#include <string_view>
#include <vector>

namespace coinfer {

// BERT's pre-tokenization, as Hugging Face tokenizers' BertPreTokenizer does it: whitespace
// separates words and is dropped; every punctuation character (ASCII punctuation or a Unicode
// P* category) is a word of its own. "Hey, you!" -> "Hey" "," "you" "!".
struct BertPreTokenizer {
  // Appends the words of `text` (valid UTF-8, normally a BertNormalizer's output) to `words`;
  // they view into `text`.
  void pre_tokenize(std::string_view text, std::vector<std::string_view>& words) const;
};

}  // namespace coinfer
