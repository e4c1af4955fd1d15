#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/client/sigv4.hpp"
#include "coinfer/core/status.hpp"

namespace coinfer::client {

// "s3://bucket/key" (or "s3://bucket/prefix/", or "s3://bucket").
struct S3Url {
  std::string bucket;
  std::string key;
  std::string str() const { return "s3://" + bucket + "/" + key; }
};
Status parse_s3_url(std::string_view url, S3Url& out);

enum class S3Addressing {
  automatic,     // path-style for an endpoint that is an IP address or localhost, else virtual
  path,          // https://endpoint/bucket/key
  virtual_host,  // https://bucket.endpoint/key
};

// Where and as whom. Empty fields are filled by resolve_s3_options the way the AWS CLI and
// SDKs fill them, so a job runs with the credentials its environment already has.
struct S3Options {
  // "https://host[:port]" or "http://host[:port]"; empty: AWS_ENDPOINT_URL_S3, then
  // AWS_ENDPOINT_URL, then AWS's own (https://s3.REGION.amazonaws.com).
  std::string endpoint;
  // Empty: AWS_REGION, AWS_DEFAULT_REGION, the profile's region in ~/.aws/config, else us-east-1.
  std::string region;
  // A profile of ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE); empty: AWS_PROFILE, else
  // "default". Used when AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set.
  std::string profile;
  sigv4::Credentials credentials;  // set: used as they are
  S3Addressing addressing = S3Addressing::automatic;
  std::string ca_file;  // HTTPS: PEM CA bundle to verify the server with; empty: the system's
  int max_attempts = 10;  // per request: 5xx, SlowDown, broken connections are retried
  std::uint32_t backoff_ms = 100;       // the first retry's wait (doubling, jittered) ...
  std::uint32_t max_backoff_ms = 5000;  // ... up to this
  std::uint32_t request_timeout_ms = 60'000;
  std::size_t part_bytes = 8u << 20;  // multipart uploads: bytes per part (at least 5 MiB)
};

// Fills the empty fields of `options` from the environment and the AWS config files; an
// error names what is missing ("no AWS credentials: ...") or malformed.
Status resolve_s3_options(S3Options& options);

struct S3Object {
  std::string key;
  std::uint64_t size = 0;
  std::string etag;  // as listed (quotes included); empty when the store did not say
};

// The parts of S3's XML answers that the client reads (exposed for tests and fuzzing).
namespace s3_xml {
struct ListPage {
  std::vector<S3Object> objects;
  bool truncated = false;
  std::string next_token;
};
Status parse_list(std::string_view xml, ListPage& out);
// An <Error> document: its Code and Message. False when `xml` is not one.
bool parse_error(std::string_view xml, std::string& code, std::string& message);
Status parse_upload_id(std::string_view xml, std::string& upload_id);
}  // namespace s3_xml

// One profile of an AWS config or credentials file (INI: [name] or [profile name] sections,
// key = value lines, # and ; comments). False when the section is not there.
struct AwsProfile {
  std::string access_key_id, secret_access_key, session_token, region;
};
bool parse_aws_profile(std::string_view ini, std::string_view name, AwsProfile& out);

// An S3 client with a blocking interface over the library's HTTP client: it runs its own I/O
// thread, so any thread may call it, and calls from several threads run concurrently (each on
// its own keep-alive connection). Every request is signed with SigV4 and retried with
// jittered exponential backoff on 5xx answers (SlowDown included), 429, timeouts and broken
// connections; a ranged GET broken mid-body continues from the byte where it broke.
// Errors name the object and S3's own code and message ("s3://b/k: NoSuchBucket: The
// specified bucket does not exist (HTTP 404)").
class S3Client {
 public:
  // Resolves `options` (resolve_s3_options) and starts the I/O thread.
  static Status open(S3Options options, std::unique_ptr<S3Client>& out);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const S3Options& options() const noexcept;

  // Every object whose key starts with `prefix`, in key order (ListObjectsV2, all pages).
  Status list(const std::string& bucket, const std::string& prefix, std::vector<S3Object>& out);
  // The object's size (HEAD) and, optionally, its ETag; `found` false (and ok) when there is none.
  Status size(const std::string& bucket, const std::string& key, std::uint64_t& size, bool& found,
              std::string* etag = nullptr);
  // Bytes [offset, offset + length) of an object (fewer at its end) into `out` (replaced).
  Status get(const std::string& bucket, const std::string& key, std::uint64_t offset,
             std::uint64_t length, std::string& out);
  // The same, started now and waited for later (a read-ahead); the strings must outlive it.
  std::future<Status> get_async(const std::string& bucket, const std::string& key,
                                std::uint64_t offset, std::uint64_t length, std::string& out);
  // A whole object; `found` false (and ok) when the key does not exist. `etag` (optional)
  // receives its ETag.
  Status get_object(const std::string& bucket, const std::string& key, std::string& out,
                    bool& found, std::string* etag = nullptr);

  // PUT with an optional condition: if_none_match "*" (only if no such object) or if_match
  // an ETag (only if the object is still that version). `precondition_failed` (optional) is
  // set instead of an error when the condition does not hold (HTTP 412, or 409 from a store
  // that answers a concurrent conditional write so).
  struct PutCondition {
    std::string if_none_match, if_match;
  };
  Status put(const std::string& bucket, const std::string& key, std::string_view body,
             const PutCondition& condition = {}, std::string* etag = nullptr,
             bool* precondition_failed = nullptr);
  Status remove(const std::string& bucket, const std::string& key);
  // A multipart upload (create, parts of options().part_bytes, complete): the object appears
  // whole or not at all; on failure the upload is aborted.
  Status upload(const std::string& bucket, const std::string& key, std::string_view body);

  struct Stats {
    std::uint64_t requests = 0, retries = 0, bytes_in = 0, bytes_out = 0;
  };
  Stats stats() const;

 private:
  S3Client();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coinfer::client
