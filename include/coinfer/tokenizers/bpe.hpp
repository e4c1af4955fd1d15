#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/tokenizers/tokenizer.hpp"

namespace coinfer {

class GgufFile;

// What a GGUF file's tokenizer.ggml.* keys hold for a GPT-2 style ("gpt2") vocabulary.
struct BpeVocabulary {
  // Token types as llama.cpp numbers them (tokenizer.ggml.token_type).
  static constexpr std::int32_t normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5,
                                byte = 6;

  std::vector<std::string> tokens;        // id -> token text in byte-level form ("Ġthe")
  std::vector<std::int32_t> token_types;  // by id; empty: all normal
  std::vector<std::string> merges;        // "Ġ t", highest priority first
  std::string pre_tokenizer = "smollm";   // tokenizer.ggml.pre
  std::int32_t bos_id = -1;               // -1: none
  std::int32_t eos_id = -1;
  bool add_bos = false;  // encode starts with bos_id
};

// Reads tokenizer.ggml.tokens, token_type, merges, pre, bos_token_id, eos_token_id and
// add_bos_token (the last four optional but pre). tokenizer.ggml.model, when present, must be
// "gpt2". Errors name the key.
Status load_bpe_vocabulary(const GgufFile& file, BpeVocabulary& out);

// The "smollm" pre-tokenizer, Hugging Face's Sequence([Digits(individual_digits=True),
// ByteLevel(add_prefix_space=False, use_regex=True)]): every numeric character (general
// category N*) is a piece of its own, then the text between them is split by GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (\s is Unicode White_Space). Appends the pieces of `text` (valid UTF-8) to `pieces`, as views
// into it; together they are `text`.
void pre_tokenize_smollm(std::string_view text, std::vector<std::string_view>& pieces);

// Byte-level BPE (GPT-2, SmolLM2), id for id what Hugging Face tokenizers gives for the same
// vocabulary and merges:
//   1. control and user-defined tokens written in the text are matched whole, leftmost first and
//      the longest where several start at one place ("<|im_end|>");
//   2. the text between them is pre-tokenized (pre_tokenize_smollm), each piece's bytes become
//      the byte-level alphabet's single-byte tokens, and adjacent tokens are merged, the pair of
//      the highest-priority merge first (the leftmost of equal pairs first), until no merge
//      applies. A byte with no token of its own becomes the unknown token if the vocabulary has
//      one, and is dropped otherwise, as Hugging Face's BPE without an unk_token drops it.
// Immutable once created: encode and decode may run on many threads at once.
class ByteLevelBpeTokenizer final : public Tokenizer {
 public:
  // Checks the vocabulary: token text valid UTF-8, no duplicate tokens, token types 0-6, each
  // merge "left right" of two tokens whose concatenation is a token, bos/eos ids in range, a
  // known pre-tokenizer. Errors name the token or merge index. A merge listed twice keeps its
  // first (higher) priority.
  static Status create(BpeVocabulary vocabulary, std::unique_ptr<ByteLevelBpeTokenizer>& out);

  // Neither copied nor moved: the indexes view into the tokenizer's own strings.
  ByteLevelBpeTokenizer(const ByteLevelBpeTokenizer&) = delete;
  ByteLevelBpeTokenizer& operator=(const ByteLevelBpeTokenizer&) = delete;
  ~ByteLevelBpeTokenizer() override;

  // Appends the ids of `utf8_text` (after bos_id if the vocabulary says add_bos). With a
  // max_length, at most that many ids are appended: the first ones. Invalid UTF-8 is an error
  // naming the byte offset; `ids` is then as it was.
  Status encode(std::string_view utf8_text, std::vector<std::int32_t>& ids,
                std::size_t max_length = no_truncation) const override;
  // Replaces `text` with the bytes of `ids` (token_bytes of each), without the control tokens
  // when skip_special_tokens. The bytes are kept as they are, also where a sequence of ids ends
  // inside a UTF-8 character: streaming callers join the pieces. An id outside the vocabulary
  // is an error naming its index; `text` is then as it was.
  Status decode(std::span<const std::int32_t> ids, std::string& text,
                bool skip_special_tokens = true) const override;
  std::size_t vocab_size() const noexcept override { return tokens_.size(); }

  // The token as stored ("Ġthe"); empty for an id outside the vocabulary.
  std::string_view token_text(std::int32_t id) const noexcept;
  // Appends the bytes the token stands for: the byte-level alphabet mapped back to bytes, a
  // control or user-defined token as its text.
  Status token_bytes(std::int32_t id, std::string& out) const;
  std::optional<std::int32_t> token_id(std::string_view token) const;
  std::int32_t bos_id() const noexcept { return bos_id_; }
  std::int32_t eos_id() const noexcept { return eos_id_; }
  bool is_control(std::int32_t id) const noexcept;

 private:
  // Merges by pair: open addressing with linear probing, at most half full. key = left id << 32
  // | right id; an empty slot has key kEmpty (no id is 2^32 - 1).
  class MergeTable {
   public:
    struct Slot {
      std::uint64_t key;
      std::uint32_t rank;   // index in the merges list: lower merges first
      std::int32_t merged;  // the id of left + right
    };
    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

    void reserve(std::size_t count);
    bool insert(std::uint64_t key, std::uint32_t rank, std::int32_t merged);  // false: present
    const Slot* find(std::uint64_t key) const noexcept;

   private:
    std::vector<Slot> slots_;  // a power of two long
  };
  struct Special {
    std::string_view text;
    std::int32_t id;
  };

  ByteLevelBpeTokenizer() = default;
  // The parts of create() after tokens_ and types_ are set: every index of the tokens, then
  // the merge table. Errors name the token or merge.
  Status index_tokens();
  Status index_merges(const std::vector<std::string>& merges);
  void index_whole_pieces();
  // The leftmost special token in `text` at or after `at`, the longest of those starting there:
  // {where, which}; {text.size(), nullptr} when there is none.
  std::pair<std::size_t, const Special*> find_special(std::string_view text,
                                                      std::size_t at) const noexcept;
  // BPE over one pre-tokenized piece; appends its ids.
  void encode_piece(std::string_view piece, std::vector<std::int32_t>& ids) const;
  void encode_ordinary(std::string_view text, std::vector<std::int32_t>& ids,
                       std::size_t max_ids) const;

  std::vector<std::string> tokens_;                         // by id, as stored
  std::vector<std::int32_t> types_;                         // by id
  std::unordered_map<std::string_view, std::int32_t> ids_;  // views into tokens_
  MergeTable merges_;
  // Pieces whose bytes BPE merges into one token (most words of common text): the token for
  // the bytes, found without merging. Views into decoded_.
  std::unordered_map<std::string_view, std::int32_t> whole_pieces_;
  std::array<std::int32_t, 256> byte_ids_{};  // by byte: its single-byte token, or -1
  // Token bytes: token id's bytes are decoded_[decoded_offsets_[id], decoded_offsets_[id + 1]).
  std::string decoded_;
  std::vector<std::uint32_t> decoded_offsets_;
  std::vector<Special> specials_;           // control and user-defined, longest first
  std::array<bool, 256> special_starts_{};  // by byte: may a special token start here
  std::int32_t unknown_id_ = -1;
  std::int32_t bos_id_ = -1;
  std::int32_t eos_id_ = -1;
  bool add_bos_ = false;
};

// One turn of a conversation.
struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// SmolLM2's system prompt, what its chat template puts first when the conversation has none.
inline constexpr std::string_view smollm2_system_prompt =
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face";

// ChatML as SmolLM2's chat template (tokenizer.chat_template) renders it:
//   <|im_start|>{role}\n{content}<|im_end|>\n   for each message, then
//   <|im_start|>assistant\n                      with add_generation_prompt.
// When the first message is not a system message, a system message of default_system_prompt
// comes first (unless that is empty); no messages, no system message.
std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt,
                          std::string_view default_system_prompt);

}  // namespace coinfer
