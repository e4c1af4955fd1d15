#include "coinfer/generation/block_manager.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

using coinfer::generation::BlockManager;
using coinfer::generation::hash_block;

namespace {

using Tokens = std::vector<std::int32_t>;
using Copies = std::vector<std::pair<std::int32_t, std::int32_t>>;

// `count` tokens first, first + 1, ...
Tokens run(std::int32_t first, std::int32_t count) {
  Tokens tokens(static_cast<std::size_t>(count));
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

Tokens operator+(Tokens a, const Tokens& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Tokens table_of(const BlockManager& blocks, std::uint64_t seq) {
  const auto table = blocks.table(seq);
  return {table.begin(), table.end()};
}

// Allocates and marks the whole prompt computed, as after its prefill; returns cached tokens.
std::int32_t prefill(BlockManager& blocks, std::uint64_t seq, const Tokens& prompt) {
  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(seq, prompt, cached));
  blocks.mark_computed(seq, prompt);
  return cached;
}

}  // namespace

TEST_CASE("a prompt takes one block per block_size tokens and free gives them all back") {
  BlockManager blocks(10, 4);
  CHECK(blocks.block_size() == 4);
  CHECK(blocks.num_blocks() == 10);
  CHECK(blocks.blocks_needed(0) == 0);
  CHECK(blocks.blocks_needed(4) == 1);
  CHECK(blocks.blocks_needed(5) == 2);

  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(1, run(0, 10), cached));
  CHECK(cached == 0);
  CHECK(blocks.contains(1));
  CHECK(blocks.table(1).size() == 3);
  CHECK(blocks.free_blocks() == 7);
  CHECK(blocks.usage() == doctest::Approx(0.3));

  blocks.free(1);
  CHECK_FALSE(blocks.contains(1));
  CHECK(blocks.free_blocks() == 10);
  CHECK(blocks.usage() == 0.0);
  CHECK(blocks.audit() == "");
}

TEST_CASE("an allocation that does not fit returns false and changes nothing") {
  BlockManager blocks(4, 4);
  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(1, run(0, 12), cached));
  const auto before = table_of(blocks, 1);

  CHECK_FALSE(blocks.can_allocate(run(100, 8)));
  CHECK_FALSE(blocks.allocate(2, run(100, 8), cached));
  CHECK_FALSE(blocks.contains(2));
  CHECK(blocks.free_blocks() == 1);
  CHECK(table_of(blocks, 1) == before);
  CHECK(blocks.prefix_queried_tokens() == 12);  // the failed attempt is not counted
  CHECK(blocks.audit() == "");

  CHECK(blocks.can_allocate(run(100, 4)));
  CHECK(blocks.allocate(2, run(100, 4), cached));
  CHECK(blocks.free_blocks() == 0);
}

TEST_CASE("append_slots takes a new block only when the last one is full") {
  BlockManager blocks(4, 4);
  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(1, run(0, 3), cached));
  Copies copies;
  CHECK(blocks.append_slots(1, 1, copies));  // 4 tokens
  CHECK(blocks.table(1).size() == 1);
  CHECK(blocks.append_slots(1, 1, copies));  // 5 tokens: across the boundary
  CHECK(blocks.table(1).size() == 2);
  CHECK(blocks.append_slots(1, 4, copies));  // 9 tokens
  CHECK(blocks.table(1).size() == 3);
  CHECK(blocks.append_slots(1, 0, copies));
  CHECK(copies.empty());

  const auto before = table_of(blocks, 1);
  CHECK_FALSE(blocks.append_slots(1, 8, copies));  // needs 2 more blocks, 1 is left
  CHECK(table_of(blocks, 1) == before);
  CHECK(blocks.free_blocks() == 1);
  CHECK(blocks.append_slots(1, 7, copies));  // 16 tokens: exactly 4 blocks
  CHECK(blocks.free_blocks() == 0);
  CHECK(blocks.audit() == "");
}

TEST_CASE("a fork shares every block and the first write into a shared block copies it") {
  BlockManager blocks(8, 4);
  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(1, run(0, 6), cached));  // one full block, one with 2 of 4 tokens
  const auto parent = table_of(blocks, 1);
  blocks.fork(1, 2);
  CHECK(table_of(blocks, 2) == parent);
  CHECK(blocks.ref_count(parent[0]) == 2);
  CHECK(blocks.ref_count(parent[1]) == 2);
  CHECK(blocks.free_blocks() == 6);

  Copies copies;
  REQUIRE(blocks.append_slots(2, 1, copies));
  REQUIRE(copies.size() == 1);
  const auto child = table_of(blocks, 2);
  CHECK(copies[0] == std::pair{parent[1], child[1]});
  CHECK(child[0] == parent[0]);
  CHECK(child[1] != parent[1]);
  CHECK(blocks.ref_count(parent[0]) == 2);
  CHECK(blocks.ref_count(parent[1]) == 1);
  CHECK(blocks.ref_count(child[1]) == 1);

  copies.clear();
  REQUIRE(blocks.append_slots(1, 1, copies));  // the parent's block is its own again
  CHECK(copies.empty());
  CHECK(table_of(blocks, 1) == parent);
  CHECK(blocks.audit() == "");

  blocks.free(1);
  CHECK(blocks.ref_count(parent[0]) == 1);
  blocks.free(2);
  CHECK(blocks.ref_count(parent[0]) == 0);
  CHECK(blocks.free_blocks() == 8);
  CHECK(blocks.audit() == "");
}

TEST_CASE("a fork whose last block is full copies nothing on append") {
  BlockManager blocks(8, 4);
  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(1, run(0, 8), cached));
  blocks.fork(1, 2);
  Copies copies;
  REQUIRE(blocks.append_slots(2, 1, copies));
  CHECK(copies.empty());
  CHECK(blocks.table(2).size() == 3);
  CHECK(blocks.table(2)[1] == blocks.table(1)[1]);
  CHECK(blocks.audit() == "");
}

TEST_CASE("a second prompt with the same system prompt shares its full blocks") {
  BlockManager blocks(16, 4);
  const auto system = run(1000, 8);
  CHECK(prefill(blocks, 1, system + Tokens{1, 2, 3}) == 0);

  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(2, system + Tokens{7, 8}, cached));
  CHECK(cached == 8);
  CHECK(blocks.table(2)[0] == blocks.table(1)[0]);
  CHECK(blocks.table(2)[1] == blocks.table(1)[1]);
  CHECK(blocks.table(2)[2] != blocks.table(1)[2]);
  CHECK(blocks.ref_count(blocks.table(1)[0]) == 2);
  CHECK(blocks.prefix_queried_tokens() == 21);
  CHECK(blocks.prefix_hit_tokens() == 8);
  CHECK(blocks.audit() == "");
}

TEST_CASE("the last prompt token is never reported cached") {
  BlockManager blocks(16, 4);
  const auto prompt = run(0, 8);
  prefill(blocks, 1, prompt);

  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(2, prompt, cached));
  CHECK(cached == 4);  // the second block is computed again for the last token's logits
  CHECK(blocks.table(2)[0] == blocks.table(1)[0]);
  CHECK(blocks.table(2)[1] != blocks.table(1)[1]);

  REQUIRE(blocks.allocate(3, run(0, 4), cached));
  CHECK(cached == 0);
  REQUIRE(blocks.allocate(4, run(0, 1), cached));
  CHECK(cached == 0);
  CHECK(blocks.audit() == "");
}

TEST_CASE("a partly filled block is not shared until it is full and computed") {
  BlockManager blocks(16, 4);
  auto tokens = run(0, 6);
  prefill(blocks, 1, tokens);

  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(2, run(0, 9), cached));
  CHECK(cached == 4);

  Copies copies;
  REQUIRE(blocks.append_slots(1, 2, copies));
  tokens.push_back(6);
  tokens.push_back(7);
  blocks.mark_computed(1, tokens);
  REQUIRE(blocks.allocate(3, run(0, 9), cached));
  CHECK(cached == 8);
  CHECK(blocks.table(3)[1] == blocks.table(1)[1]);
  CHECK(blocks.audit() == "");
}

TEST_CASE("a hash collision never shares a block with other tokens") {
  SUBCASE("same hash, other tokens") {
    BlockManager blocks(16, 4, true, [](std::uint64_t, std::span<const std::int32_t>) {
      return std::uint64_t{42};
    });
    prefill(blocks, 1, run(0, 4) + Tokens{9});
    std::int32_t cached = -1;
    REQUIRE(blocks.allocate(2, run(100, 4) + Tokens{9}, cached));
    CHECK(cached == 0);
    REQUIRE(blocks.allocate(3, run(0, 4) + Tokens{9}, cached));
    CHECK(cached == 4);  // the genuine match is still found
    CHECK(blocks.audit() == "");
  }
  SUBCASE("same hash and tokens, other prefix") {
    // Blind to the parent hash: a block's hash depends on its own tokens only.
    BlockManager blocks(16, 4, true, [](std::uint64_t, std::span<const std::int32_t> tokens) {
      return hash_block(0, tokens);
    });
    prefill(blocks, 1, run(0, 4) + run(50, 4) + Tokens{9});
    std::int32_t cached = -1;
    // Its first block has the tokens and hash of the first prompt's second block.
    REQUIRE(blocks.allocate(2, run(50, 4) + Tokens{9}, cached));
    CHECK(cached == 0);
    REQUIRE(blocks.allocate(3, run(0, 4) + run(50, 4) + Tokens{9}, cached));
    CHECK(cached == 8);
    CHECK(blocks.audit() == "");
  }
}

TEST_CASE("hash_block depends on the parent hash and on every token") {
  const auto tokens = run(0, 16);
  const auto h = hash_block(0, tokens);
  CHECK(hash_block(1, tokens) != h);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    auto changed = tokens;
    changed[i] ^= 1;
    CHECK(hash_block(0, changed) != h);
  }
  CHECK(hash_block(0, run(0, 15)) != hash_block(0, run(0, 15) + Tokens{0}));
}

TEST_CASE("evictable blocks are reused least recently used first, a sequence's tail first") {
  BlockManager blocks(6, 4);
  const auto a = run(0, 8) + Tokens{99};    // full blocks a0 a1
  const auto b = run(100, 4) + Tokens{99};  // full block b0
  prefill(blocks, 1, a);
  blocks.free(1);
  prefill(blocks, 2, b);
  blocks.free(2);
  CHECK(blocks.free_blocks() == 6);
  CHECK(blocks.usage() == 0.0);
  // Using a's prefix again makes it more recent than b's: order now b0, a1, a0.
  CHECK(prefill(blocks, 3, a) == 8);
  blocks.free(3);

  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(4, run(500, 20), cached));  // 5 blocks: 3 free, then evicts b0, a1
  CHECK(blocks.free_blocks() == 1);
  blocks.free(4);
  REQUIRE(blocks.allocate(5, b, cached));
  CHECK(cached == 0);
  blocks.free(5);
  REQUIRE(blocks.allocate(6, a, cached));
  CHECK(cached == 4);
  CHECK(blocks.audit() == "");
}

TEST_CASE("with prefix caching off nothing is cached or shared") {
  BlockManager blocks(8, 4, false);
  const auto prompt = run(0, 9);
  CHECK(prefill(blocks, 1, prompt) == 0);
  std::int32_t cached = -1;
  REQUIRE(blocks.allocate(2, prompt, cached));
  CHECK(cached == 0);
  CHECK(blocks.free_blocks() == 2);
  blocks.free(1);
  blocks.free(2);
  CHECK(blocks.free_blocks() == 8);
  CHECK(blocks.prefix_queried_tokens() == 0);
  CHECK(blocks.prefix_hit_tokens() == 0);
  CHECK(blocks.audit() == "");
}

TEST_CASE("usage counts blocks held by live sequences, not cached ones") {
  BlockManager blocks(10, 4);
  prefill(blocks, 1, run(0, 8));
  CHECK(blocks.usage() == doctest::Approx(0.2));
  blocks.fork(1, 2);
  CHECK(blocks.usage() == doctest::Approx(0.2));
  blocks.free(1);
  CHECK(blocks.usage() == doctest::Approx(0.2));
  blocks.free(2);
  CHECK(blocks.usage() == 0.0);
  CHECK(blocks.free_blocks() == 10);
}

TEST_CASE("can_allocate counts cache hits, and evictable hits only once") {
  SUBCASE("hits on a live sequence's blocks need no new blocks") {
    BlockManager blocks(4, 4);
    const auto system = run(0, 8);
    prefill(blocks, 1, system + Tokens{1});
    CHECK(blocks.free_blocks() == 1);
    CHECK(blocks.can_allocate(system + Tokens{2}));
    std::int32_t cached = -1;
    CHECK(blocks.allocate(2, system + Tokens{2}, cached));
    CHECK(cached == 8);
    CHECK_FALSE(blocks.can_allocate(run(100, 2)));
  }
  SUBCASE("an evictable hit is not also counted as a free block") {
    BlockManager blocks(3, 4);
    const auto system = run(0, 8);
    prefill(blocks, 1, system + Tokens{1});
    blocks.free(1);
    CHECK(blocks.free_blocks() == 3);
    CHECK(blocks.can_allocate(system + Tokens{2}));        // 2 hits + 1 new
    CHECK_FALSE(blocks.can_allocate(system + run(0, 5)));  // 2 hits + 2 new
    std::int32_t cached = -1;
    CHECK_FALSE(blocks.allocate(2, system + run(0, 5), cached));
    CHECK(blocks.free_blocks() == 3);
    CHECK(blocks.audit() == "");
  }
}

namespace {

// Drives a BlockManager as a scheduler and model would, keeping each sequence's tokens and a
// fake KV store of [num_blocks, block_size] token ids: a slot holds the token whose KV was
// written there. Every sequence must read its own tokens back through its table, which catches
// a wrong prefix hit, a missing copy-on-write and a block handed out twice.
class Simulation {
 public:
  Simulation(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching,
             coinfer::generation::BlockHasher hasher, std::uint64_t seed)
      : blocks_(num_blocks, block_size, prefix_caching, hasher),
        kv_(static_cast<std::size_t>(num_blocks * block_size), -1),
        rng_(seed) {
    for (int p = 0; p < 4; ++p) prefixes_.push_back(random_tokens(uniform(1, 40), 20));
  }

  void step() {
    const auto op = uniform(0, 9);
    if (sequences_.empty() || op < 3) return allocate();
    const auto seq = pick();
    if (op < 7) return append(seq);
    if (op < 8) return fork(seq);
    blocks_.free(seq);
    sequences_.erase(seq);
  }

  void check() {
    REQUIRE(blocks_.audit() == "");
    std::map<std::int32_t, std::int32_t> holders;
    for (const auto& [seq, tokens] : sequences_) {
      const auto table = blocks_.table(seq);
      REQUIRE(static_cast<std::int32_t>(table.size()) ==
              blocks_.blocks_needed(static_cast<std::int32_t>(tokens.size())));
      for (const auto block : table) ++holders[block];
      for (std::size_t t = 0; t < tokens.size(); ++t) REQUIRE(kv_at(seq, t) == tokens[t]);
    }
    for (std::int32_t b = 0; b < blocks_.num_blocks(); ++b) {
      const auto it = holders.find(b);
      REQUIRE(blocks_.ref_count(b) == (it == holders.end() ? 0 : it->second));
    }
    REQUIRE(static_cast<std::int32_t>(holders.size()) + blocks_.free_blocks() ==
            blocks_.num_blocks());
  }

  std::uint64_t hits() const { return blocks_.prefix_hit_tokens(); }
  std::int32_t forks = 0, copies = 0, refusals = 0;

 private:
  std::int32_t uniform(std::int32_t lo, std::int32_t hi) {
    return std::uniform_int_distribution<std::int32_t>(lo, hi)(rng_);
  }
  Tokens random_tokens(std::int32_t count, std::int32_t vocab) {
    Tokens tokens(static_cast<std::size_t>(count));
    for (auto& t : tokens) t = uniform(0, vocab - 1);
    return tokens;
  }
  std::uint64_t pick() {
    auto it = sequences_.begin();
    std::advance(it, uniform(0, static_cast<std::int32_t>(sequences_.size()) - 1));
    return it->first;
  }
  std::int32_t& kv_at(std::uint64_t seq, std::size_t t) {
    const auto bs = static_cast<std::size_t>(blocks_.block_size());
    return kv_[static_cast<std::size_t>(blocks_.table(seq)[t / bs]) * bs + t % bs];
  }
  void write(std::uint64_t seq, std::size_t from) {
    const auto& tokens = sequences_[seq];
    for (auto t = from; t < tokens.size(); ++t) kv_at(seq, t) = tokens[t];
    blocks_.mark_computed(seq, tokens);
  }

  void allocate() {
    // Most prompts start with a shared prefix; few tokens, so block contents repeat.
    auto prompt = uniform(0, 3) > 0 ? prefixes_[static_cast<std::size_t>(uniform(0, 3))] : Tokens{};
    prompt = prompt + random_tokens(uniform(prompt.empty() ? 1 : 0, 12), 3);
    const auto can = blocks_.can_allocate(prompt);
    std::int32_t cached = -1;
    const auto seq = next_id_++;
    const auto ok = blocks_.allocate(seq, prompt, cached);
    REQUIRE(ok == can);
    if (!ok) {
      ++refusals;
      return;
    }
    REQUIRE(cached % blocks_.block_size() == 0);
    REQUIRE(cached < static_cast<std::int32_t>(prompt.size()));
    sequences_[seq] = prompt;
    for (std::int32_t t = 0; t < cached; ++t)
      REQUIRE(kv_at(seq, static_cast<std::size_t>(t)) == prompt[static_cast<std::size_t>(t)]);
    write(seq, static_cast<std::size_t>(cached));
  }

  void append(std::uint64_t seq) {
    const auto count = uniform(1, 6);
    Copies pairs;
    const auto before = table_of(blocks_, seq);
    const auto free_before = blocks_.free_blocks();
    if (!blocks_.append_slots(seq, count, pairs)) {
      REQUIRE(pairs.empty());
      REQUIRE(table_of(blocks_, seq) == before);
      REQUIRE(blocks_.free_blocks() == free_before);
      ++refusals;
      return;
    }
    const auto bs = static_cast<std::size_t>(blocks_.block_size());
    for (const auto& [src, dst] : pairs) {
      std::copy_n(kv_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(src) * bs), bs,
                  kv_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(dst) * bs));
    }
    copies += static_cast<std::int32_t>(pairs.size());
    auto& tokens = sequences_[seq];
    const auto from = tokens.size();
    const auto more = random_tokens(count, 3);
    tokens.insert(tokens.end(), more.begin(), more.end());
    write(seq, from);
  }

  void fork(std::uint64_t seq) {
    const auto child = next_id_++;
    blocks_.fork(seq, child);
    sequences_[child] = sequences_[seq];
    ++forks;
  }

  BlockManager blocks_;
  std::vector<std::int32_t> kv_;
  std::mt19937_64 rng_;
  std::vector<Tokens> prefixes_;
  std::map<std::uint64_t, Tokens> sequences_;
  std::uint64_t next_id_ = 1;
};

}  // namespace

TEST_CASE("random allocate, append, fork and free keep every block in one place") {
  struct Setup {
    const char* name;
    bool prefix_caching;
    coinfer::generation::BlockHasher hasher;
  };
  const Setup setups[] = {
      {"prefix caching", true, &hash_block},
      {"prefix caching, 3-bit hash", true,
       [](std::uint64_t parent, std::span<const std::int32_t> tokens) {
         return hash_block(parent, tokens) & 7;
       }},
      {"no prefix caching", false, &hash_block},
  };
  for (const auto& setup : setups) {
    CAPTURE(setup.name);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      CAPTURE(seed);
      Simulation simulation(48, 4, setup.prefix_caching, setup.hasher, seed);
      for (int i = 0; i < 600; ++i) {
        simulation.step();
        simulation.check();
      }
      CHECK(simulation.forks > 0);
      CHECK(simulation.copies > 0);
      CHECK(simulation.refusals > 0);
      if (setup.prefix_caching) CHECK(simulation.hits() > 0);
    }
  }
}
