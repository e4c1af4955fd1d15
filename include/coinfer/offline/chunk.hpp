#pragma once

#include <cstdint>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/tensor.hpp"
#include "coinfer/serving/generation_call.hpp"

namespace coinfer::offline {

// A row that could not be decoded or inferred: it goes to the dead letters, the run goes on.
struct DeadLetter {
  std::int64_t row = 0;  // the row's index in the input
  std::string id;        // its id as JSON (the index when it has none or it was unreadable)
  std::string reason;
};

// A contiguous range of rows: the unit the pipeline moves, bounds its memory with, commits
// atomically and splits among shards. Chunk k holds rows [k * chunk_rows, (k + 1) *
// chunk_rows) of the input (fewer at its end).
struct ChunkWork {
  std::int64_t chunk = 0;
  std::int64_t first_row = 0;
  std::int64_t rows = 0;
  std::int64_t emitted = 0;  // this run's chunks in reading order: the order they are written

  // Read: the rows' records, back to back; record r is bytes[r ? ends[r - 1] : 0, ends[r]).
  std::string bytes;
  std::vector<std::uint32_t> ends;

  // Preprocessed: the rows that decoded, in input order ("good" rows).
  std::vector<std::int64_t> good_rows;  // input row index of each
  std::string ids;                      // each good row's id as JSON, back to back
  std::vector<std::uint32_t> id_ends;
  // The model's input, rows in `order`: FP32 [good, width], or token ids packed.
  std::pmr::vector<std::byte> input;
  // Text: good-row positions sorted by token count (length bucketing); empty: identity.
  std::vector<std::int32_t> order;
  // One forward each: rows [begin, end) of `order` (or of the good rows), and for text their
  // offsets (end - begin + 1, from 0) at offsets[offsets_at].
  struct BatchSpan {
    std::int32_t begin = 0, end = 0;
    std::int64_t token_begin = 0;
    std::size_t offsets_at = 0;
  };
  std::vector<BatchSpan> batches;
  std::vector<std::int64_t> offsets;
  std::vector<DeadLetter> dead;

  // Computed: one tensor per model output, [good rows, ...], in good-row order; a good row
  // whose batch failed is marked in `failed` and left out by the writer (its dead letter says
  // why).
  std::vector<Tensor> outputs;
  std::vector<std::uint8_t> failed;
  // Text outputs (dtype Bytes, a language model's completion): one string per good row, at
  // the output's index; the tensor at that index is unused.
  std::vector<std::vector<std::string>> strings;
  // A language model's prepared generations, one per good row.
  std::vector<GenerationCall> prompts;

  explicit ChunkWork(std::pmr::memory_resource* staging) : input(staging) {}

  std::string_view record(std::size_t r) const noexcept {
    const std::uint32_t begin = r == 0 ? 0 : ends[r - 1];
    return std::string_view(bytes).substr(begin, ends[r] - begin);
  }
  std::string_view id(std::size_t good) const noexcept {
    const std::uint32_t begin = good == 0 ? 0 : id_ends[good - 1];
    return std::string_view(ids).substr(begin, id_ends[good] - begin);
  }
  std::int64_t results() const noexcept {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < good_rows.size(); ++i) n += failed.empty() || !failed[i];
    return n;
  }
};

}  // namespace coinfer::offline
