#include "coinfer/generation/device_step.hpp"

#include <algorithm>
#include <string>

namespace coinfer::generation {

GraphBuckets::GraphBuckets() : sizes_{1, 2, 4} {
  for (std::int32_t n = 8; n <= 256; n += 8) sizes_.push_back(n);
}

Status GraphBuckets::make(std::vector<std::int32_t> sizes, GraphBuckets& out) {
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1 || (i > 0 && sizes[i] <= sizes[i - 1])) {
      return Status::invalid(
          "graph batch sizes: expected positive sizes in increasing order, got " +
          std::to_string(sizes[i]) + " at [" + std::to_string(i) + "]");
    }
  }
  out.sizes_ = std::move(sizes);
  return {};
}

std::int32_t GraphBuckets::bucket_for(std::int32_t rows) const noexcept {
  const auto it = std::lower_bound(sizes_.begin(), sizes_.end(), rows);
  return rows < 1 || it == sizes_.end() ? 0 : *it;
}

Status build_device_step(std::span<const ScheduledChunk> chunks, std::int32_t block_size,
                         std::int32_t kv_blocks, std::int32_t graph_table_width,
                         const GraphBuckets& buckets, DeviceStep& out) {
  const auto chunk_count = static_cast<std::int32_t>(chunks.size());
  const bool decode_only = std::all_of(
      chunks.begin(), chunks.end(), [](const ScheduledChunk& c) { return c.tokens.size() == 1; });
  out.chunks = chunk_count;
  out.graph = decode_only ? buckets.bucket_for(chunk_count) : 0;
  out.rows = out.graph > 0 ? out.graph : chunk_count;
  out.token_ids.clear();
  out.positions.clear();
  out.slots.clear();
  out.query_start.assign(1, 0);
  out.context_lens.clear();
  out.logit_tokens.clear();
  out.max_query_tokens = 0;

  std::int32_t width = 0;
  for (std::int32_t r = 0; r < chunk_count; ++r) {
    const ScheduledChunk& c = chunks[static_cast<std::size_t>(r)];
    const std::string where = "chunk " + std::to_string(r);
    const auto length = static_cast<std::int32_t>(c.tokens.size());
    if (length == 0) return Status::invalid(where + ": no tokens");
    if (c.position < 0) return Status::invalid(where + ": negative position");
    if (c.logit_rows < 0 || c.logit_rows > length) {
      return Status::invalid(where + ": " + std::to_string(c.logit_rows) + " logit rows for " +
                             std::to_string(length) + " tokens");
    }
    const std::int32_t end = c.position + length;  // positions [position, end)
    const std::int32_t blocks = (end + block_size - 1) / block_size;
    if (static_cast<std::int32_t>(c.block_table.size()) < blocks) {
      return Status::invalid(where + ": " + std::to_string(c.block_table.size()) +
                             " blocks do not cover positions up to " + std::to_string(end - 1));
    }
    for (std::int32_t b = 0; b < blocks; ++b) {
      const std::int32_t block = c.block_table[static_cast<std::size_t>(b)];
      if (block < 0 || block >= kv_blocks) {
        return Status::invalid(where + ": block " + std::to_string(block) + " outside the " +
                               std::to_string(kv_blocks) + "-block cache");
      }
    }
    width = std::max(width, blocks);
    const auto first_token = static_cast<std::int32_t>(out.token_ids.size());
    for (std::int32_t t = 0; t < length; ++t) {
      const std::int32_t p = c.position + t;
      out.token_ids.push_back(c.tokens[static_cast<std::size_t>(t)]);
      out.positions.push_back(p);
      out.slots.push_back(c.block_table[static_cast<std::size_t>(p / block_size)] * block_size +
                          p % block_size);
    }
    for (std::int32_t t = length - c.logit_rows; t < length; ++t) {
      out.logit_tokens.push_back(first_token + t);
    }
    out.query_start.push_back(first_token + length);
    out.context_lens.push_back(end);
    out.max_query_tokens = std::max(out.max_query_tokens, length);
  }

  if (out.graph > 0) {
    if (width > graph_table_width) {
      return Status::invalid("a graph step's block tables are " +
                             std::to_string(graph_table_width) + " blocks wide; a chunk needs " +
                             std::to_string(width));
    }
    width = graph_table_width;
    for (std::int32_t r = chunk_count; r < out.rows; ++r) {  // padding rows: one inert token
      out.token_ids.push_back(0);
      out.positions.push_back(0);
      out.slots.push_back(-1);
      out.query_start.push_back(static_cast<std::int32_t>(out.token_ids.size()));
      out.context_lens.push_back(0);
    }
    if (out.rows > chunk_count) out.max_query_tokens = std::max(out.max_query_tokens, 1);
  }
  out.table_width = width;
  out.block_tables.assign(static_cast<std::size_t>(out.rows) * static_cast<std::size_t>(width), 0);
  for (std::int32_t r = 0; r < chunk_count; ++r) {
    const ScheduledChunk& c = chunks[static_cast<std::size_t>(r)];
    const std::int32_t end = c.position + static_cast<std::int32_t>(c.tokens.size());
    const std::int32_t blocks = (end + block_size - 1) / block_size;
    std::copy_n(c.block_table.begin(), blocks,
                out.block_tables.begin() + static_cast<std::ptrdiff_t>(r) * width);
  }
  return {};
}

}  // namespace coinfer::generation
