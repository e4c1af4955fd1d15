#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/grammar/grammar.hpp"
#include "coinfer/generation/sampler.hpp"

namespace coinfer {
class ByteLevelBpeTokenizer;
}  // namespace coinfer

namespace coinfer::generation::grammar {

// A token mask: bit t of word t / 64 is set when token t is allowed, [ceil(vocab / 64)].
using TokenMask = std::vector<std::uint64_t>;

// The vocabulary as a grammar sees it: every token's bytes in a trie, so that a mask is one
// walk that drops a whole subtree at the first byte the grammar refuses. Control tokens
// (<|im_end|>) are not in it: a grammar never produces them; the end-of-sequence tokens are
// allowed by the processor where the grammar may end. Immutable; one per model.
//
// Layout: nodes in preorder, so node i's subtree is [i, subtree_end[i]) and its first child is
// i + 1 (when subtree_end[i] > i + 1); the tokens whose bytes end at node i are
// token_ids[token_begin[i], token_begin[i + 1]), hence those of its subtree are
// token_ids[token_begin[i], token_begin[subtree_end[i]]). Node 0 is the empty prefix.
class TokenVocabulary {
 public:
  explicit TokenVocabulary(const ByteLevelBpeTokenizer& tokenizer);

  std::int32_t size() const noexcept { return size_; }  // ids are [0, size)
  std::string_view bytes(std::int32_t id) const noexcept {
    return std::string_view(bytes_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  // The ids that end a sequence (the tokenizer's eos and the usual end markers).
  const std::vector<std::int32_t>& end_ids() const noexcept { return end_ids_; }

  std::vector<std::uint8_t> byte;           // [nodes]: the byte that leads to it (node 0: none)
  std::vector<std::uint32_t> subtree_end;   // [nodes]
  std::vector<std::uint32_t> token_begin;   // [nodes + 1]
  std::vector<std::int32_t> token_ids;      // [tokens in the trie]

 private:
  std::int32_t size_ = 0;
  std::string bytes_;                  // every token's bytes, concatenated (control tokens empty)
  std::vector<std::uint32_t> offsets_;  // [size + 1]
  std::vector<std::int32_t> end_ids_;
};

// A grammar made ready to match: its rules laid out flat, and, computed the first time a
// generation stands at a position and kept for every later one, which tokens that position
// allows whatever the stack below it holds (xgrammar's context-independent tokens) and which
// depend on the stack (few: those that go on past what is known). What is known is the
// position and the return positions of the kContextFrames frames above it: a JSON string's
// character class alone would end after one character, its string rule and the closing quote's
// rule say what a whole token of text does.
// Shared by every sequence that uses the same grammar; safe to use from several threads.
class CompiledGrammar {
 public:
  // `max_context_bytes`: what it keeps of its contexts' token sets (kMaxContextBytes below).
  static Status compile(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                        std::shared_ptr<const CompiledGrammar>& out,
                        std::size_t max_context_bytes = kMaxContextBytes);

  struct PositionTokens {
    TokenMask accepted;                   // allowed whatever lies below
    std::vector<std::int32_t> uncertain;  // to be checked against the whole stack
  };
  static constexpr std::size_t kContextFrames = 4;
  // What a grammar keeps of its contexts' token sets (about 6.5 KB each on a 49k vocabulary):
  // past it, a context is computed for the step that needs it and not kept.
  static constexpr std::size_t kMaxContextBytes = std::size_t{16} << 20;
  // Of a context: a position whose element is a byte set, then the return positions of up to
  // kContextFrames frames above it, then Matcher::kRoot if the stack ends there (else
  // Matcher::kBeyond). Computed once while the grammar's bound allows.
  std::shared_ptr<const PositionTokens> position_tokens(std::span<const std::uint32_t> context) const;

  // The flat program: every rule's alternatives, each ending with an end element.
  std::vector<Element> code;
  std::vector<std::uint32_t> rule_alternatives_begin;  // [rules + 1] into alternative_starts
  std::vector<std::uint32_t> alternative_starts;       // positions in code
  std::vector<ByteSet> sets;
  std::uint32_t root = 0;
  std::shared_ptr<const TokenVocabulary> vocabulary;

  std::size_t positions_computed() const;

 private:
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<const PositionTokens>> positions_;
  mutable std::size_t position_bytes_ = 0;
  std::size_t max_context_bytes_ = kMaxContextBytes;
};

// A pushdown automaton over bytes: a set of stacks, each a head position (the next byte set
// to match) and the frames to return to, interned so that equal stacks are equal ids. One per
// sequence.
class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Consumes the token's bytes; false (and no change) when the grammar refuses them. An end
  // token is accepted where the grammar may end, after which nothing more is.
  bool accept_token(std::int32_t id);
  bool accept_bytes(std::string_view bytes);
  // The tokens allowed next (end tokens where the grammar may end), into `mask`.
  void fill_mask(TokenMask& mask);
  bool can_end() const noexcept { return accepting_; }
  bool ended() const noexcept { return ended_; }  // an end token was accepted
  const TokenVocabulary& vocabulary() const noexcept { return *grammar_->vocabulary; }

  // Stack heads, for tests and the benchmark.
  std::size_t heads() const noexcept { return heads_.size(); }

  struct Head {
    std::uint32_t pos;
    std::uint32_t parent;  // a frame id, or kRoot
    auto operator<=>(const Head&) const = default;
  };
  static constexpr std::uint32_t kRoot = 0xFFFFFFFFu;    // below the start rule: its end accepts
  static constexpr std::uint32_t kBeyond = 0xFFFFFFFEu;  // an unknown stack (precomputation)

  // Frames: a position to return to and the frame below it.
  // Frames: a position to return to and the frame below it, interned. `slots` is an open-
  // addressing table (linear probing, at most half full) of node ids + 1 (0: empty) by the
  // frame's (pos, parent); nodes are only ever removed newest first (rollback), which linear
  // probing allows without tombstones: no probe path of an older node crosses a newer one.
  struct Frames {
    std::vector<Head> nodes;
    std::vector<std::uint32_t> slots;
    std::uint32_t intern(Head h);
    void rollback(std::size_t size);

   private:
    std::size_t slot_of(Head h) const noexcept;
    void grow();
  };
  // The closure of `start` (references expanded, ends returned from) appended to `heads`;
  // sets `reached_root`/`reached_beyond` where an end returns to kRoot/kBeyond. Heads already
  // expanded since the current advance() (or the constructor) began are skipped: their
  // results are in `heads` and the flags already.
  static void closure(const CompiledGrammar& g, Frames& frames, Head start, std::vector<Head>& heads,
                      bool& reached_root, bool& reached_beyond);
  // Heads after `byte` from `heads`, deduplicated.
  static void advance(const CompiledGrammar& g, Frames& frames, std::span<const Head> heads,
                      std::uint8_t byte, std::vector<Head>& out, bool& reached_root,
                      bool& reached_beyond);

 private:
  bool step(std::string_view bytes, std::span<const Head> from, std::vector<Head>& out,
            bool& accepting);

  std::shared_ptr<const CompiledGrammar> grammar_;
  Frames frames_;
  std::vector<Head> heads_;
  bool accepting_ = false;
  bool ended_ = false;
  std::vector<Head> scratch_a_, scratch_b_;
  std::vector<std::uint32_t> context_;  // fill_mask's, per head
};

// The grammar as a stage of the sampler chain: it feeds the matcher the tokens sampled since
// its last call and masks every token the grammar does not allow next to -inf. Where the
// grammar may end, the end tokens stay; where it must end (or after it ended), only they do.
class GrammarProcessor final : public LogitsProcessor {
 public:
  explicit GrammarProcessor(std::shared_ptr<const CompiledGrammar> grammar);
  void apply(std::span<float> logits, std::span<const std::int32_t> generated) override;
  const Matcher& matcher() const noexcept { return matcher_; }

 private:
  Matcher matcher_;
  std::size_t consumed_ = 0;
  bool broken_ = false;  // a token the grammar refused was sampled anyway (forced by the caller)
  TokenMask mask_;
};

}  // namespace coinfer::generation::grammar
