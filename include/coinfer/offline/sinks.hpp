#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/offline/chunk.hpp"

namespace coinfer::offline {

// What a run is: a resumed run must be the same job (same input, model, options, shard).
struct JobIdentity {
  std::string description;  // input, model, decoding and output options, one line
  std::int64_t chunk_rows = 0;
  int shard = 0;
  int shards = 1;
  // "shard-2-of-4", or "" for an unsharded job: names a shard's manifest and dead letters.
  std::string shard_tag() const;
};

// Totals of a sink's committed work (earlier runs of the job included).
struct CommittedTotals {
  std::int64_t chunks = 0, rows = 0, results = 0, errors = 0;
};

// Where results go. Commits are atomic: after a crash at any moment a chunk is either
// entirely committed (its results, its dead letters and the record that it is done) or not at
// all, so a resumed run writes every row exactly once.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  // Prepares the output for `job`. With `resume`, fills `done` with the chunks earlier runs
  // committed (an error when those runs were another job); without, an output that already
  // holds committed chunks of the job is an error ("pass --resume").
  virtual Status open(const JobIdentity& job, const ModelMetadata& model, bool resume,
                      std::vector<std::int64_t>& done, CommittedTotals& totals) = 0;
  // Commits one chunk's results and dead letters, and records it as done.
  virtual Status commit(const ChunkWork& chunk) = 0;
  // Records that every chunk of the shard is done.
  virtual Status finish() = 0;
};

enum class FileFormat { jsonl, npy };

// A directory of chunk files:
//   part-<chunk>.jsonl                 one line per result: {"id": ..., "<output>": ...}
//   or part-<chunk>.<output>.npy       per output, [results, ...], with part-<chunk>.rows.npy
//                                      (int64 input row of each result)
//   dead-letter[.<shard>].jsonl        {"row": r, "id": ..., "error": "..."} per failed row
//   manifest[.<shard>].json            the job, the committed row ranges and totals
// A chunk's files are written to temporary names, fsynced and renamed; its dead letters are
// appended and fsynced; then the manifest is replaced (temp, fsync, rename, directory fsync),
// which is the commit. On resume, part files of uncommitted chunks are removed and the
// dead-letter file is cut back to the length the manifest recorded.
Status open_file_sink(const std::filesystem::path& directory, FileFormat format,
                      std::unique_ptr<ResultSink>& out);

// The shared JSONL result line: {"id":<id>,"<output>":<value or array>,...}\n. Outputs with
// one value per row are written as a scalar.
void append_result_json(std::string& out, const ChunkWork& chunk, std::size_t good,
                        const ModelMetadata& model);

}  // namespace coinfer::offline
