#include "coinfer/offline/s3.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <random>
#include <thread>

#include "coinfer/core/json_writer.hpp"
#include "sink_common.hpp"

namespace coinfer::offline {
namespace {

using client::S3Client;
using client::S3Url;

class S3Input final : public ByteInput {
 public:
  S3Input(std::shared_ptr<S3Client> client, S3Url url, std::uint64_t size, std::uint64_t range)
      : client_(std::move(client)), url_(std::move(url)), name_(url_.str()), size_(size), range_(std::max<std::uint64_t>(range, 4096)) {}
  ~S3Input() override {
    if (ahead_.valid()) ahead_.wait();  // it writes into next_
  }
  const std::string& name() const noexcept override { return name_; }
  std::uint64_t size() const noexcept override { return size_; }

  Status read(std::uint64_t offset, std::span<char> out, std::size_t& got) override {
    got = 0;
    while (got < out.size() && offset + got < size_) {
      const std::uint64_t at = offset + got;
      const std::uint64_t index = at / range_;
      if (!have_ || index != current_index_)
        if (auto status = load(index); !status.ok()) return status;
      const std::uint64_t in = at - index * range_;
      if (in >= current_.size()) break;  // the object is shorter than it was listed
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(current_.size() - in, out.size() - got));
      std::memcpy(out.data() + got, current_.data() + in, n);
      got += n;
    }
    return {};
  }

 private:
  // Range `index` into current_, from the read-ahead when it is that one; then the next
  // range is asked for.
  Status load(std::uint64_t index) {
    Status status;
    if (ahead_.valid() && ahead_index_ == index) {
      status = ahead_.get();
      std::swap(current_, next_);
    } else {
      if (ahead_.valid()) ahead_.wait();
      status = client_->get(url_.bucket, url_.key, index * range_, range_, current_);
    }
    if (ahead_.valid()) (void)ahead_.get();
    have_ = status.ok();
    if (!status.ok()) return status;
    current_index_ = index;
    if ((index + 1) * range_ < size_) {
      ahead_index_ = index + 1;
      ahead_ = client_->get_async(url_.bucket, url_.key, ahead_index_ * range_, range_, next_);
    }
    return {};
  }

  std::shared_ptr<S3Client> client_;
  S3Url url_;
  std::string name_;
  std::uint64_t size_, range_;
  std::string current_, next_;
  bool have_ = false;
  std::uint64_t current_index_ = 0, ahead_index_ = 0;
  std::future<Status> ahead_;
};

std::string format_of(std::string_view key) {
  const auto ends = [&](std::string_view ext) { return key.ends_with(ext); };
  if (ends(".jsonl") || ends(".ndjson") || ends(".json")) return "jsonl";
  if (ends(".csv")) return "csv";
  if (ends(".npy")) return "npy";
  return {};
}

Status open_source(std::unique_ptr<ByteInput> input, const std::string& format, std::unique_ptr<RowSource>& out) {
  if (format == "jsonl") return open_jsonl(std::move(input), out);
  if (format == "csv") return open_csv(std::move(input), out);
  return open_npy(std::move(input), out);
}

}  // namespace

Status open_s3_input(std::shared_ptr<S3Client> client, const S3Url& url, std::uint64_t size,
                     std::uint64_t range_bytes, std::unique_ptr<ByteInput>& out) {
  out = std::make_unique<S3Input>(std::move(client), url, size, range_bytes);
  return {};
}

Status open_s3_source(std::shared_ptr<S3Client> client, const std::string& url, std::string format,
                      std::uint64_t range_bytes, std::unique_ptr<RowSource>& out, std::string& identity) {
  S3Url where;
  if (auto status = client::parse_s3_url(url, where); !status.ok()) return status;
  std::vector<client::S3Object> objects;
  if (where.key.empty() || where.key.ends_with("/")) {
    if (auto status = client->list(where.bucket, where.key, objects); !status.ok()) return status;
    std::erase_if(objects, [](const client::S3Object& o) { return o.size == 0 || o.key.ends_with("/"); });
    if (objects.empty()) return Status::invalid("--input: no objects under " + url);
  } else {
    std::uint64_t size = 0;
    bool found = false;
    std::string etag;
    if (auto status = client->size(where.bucket, where.key, size, found, &etag); !status.ok()) return status;
    if (!found) return Status::invalid("--input: " + url + ": no such object (or no such bucket)");
    objects.push_back({where.key, size, etag});
  }
  if (format == "auto") {
    format = format_of(objects.front().key);
    if (format.empty())
      return Status::invalid("--input: cannot tell the format of s3://" + where.bucket + "/" + objects.front().key +
                             " (use --format)");
  }
  std::string listing;
  std::uint64_t bytes = 0;
  for (const auto& o : objects) {
    listing.append(o.key).append("\n").append(std::to_string(o.size)).append(" ").append(o.etag).append("\n");
    bytes += o.size;
  }
  identity = url + " objects=" + std::to_string(objects.size()) + " bytes=" + std::to_string(bytes) +
             " digest=" + client::sigv4::sha256_hex(listing).substr(0, 16);
  std::vector<InputPart> parts;
  for (const auto& o : objects) {
    S3Url object{where.bucket, o.key};
    parts.push_back({object.str(), o.size,
                     [client, object, size = o.size, range_bytes, format](std::unique_ptr<RowSource>& source) {
                       std::unique_ptr<ByteInput> input;
                       (void)open_s3_input(client, object, size, range_bytes, input);
                       return open_source(std::move(input), format, source);
                     }});
  }
  return open_concatenated(std::move(parts), out);
}

namespace {

// The writer's lock: an object created only if absent (If-None-Match: *), renewed by
// rewriting it only if unchanged (If-Match: its ETag). A lock whose ETag stays the same for
// longer than its time to live belongs to a writer that is gone; taking it over is again a
// conditional write, so of two writers that find it stale only one gets it. Staleness is
// judged by watching the ETag, not by comparing clocks.
class S3Lock {
 public:
  S3Lock(std::shared_ptr<S3Client> client, std::string bucket, std::string key, double ttl_s)
      : client_(std::move(client)), bucket_(std::move(bucket)), key_(std::move(key)), ttl_(ttl_s) {}
  ~S3Lock() { release(); }

  Status acquire() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    owner_ = std::string(host) + " pid " + std::to_string(::getpid()) + " #" + std::to_string(std::random_device{}());
    for (int round = 0; round < 3; ++round) {
      bool taken = false;
      if (auto status = client_->put(bucket_, key_, body(), {"*", ""}, &etag_, &taken); !status.ok()) return status;
      if (!taken) return start();
      std::string text, seen;
      bool found = false;
      if (auto status = client_->get_object(bucket_, key_, text, found, &seen); !status.ok()) return status;
      if (!found) continue;  // released meanwhile: try again
      // Its holder renews it every ttl/3; unchanged for a ttl (theirs, or ours if longer) it is stale.
      const double wait = std::max(ttl_, holder_ttl(text)) + 0.5;
      std::fprintf(stderr, "coinfer-batch: s3://%s/%s is held (%s); waiting %.1f s to see whether it is renewed\n",
                   bucket_.c_str(), key_.c_str(), holder(text).c_str(), wait);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      std::string again, now;
      if (auto status = client_->get_object(bucket_, key_, again, found, &now); !status.ok()) return status;
      if (!found) continue;
      if (now != seen)
        return Status::invalid("another coinfer-batch is writing this output (" + holder(again) + ": s3://" + bucket_ +
                               "/" + key_ + " is renewed)");
      bool lost = false;
      if (auto status = client_->put(bucket_, key_, body(), {"", seen}, &etag_, &lost); !status.ok()) return status;
      if (lost)
        return Status::invalid("another coinfer-batch took over the stale lock s3://" + bucket_ + "/" + key_ + " first");
      std::fprintf(stderr, "coinfer-batch: took over the stale lock s3://%s/%s\n", bucket_.c_str(), key_.c_str());
      return start();
    }
    return Status::invalid("cannot take the lock s3://" + bucket_ + "/" + key_ + " (it keeps changing hands)");
  }

  // Whether the lock is still this writer's: renewed within the ttl and never taken over.
  Status held() const {
    std::lock_guard lock(mutex_);
    if (lost_) return Status(Errc::unavailable, "lost the lock s3://" + bucket_ + "/" + key_ + ": " + why_);
    if (std::chrono::steady_clock::now() - renewed_ > std::chrono::duration<double>(ttl_))
      return Status(Errc::unavailable, "could not renew the lock s3://" + bucket_ + "/" + key_ + " within " +
                                           std::to_string(static_cast<int>(ttl_)) + " s (" + why_ + ")");
    return {};
  }

  void release() {
    {
      std::lock_guard lock(mutex_);
      if (!running_) return;
      running_ = false;
    }
    wake_.notify_all();
    if (renewer_.joinable()) renewer_.join();
    if (held().ok()) (void)client_->remove(bucket_, key_);
  }

 private:
  std::string body() const {
    std::string b = "{\"owner\":";
    json_append_string(b, owner_);
    b += ",\"ttl_s\":" + std::to_string(ttl_) + ",\"renewal\":" + std::to_string(renewals_) + "}\n";
    return b;
  }
  static double holder_ttl(const std::string& text) {
    const std::size_t at = text.find("\"ttl_s\":");
    return at == std::string::npos ? 0.0 : std::atof(text.c_str() + at + 8);
  }
  static std::string holder(const std::string& text) {
    const std::size_t at = text.find("\"owner\":\"");
    if (at == std::string::npos) return "owner unknown";
    const std::size_t end = text.find('"', at + 9);
    return text.substr(at + 9, end == std::string::npos ? std::string::npos : end - at - 9);
  }

  Status start() {
    renewed_ = std::chrono::steady_clock::now();
    running_ = true;
    renewer_ = std::thread([this] { renew_loop(); });
    return {};
  }

  void renew_loop() {
    std::unique_lock lock(mutex_);
    while (running_ && !lost_) {
      wake_.wait_for(lock, std::chrono::duration<double>(ttl_ / 3));
      if (!running_) break;
      ++renewals_;
      const std::string text = body();
      const std::string etag = etag_;
      lock.unlock();
      std::string next;
      bool taken = false;
      const Status status = client_->put(bucket_, key_, text, {"", etag}, &next, &taken);
      lock.lock();
      if (!status.ok()) {
        why_ = status.message();  // held() fails once the ttl passes without a renewal
      } else if (taken) {
        lost_ = true;
        why_ = "another writer took it over";
      } else {
        etag_ = next;
        renewed_ = std::chrono::steady_clock::now();
      }
    }
  }

  std::shared_ptr<S3Client> client_;
  std::string bucket_, key_, owner_;
  double ttl_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::thread renewer_;
  bool running_ = false, lost_ = false;
  std::string etag_, why_ = "no answer";
  std::int64_t renewals_ = 0;
  std::chrono::steady_clock::time_point renewed_;
};

class S3Sink final : public ResultSink {
 public:
  S3Sink(std::shared_ptr<S3Client> client, S3Url url, FileFormat format, S3SinkOptions options)
      : client_(std::move(client)), url_(std::move(url)), format_(format), options_(options) {
    if (!url_.key.empty() && !url_.key.ends_with("/")) url_.key += '/';
  }

  Status open(const JobIdentity& job, const ModelMetadata& model, bool resume, std::vector<std::int64_t>& done,
              CommittedTotals& totals) override {
    job_ = job;
    model_ = &model;
    if (auto status = check_outputs(model, format_); !status.ok()) return status;
    const std::string& bucket = url_.bucket;
    manifest_key_ = url_.key + manifest_name(job);
    const std::string tag = job.shard_tag();
    dead_prefix_ = url_.key + (tag.empty() ? "dead-letter/" : "dead-letter." + tag + "/");
    // The bucket answers (and the credentials work) before anything is written.
    std::vector<client::S3Object> objects;
    if (auto status = client_->list(bucket, url_.key, objects); !status.ok()) return status;
    lock_ = std::make_unique<S3Lock>(client_, bucket, manifest_key_ + ".lock", options_.lock_ttl_s);
    if (auto status = lock_->acquire(); !status.ok()) return status;
    if (auto status = client_->list(bucket, url_.key, objects); !status.ok()) return status;
    for (const auto& o : objects) {
      const std::string_view name = std::string_view(o.key).substr(url_.key.size());
      const int n = manifest_shards(name);
      if (n != 0 && n != job.shards)
        return Status::invalid(url_.str() + " holds " + std::string(name) + ", a job split into " + std::to_string(n) +
                               " shard" + (n == 1 ? "" : "s") + "; this run is split into " +
                               std::to_string(job.shards) + " (use the same --shard i/N or another --output)");
    }
    std::string text;
    bool found = false;
    if (auto status = client_->get_object(bucket, manifest_key_, text, found); !status.ok()) return status;
    const std::string where = "s3://" + bucket + "/" + manifest_key_;
    if (found) {
      Manifest manifest;
      if (auto status = parse_manifest(text, where, manifest); !status.ok()) return status;
      if (auto status = check_resume(manifest, job, resume, where, url_.str()); !status.ok()) return status;
      if (resume) chunks_ = std::move(manifest.chunks);
    }
    std::vector<std::int64_t> committed;
    for (const auto& c : chunks_) {
      done.push_back(c.chunk);
      committed.push_back(c.chunk);
      totals.chunks += 1;
      totals.rows += c.rows;
      totals.results += c.results;
      totals.errors += c.errors;
    }
    std::sort(committed.begin(), committed.end());
    // What a killed run left uncommitted: this shard's part and dead-letter objects of chunks
    // the manifest does not list (a multipart upload never completed is no object: a bucket
    // lifecycle rule, AbortIncompleteMultipartUpload, removes its parts).
    for (const auto& o : objects) {
      std::string_view name = std::string_view(o.key).substr(url_.key.size());
      const bool dead = o.key.starts_with(dead_prefix_);
      if (dead) name = std::string_view(o.key).substr(dead_prefix_.size());
      else if (name.find('/') != std::string_view::npos) continue;
      const std::int64_t chunk = part_chunk(name);
      if (chunk < 0 || chunk % job.shards != job.shard || std::binary_search(committed.begin(), committed.end(), chunk))
        continue;
      if (auto status = client_->remove(bucket, o.key); !status.ok()) return status;
    }
    return write_manifest(false);
  }

  Status commit(const ChunkWork& chunk) override {
    if (auto status = lock_->held(); !status.ok()) return status;
    const std::string stem = part_stem(chunk.chunk);
    chunk_parts(chunk, *model_, format_, parts_);
    for (const auto& [suffix, bytes] : parts_)
      if (auto status = client_->upload(url_.bucket, url_.key + stem + suffix, bytes); !status.ok()) return status;
    if (!chunk.dead.empty()) {
      line_.clear();
      dead_letter_lines(chunk, line_);
      if (auto status = client_->put(url_.bucket, dead_prefix_ + stem + ".jsonl", line_); !status.ok()) return status;
    }
    const std::int64_t results = chunk.results();
    chunks_.push_back({chunk.chunk, chunk.first_row, chunk.rows, results, chunk.rows - results});
    return write_manifest(false);
  }

  Status finish() override {
    if (auto status = write_manifest(true); !status.ok()) return status;
    lock_->release();
    return {};
  }

 private:
  Status write_manifest(bool complete) {
    // The commit: one PUT, which S3 makes visible whole. Only while the lock is this writer's.
    if (auto status = lock_->held(); !status.ok()) return status;
    return client_->put(url_.bucket, manifest_key_, manifest_json(job_, format_, chunks_, 0, complete));
  }

  std::shared_ptr<S3Client> client_;
  S3Url url_;
  FileFormat format_;
  S3SinkOptions options_;
  JobIdentity job_;
  const ModelMetadata* model_ = nullptr;
  std::string manifest_key_, dead_prefix_;
  std::unique_ptr<S3Lock> lock_;
  std::vector<ManifestChunk> chunks_;
  std::vector<std::pair<std::string, std::string>> parts_;
  std::string line_;
};

}  // namespace

Status open_s3_sink(std::shared_ptr<S3Client> client, const std::string& url, FileFormat format,
                    const S3SinkOptions& options, std::unique_ptr<ResultSink>& out) {
  S3Url where;
  if (auto status = client::parse_s3_url(url, where); !status.ok()) return status;
  out = std::make_unique<S3Sink>(std::move(client), std::move(where), format, options);
  return {};
}

}  // namespace coinfer::offline
