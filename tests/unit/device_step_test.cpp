// The host side of a device runner's step: the flat arrays a paged-attention kernel reads,
// checked by playing the device's part on the host (a fake KV cache written through the slots
// and read back through the block tables) against each sequence's own tokens.
#include "coinfer/generation/device_step.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

using coinfer::generation::build_device_step;
using coinfer::generation::DeviceStep;
using coinfer::generation::GraphBuckets;
using coinfer::generation::ScheduledChunk;

namespace {

constexpr std::int32_t kBlockSize = 16;
constexpr std::int32_t kBlocks = 512;

// A sequence with `history` positions already in the cache and `length` new tokens this
// step, its blocks drawn from a shuffled pool. Token ids name (sequence, position).
struct FakeSequence {
  std::int32_t history = 0;
  std::vector<std::int32_t> tokens;  // all positions, history then this step's
  std::vector<std::int32_t> table;
  std::int32_t logit_rows = 1;
};

std::int32_t token_id(std::size_t sequence, std::int32_t position) {
  return static_cast<std::int32_t>(sequence) * 100000 + position;
}

std::vector<FakeSequence> make_sequences(const std::vector<std::pair<int, int>>& shapes,
                                         std::mt19937& rng) {
  std::vector<std::int32_t> pool(kBlocks);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::size_t next = 0;
  std::vector<FakeSequence> sequences;
  for (const auto& [history, length] : shapes) {
    FakeSequence s;
    s.history = history;
    for (std::int32_t p = 0; p < history + length; ++p) {
      s.tokens.push_back(token_id(sequences.size(), p));
    }
    const std::int32_t blocks = (history + length + kBlockSize - 1) / kBlockSize;
    s.table.assign(pool.begin() + static_cast<std::ptrdiff_t>(next),
                   pool.begin() + static_cast<std::ptrdiff_t>(next + blocks));
    next += static_cast<std::size_t>(blocks);
    sequences.push_back(std::move(s));
  }
  return sequences;
}

std::vector<ScheduledChunk> chunks_of(const std::vector<FakeSequence>& sequences) {
  std::vector<ScheduledChunk> chunks;
  for (const FakeSequence& s : sequences) {
    ScheduledChunk c;
    c.tokens = std::span<const std::int32_t>(s.tokens).subspan(static_cast<std::size_t>(s.history));
    c.position = s.history;
    c.block_table = s.table;
    c.logit_rows = s.logit_rows;
    chunks.push_back(c);
  }
  return chunks;
}

// Plays the device: earlier steps' keys in the cache, this step's written through `slots`,
// then every query token's keys gathered through its row's block table, as causal attention
// reads them. Each must be its own sequence's tokens up to its position.
void check_as_a_device_reads_it(const std::vector<FakeSequence>& sequences,
                                const DeviceStep& step) {
  std::vector<std::int32_t> cache(static_cast<std::size_t>(kBlocks * kBlockSize), -1);
  const auto slot = [](const std::vector<std::int32_t>& table, std::int32_t p) {
    return static_cast<std::size_t>(table[static_cast<std::size_t>(p / kBlockSize)] * kBlockSize +
                                    p % kBlockSize);
  };
  for (const FakeSequence& s : sequences) {
    for (std::int32_t p = 0; p < s.history; ++p)
      cache[slot(s.table, p)] = s.tokens[static_cast<std::size_t>(p)];
  }
  for (std::int32_t t = 0; t < step.tokens(); ++t) {
    const std::int32_t at = step.slots[static_cast<std::size_t>(t)];
    if (at >= 0) cache[static_cast<std::size_t>(at)] = step.token_ids[static_cast<std::size_t>(t)];
  }
  for (std::int32_t r = 0; r < step.chunks; ++r) {
    const FakeSequence& s = sequences[static_cast<std::size_t>(r)];
    CHECK(step.context_lens[static_cast<std::size_t>(r)] ==
          static_cast<std::int32_t>(s.tokens.size()));
    const std::int32_t* row =
        step.block_tables.data() + static_cast<std::ptrdiff_t>(r) * step.table_width;
    for (std::int32_t t = step.query_start[static_cast<std::size_t>(r)];
         t < step.query_start[static_cast<std::size_t>(r) + 1]; ++t) {
      const std::int32_t position = step.positions[static_cast<std::size_t>(t)];
      REQUIRE(step.token_ids[static_cast<std::size_t>(t)] ==
              s.tokens[static_cast<std::size_t>(position)]);
      for (std::int32_t p = 0; p <= position; ++p) {
        const auto key =
            cache[static_cast<std::size_t>(row[p / kBlockSize] * kBlockSize + p % kBlockSize)];
        REQUIRE(key == s.tokens[static_cast<std::size_t>(p)]);
      }
    }
  }
}

}  // namespace

TEST_CASE("device step: graph buckets are 1, 2, 4 and multiples of 8 to 256, and checked") {
  const GraphBuckets buckets;
  CHECK(buckets.bucket_for(1) == 1);
  CHECK(buckets.bucket_for(3) == 4);
  CHECK(buckets.bucket_for(5) == 8);
  CHECK(buckets.bucket_for(9) == 16);
  CHECK(buckets.bucket_for(256) == 256);
  CHECK(buckets.bucket_for(257) == 0);  // eager past the largest
  CHECK(buckets.bucket_for(0) == 0);
  CHECK(buckets.sizes().size() == 35);

  GraphBuckets custom;
  REQUIRE(GraphBuckets::make({1, 3, 6}, custom).ok());
  CHECK(custom.bucket_for(2) == 3);
  CHECK(custom.bucket_for(7) == 0);
  CHECK(GraphBuckets::make({1, 4, 4}, custom).message() ==
        "graph batch sizes: expected positive sizes in increasing order, got 4 at [2]");
  CHECK(GraphBuckets::make({0, 4}, custom).message() ==
        "graph batch sizes: expected positive sizes in increasing order, got 0 at [0]");
}

TEST_CASE("device step: a decode-only step replays its bucket, padded with inert rows") {
  std::mt19937 rng(7);
  const auto sequences = make_sequences({{0, 1}, {15, 1}, {16, 1}, {40, 1}, {200, 1}}, rng);
  const auto chunks = chunks_of(sequences);
  DeviceStep step;
  const std::int32_t graph_width = 2048 / kBlockSize;  // the model's context
  REQUIRE(build_device_step(chunks, kBlockSize, kBlocks, graph_width, GraphBuckets(), step).ok());
  CHECK(step.chunks == 5);
  CHECK(step.graph == 8);
  CHECK(step.rows == 8);
  CHECK(step.tokens() == 8);
  CHECK(step.table_width == graph_width);
  CHECK(step.block_tables.size() == 8u * graph_width);
  CHECK(step.max_query_tokens == 1);
  CHECK(step.query_start == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(step.logit_tokens == std::vector<std::int32_t>{0, 1, 2, 3, 4});
  for (std::int32_t r = 5; r < 8; ++r) {  // padding: written nowhere, attending to nothing
    CHECK(step.slots[static_cast<std::size_t>(r)] == -1);
    CHECK(step.context_lens[static_cast<std::size_t>(r)] == 0);
  }
  check_as_a_device_reads_it(sequences, step);

  // The same storage reused for a step that fits a smaller bucket.
  const auto three = make_sequences({{3, 1}, {31, 1}, {32, 1}}, rng);
  REQUIRE(
      build_device_step(chunks_of(three), kBlockSize, kBlocks, graph_width, GraphBuckets(), step)
          .ok());
  CHECK(step.graph == 4);
  CHECK(step.tokens() == 4);
  check_as_a_device_reads_it(three, step);
}

TEST_CASE("device step: prefill chunks and drafts run eagerly, with logits only where asked") {
  std::mt19937 rng(11);
  // Two decodes, a prompt's middle chunk (no logits), a prompt's last chunk, and a decode that
  // verifies a draft of three (four logit rows).
  auto sequences = make_sequences({{9, 1}, {33, 1}, {32, 37}, {69, 12}, {50, 4}}, rng);
  sequences[2].logit_rows = 0;
  sequences[4].logit_rows = 4;
  DeviceStep step;
  REQUIRE(
      build_device_step(chunks_of(sequences), kBlockSize, kBlocks, 128, GraphBuckets(), step).ok());
  CHECK(step.graph == 0);
  CHECK(step.rows == 5);
  CHECK(step.tokens() == 1 + 1 + 37 + 12 + 4);
  CHECK(step.max_query_tokens == 37);
  CHECK(step.query_start == std::vector<std::int32_t>{0, 1, 2, 39, 51, 55});
  CHECK(step.table_width == (69 + 12 + kBlockSize - 1) / kBlockSize);  // the longest table
  CHECK(step.logit_tokens == std::vector<std::int32_t>{0, 1, 50, 51, 52, 53, 54});
  check_as_a_device_reads_it(sequences, step);
}

TEST_CASE("device step: a chunk the cache cannot hold is refused by name") {
  std::mt19937 rng(3);
  auto sequences = make_sequences({{5, 1}, {16, 4}}, rng);
  DeviceStep step;
  const GraphBuckets buckets;

  auto chunks = chunks_of(sequences);
  chunks[1].block_table = chunks[1].block_table.first(1);  // positions 16..19 need block 1
  CHECK(build_device_step(chunks, kBlockSize, kBlocks, 8, buckets, step).message() ==
        "chunk 1: 1 blocks do not cover positions up to 19");

  sequences[0].table[0] = kBlocks;
  CHECK(build_device_step(chunks_of(sequences), kBlockSize, kBlocks, 8, buckets, step).message() ==
        "chunk 0: block 512 outside the 512-block cache");

  const auto long_one = make_sequences({{100, 1}}, rng);
  CHECK(build_device_step(chunks_of(long_one), kBlockSize, kBlocks, 4, buckets, step).message() ==
        "a graph step's block tables are 4 blocks wide; a chunk needs 7");

  auto asks_too_much = make_sequences({{0, 2}}, rng);
  asks_too_much[0].logit_rows = 3;
  CHECK(build_device_step(chunks_of(asks_too_much), kBlockSize, kBlocks, 8, buckets, step)
            .message() == "chunk 0: 3 logit rows for 2 tokens");

  const auto empty = make_sequences({{4, 0}}, rng);
  CHECK(build_device_step(chunks_of(empty), kBlockSize, kBlocks, 8, buckets, step).message() ==
        "chunk 0: no tokens");
}
