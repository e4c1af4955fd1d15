#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace coinfer::generation {

// The hash that names a full block for prefix caching: (hash of the block before it, the
// block's token ids). 64 bits, so collisions are possible in principle; BlockManager
// verifies every hit (see there) and never trusts the hash alone.
using BlockHasher = std::uint64_t (*)(std::uint64_t parent_hash,
                                      std::span<const std::int32_t> tokens);
std::uint64_t hash_block(std::uint64_t parent_hash, std::span<const std::int32_t> tokens) noexcept;

// The bookkeeping of a paged KV cache (vLLM's block manager with automatic prefix caching):
// which block ids each sequence's tokens live in. Mechanism only: it counts and hands out
// blocks; the scheduler decides what runs, what waits and what is preempted. The KV itself
// lives in the model (per layer K and V: [num_blocks, block_size, kv_heads, head_dim]); token
// t of a sequence is at slot t % block_size of block table(seq)[t / block_size].
//
// Every block is in exactly one of three places:
//   referenced  refs > 0: in the tables of `refs` live sequences (fork shares blocks);
//   evictable   refs == 0 and cached: its KV is still valid and findable by hash, kept in
//               LRU order and reused only when no free block is left;
//   free        refs == 0 and not cached.
// A block is cached (findable) once mark_computed() saw it full. A hit must match the block's
// tokens and the identity of the cached block before it, so a 64-bit hash collision can cost
// a hit but never return wrong KV.
//
// Sequences are named by the caller's ids. Passing an id that is not (or, for allocate and
// fork's child, already) live is a programmer error. Not thread-safe: one per scheduler.
class BlockManager {
 public:
  // `hasher` is for tests that need collisions; the default is hash_block.
  explicit BlockManager(std::int32_t num_blocks, std::int32_t block_size = 16,
                        bool prefix_caching = true, BlockHasher hasher = &hash_block);

  std::int32_t block_size() const noexcept { return block_size_; }  // tokens per block
  std::int32_t num_blocks() const noexcept { return static_cast<std::int32_t>(blocks_.size()); }
  // Allocatable now: free plus evictable blocks.
  std::int32_t free_blocks() const noexcept;
  // Fraction of blocks referenced by live sequences; evictable cached blocks count as free.
  double usage() const noexcept;
  std::int32_t blocks_needed(std::int32_t tokens) const noexcept;

  // Whether allocate(prompt) would succeed now, counting prefix cache hits.
  bool can_allocate(std::span<const std::int32_t> prompt) const;
  // Blocks for the whole prompt; false, with nothing changed, if there are not enough.
  // `cached_tokens` is how many leading prompt tokens already have their KV (whole blocks
  // shared from the prefix cache), always < prompt.size() so that the last prompt token is
  // computed and gives logits; prefill starts there.
  bool allocate(std::uint64_t seq, std::span<const std::int32_t> prompt,
                std::int32_t& cached_tokens);
  // Room for `count` more tokens at the end of seq (decode: 1). If the block the next token
  // goes to is shared, seq gets a private copy first and (src, dst) is appended to `copies`:
  // the model must copy that block's KV before writing. False, with nothing changed, if the
  // blocks run out; the scheduler then preempts.
  bool append_slots(std::uint64_t seq, std::int32_t count,
                    std::vector<std::pair<std::int32_t, std::int32_t>>& copies);
  // `tokens` are seq's tokens (prompt, then generated) whose KV the model has written; their
  // full blocks become findable by later prompts. Call after each step; repeats are cheap.
  void mark_computed(std::uint64_t seq, std::span<const std::int32_t> tokens);
  // child shares all of parent's blocks (copy-on-write on the next append_slots).
  void fork(std::uint64_t parent, std::uint64_t child);
  // Gives back seq's blocks: cached ones become evictable (the sequence's last block first in
  // line for eviction, its first last), the others free.
  void free(std::uint64_t seq);

  std::span<const std::int32_t> table(std::uint64_t seq) const;
  bool contains(std::uint64_t seq) const noexcept { return sequences_.contains(seq); }

  // Prefix cache queries and hits, in prompt tokens, over successful allocate() calls.
  std::uint64_t prefix_queried_tokens() const noexcept { return queried_tokens_; }
  std::uint64_t prefix_hit_tokens() const noexcept { return hit_tokens_; }

  // For tests and debugging.
  std::int32_t ref_count(std::int32_t block) const;
  // Empty when all the invariants above hold; otherwise the first one found broken.
  std::string audit() const;

 private:
  // One content of one block: generation changes whenever a block leaves the free or
  // evictable pool, so a stale Link never matches the block's next content.
  struct Link {
    std::int32_t block = -1;
    std::uint32_t generation = 0;
    bool operator==(const Link&) const = default;
  };
  struct Block {
    std::int32_t refs = 0;
    std::uint32_t generation = 0;
    bool cached = false;  // in cached_ under `hash`
    std::uint64_t hash = 0;
    Link parent{};  // the cached block before this one; block -1 for a sequence's first
    std::int32_t lru_prev = -1, lru_next = -1;  // evictable list; valid when evictable
  };
  struct Sequence {
    std::vector<std::int32_t> table;
    std::int32_t num_tokens = 0;     // slots reserved
    std::int32_t hashed_blocks = 0;  // leading full blocks seen by mark_computed
    std::uint64_t last_hash = 0;     // chain hash through block hashed_blocks - 1
    Link last{};                     // the cached block with that content, if any
  };
  struct PrefixMatch {
    std::int32_t blocks = 0;            // leading prompt blocks found in the cache
    std::int32_t evictable_blocks = 0;  // of those, how many are now evictable
    std::uint64_t last_hash = 0;
    Link last{};
  };

  std::span<const std::int32_t> tokens_of(std::int32_t block) const;
  std::int32_t find_cached(std::uint64_t hash, std::span<const std::int32_t> tokens,
                           Link parent) const;
  PrefixMatch match_prefix(std::span<const std::int32_t> prompt,
                           std::vector<std::int32_t>* hits) const;
  std::int32_t take_block();  // from the free pool, else evicts the LRU cached block
  void release(std::int32_t block);
  void lru_push_back(std::int32_t block);
  void lru_remove(std::int32_t block);
  void uncache(std::int32_t block);

  std::int32_t block_size_;
  bool prefix_caching_;
  BlockHasher hasher_;
  std::vector<Block> blocks_;
  // Tokens of each cached block, [num_blocks, block_size]; empty without prefix caching.
  std::vector<std::int32_t> block_tokens_;
  std::vector<std::int32_t> free_;  // free block ids, taken from the back
  std::int32_t lru_head_ = -1, lru_tail_ = -1, evictable_ = 0;  // head: evicted first
  std::unordered_map<std::uint64_t, std::int32_t> cached_;      // hash -> block
  std::unordered_map<std::uint64_t, Sequence> sequences_;
  std::uint64_t queried_tokens_ = 0;
  std::uint64_t hit_tokens_ = 0;
};

}  // namespace coinfer::generation
