#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <simdjson.h>
#include <system_error>

#include "coinfer/core/json_writer.hpp"
#include "coinfer/offline/npy.hpp"
#include "coinfer/offline/sinks.hpp"
#include "sink_common.hpp"

namespace coinfer::offline {
namespace {

namespace fs = std::filesystem;

Status io_error(const fs::path& path, const char* what, int error = errno) {
  return Status::invalid(std::string(what) + " " + path.string() + ": " + std::strerror(error));
}

Status fsync_path(const fs::path& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return io_error(path, "cannot open");
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) return io_error(path, "cannot fsync", error);
  return {};
}

Status read_file(const fs::path& path, std::string& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return io_error(path, "cannot open");
  char buffer[65536];
  std::size_t n;
  out.clear();
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) out.append(buffer, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return io_error(path, "cannot read");
  return {};
}

// Writes `bytes` to `path` through a temporary file: write, fsync, rename.
Status write_atomically(const fs::path& path, std::string_view bytes) {
  const fs::path temp = path.string() + ".tmp";
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) return io_error(temp, "cannot create");
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
            ::fsync(fileno(f)) == 0;
  const int error = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) return io_error(temp, "cannot write", error);
  if (std::rename(temp.c_str(), path.c_str()) != 0) return io_error(path, "cannot rename to");
  return {};
}

void append_value(std::string& out, DType dtype, const std::byte* p) {
  switch (dtype) {
    case DType::FP32: {
      float v;
      std::memcpy(&v, p, 4);
      json_append_number(out, v);
      break;
    }
    case DType::Int64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      json_append_number(out, v);
      break;
    }
    case DType::Int32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      json_append_number(out, v);
      break;
    }
    case DType::FP64: {
      double v;
      std::memcpy(&v, p, 8);
      json_append_number(out, v);
      break;
    }
    default: out += "null";
  }
}

class FileSink final : public ResultSink {
 public:
  FileSink(fs::path directory, FileFormat format) : dir_(std::move(directory)), format_(format) {}
  ~FileSink() override {
    if (dead_) std::fclose(dead_);
    if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
  }

  Status open(const JobIdentity& job, const ModelMetadata& model, bool resume,
              std::vector<std::int64_t>& done, CommittedTotals& totals) override {
    job_ = job;
    model_ = &model;
    if (auto status = check_outputs(model, format_); !status.ok()) return status;
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return Status::invalid("cannot create " + dir_.string() + ": " + ec.message());
    const std::string tag = job.shard_tag();
    manifest_path_ = dir_ / manifest_name(job);
    dead_path_ = dir_ / (tag.empty() ? "dead-letter.jsonl" : "dead-letter." + tag + ".jsonl");
    // One writer per shard: a second process on the same shard (a zombie pod, a requeued
    // task) would remove the first one's parts and cut its dead letters.
    const fs::path lock_path = manifest_path_.string() + ".lock";
    if (lock_fd_ >= 0) ::close(lock_fd_);  // opened again: the earlier lock goes
    lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) return io_error(lock_path, "cannot open");
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0)
      return Status::invalid("another coinfer-batch is writing " + manifest_path_.string() +
                             " (" + (tag.empty() ? "this output" : tag) + ")");
    // One sharding per directory: runs with another N would remove each other's parts.
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      const std::string name = entry.path().filename().string();
      const int n = manifest_shards(name);
      if (n == 0) continue;
      if (n != job.shards)
        return Status::invalid(dir_.string() + " holds " + name + ", a job split into " + std::to_string(n) +
                               " shard" + (n == 1 ? "" : "s") + "; this run is split into " +
                               std::to_string(job.shards) + " (use the same --shard i/N or another --output)");
    }
    std::uint64_t dead_bytes = 0;
    if (fs::exists(manifest_path_)) {
      std::string text;
      if (auto status = read_file(manifest_path_, text); !status.ok()) return status;
      Manifest manifest;
      if (auto status = parse_manifest(text, manifest_path_.string(), manifest); !status.ok()) return status;
      if (auto status = check_resume(manifest, job, resume, manifest_path_.string(), dir_.string()); !status.ok())
        return status;
      chunks_ = std::move(manifest.chunks);
      dead_bytes = manifest.dead_letter_bytes;
    }
    if (!resume) {
      chunks_.clear();
      dead_bytes = 0;
    }
    for (const auto& c : chunks_) {
      done.push_back(c.chunk);
      totals.chunks += 1;
      totals.rows += c.rows;
      totals.results += c.results;
      totals.errors += c.errors;
    }
    // What a crash left uncommitted: part files of this shard's chunks not in the manifest,
    // temporary files, dead letters past the recorded length.
    std::vector<std::int64_t> sorted = done;
    std::sort(sorted.begin(), sorted.end());
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      const std::string name = entry.path().filename().string();
      long long chunk = -1;
      if (name.starts_with("part-") && std::sscanf(name.c_str(), "part-%lld", &chunk) == 1 &&
          chunk % job.shards == job.shard && !std::binary_search(sorted.begin(), sorted.end(), chunk)) {
        fs::remove(entry.path(), ec);
      } else if (name.ends_with(".tmp") &&
                 (name.starts_with(manifest_path_.filename().string()) ||
                  (chunk >= 0 && chunk % job.shards == job.shard))) {
        fs::remove(entry.path(), ec);
      }
    }
    dead_ = std::fopen(dead_path_.c_str(), "ab");
    if (!dead_) return io_error(dead_path_, "cannot open");
    if (::ftruncate(fileno(dead_), static_cast<off_t>(dead_bytes)) != 0)
      return io_error(dead_path_, "cannot truncate");
    dead_bytes_ = dead_bytes;
    return write_manifest(false);
  }

  Status commit(const ChunkWork& chunk) override {
    if (auto status = write_parts(chunk); !status.ok()) return status;
    // The parts' renames reach the disk before the manifest that lists them.
    if (auto status = fsync_path(dir_, true); !status.ok()) return status;
    if (!chunk.dead.empty()) {
      line_.clear();
      dead_letter_lines(chunk, line_);
      if (std::fwrite(line_.data(), 1, line_.size(), dead_) != line_.size() || std::fflush(dead_) != 0 ||
          ::fsync(fileno(dead_)) != 0)
        return io_error(dead_path_, "cannot write");
      dead_bytes_ += line_.size();
    }
    const std::int64_t results = chunk.results();
    chunks_.push_back({chunk.chunk, chunk.first_row, chunk.rows, results,
                       chunk.rows - results});
    return write_manifest(false);
  }

  Status finish() override { return write_manifest(true); }

 private:
  Status write_parts(const ChunkWork& chunk) {
    const std::string stem = part_stem(chunk.chunk);
    chunk_parts(chunk, *model_, format_, parts_);
    for (const auto& [suffix, bytes] : parts_)
      if (auto status = write_atomically(dir_ / (stem + suffix), bytes); !status.ok()) return status;
    return {};
  }

  Status write_manifest(bool complete) {
    // The manifest is the commit: temp file, fsync, rename, directory fsync.
    const std::string m = manifest_json(job_, format_, chunks_, dead_bytes_, complete);
    if (auto status = write_atomically(manifest_path_, m); !status.ok()) return status;
    return fsync_path(dir_, true);
  }

  fs::path dir_;
  FileFormat format_;
  JobIdentity job_;
  const ModelMetadata* model_ = nullptr;
  fs::path manifest_path_, dead_path_;
  std::FILE* dead_ = nullptr;
  std::uint64_t dead_bytes_ = 0;
  std::vector<ManifestChunk> chunks_;
  std::vector<std::pair<std::string, std::string>> parts_;
  std::string line_;
  int lock_fd_ = -1;
};

}  // namespace

// ---- shared with the S3 sink (sink_common.hpp) ------------------------------------------

std::string manifest_name(const JobIdentity& job) {
  const std::string tag = job.shard_tag();
  return tag.empty() ? "manifest.json" : "manifest." + tag + ".json";
}

int manifest_shards(std::string_view name) {
  if (name == "manifest.json") return 1;
  int i = 0, n = 0;
  char tail[8] = {};
  const std::string text(name);
  if (std::sscanf(text.c_str(), "manifest.shard-%d-of-%d%7s", &i, &n, tail) == 3 && std::string_view(tail) == ".json")
    return n;
  return 0;
}

std::string part_stem(std::int64_t chunk) {
  // Shortest chunk names that still sort: part-00000042.
  char name[32];
  std::snprintf(name, sizeof name, "part-%08lld", static_cast<long long>(chunk));
  return name;
}

std::int64_t part_chunk(std::string_view name) {
  if (!name.starts_with("part-")) return -1;
  long long chunk = -1;
  const std::string text(name);
  return std::sscanf(text.c_str(), "part-%lld", &chunk) == 1 ? chunk : -1;
}

Status check_outputs(const ModelMetadata& model, FileFormat format) {
  for (const auto& output : model.outputs) {
    const DType d = output.dtype;
    if (d != DType::FP32 && d != DType::FP64 && d != DType::Int32 && d != DType::Int64 && d != DType::Bytes)
      return Status::invalid("output '" + output.name + "' is " + std::string(to_string(d)) +
                             " (coinfer-batch writes FP32, FP64, INT32, INT64 and text)");
    if (format == FileFormat::npy && d == DType::Bytes)
      return Status::invalid("--output-format npy: output '" + output.name + "' is text (use jsonl)");
    if (format == FileFormat::npy &&
        (output.name == "rows" || output.name.empty() ||
         output.name.find_first_of("/\\") != std::string::npos || output.name[0] == '.'))
      return Status::invalid("--output-format npy: output name '" + output.name +
                             "' cannot name a file beside part-N.rows.npy (use jsonl)");
  }
  return {};
}

void chunk_parts(const ChunkWork& chunk, const ModelMetadata& model, FileFormat format,
                 std::vector<std::pair<std::string, std::string>>& out) {
  out.clear();
  if (format == FileFormat::jsonl) {
    std::string text;
    for (std::size_t g = 0; g < chunk.good_rows.size(); ++g) {
      if (!chunk.failed.empty() && chunk.failed[g]) continue;
      append_result_json(text, chunk, g, model);
    }
    out.emplace_back(".jsonl", std::move(text));
    return;
  }
  // .npy: the input row of each result, then each output.
  std::vector<std::size_t> kept;
  for (std::size_t g = 0; g < chunk.good_rows.size(); ++g)
    if (chunk.failed.empty() || !chunk.failed[g]) kept.push_back(g);
  const auto rows = static_cast<std::int64_t>(kept.size());
  {
    std::string bytes = npy_header(DType::Int64, {rows});
    for (auto g : kept) bytes.append(reinterpret_cast<const char*>(&chunk.good_rows[g]), sizeof(std::int64_t));
    out.emplace_back(".rows.npy", std::move(bytes));
  }
  for (std::size_t o = 0; o < model.outputs.size(); ++o) {
    const Tensor& t = chunk.outputs[o];
    Shape shape(t.shape().begin(), t.shape().end());
    shape[0] = rows;
    const std::size_t row_bytes = chunk.good_rows.empty() ? 0 : t.bytes().size() / chunk.good_rows.size();
    std::string bytes = npy_header(t.dtype(), shape);
    bytes.reserve(bytes.size() + kept.size() * row_bytes);
    for (auto g : kept) bytes.append(reinterpret_cast<const char*>(t.bytes().data() + g * row_bytes), row_bytes);
    out.emplace_back("." + model.outputs[o].name + ".npy", std::move(bytes));
  }
}

void dead_letter_lines(const ChunkWork& chunk, std::string& out) {
  for (const auto& d : chunk.dead) {
    out += "{\"row\":";
    json_append_number(out, d.row);
    out += ",\"id\":";
    out += d.id;
    out += ",\"error\":";
    json_append_string(out, d.reason);
    out += "}\n";
  }
}

std::string manifest_json(const JobIdentity& job, FileFormat format, const std::vector<ManifestChunk>& chunks,
                          std::uint64_t dead_letter_bytes, bool complete) {
  std::string m = "{\n  \"format\": \"coinfer-batch manifest 1\",\n  \"job\": ";
  json_append_string(m, job.description);
  m += ",\n  \"chunk_rows\": " + std::to_string(job.chunk_rows);
  m += ",\n  \"shard\": " + std::to_string(job.shard);
  m += ",\n  \"shards\": " + std::to_string(job.shards);
  m += std::string(",\n  \"output\": \"") + (format == FileFormat::jsonl ? "jsonl" : "npy") + "\"";
  CommittedTotals t;
  for (const auto& c : chunks) {
    t.chunks += 1;
    t.rows += c.rows;
    t.results += c.results;
    t.errors += c.errors;
  }
  m += ",\n  \"rows\": " + std::to_string(t.rows);
  m += ",\n  \"results\": " + std::to_string(t.results);
  m += ",\n  \"errors\": " + std::to_string(t.errors);
  m += ",\n  \"dead_letter_bytes\": " + std::to_string(dead_letter_bytes);
  m += std::string(",\n  \"complete\": ") + (complete ? "true" : "false");
  // Row ranges committed, merged where chunks are adjacent (one range for an unsharded job).
  std::vector<ManifestChunk> sorted = chunks;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.chunk < b.chunk; });
  m += ",\n  \"completed_rows\": [";
  bool first = true;
  for (std::size_t i = 0; i < sorted.size();) {
    std::int64_t begin = sorted[i].first_row, end = begin + sorted[i].rows;
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j].first_row == end) end += sorted[j++].rows;
    m += (first ? "[" : ", [") + std::to_string(begin) + ", " + std::to_string(end) + "]";
    first = false;
    i = j;
  }
  m += "],\n  \"chunks\": [";
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const auto& c = chunks[i];
    m += (i ? ",\n    [" : "\n    [") + std::to_string(c.chunk) + ", " + std::to_string(c.first_row) + ", " +
         std::to_string(c.rows) + ", " + std::to_string(c.results) + ", " + std::to_string(c.errors) + "]";
  }
  m += "]\n}\n";
  return m;
}

Status parse_manifest(std::string_view text, const std::string& where, Manifest& out) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(text.data(), text.size()).get(root))
    return Status::invalid(where + ": " + simdjson::error_message(error));
  std::string_view format, description;
  simdjson::dom::array chunks;
  if (root["format"].get(format) || format != "coinfer-batch manifest 1" || root["job"].get(description) ||
      root["chunk_rows"].get(out.chunk_rows) || root["dead_letter_bytes"].get(out.dead_letter_bytes) ||
      root["chunks"].get(chunks))
    return Status::invalid(where + ": not a coinfer-batch manifest (or a damaged one)");
  out.description = description;
  out.chunks.clear();
  for (simdjson::dom::element c : chunks) {
    simdjson::dom::array a;
    ManifestChunk m{};
    std::int64_t* fields[] = {&m.chunk, &m.first_row, &m.rows, &m.results, &m.errors};
    if (c.get(a) || a.size() != 5) return Status::invalid(where + ": a damaged chunk entry");
    std::size_t i = 0;
    for (simdjson::dom::element v : a)
      if (v.get(*fields[i++])) return Status::invalid(where + ": a damaged chunk entry");
    out.chunks.push_back(m);
  }
  return {};
}

Status check_resume(const Manifest& manifest, const JobIdentity& job, bool resume, const std::string& where,
                    const std::string& output) {
  if (!resume && !manifest.chunks.empty())
    return Status::invalid(output + " holds " + std::to_string(manifest.chunks.size()) +
                           " committed chunks of a job (" + where +
                           "): pass --resume to continue it, or choose another --output");
  if (resume && (manifest.description != job.description || manifest.chunk_rows != job.chunk_rows))
    return Status::invalid("--resume: " + where + " is another job:\n  it: " + manifest.description +
                           " (chunk_rows " + std::to_string(manifest.chunk_rows) + ")\n  this: " +
                           job.description + " (chunk_rows " + std::to_string(job.chunk_rows) + ")");
  return {};
}

std::string JobIdentity::shard_tag() const {
  if (shards <= 1) return {};
  return "shard-" + std::to_string(shard) + "-of-" + std::to_string(shards);
}

Status open_file_sink(const fs::path& directory, FileFormat format, std::unique_ptr<ResultSink>& out) {
  out = std::make_unique<FileSink>(directory, format);
  return {};
}

void append_result_json(std::string& out, const ChunkWork& chunk, std::size_t good,
                        const ModelMetadata& model) {
  out += "{\"id\":";
  out += chunk.id(good);
  for (std::size_t o = 0; o < model.outputs.size(); ++o) {
    const Tensor& t = chunk.outputs[o];
    out += ",";
    json_append_string(out, model.outputs[o].name);
    out += ":";
    if (model.outputs[o].dtype == DType::Bytes) {
      json_append_string(out, chunk.strings[o][good]);
      continue;
    }
    const std::size_t element = element_size(t.dtype());
    const std::size_t per_row = chunk.good_rows.empty() ? 0 : t.bytes().size() / chunk.good_rows.size() / element;
    const std::byte* p = t.bytes().data() + good * per_row * element;
    if (t.shape().size() == 1) {
      append_value(out, t.dtype(), p);
      continue;
    }
    out += '[';
    for (std::size_t i = 0; i < per_row; ++i) {
      if (i) out += ',';
      append_value(out, t.dtype(), p + i * element);
    }
    out += ']';
  }
  out += "}\n";
}

}  // namespace coinfer::offline
