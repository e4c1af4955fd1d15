#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "coinfer/client/s3_client.hpp"
#include "coinfer/offline/sinks.hpp"
#include "coinfer/offline/sources.hpp"

namespace coinfer::offline {

// coinfer-batch's inputs and outputs in an S3-compatible object store (docs/BATCH.md).

inline bool is_s3_url(std::string_view text) noexcept { return text.starts_with("s3://"); }

// An object read in ranged GETs of `range_bytes`, the next range fetched while the current
// one is parsed: memory stays at two ranges whatever the object's size.
Status open_s3_input(std::shared_ptr<client::S3Client> client, const client::S3Url& url,
                     std::uint64_t size, std::uint64_t range_bytes, std::unique_ptr<ByteInput>& out);

// `url`: one object (s3://bucket/key), or every object under a prefix (s3://bucket/prefix/,
// ending in '/'), in key order, as one input (zero-byte objects, folder markers, are left
// out). `format`: jsonl, csv, npy, or auto (by the key's extension, the first object's for a
// prefix). `identity` receives what a resumed run must find again: the URL, and the objects'
// count, bytes and a digest of their keys, sizes and ETags.
Status open_s3_source(std::shared_ptr<client::S3Client> client, const std::string& url, std::string format,
                      std::uint64_t range_bytes, std::unique_ptr<RowSource>& out, std::string& identity);

struct S3SinkOptions {
  // The writer's lock (manifest[.shard].json.lock) is renewed every ttl/3; a lock not renewed
  // for `lock_ttl_s` is stale, and another writer takes it over.
  double lock_ttl_s = 30;
};

// Results under s3://bucket/prefix/ with the file sink's names: part-<chunk>.jsonl (or .npy
// parts) written as multipart uploads, completed when the chunk commits; the chunk's dead
// letters as dead-letter[.shard]/part-<chunk>.jsonl; manifest[.shard].json (one PUT, which
// is the commit). One writer per shard: a lock object created with If-None-Match: *.
Status open_s3_sink(std::shared_ptr<client::S3Client> client, const std::string& url, FileFormat format,
                    const S3SinkOptions& options, std::unique_ptr<ResultSink>& out);

}  // namespace coinfer::offline
