#include "coinfer/generation/grammar/matcher.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>
#include <numeric>

#include "coinfer/tokenizers/bpe.hpp"

namespace coinfer::generation::grammar {

using Head = Matcher::Head;

// --- TokenVocabulary ---------------------------------------------------------------------

TokenVocabulary::TokenVocabulary(const ByteLevelBpeTokenizer& tokenizer)
    : size_(static_cast<std::int32_t>(tokenizer.vocab_size())) {
  offsets_.reserve(static_cast<std::size_t>(size_) + 1);
  offsets_.push_back(0);
  for (std::int32_t id = 0; id < size_; ++id) {
    if (!tokenizer.is_control(id)) (void)tokenizer.token_bytes(id, bytes_);
    offsets_.push_back(static_cast<std::uint32_t>(bytes_.size()));
  }
  if (tokenizer.eos_id() >= 0) end_ids_.push_back(tokenizer.eos_id());
  for (const char* marker : {"<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>"}) {
    if (auto id = tokenizer.token_id(marker); id && std::ranges::find(end_ids_, *id) == end_ids_.end())
      end_ids_.push_back(*id);
  }

  // Preorder trie from the tokens sorted by their bytes: each token shares its longest common
  // prefix with the one before, so the path to it is the previous path cut there and extended.
  std::vector<std::int32_t> order;
  for (std::int32_t id = 0; id < size_; ++id) {
    if (!bytes(id).empty()) order.push_back(id);
  }
  std::ranges::sort(order, [this](std::int32_t a, std::int32_t b) {
    return bytes(a) < bytes(b) || (bytes(a) == bytes(b) && a < b);
  });
  byte.push_back(0);
  subtree_end.push_back(0);
  std::vector<std::uint32_t> ends_at;  // per node: tokens ending there, counted
  ends_at.push_back(0);
  std::vector<std::uint32_t> path{0};  // nodes from the root to the last token's node
  std::string_view previous;
  for (const auto id : order) {
    const auto text = bytes(id);
    std::size_t common = 0;
    while (common < previous.size() && common < text.size() && previous[common] == text[common])
      ++common;
    while (path.size() > common + 1) {
      subtree_end[path.back()] = static_cast<std::uint32_t>(byte.size());
      path.pop_back();
    }
    for (std::size_t i = common; i < text.size(); ++i) {
      path.push_back(static_cast<std::uint32_t>(byte.size()));
      byte.push_back(static_cast<std::uint8_t>(text[i]));
      subtree_end.push_back(0);
      ends_at.push_back(0);
    }
    ++ends_at[path.back()];
    token_ids.push_back(id);
    previous = text;
  }
  while (!path.empty()) {
    subtree_end[path.back()] = static_cast<std::uint32_t>(byte.size());
    path.pop_back();
  }
  // Tokens were appended in preorder of their end nodes, so prefix sums place them.
  token_begin.resize(byte.size() + 1);
  token_begin[0] = 0;
  for (std::size_t i = 0; i < byte.size(); ++i) token_begin[i + 1] = token_begin[i] + ends_at[i];
}

// --- CompiledGrammar ---------------------------------------------------------------------

Status CompiledGrammar::compile(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                                std::shared_ptr<const CompiledGrammar>& out,
                                std::size_t max_context_bytes) {
  if (!grammar.status.ok()) return grammar.status;
  auto g = std::make_shared<CompiledGrammar>();
  const auto& rules = grammar.rules();
  g->rule_alternatives_begin.reserve(rules.size() + 1);
  g->code.reserve(grammar.elements());
  for (const auto& rule : rules) {
    g->rule_alternatives_begin.push_back(static_cast<std::uint32_t>(g->alternative_starts.size()));
    for (const auto& alt : rule.alternatives) {
      g->alternative_starts.push_back(static_cast<std::uint32_t>(g->code.size()));
      g->code.insert(g->code.end(), alt.begin(), alt.end());
      g->code.push_back({Element::Kind::end, 0});
    }
  }
  g->rule_alternatives_begin.push_back(static_cast<std::uint32_t>(g->alternative_starts.size()));
  g->sets = grammar.sets();
  g->root = grammar.root();
  g->vocabulary = std::move(vocabulary);
  g->max_context_bytes_ = max_context_bytes;
  out = std::move(g);
  return {};
}

std::size_t CompiledGrammar::positions_computed() const {
  std::lock_guard lock(mutex_);
  return positions_.size();
}

namespace {

void set_bit(TokenMask& mask, std::int32_t id) {
  mask[static_cast<std::size_t>(id) >> 6] |= std::uint64_t{1} << (id & 63);
}
bool test_bit(const TokenMask& mask, std::int32_t id) {
  return (mask[static_cast<std::size_t>(id) >> 6] >> (id & 63)) & 1;
}

// The walk that classifies every token at one position: depth-first over the trie, the heads
// after each prefix on a stack of levels; frames made below a node are dropped on the way back.
struct PositionWalk {
  const CompiledGrammar& g;
  const TokenVocabulary& v;
  CompiledGrammar::PositionTokens& out;
  Matcher::Frames frames;
  std::vector<std::vector<Head>> levels;

  void tokens_of(std::uint32_t node, bool subtree, bool accepted) {
    const auto end = subtree ? v.token_begin[v.subtree_end[node]] : v.token_begin[node + 1];
    for (auto i = v.token_begin[node]; i < end; ++i) {
      if (accepted)
        set_bit(out.accepted, v.token_ids[i]);
      else
        out.uncertain.push_back(v.token_ids[i]);
    }
  }

  void walk(std::uint32_t node, std::size_t depth, bool popped_before) {
    if (levels.size() <= depth + 1) levels.resize(depth + 2);
    for (auto child = node + 1; child < v.subtree_end[node]; child = v.subtree_end[child]) {
      auto& next = levels[depth + 1];
      next.clear();
      bool root = false, beyond = false;
      const auto mark = frames.nodes.size();
      Matcher::advance(g, frames, levels[depth], v.byte[child], next, root, beyond);
      // Reaching the start rule's end accepts a token that ends there; nothing goes on past it.
      if (!next.empty() || beyond || root) {
        tokens_of(child, false, true);
      } else if (popped_before) {
        tokens_of(child, false, false);
      }
      if (next.empty()) {
        // Nothing inside the rule goes on; past its end, only the whole stack can tell.
        if (popped_before || beyond) {
          for (auto c = child + 1; c < v.subtree_end[child]; c = v.subtree_end[c])
            tokens_of(c, true, false);
        }
      } else {
        walk(child, depth + 1, popped_before || beyond);
      }
      frames.rollback(mark);
    }
  }
};

}  // namespace

std::shared_ptr<const CompiledGrammar::PositionTokens> CompiledGrammar::position_tokens(
    std::span<const std::uint32_t> context) const {
  assert(context.size() >= 2);
  const std::string key(reinterpret_cast<const char*>(context.data()), context.size_bytes());
  std::lock_guard lock(mutex_);
  if (const auto it = positions_.find(key); it != positions_.end()) return it->second;
  auto tokens = std::make_shared<PositionTokens>();
  const auto& v = *vocabulary;
  tokens->accepted.assign((static_cast<std::size_t>(v.size()) + 63) / 64, 0);
  PositionWalk walk{*this, v, *tokens, {}, {}};
  // The known frames rebuilt from the bottom: what lies below them is kRoot or unknown.
  std::uint32_t parent = context.back();
  for (std::size_t i = context.size() - 1; i-- > 1;) parent = walk.frames.intern({context[i], parent});
  walk.levels.push_back({Head{context[0], parent}});
  walk.walk(0, 0, false);
  std::ranges::sort(tokens->uncertain);
  const auto bytes = tokens->accepted.size() * sizeof(std::uint64_t) +
                     tokens->uncertain.size() * sizeof(std::int32_t) + key.size();
  if (position_bytes_ + bytes <= max_context_bytes_) {
    position_bytes_ += bytes;
    positions_.emplace(key, tokens);
  }
  return tokens;
}

// --- Matcher -----------------------------------------------------------------------------

std::size_t Matcher::Frames::slot_of(Head h) const noexcept {
  // Fibonacci hashing of the (pos, parent) pair.
  const auto key = (std::uint64_t{h.pos} << 32 | h.parent) * 0x9E3779B97F4A7C15ull;
  const auto mask = slots.size() - 1;
  auto i = static_cast<std::size_t>(key >> 32) & mask;
  while (slots[i] != 0 && nodes[slots[i] - 1] != h) i = (i + 1) & mask;
  return i;
}

void Matcher::Frames::grow() {
  slots.assign(std::max<std::size_t>(64, slots.size() * 2), 0);
  // Reinserted oldest first, so that rollback's newest-first removal stays safe.
  for (std::uint32_t id = 0; id < nodes.size(); ++id) slots[slot_of(nodes[id])] = id + 1;
}

std::uint32_t Matcher::Frames::intern(Head h) {
  if ((nodes.size() + 1) * 2 > slots.size()) grow();
  const auto i = slot_of(h);
  if (slots[i] != 0) return slots[i] - 1;
  nodes.push_back(h);
  slots[i] = static_cast<std::uint32_t>(nodes.size());
  return slots[i] - 1;
}

void Matcher::Frames::rollback(std::size_t size) {
  while (nodes.size() > size) {
    slots[slot_of(nodes.back())] = 0;
    nodes.pop_back();
  }
}

namespace {

// The heads expanded since start(): an open-addressing set (linear probing, at most half
// full) whose entries belong to the current round when their stamp is its stamp, so that
// starting the next one clears nothing. Most rounds expand a handful of heads (a token set's
// computation runs one per trie node): the first kUntracked go unrecorded, so at most that
// many are expanded twice, and those rounds pay a counter instead of a hash.
class SeenHeads {
 public:
  void start() {
    if (++stamp_ == 0) {  // wrapped: forget every older stamp
      std::fill(stamps_.begin(), stamps_.end(), 0u);
      stamp_ = 1;
    }
    count_ = 0;
    expanded_ = 0;
  }
  // False when the round has recorded `key` before.
  bool insert(std::uint64_t key) {
    if (++expanded_ <= kUntracked) return true;
    return record(key);
  }

 private:
  static constexpr std::size_t kUntracked = 32;

  bool record(std::uint64_t key) {
    if ((count_ + 1) * 2 > keys_.size()) grow();
    for (auto i = slot(key);; i = (i + 1) & (keys_.size() - 1)) {
      if (stamps_[i] != stamp_) {
        keys_[i] = key;
        stamps_[i] = stamp_;
        ++count_;
        return true;
      }
      if (keys_[i] == key) return false;
    }
  }
  std::size_t slot(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (keys_.size() - 1);
  }
  void grow() {
    std::vector<std::uint64_t> keys;
    keys.swap(keys_);
    std::vector<std::uint32_t> stamps;
    stamps.swap(stamps_);
    keys_.assign(std::max<std::size_t>(64, keys.size() * 2), 0);
    stamps_.assign(keys_.size(), 0);
    count_ = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (stamps[i] == stamp_) record(keys[i]);
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> stamps_;
  std::uint32_t stamp_ = 0;
  std::size_t count_ = 0;     // recorded this round
  std::size_t expanded_ = 0;  // insert() calls this round
};

// The heads expanded since the last advance() or constructor began: a head reached again, from
// another start or by another path, adds nothing new to the same output.
SeenHeads& seen_heads() {
  thread_local SeenHeads seen;
  return seen;
}

}  // namespace

void Matcher::closure(const CompiledGrammar& g, Frames& frames, Head start, std::vector<Head>& heads,
                      bool& reached_root, bool& reached_beyond) {
  // Without left recursion (Grammar::finish) every path consumes a byte or returns to a
  // shallower frame before it meets the same rule again, so this ends. Ambiguous grammars
  // reach one head by several paths: a head (a position and the interned frame below it) has
  // one future, so each is expanded once per advance (seen_heads); without that, a repeated
  // group of empty alternatives ((a | | ... |){2,4}) takes exponentially many paths.
  thread_local std::vector<Head> work;
  SeenHeads& seen = seen_heads();
  const auto base = work.size();
  work.push_back(start);
  while (work.size() > base) {
    const Head h = work.back();
    work.pop_back();
    if (!seen.insert(std::uint64_t{h.pos} << 32 | h.parent)) continue;
    const Element e = g.code[h.pos];
    switch (e.kind) {
      case Element::Kind::bytes:
        heads.push_back(h);
        break;
      case Element::Kind::end:
        if (h.parent == kRoot) {
          reached_root = true;
        } else if (h.parent == kBeyond) {
          reached_beyond = true;
        } else {
          work.push_back(frames.nodes[h.parent]);
        }
        break;
      case Element::Kind::rule: {
        // A reference in tail position returns straight to the caller's frame: repetition
        // (r ::= x r) keeps a constant depth.
        const auto after = h.pos + 1;
        const auto frame = g.code[after].kind == Element::Kind::end ? h.parent
                                                                    : frames.intern({after, h.parent});
        for (auto a = g.rule_alternatives_begin[e.value]; a < g.rule_alternatives_begin[e.value + 1];
             ++a) {
          work.push_back({g.alternative_starts[a], frame});
        }
        break;
      }
    }
  }
}

void Matcher::advance(const CompiledGrammar& g, Frames& frames, std::span<const Head> heads,
                      std::uint8_t byte, std::vector<Head>& out, bool& reached_root,
                      bool& reached_beyond) {
  seen_heads().start();
  for (const auto& h : heads) {
    if (g.sets[g.code[h.pos].value].test(byte)) {
      closure(g, frames, {h.pos + 1, h.parent}, out, reached_root, reached_beyond);
    }
  }
  if (out.size() > 1) {
    std::ranges::sort(out);
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
}

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)) {
  const auto& g = *grammar_;
  bool beyond = false;
  seen_heads().start();
  for (auto a = g.rule_alternatives_begin[g.root]; a < g.rule_alternatives_begin[g.root + 1]; ++a)
    closure(g, frames_, {g.alternative_starts[a], kRoot}, heads_, accepting_, beyond);
  std::ranges::sort(heads_);
  heads_.erase(std::unique(heads_.begin(), heads_.end()), heads_.end());
}

bool Matcher::step(std::string_view bytes, std::span<const Head> from, std::vector<Head>& out,
                   bool& accepting) {
  scratch_a_.assign(from.begin(), from.end());
  accepting = false;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out.clear();
    accepting = false;
    bool beyond = false;
    advance(*grammar_, frames_, scratch_a_, static_cast<std::uint8_t>(bytes[i]), out, accepting,
            beyond);
    if (out.empty()) return accepting && i + 1 == bytes.size();
    scratch_a_.swap(out);
  }
  out.swap(scratch_a_);
  return true;
}

bool Matcher::accept_bytes(std::string_view bytes) {
  if (ended_) return bytes.empty();
  if (bytes.empty()) return true;
  const auto mark = frames_.nodes.size();
  bool accepting = false;
  if (!step(bytes, heads_, scratch_b_, accepting)) {
    frames_.rollback(mark);
    return false;
  }
  heads_.swap(scratch_b_);
  accepting_ = accepting;
  return true;
}

bool Matcher::accept_token(std::int32_t id) {
  const auto& v = *grammar_->vocabulary;
  if (std::ranges::find(v.end_ids(), id) != v.end_ids().end()) {
    if (!accepting_ || ended_) return false;
    ended_ = true;
    heads_.clear();
    return true;
  }
  if (id < 0 || id >= v.size() || v.bytes(id).empty()) return false;
  return accept_bytes(v.bytes(id));
}

void Matcher::fill_mask(TokenMask& mask) {
  const auto& v = *grammar_->vocabulary;
  mask.assign((static_cast<std::size_t>(v.size()) + 63) / 64, 0);
  if (ended_) return;
  for (const Head& h : heads_) {
    context_.assign(1, h.pos);
    auto frame = h.parent;
    while (frame != kRoot && context_.size() <= CompiledGrammar::kContextFrames) {
      context_.push_back(frames_.nodes[frame].pos);
      frame = frames_.nodes[frame].parent;
    }
    context_.push_back(frame == kRoot ? kRoot : kBeyond);
    const auto tokens = grammar_->position_tokens(context_);
    const auto& p = *tokens;
    for (std::size_t w = 0; w < mask.size(); ++w) mask[w] |= p.accepted[w];
    for (const auto id : p.uncertain) {
      if (test_bit(mask, id)) continue;
      const auto mark = frames_.nodes.size();
      bool accepting = false;
      if (step(v.bytes(id), std::span<const Head>(&h, 1), scratch_b_, accepting)) set_bit(mask, id);
      frames_.rollback(mark);
    }
  }
  if (accepting_) {
    for (const auto id : v.end_ids()) set_bit(mask, id);
  }
}

// --- GrammarProcessor --------------------------------------------------------------------

GrammarProcessor::GrammarProcessor(std::shared_ptr<const CompiledGrammar> grammar)
    : matcher_(std::move(grammar)) {}

void GrammarProcessor::apply(std::span<float> logits, std::span<const std::int32_t> generated) {
  for (; consumed_ < generated.size(); ++consumed_) {
    if (!broken_ && !matcher_.accept_token(generated[consumed_])) broken_ = true;
  }
  if (broken_) {
    // Only reachable when something after the mask forced a token (min_tokens past the end):
    // nothing the grammar could say is right any more, so the sequence may only end.
    mask_.assign((logits.size() + 63) / 64, 0);
  } else {
    matcher_.fill_mask(mask_);
  }
  bool any = false;
  for (const auto w : mask_) any = any || w != 0;
  // A grammar always leaves something while it runs; a finished or broken one leaves the end
  // tokens.
  if (!any || matcher_.ended()) {
    mask_.assign((logits.size() + 63) / 64, 0);
    for (const auto id : matcher_.vocabulary().end_ids()) {
      if (static_cast<std::size_t>(id) < logits.size()) set_bit(mask_, id);
    }
  }
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  const auto n = std::min(logits.size(), mask_.size() * 64);
  for (std::size_t w = 0; w * 64 < n; ++w) {
    const auto bits = mask_[w];
    if (bits == ~std::uint64_t{0}) continue;
    const auto end = std::min(n, w * 64 + 64);
    for (auto i = w * 64; i < end; ++i) {
      if (!((bits >> (i - w * 64)) & 1)) logits[i] = kMasked;
    }
  }
  for (auto i = n; i < logits.size(); ++i) logits[i] = kMasked;
}

}  // namespace coinfer::generation::grammar
