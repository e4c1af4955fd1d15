#include "coinfer/client/s3_client.hpp"

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include "coinfer/client/http_client.hpp"

namespace coinfer::client {
namespace asio = boost::asio;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool read_text(const std::filesystem::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

std::filesystem::path aws_file(const char* variable, const char* name) {
  if (std::string v = env(variable); !v.empty()) return v;
  const std::string home = env("HOME");
  return home.empty() ? std::filesystem::path() : std::filesystem::path(home) / ".aws" / name;
}

struct Endpoint {
  bool tls = true;
  std::string host;
  std::uint16_t port = 443;
};

Status parse_endpoint(const std::string& url, Endpoint& out) {
  std::string_view rest = url;
  if (rest.starts_with("https://")) {
    out.tls = true;
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    out.tls = false;
    rest.remove_prefix(7);
  } else {
    return Status::invalid("S3 endpoint '" + url + "': expected http://HOST[:PORT] or https://HOST[:PORT]");
  }
  while (rest.ends_with("/")) rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos)
    return Status::invalid("S3 endpoint '" + url + "': a path is not supported (the bucket goes in the s3:// URL)");
  out.port = out.tls ? 443 : 80;
  std::string_view host = rest;
  if (host.starts_with("[")) {  // [IPv6]:port
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return Status::invalid("S3 endpoint '" + url + "': unterminated '['");
    std::string_view after = host.substr(close + 1);
    host = host.substr(1, close - 1);
    if (after.starts_with(":")) rest = after.substr(1);
    else rest = {};
  } else {
    const std::size_t colon = host.rfind(':');
    if (colon != std::string_view::npos) {
      rest = host.substr(colon + 1);
      host = host.substr(0, colon);
    } else {
      rest = {};
    }
  }
  if (!rest.empty()) {
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), port);
    if (ec != std::errc{} || end != rest.data() + rest.size() || port == 0 || port > 65535)
      return Status::invalid("S3 endpoint '" + url + "': bad port '" + std::string(rest) + "'");
    out.port = static_cast<std::uint16_t>(port);
  }
  if (host.empty()) return Status::invalid("S3 endpoint '" + url + "': no host");
  out.host = std::string(host);
  return {};
}

bool is_ip_or_localhost(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec || host == "localhost";
}

// Worth another try: the server's trouble (5xx but 501 NotImplemented: InternalError,
// SlowDown, ServiceUnavailable), throttling (429), or S3's RequestTimeout (400: the body
// arrived too slowly).
bool retryable(const HttpResult& r, const std::string& code) {
  return (r.status >= 500 && r.status != 501) || r.status == 429 || code == "RequestTimeout" ||
         code == "SlowDown";
}

}  // namespace

Status resolve_s3_options(S3Options& o) {
  std::string profile_name = o.profile.empty() ? env("AWS_PROFILE") : o.profile;
  const bool profile_named = !profile_name.empty();
  if (profile_name.empty()) profile_name = "default";

  AwsProfile config;  // ~/.aws/config: the region
  std::string text;
  const std::filesystem::path config_path = aws_file("AWS_CONFIG_FILE", "config");
  if (!config_path.empty() && read_text(config_path, text)) parse_aws_profile(text, profile_name, config);

  if (o.credentials.access_key_id.empty()) {
    const std::string id = env("AWS_ACCESS_KEY_ID"), secret = env("AWS_SECRET_ACCESS_KEY");
    if (!id.empty() && !secret.empty() && o.profile.empty()) {
      o.credentials = {id, secret, env("AWS_SESSION_TOKEN")};
    } else {
      const std::filesystem::path path = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
      AwsProfile p;
      const bool have_file = !path.empty() && read_text(path, text);
      const bool found = have_file && parse_aws_profile(text, profile_name, p);
      if (found && (p.access_key_id.empty() || p.secret_access_key.empty()))
        return Status::invalid("AWS profile '" + profile_name + "' in " + path.string() +
                               " lacks aws_access_key_id or aws_secret_access_key");
      if (!found) {
        if (profile_named)
          return Status::invalid("no AWS profile '" + profile_name + "' in " +
                                 (path.empty() ? std::string("~/.aws/credentials") : path.string()));
        return Status::invalid(
            "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a [default] "
            "profile in ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE), or name one with AWS_PROFILE");
      }
      o.credentials = {p.access_key_id, p.secret_access_key, p.session_token};
    }
  }
  if (o.region.empty()) o.region = env("AWS_REGION");
  if (o.region.empty()) o.region = env("AWS_DEFAULT_REGION");
  if (o.region.empty()) o.region = config.region;
  if (o.region.empty()) o.region = "us-east-1";
  if (o.endpoint.empty()) o.endpoint = env("AWS_ENDPOINT_URL_S3");
  if (o.endpoint.empty()) o.endpoint = env("AWS_ENDPOINT_URL");
  if (o.endpoint.empty()) o.endpoint = "https://s3." + o.region + ".amazonaws.com";
  if (o.part_bytes < (5u << 20)) return Status::invalid("S3 part size: at least 5 MiB (S3's smallest part)");
  if (o.max_attempts < 1) o.max_attempts = 1;
  return {};
}

struct S3Client::Impl {
  S3Options options;
  Endpoint endpoint;
  bool path_style = true;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::thread thread;
  std::map<std::string, std::unique_ptr<HttpClient>> clients;  // by host; the I/O thread's
  std::mt19937_64 rng{std::random_device{}()};                  // the I/O thread's
  std::atomic<std::uint64_t> requests{0}, retries{0}, bytes_in{0}, bytes_out{0};

  ~Impl() {
    work.reset();
    // Connections close on the I/O thread, which then runs out of work.
    asio::post(io, [this] { clients.clear(); });
    if (thread.joinable()) thread.join();
  }

  HttpClient& client_for(const std::string& host) {
    auto& c = clients[host];
    if (!c) {
      HttpClientConfig config;
      config.max_idle_connections = 16;
      config.request_timeout_ms = options.request_timeout_ms;
      config.max_response_body_bytes = std::max<std::size_t>(64u << 20, options.part_bytes * 2);
      config.tls = endpoint.tls;
      config.tls_ca_file = options.ca_file;
      c = std::make_unique<HttpClient>(io.get_executor(), host, endpoint.port, config);
    }
    return *c;
  }

  // One request as S3 wants it: where (path-style or virtual-hosted), signed, retried.
  struct Call {
    Call(net::Method m, const std::string& b, std::string k = {}) : method(m), bucket(&b), key(std::move(k)) {}
    net::Method method = net::Method::get;
    const std::string* bucket = nullptr;
    std::string key;  // raw; empty: the bucket itself
    std::string query;  // encoded
    std::string_view body;
    std::vector<std::pair<std::string, std::string>> headers;  // extra, signed
    // A ranged GET: bytes [offset, end) appended to `into` (a broken one continues).
    bool ranged = false;
    std::uint64_t offset = 0, end = 0;
    std::string* into = nullptr;
    std::vector<int> accepted;  // statuses that are an answer, not an error (404 of a HEAD)
  };

  std::string describe(const Call& call) const {
    return "s3://" + *call.bucket + "/" + call.key;
  }

  asio::awaitable<Status> run(Call& call, HttpResult& out) {
    const std::string host = path_style ? endpoint.host : *call.bucket + "." + endpoint.host;
    HttpClient& http = client_for(host);
    std::string path = "/";
    if (path_style) path += *call.bucket + (call.key.empty() ? "" : "/");
    path += sigv4::uri_encode(call.key, false);
    const std::string target = call.query.empty() ? path : path + "?" + call.query;
    const std::string payload_hash = sigv4::sha256_hex(call.body);
    std::uint32_t wait_ms = options.backoff_ms;
    int failures = 0;
    std::string code, message;
    for (;;) {
      sigv4::Request request{net::to_string(call.method), path, call.query, call.headers, payload_hash};
      std::string range;
      if (call.ranged) {
        range = "bytes=" + std::to_string(call.offset) + "-" + std::to_string(call.end - 1);
        request.headers.emplace_back("range", range);
      }
      const std::string date = sigv4::amz_date(std::chrono::system_clock::now());
      request.headers.emplace_back("host", http.host_header());
      request.headers.emplace_back("x-amz-date", date);
      request.headers.emplace_back("x-amz-content-sha256", payload_hash);
      if (!options.credentials.session_token.empty())
        request.headers.emplace_back("x-amz-security-token", options.credentials.session_token);
      const sigv4::Signature signature =
          sigv4::sign(request, options.credentials, options.region, "s3", date);
      std::vector<std::string> lines;
      for (const auto& [name, value] : request.headers)
        if (name != "host") lines.push_back(name + ": " + value);
      lines.push_back("Authorization: " + signature.authorization);

      ++requests;
      bytes_out += call.body.size();
      Status transport = co_await http.request(call.method, target, call.body, {}, lines, out);
      bytes_in += out.body.size();
      bool again = false;
      if (!transport.ok()) {
        // A ranged GET that broke mid-body keeps what arrived and asks for the rest.
        if (call.ranged && out.broken_status == 206 && !out.body.empty()) {
          call.into->append(out.body);
          call.offset += out.body.size();
          failures = 0;  // progress: the count of tries starts again
          if (call.offset >= call.end) co_return Status{};
        }
        message = transport.message();
        again = true;
      } else if (out.status >= 300) {
        code.clear();
        message.clear();
        s3_xml::parse_error(out.body, code, message);
        if (std::find(call.accepted.begin(), call.accepted.end(), out.status) != call.accepted.end())
          co_return Status{};
        if (!retryable(out, code)) co_return error(call, out, code, message);
        again = true;
        message = "HTTP " + std::to_string(out.status) + (code.empty() ? "" : " " + code);
      } else if (call.method == net::Method::post && out.status == 200 &&
                 s3_xml::parse_error(out.body, code, message)) {
        // CompleteMultipartUpload answers 200 and then, in the body, an error.
        if (!(code == "InternalError" || code == "SlowDown")) co_return error(call, out, code, message);
        again = true;
      } else {
        if (call.ranged) {
          if (out.status == 200 && call.offset > 0)  // a server that ignored Range
            co_return Status(Errc::unavailable, describe(call) + ": the server ignored the Range header");
          const std::uint64_t want = call.end - call.offset;
          call.into->append(out.body, 0, std::min<std::uint64_t>(out.body.size(), want));
        }
        co_return Status{};
      }
      if (again) {
        if (++failures >= options.max_attempts)
          co_return Status(Errc::unavailable, describe(call) + ": " + message + " (gave up after " +
                                                  std::to_string(options.max_attempts) + " tries)");
        ++retries;
        // Jittered exponential backoff ("equal jitter"): half the step fixed, half random; a
        // server's Retry-After is honored when longer.
        std::uint32_t ms = wait_ms / 2 + static_cast<std::uint32_t>(rng() % (wait_ms / 2 + 1));
        if (out.retry_after_s > 0) ms = std::max<std::uint32_t>(ms, static_cast<std::uint32_t>(out.retry_after_s) * 1000);
        wait_ms = std::min(options.max_backoff_ms, wait_ms * 2);
        asio::steady_timer timer(io, std::chrono::milliseconds(ms));
        co_await timer.async_wait(asio::use_awaitable);
      }
    }
  }

  Status error(const Call& call, const HttpResult& out, const std::string& code,
               const std::string& message) const {
    std::string what = describe(call) + ": " + (code.empty() ? "" : code + ": ") +
                       (message.empty() ? "" : message + " ") + "(HTTP " + std::to_string(out.status) + ")";
    if (code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" ||
        code == "InvalidToken" || code == "ExpiredToken")
      what += ": check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, the profile)";
    Errc errc = errc_from_http_status(out.status);
    if (errc == Errc::internal) errc = Errc::unavailable;
    return Status(errc, std::move(what));
  }

  // co_spawn with asio::use_future, written out: GCC 12 at -O1 (the sanitizer builds) reports
  // use_future's completion object "may be used uninitialized" inside Boost, an error there.
  template <class F>
  std::future<Status> spawn(F&& f) {
    auto promise = std::make_shared<std::promise<Status>>();
    std::future<Status> result = promise->get_future();
    asio::co_spawn(io, std::forward<F>(f), [promise](std::exception_ptr e, Status status) {
      if (e) {
        promise->set_exception(e);
      } else {
        promise->set_value(std::move(status));
      }
    });
    return result;
  }

  template <class F>
  Status blocking(F&& f) {
    return spawn(std::forward<F>(f)).get();
  }
};

S3Client::S3Client() : impl_(std::make_unique<Impl>()) {}
S3Client::~S3Client() = default;

Status S3Client::open(S3Options options, std::unique_ptr<S3Client>& out) {
  if (auto status = resolve_s3_options(options); !status.ok()) return status;
  std::unique_ptr<S3Client> client(new S3Client());
  Impl& impl = *client->impl_;
  if (auto status = parse_endpoint(options.endpoint, impl.endpoint); !status.ok()) return status;
  impl.path_style = options.addressing == S3Addressing::path ||
                    (options.addressing == S3Addressing::automatic && is_ip_or_localhost(impl.endpoint.host));
  impl.options = std::move(options);
  impl.thread = std::thread([&io = impl.io] { io.run(); });
  out = std::move(client);
  return {};
}

const S3Options& S3Client::options() const noexcept {
  return impl_->options;
}

S3Client::Stats S3Client::stats() const {
  return {impl_->requests.load(), impl_->retries.load(), impl_->bytes_in.load(), impl_->bytes_out.load()};
}

Status S3Client::list(const std::string& bucket, const std::string& prefix, std::vector<S3Object>& out) {
  out.clear();
  return impl_->blocking([&]() -> asio::awaitable<Status> {
    std::string token;
    HttpResult r;
    for (;;) {
      Impl::Call call(net::Method::get, bucket);
      call.query = "list-type=2&prefix=" + sigv4::uri_encode(prefix, true);
      if (!token.empty()) call.query += "&continuation-token=" + sigv4::uri_encode(token, true);
      if (auto status = co_await impl_->run(call, r); !status.ok()) co_return status;
      s3_xml::ListPage page;
      if (auto status = s3_xml::parse_list(r.body, page); !status.ok())
        co_return Status(Errc::unavailable, "listing s3://" + bucket + "/" + prefix + ": " + status.message());
      for (auto& o : page.objects) out.push_back(std::move(o));
      if (!page.truncated) break;
      // A store that hands back the token it was given would list the same page forever.
      if (page.next_token == token)
        co_return Status(Errc::unavailable, "listing s3://" + bucket + "/" + prefix + ": the store repeated its continuation token");
      token = page.next_token;
    }
    // Key order, as S3 lists them (UTF-8 binary order); a store that lists otherwise is sorted.
    std::sort(out.begin(), out.end(), [](const S3Object& a, const S3Object& b) { return a.key < b.key; });
    co_return Status{};
  });
}

Status S3Client::size(const std::string& bucket, const std::string& key, std::uint64_t& size, bool& found,
                      std::string* etag) {
  return impl_->blocking([&]() -> asio::awaitable<Status> {
    Impl::Call call(net::Method::head, bucket, key);
    call.accepted = {404};
    HttpResult r;
    if (auto status = co_await impl_->run(call, r); !status.ok()) co_return status;
    found = r.status != 404;
    size = r.content_length < 0 ? 0 : static_cast<std::uint64_t>(r.content_length);
    if (etag) *etag = r.etag;
    co_return Status{};
  });
}

std::future<Status> S3Client::get_async(const std::string& bucket, const std::string& key,
                                        std::uint64_t offset, std::uint64_t length, std::string& out) {
  return impl_->spawn(
      [this, &bucket, &key, offset, length, &out]() -> asio::awaitable<Status> {
        out.clear();
        if (length == 0) co_return Status{};
        Impl::Call call(net::Method::get, bucket, key);
        call.ranged = true;
        call.offset = offset;
        call.end = offset + length;
        call.into = &out;
        call.accepted = {416};  // a range past the end: nothing there
        HttpResult r;
        co_return co_await impl_->run(call, r);
      });
}

Status S3Client::get(const std::string& bucket, const std::string& key, std::uint64_t offset,
                     std::uint64_t length, std::string& out) {
  return get_async(bucket, key, offset, length, out).get();
}

Status S3Client::get_object(const std::string& bucket, const std::string& key, std::string& out,
                            bool& found, std::string* etag) {
  return impl_->blocking([&]() -> asio::awaitable<Status> {
    Impl::Call call(net::Method::get, bucket, key);
    call.accepted = {404};
    HttpResult r;
    if (auto status = co_await impl_->run(call, r); !status.ok()) co_return status;
    found = r.status != 404;
    out = found ? std::move(r.body) : std::string();
    if (etag) *etag = found ? r.etag : std::string();
    co_return Status{};
  });
}

Status S3Client::put(const std::string& bucket, const std::string& key, std::string_view body,
                     const PutCondition& condition, std::string* etag, bool* precondition_failed) {
  if (precondition_failed) *precondition_failed = false;
  return impl_->blocking([&]() -> asio::awaitable<Status> {
    Impl::Call call(net::Method::put, bucket, key);
    call.body = body;
    if (!condition.if_none_match.empty()) call.headers.emplace_back("if-none-match", condition.if_none_match);
    if (!condition.if_match.empty()) call.headers.emplace_back("if-match", condition.if_match);
    if (precondition_failed) call.accepted = {412, 409};
    HttpResult r;
    if (auto status = co_await impl_->run(call, r); !status.ok()) co_return status;
    if (r.status == 412 || r.status == 409) {
      *precondition_failed = true;
      co_return Status{};
    }
    if (etag) *etag = r.etag;
    co_return Status{};
  });
}

Status S3Client::remove(const std::string& bucket, const std::string& key) {
  return impl_->blocking([&]() -> asio::awaitable<Status> {
    Impl::Call call(net::Method::delete_, bucket, key);
    call.accepted = {404};
    HttpResult r;
    co_return co_await impl_->run(call, r);
  });
}

Status S3Client::upload(const std::string& bucket, const std::string& key, std::string_view body) {
  return impl_->blocking([&]() -> asio::awaitable<Status> {
    HttpResult r;
    Impl::Call create(net::Method::post, bucket, key);
    create.query = "uploads=";
    if (auto status = co_await impl_->run(create, r); !status.ok()) co_return status;
    std::string upload_id;
    if (auto status = s3_xml::parse_upload_id(r.body, upload_id); !status.ok())
      co_return Status(Errc::unavailable, "s3://" + bucket + "/" + key + ": " + status.message());
    const std::string id_query = "uploadId=" + sigv4::uri_encode(upload_id, true);
    std::string complete = "<CompleteMultipartUpload>";
    Status failed;
    const std::size_t part = impl_->options.part_bytes;
    for (std::size_t at = 0, number = 1; at < body.size() || number == 1; at += part, ++number) {
      Impl::Call put(net::Method::put, bucket, key);
      put.query = "partNumber=" + std::to_string(number) + "&" + id_query;
      put.body = body.substr(std::min(at, body.size()), part);
      if (failed = co_await impl_->run(put, r); !failed.ok()) break;
      if (r.etag.empty()) {
        failed = Status(Errc::unavailable, "s3://" + bucket + "/" + key + ": no ETag for part " + std::to_string(number));
        break;
      }
      complete += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" + r.etag + "</ETag></Part>";
      if (at + part >= body.size()) break;
    }
    if (failed.ok()) {
      complete += "</CompleteMultipartUpload>";
      Impl::Call done(net::Method::post, bucket, key);
      done.query = id_query;
      done.body = complete;
      if (failed = co_await impl_->run(done, r); failed.ok()) co_return Status{};
    }
    // Aborted, so that no parts are left stored (and billed) for an upload nobody completes.
    Impl::Call abort(net::Method::delete_, bucket, key);
    abort.query = id_query;
    abort.accepted = {404};
    HttpResult ignored;
    co_await impl_->run(abort, ignored);
    co_return failed;
  });
}

}  // namespace coinfer::client
