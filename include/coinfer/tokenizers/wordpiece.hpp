#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/tokenizers/bert_normalizer.hpp"
#include "coinfer/tokenizers/bert_pre_tokenizer.hpp"
#include "coinfer/tokenizers/tokenizer.hpp"

namespace coinfer {

// BERT's WordPiece tokenizer, id for id what Hugging Face's fast BertTokenizer gives (the
// tokenizer.json of all-MiniLM-L6-v2, bert-base-uncased):
//   1. special tokens ([CLS] [SEP] [UNK] [PAD] [MASK]) written in the text are matched verbatim,
//      before normalization, and kept whole: "a [SEP] b" has three tokens;
//   2. the text between them: BertNormalizer -> BertPreTokenizer -> WordPiece: each word is split
//      greedily into the longest vocabulary pieces from its start, pieces after the first
//      looked up with the "##" prefix; a word with a piece not in the vocabulary, or of more than
//      max_input_chars_per_word code points, is one [UNK];
//   3. [CLS] word pieces [SEP].
// The vocabulary is immutable after loading: encode and decode may run on many threads at once.
class WordPieceTokenizer final : public Tokenizer {
 public:
  static constexpr std::size_t max_input_chars_per_word = 100;

  WordPieceTokenizer() = default;  // no vocabulary: load or parse one
  WordPieceTokenizer(const WordPieceTokenizer&) = delete;
  WordPieceTokenizer& operator=(const WordPieceTokenizer&) = delete;
  WordPieceTokenizer(WordPieceTokenizer&&) noexcept = default;
  WordPieceTokenizer& operator=(WordPieceTokenizer&&) noexcept = default;

  // A vocab.txt: one token a line, id = line number - 1. Errors name the file and the line:
  // duplicate or empty tokens, invalid UTF-8, a missing [CLS], [SEP], [UNK] or [PAD].
  static Status load(const std::filesystem::path& vocab_path, WordPieceTokenizer& out);
  // The same from the file's contents; `origin` names them in error messages.
  static Status parse(std::string_view vocab_text, std::string_view origin,
                      WordPieceTokenizer& out);

  // Appends [CLS] <tokens of utf8_text> [SEP] to `ids`. With a max_length (>= 2), the appended
  // sequence is cut as Hugging Face truncation cuts a single sequence: its first max_length - 1
  // tokens, then [SEP]. Invalid UTF-8 is an error naming the byte offset; `ids` is then as it
  // was.
  Status encode(std::string_view utf8_text, std::vector<std::int32_t>& ids,
                std::size_t max_length = no_truncation) const override;

  // Replaces `text` with the tokens of `ids` joined as Hugging Face's WordPiece decoder joins
  // them: a space between tokens, none before a "##" piece (which loses its "##"), and none
  // before "." "?" "!" ",". Special tokens are left out unless told otherwise. An id outside
  // [0, vocab_size()) is an error.
  Status decode(std::span<const std::int32_t> ids, std::string& text,
                bool skip_special_tokens = true) const override;

  std::size_t vocab_size() const noexcept override { return tokens_.size(); }
  std::optional<std::int32_t> token_to_id(std::string_view token) const noexcept;
  std::int32_t cls_id() const noexcept { return cls_id_; }
  std::int32_t sep_id() const noexcept { return sep_id_; }
  std::int32_t unk_id() const noexcept { return unk_id_; }
  std::int32_t pad_id() const noexcept { return pad_id_; }

 private:
  // Token ids by token text: open addressing with linear probing, at most half full. A slot
  // holds a token id (-1: empty) and the low half of its key's hash; the key itself is compared
  // through keys_ (by id), which views into the vocabulary text.
  class TokenIndex {
   public:
    // keys[id] is the key of token `id`; empty keys are left out.
    void build(std::vector<std::string_view> keys);
    std::int32_t find(std::string_view key) const noexcept;  // -1 when absent
    std::size_t max_key_bytes() const noexcept { return max_key_bytes_; }

   private:
    struct Slot {
      std::uint32_t hash = 0;
      std::int32_t id = -1;
    };
    std::vector<Slot> slots_;  // a power of two long
    std::vector<std::string_view> keys_;
    std::size_t max_key_bytes_ = 0;
  };

  void encode_words(std::string_view text, std::vector<std::int32_t>& ids,
                    std::size_t max_ids) const;
  void encode_word(std::string_view word, std::vector<std::int32_t>& ids) const;
  // The leftmost special token in `text` at or after `at`, the longest where several start
  // there: {where, index into specials_}; where = text.size() when there is none.
  std::pair<std::size_t, std::size_t> find_special(std::string_view text,
                                                   std::size_t at) const noexcept;
  bool is_special(std::int32_t id) const noexcept;

  std::unique_ptr<char[]> vocab_text_;      // the vocab file; tokens_ view into it
  std::vector<std::string_view> tokens_;    // by id
  TokenIndex word_starts_;                  // every token
  TokenIndex continuations_;                // tokens that start with "##", without it
  std::vector<std::string_view> specials_;  // [CLS] [SEP] ... as found, longest first
  std::vector<std::int32_t> special_ids_;   // parallel to specials_
  std::array<bool, 256> special_starts_{};  // by byte: may a special token start here
  std::int32_t cls_id_ = -1;
  std::int32_t sep_id_ = -1;
  std::int32_t unk_id_ = -1;
  std::int32_t pad_id_ = -1;
  BertNormalizer normalizer_;
  BertPreTokenizer pre_tokenizer_;
};

}  // namespace coinfer
