#pragma once

#include <array>
#include <cstddef>

// Unicode as BERT's normalizer and pre-tokenizer see it in Hugging Face tokenizers
// (normalizers/bert.rs, pre_tokenizers/bert.rs): utf8proc's data (Unicode 15.0), reconciled with
// the older tables those stages were built on. See bert_unicode.cpp.
namespace coinfer::bert {

// Rust's char::is_whitespace: the White_Space property (Zs, Zl, Zp, \t \n \v \f \r, U+0085).
bool is_whitespace(char32_t cp) noexcept;
// What clean_text drops besides U+0000 and U+FFFD: general category Cc, Cf or Co, but not
// \t \n \r (those are whitespace).
bool is_control(char32_t cp) noexcept;
// ASCII punctuation (every printable ASCII character that is not a letter, digit or space:
// '$' '+' '<' '^' '`' '|' '~' too) or a general category P*.
bool is_punctuation(char32_t cp) noexcept;
// The CJK ideograph blocks BERT puts spaces around: Unified Ideographs, Extensions A-E, the
// Compatibility Ideographs and their Supplement. Not Hangul, Hiragana or Katakana.
bool is_chinese(char32_t cp) noexcept;
// General category Mn, what strip_accents drops after NFD.
bool is_nonspacing_mark(char32_t cp) noexcept;
// Canonical combining class, what NFD orders marks by.
int combining_class(char32_t cp) noexcept;
// The full canonical decomposition of `cp` (itself if it has none, a Hangul syllable's jamo);
// returns its length.
std::size_t decompose(char32_t cp, std::array<char32_t, 4>& out) noexcept;
// The simple lowercase mapping, as Rust's char::to_lowercase gives it. (Its one unconditional
// mapping to more than one code point, U+0130 -> "i\u0307", is the caller's to handle.)
char32_t to_lower(char32_t cp) noexcept;

}  // namespace coinfer::bert
