#pragma once

#include <string>
#include <string_view>

#include "coinfer/core/status.hpp"

namespace coinfer {

// BERT's text normalization, as Hugging Face tokenizers' BertNormalizer does it, in this order:
//   clean_text            drop U+0000, U+FFFD and control characters (Cc, Cf, Co but \t \n \r);
//                         turn every whitespace character into ' '
//   handle_chinese_chars  put ' ' on both sides of each CJK ideograph
//   strip_accents         NFD, then drop nonspacing marks (Mn)
//   lowercase             code point by code point, as Rust's char::to_lowercase (so a final
//                         sigma becomes σ, not ς as Python's str.lower() would make it)
// The defaults are BERT uncased's (all-MiniLM-L6-v2, bert-base-uncased).
struct BertNormalizer {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;

  // Appends the normalized `utf8_text` to `out`. Invalid UTF-8 is an error that names the byte
  // offset of the first bad sequence (`out` then ends with the text before it).
  Status normalize(std::string_view utf8_text, std::string& out) const;
};

}  // namespace coinfer
