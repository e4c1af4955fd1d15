#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/scheduler.hpp"

namespace coinfer::generation {

// The batch sizes at which a device runner captures its decode step as a graph (CUDA graphs:
// fixed shapes and pointers, replayed each step). A decode-only step of n sequences replays
// the smallest bucket of at least n, its extra rows padding; a step with a prefill chunk, or
// more sequences than the largest bucket, runs eagerly. Buckets are strictly increasing and
// positive. The default, as vLLM's: 1, 2, 4, then every multiple of 8 up to 256.
class GraphBuckets {
 public:
  GraphBuckets();  // the default above
  static Status make(std::vector<std::int32_t> sizes, GraphBuckets& out);

  // The bucket a decode-only step of `rows` sequences replays, or 0: run it eagerly.
  std::int32_t bucket_for(std::int32_t rows) const noexcept;
  std::span<const std::int32_t> sizes() const noexcept { return sizes_; }

 private:
  std::vector<std::int32_t> sizes_;
};

// One step as a device runner uploads it: flat arrays built on the host from the
// scheduler's chunks (ScheduledChunk: tokens at positions position.., KV slots through the
// block table), so that the kernels index them without knowing about sequences. Rows are
// chunks; a graph step has `rows` = its bucket, the rows past the step's chunks padding
// (one token each, slot -1: attention and the KV write skip them, their logits unread).
struct DeviceStep {
  std::int32_t chunks = 0;  // the step's own chunks (rows before padding)
  std::int32_t rows = 0;    // chunks, or the graph bucket
  std::int32_t graph = 0;   // the bucket replayed, 0 when the step runs eagerly

  // Per token, [tokens]: the id, its position, and where its K and V go in the paged cache
  // (block * block_size + position % block_size; -1 for padding).
  std::vector<std::int32_t> token_ids;
  std::vector<std::int32_t> positions;
  std::vector<std::int32_t> slots;

  // Per row: query_start [rows + 1], row r's tokens are [query_start[r], query_start[r + 1]);
  // context_lens [rows], the positions the row's last token attends to (its own included;
  // 0 for padding); block_tables [rows, table_width] row-major, a row's blocks then zeros.
  std::vector<std::int32_t> query_start;
  std::vector<std::int32_t> context_lens;
  std::vector<std::int32_t> block_tables;
  std::int32_t table_width = 0;
  std::int32_t max_query_tokens = 0;  // the longest row (1 for a decode-only step)

  // The tokens whose logits the step returns, in chunk order (ModelRunner::execute's rows).
  std::vector<std::int32_t> logit_tokens;

  std::int32_t tokens() const noexcept { return static_cast<std::int32_t>(token_ids.size()); }
};

// Fills `out` from a step's chunks (reusing its storage). A graph step's tables are
// `graph_table_width` wide, fixed for every replay (enough blocks for the model's context);
// an eager step's are as wide as its longest table. Refuses a chunk whose table does not
// cover its positions, a block outside [0, kv_blocks), an empty chunk, or a graph step whose
// tables would not fit graph_table_width.
Status build_device_step(std::span<const ScheduledChunk> chunks, std::int32_t block_size,
                         std::int32_t kv_blocks, std::int32_t graph_table_width,
                         const GraphBuckets& buckets, DeviceStep& out);

}  // namespace coinfer::generation
