#include "coinfer/generation/block_manager.hpp"

#include <algorithm>
#include <bit>
#include <cassert>

namespace coinfer::generation {

namespace {

// The parent hash of a sequence's first block.
constexpr std::uint64_t kRootHash = 0;

constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr std::uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;

std::uint64_t mix_lane(std::uint64_t h, std::uint64_t lane) noexcept {
  lane *= kPrime2;
  lane = std::rotl(lane, 31) * kPrime1;
  return std::rotl(h ^ lane, 27) * kPrime1 + kPrime4;
}

}  // namespace

// XXH64's 8-byte lane round and avalanche over (parent hash, token pairs): every input bit
// reaches every output bit, and the length is folded in so that token runs of different
// lengths differ. Quality matters for the hit rate only; hits are verified.
std::uint64_t hash_block(std::uint64_t parent_hash, std::span<const std::int32_t> tokens) noexcept {
  std::uint64_t h = kPrime5 + 8 + 4 * static_cast<std::uint64_t>(tokens.size());
  h = mix_lane(h, parent_hash);
  std::size_t i = 0;
  for (; i + 1 < tokens.size(); i += 2) {
    const auto lo = static_cast<std::uint32_t>(tokens[i]);
    const auto hi = static_cast<std::uint32_t>(tokens[i + 1]);
    h = mix_lane(h, lo | static_cast<std::uint64_t>(hi) << 32);
  }
  if (i < tokens.size()) {
    h ^= static_cast<std::uint32_t>(tokens[i]) * kPrime1;
    h = std::rotl(h, 23) * kPrime2 + kPrime3;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

BlockManager::BlockManager(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching,
                           BlockHasher hasher)
    : block_size_(block_size),
      prefix_caching_(prefix_caching),
      hasher_(hasher),
      blocks_(static_cast<std::size_t>(num_blocks)) {
  assert(num_blocks >= 0 && block_size > 0 && hasher != nullptr);
  if (prefix_caching_) {
    block_tokens_.resize(static_cast<std::size_t>(num_blocks) *
                         static_cast<std::size_t>(block_size));
    cached_.reserve(blocks_.size());
  }
  free_.reserve(blocks_.size());
  for (std::int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);  // block 0 goes first
}

std::int32_t BlockManager::free_blocks() const noexcept {
  return static_cast<std::int32_t>(free_.size()) + evictable_;
}

double BlockManager::usage() const noexcept {
  if (blocks_.empty()) return 0.0;
  return static_cast<double>(num_blocks() - free_blocks()) / static_cast<double>(num_blocks());
}

std::int32_t BlockManager::blocks_needed(std::int32_t tokens) const noexcept {
  return (tokens + block_size_ - 1) / block_size_;
}

std::span<const std::int32_t> BlockManager::tokens_of(std::int32_t block) const {
  return std::span(block_tokens_)
      .subspan(static_cast<std::size_t>(block) * static_cast<std::size_t>(block_size_),
               static_cast<std::size_t>(block_size_));
}

std::int32_t BlockManager::find_cached(std::uint64_t hash, std::span<const std::int32_t> tokens,
                                       Link parent) const {
  const auto it = cached_.find(hash);
  if (it == cached_.end()) return -1;
  const auto block = it->second;
  // The parent check makes a hit exact by induction: the block's own tokens match, and so
  // does everything before it, because its parent is the very block matched one step earlier.
  if (blocks_[block].parent != parent || !std::ranges::equal(tokens_of(block), tokens)) return -1;
  return block;
}

// Leading full blocks of `prompt` in the cache, stopping short of the last prompt token.
BlockManager::PrefixMatch BlockManager::match_prefix(std::span<const std::int32_t> prompt,
                                                     std::vector<std::int32_t>* hits) const {
  PrefixMatch match{.last_hash = kRootHash};
  if (!prefix_caching_ || prompt.empty()) return match;
  const auto max_blocks = static_cast<std::int32_t>(prompt.size() - 1) / block_size_;
  for (std::int32_t i = 0; i < max_blocks; ++i) {
    const auto tokens = prompt.subspan(static_cast<std::size_t>(i) * block_size_,
                                       static_cast<std::size_t>(block_size_));
    const auto hash = hasher_(match.last_hash, tokens);
    const auto block = find_cached(hash, tokens, match.last);
    if (block < 0) break;
    ++match.blocks;
    if (blocks_[block].refs == 0) ++match.evictable_blocks;
    match.last_hash = hash;
    match.last = {block, blocks_[block].generation};
    if (hits) hits->push_back(block);
  }
  return match;
}

bool BlockManager::can_allocate(std::span<const std::int32_t> prompt) const {
  const auto match = match_prefix(prompt, nullptr);
  const auto fresh = blocks_needed(static_cast<std::int32_t>(prompt.size())) - match.blocks;
  return fresh <= free_blocks() - match.evictable_blocks;
}

bool BlockManager::allocate(std::uint64_t seq, std::span<const std::int32_t> prompt,
                            std::int32_t& cached_tokens) {
  assert(!contains(seq));
  Sequence sequence;
  const auto needed = blocks_needed(static_cast<std::int32_t>(prompt.size()));
  sequence.table.reserve(static_cast<std::size_t>(needed));
  const auto match = match_prefix(prompt, &sequence.table);
  if (needed - match.blocks > free_blocks() - match.evictable_blocks) return false;

  for (const auto block : sequence.table) {
    if (blocks_[block].refs++ == 0) lru_remove(block);
  }
  while (static_cast<std::int32_t>(sequence.table.size()) < needed)
    sequence.table.push_back(take_block());
  sequence.num_tokens = static_cast<std::int32_t>(prompt.size());
  sequence.hashed_blocks = match.blocks;
  sequence.last_hash = match.last_hash;
  sequence.last = match.last;
  sequences_.emplace(seq, std::move(sequence));

  cached_tokens = match.blocks * block_size_;
  if (prefix_caching_) {
    queried_tokens_ += prompt.size();
    hit_tokens_ += static_cast<std::uint64_t>(cached_tokens);
  }
  return true;
}

bool BlockManager::append_slots(std::uint64_t seq, std::int32_t count,
                                std::vector<std::pair<std::int32_t, std::int32_t>>& copies) {
  assert(contains(seq) && count >= 0);
  auto& sequence = sequences_.find(seq)->second;
  if (count == 0) return true;
  // Only a partly filled last block is ever written again, so it is the only one to copy.
  const bool copy =
      sequence.num_tokens % block_size_ != 0 && blocks_[sequence.table.back()].refs > 1;
  const auto fresh =
      blocks_needed(sequence.num_tokens + count) - static_cast<std::int32_t>(sequence.table.size());
  if (fresh + (copy ? 1 : 0) > free_blocks()) return false;

  if (copy) {
    const auto shared = sequence.table.back();
    const auto own = take_block();
    --blocks_[shared].refs;  // still > 0: another sequence holds it
    sequence.table.back() = own;
    copies.emplace_back(shared, own);
  }
  for (std::int32_t i = 0; i < fresh; ++i) sequence.table.push_back(take_block());
  sequence.num_tokens += count;
  return true;
}

void BlockManager::mark_computed(std::uint64_t seq, std::span<const std::int32_t> tokens) {
  assert(contains(seq));
  auto& sequence = sequences_.find(seq)->second;
  assert(static_cast<std::int32_t>(tokens.size()) <= sequence.num_tokens);
  if (!prefix_caching_) return;
  const auto full_blocks = static_cast<std::int32_t>(tokens.size()) / block_size_;
  for (auto i = sequence.hashed_blocks; i < full_blocks; ++i) {
    const auto block_tokens = tokens.subspan(static_cast<std::size_t>(i) * block_size_,
                                             static_cast<std::size_t>(block_size_));
    const auto hash = hasher_(sequence.last_hash, block_tokens);
    const auto block = sequence.table[static_cast<std::size_t>(i)];
    auto& b = blocks_[block];
    if (const auto same = find_cached(hash, block_tokens, sequence.last); same >= 0) {
      // Already cached: this very block (shared by fork or a hit), or one computed by a
      // sequence that ran alongside; that one stays the findable copy.
      sequence.last = {same, blocks_[same].generation};
    } else if (!b.cached && !cached_.contains(hash)) {
      b.cached = true;
      b.hash = hash;
      b.parent = sequence.last;
      std::ranges::copy(block_tokens,
                        block_tokens_.begin() + static_cast<std::ptrdiff_t>(block) * block_size_);
      cached_.emplace(hash, block);
      sequence.last = {block, b.generation};
    } else {
      // A hash collision with a different block: this one stays uncached, and so, in effect,
      // do the blocks after it (no lookup can reach them through it).
      sequence.last = {block, b.generation};
    }
    sequence.last_hash = hash;
  }
  sequence.hashed_blocks = std::max(sequence.hashed_blocks, full_blocks);
}

void BlockManager::fork(std::uint64_t parent, std::uint64_t child) {
  assert(contains(parent) && !contains(child));
  Sequence copy = sequences_.find(parent)->second;
  for (const auto block : copy.table) ++blocks_[block].refs;
  sequences_.emplace(child, std::move(copy));
}

void BlockManager::free(std::uint64_t seq) {
  const auto it = sequences_.find(seq);
  assert(it != sequences_.end());
  if (it == sequences_.end()) return;
  // Last block first: it becomes the least recently used, so a prefix is evicted from its
  // tail and its head (what other prompts share) stays findable longest.
  const auto& table = it->second.table;
  for (auto b = table.rbegin(); b != table.rend(); ++b) release(*b);
  sequences_.erase(it);
}

std::span<const std::int32_t> BlockManager::table(std::uint64_t seq) const {
  const auto it = sequences_.find(seq);
  assert(it != sequences_.end());
  if (it == sequences_.end()) return {};
  return it->second.table;
}

std::int32_t BlockManager::ref_count(std::int32_t block) const {
  return blocks_.at(static_cast<std::size_t>(block)).refs;
}

std::int32_t BlockManager::take_block() {
  std::int32_t block;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else {
    assert(lru_head_ >= 0);
    block = lru_head_;
    lru_remove(block);
    uncache(block);
  }
  auto& b = blocks_[block];
  ++b.generation;
  b.refs = 1;
  return block;
}

void BlockManager::release(std::int32_t block) {
  auto& b = blocks_[block];
  assert(b.refs > 0);
  if (--b.refs > 0) return;
  if (b.cached)
    lru_push_back(block);
  else
    free_.push_back(block);
}

void BlockManager::uncache(std::int32_t block) {
  auto& b = blocks_[block];
  cached_.erase(b.hash);
  b.cached = false;
  b.parent = {};
}

void BlockManager::lru_push_back(std::int32_t block) {
  auto& b = blocks_[block];
  b.lru_prev = lru_tail_;
  b.lru_next = -1;
  if (lru_tail_ >= 0)
    blocks_[lru_tail_].lru_next = block;
  else
    lru_head_ = block;
  lru_tail_ = block;
  ++evictable_;
}

void BlockManager::lru_remove(std::int32_t block) {
  auto& b = blocks_[block];
  if (b.lru_prev >= 0)
    blocks_[b.lru_prev].lru_next = b.lru_next;
  else
    lru_head_ = b.lru_next;
  if (b.lru_next >= 0)
    blocks_[b.lru_next].lru_prev = b.lru_prev;
  else
    lru_tail_ = b.lru_prev;
  b.lru_prev = b.lru_next = -1;
  --evictable_;
}

std::string BlockManager::audit() const {
  const auto n = blocks_.size();
  std::vector<std::int32_t> refs(n, 0);
  for (const auto& [id, sequence] : sequences_) {
    if (static_cast<std::int32_t>(sequence.table.size()) != blocks_needed(sequence.num_tokens))
      return "sequence " + std::to_string(id) + ": table size does not match its tokens";
    auto sorted = sequence.table;
    std::ranges::sort(sorted);
    if (std::ranges::adjacent_find(sorted) != sorted.end())
      return "sequence " + std::to_string(id) + ": a block twice in one table";
    for (const auto block : sequence.table) ++refs[static_cast<std::size_t>(block)];
  }
  std::vector<char> in_free(n, 0), in_lru(n, 0);
  for (const auto block : free_) {
    if (in_free[static_cast<std::size_t>(block)]++) return "block twice in the free pool";
  }
  std::int32_t lru_count = 0;
  for (auto block = lru_head_, prev = -1; block >= 0;
       prev = block, block = blocks_[block].lru_next) {
    if (blocks_[block].lru_prev != prev) return "evictable list links broken";
    if (in_lru[static_cast<std::size_t>(block)]++) return "evictable list has a cycle";
    ++lru_count;
  }
  if (lru_count != evictable_) return "evictable count does not match the list";
  for (std::size_t i = 0; i < n; ++i) {
    const auto& b = blocks_[i];
    const auto name = "block " + std::to_string(i);
    if (b.refs != refs[i]) return name + ": refs differ from the tables holding it";
    const int places = (b.refs > 0) + in_free[i] + in_lru[i];
    if (places != 1) return name + ": in " + std::to_string(places) + " places";
    if (in_free[i] && b.cached) return name + ": free but cached";
    if (in_lru[i] && !b.cached) return name + ": evictable but not cached";
    if (b.cached) {
      const auto it = cached_.find(b.hash);
      if (it == cached_.end() || it->second != static_cast<std::int32_t>(i))
        return name + ": cached but not findable by its hash";
    }
  }
  for (const auto& [hash, block] : cached_) {
    if (!blocks_[block].cached || blocks_[block].hash != hash) return "stale hash entry";
  }
  return {};
}

}  // namespace coinfer::generation
