#pragma once
// What the file and S3 sinks share: the manifest (the commit record), a chunk's part files
// and dead-letter lines, the output checks.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coinfer/offline/sinks.hpp"

namespace coinfer::offline {

struct ManifestChunk {
  std::int64_t chunk, first_row, rows, results, errors;
};

struct Manifest {
  std::string description;
  std::int64_t chunk_rows = 0;
  std::uint64_t dead_letter_bytes = 0;  // files: the dead-letter file's committed length
  std::vector<ManifestChunk> chunks;
};

// manifest[.shard-i-of-N].json
std::string manifest_name(const JobIdentity& job);
std::string manifest_json(const JobIdentity& job, FileFormat format, const std::vector<ManifestChunk>& chunks,
                          std::uint64_t dead_letter_bytes, bool complete);
Status parse_manifest(std::string_view text, const std::string& where, Manifest& out);
// The N of a "manifest.shard-i-of-N.json" or "manifest.json" (1); 0 for another name.
int manifest_shards(std::string_view name);

// part-00000042
std::string part_stem(std::int64_t chunk);
// The chunk number of a "part-<chunk>..." name, or -1.
std::int64_t part_chunk(std::string_view name);

// Outputs the sink can write in `format`; errors name the output.
Status check_outputs(const ModelMetadata& model, FileFormat format);
// A chunk's part files, whole, as (name after the stem, bytes): ".jsonl", or ".rows.npy" and
// ".<output>.npy".
void chunk_parts(const ChunkWork& chunk, const ModelMetadata& model, FileFormat format,
                 std::vector<std::pair<std::string, std::string>>& out);
// The chunk's dead letters, one JSON line each.
void dead_letter_lines(const ChunkWork& chunk, std::string& out);

// "another job" / "pass --resume" checks of an existing manifest; `where` names it.
Status check_resume(const Manifest& manifest, const JobIdentity& job, bool resume, const std::string& where,
                    const std::string& output);

}  // namespace coinfer::offline
