#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/status.hpp"

namespace coinfer {

// Text to token ids and back, as a model was trained with (WordPiece for BERT encoders, BPE
// for decoders). Immutable once loaded: encode and decode may run on many threads at once.
class Tokenizer {
 public:
  static constexpr std::size_t no_truncation = std::numeric_limits<std::size_t>::max();

  virtual ~Tokenizer() = default;
  // Appends the ids of `utf8_text` with the model's special tokens (e.g. [CLS] ... [SEP]).
  // With a max_length, the appended sequence is cut to at most that many ids the way the
  // model's reference tokenizer truncates. Invalid UTF-8 is an error naming the byte offset.
  virtual Status encode(std::string_view utf8_text, std::vector<std::int32_t>& ids,
                        std::size_t max_length) const = 0;
  // Replaces `text` with the text of `ids`; an id outside the vocabulary is an error.
  virtual Status decode(std::span<const std::int32_t> ids, std::string& text,
                        bool skip_special_tokens) const = 0;
  virtual std::size_t vocab_size() const noexcept = 0;
};

// A text pair as one row, the way BERT-style tokenizers pair two texts: the first text's ids
// with their special tokens, then the second's without its leading one ([CLS] a [SEP] b
// [SEP]). Over `max_length` ids (at least 5), tokens come off the ends as Hugging Face's
// "longest_first" takes them: the shorter text keeps up to half the budget, the longer the
// rest. `needed` gets the untruncated length; nothing is appended when the pair cannot fit.
Status encode_pair(const Tokenizer& tokenizer, std::string_view first, std::string_view second,
                   std::size_t max_length, std::vector<std::int32_t>& ids, std::size_t& needed);

}  // namespace coinfer
