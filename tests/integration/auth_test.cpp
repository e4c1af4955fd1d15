// API keys ([auth]) on the real server: 401 without a valid key, 403 for a model the key may
// not use, 429 past a key's rate or concurrency limit, public health probes, WebSocket upgrades
// and messages, and the project's clients sending the key.
#include <doctest/doctest.h>

#include "coinfer/client/http_client.hpp"
#include "coinfer/client/ws_client.hpp"
#include "coinfer/core/access.hpp"
#include "coinfer/core/config.hpp"
#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;
using namespace std::chrono_literals;

namespace {

TenantConfig tenant(std::string name, std::string key, std::vector<std::string> models = {}) {
  TenantConfig t;
  t.name = std::move(name);
  t.key_sha256 = sha256_hex(key);
  t.models = std::move(models);
  return t;
}

AccessControl access_for(std::vector<TenantConfig> tenants) {
  AuthConfig auth;
  auth.tenants = std::move(tenants);
  AccessControl access;
  REQUIRE(access.configure(auth).ok());
  return access;
}

Reply post_with_key(Client& client, std::string target, std::string body, std::string key) {
  http::request<http::string_body> req{http::verb::post, target, 11};
  req.set(http::field::content_type, "application/json");
  if (!key.empty()) req.set(http::field::authorization, "Bearer " + key);
  req.body() = std::move(body);
  return client.exchange(std::move(req));
}

Reply get_with_key(Client& client, std::string target, std::string key) {
  http::request<http::string_body> req{http::verb::get, target, 11};
  if (!key.empty()) req.set(http::field::authorization, "Bearer " + key);
  return client.exchange(std::move(req));
}

}  // namespace

TEST_CASE("without a valid API key: 401 with WWW-Authenticate, the key never echoed") {
  const AccessControl access = access_for({tenant("acme", "sk-acme-1")});
  TestServer server(test_config(), 1, {}, nullptr, &access);
  Client client(server.port());

  const Reply missing = client.post("/v2/models/identity/infer", infer_body(4));
  CHECK(missing.status == 401);
  CHECK(missing.headers[http::field::www_authenticate] == "Bearer");
  CHECK(missing.body.find("missing API key") != std::string::npos);

  const Reply wrong = post_with_key(client, "/v2/models/identity/infer", infer_body(4), "sk-guess");
  CHECK(wrong.status == 401);
  CHECK(wrong.body == R"({"error":"invalid API key"})");

  http::request<http::string_body> basic{http::verb::get, "/v2/models/identity", 11};
  basic.set(http::field::authorization, "Basic c2stYWNtZS0xOg==");
  const Reply scheme = client.exchange(std::move(basic));
  CHECK(scheme.status == 401);
  CHECK(scheme.body.find("Bearer scheme") != std::string::npos);

  // A key differing from a valid one in its last character is as unknown as any other.
  CHECK(post_with_key(client, "/v2/models/identity/infer", infer_body(4), "sk-acme-2").status ==
        401);
  CHECK(get_with_key(client, "/v2/models", "").status == 401);  // a 404 path: still 401 first
}

TEST_CASE("a valid key is served, and health probes and metrics need none") {
  const AccessControl access = access_for({tenant("acme", "sk-acme-1")});
  TestServer server(test_config(), 1, {}, nullptr, &access);
  Client client(server.port());
  CHECK(client.get("/v2/health/live").status == 200);
  CHECK(client.get("/v2/health/ready").status == 200);
  CHECK(client.get("/metrics").status == 200);
  CHECK(client.get("/v2").status == 401);  // server metadata is not public

  const Reply ok = post_with_key(client, "/v2/models/identity/infer", infer_body(4), "sk-acme-1");
  CHECK(ok.status == 200);
  CHECK(ok.body.find(R"("name":"OUTPUT1")") != std::string::npos);
  // The scheme is case-insensitive (RFC 9110), extra spaces before the key are allowed.
  http::request<http::string_body> lower{http::verb::get, "/v2/models/identity", 11};
  lower.set(http::field::authorization, "bearer   sk-acme-1");
  CHECK(client.exchange(std::move(lower)).status == 200);
}

TEST_CASE("a key limited to other models gets 403 and sees only its models in listings") {
  const AccessControl access =
      access_for({tenant("acme", "sk-acme-1"), tenant("beta", "sk-beta-1", {"digits"})});
  TestServer server(test_config(), 1, {}, nullptr, &access);
  Client client(server.port());
  const Reply infer = post_with_key(client, "/v2/models/identity/infer", infer_body(4), "sk-beta-1");
  CHECK(infer.status == 403);
  CHECK(infer.body.find("tenant 'beta' may not use model 'identity'") != std::string::npos);
  CHECK(get_with_key(client, "/v2/models/identity", "sk-beta-1").status == 403);
  CHECK(get_with_key(client, "/v2/models/identity/ready", "sk-beta-1").status == 403);
  // Whether a model exists is not told to a key that may not use it.
  CHECK(get_with_key(client, "/v2/models/secret", "sk-beta-1").status == 403);

  const Reply beta_index = post_with_key(client, "/v2/repository/index", "", "sk-beta-1");
  CHECK(beta_index.status == 200);
  CHECK(beta_index.body == "[]");
  const Reply acme_index = post_with_key(client, "/v2/repository/index", "", "sk-acme-1");
  CHECK(acme_index.body.find(R"("name":"identity")") != std::string::npos);
}

TEST_CASE("past its rate a key gets 429 with Retry-After, and other keys are not affected") {
  TenantConfig limited = tenant("acme", "sk-acme-1");
  limited.requests_per_s = 0.5;  // one token every 2 s
  limited.burst = 2;
  const AccessControl access = access_for({limited, tenant("beta", "sk-beta-1")});
  TestServer server(test_config(), 1, {}, nullptr, &access);
  Client client(server.port());
  CHECK(post_with_key(client, "/v2/models/identity/infer", infer_body(4), "sk-acme-1").status ==
        200);
  CHECK(post_with_key(client, "/v2/models/identity/infer", infer_body(4), "sk-acme-1").status ==
        200);
  const Reply limited_reply =
      post_with_key(client, "/v2/models/identity/infer", infer_body(4), "sk-acme-1");
  CHECK(limited_reply.status == 429);
  CHECK(limited_reply.headers[http::field::retry_after] == "2");
  CHECK(limited_reply.body.find("rate limit of tenant 'acme' reached (0.5 requests/s)") !=
        std::string::npos);
  CHECK(limited_reply.keep_alive);  // a refusal does not cost the connection
  CHECK(post_with_key(client, "/v2/models/identity/infer", infer_body(4), "sk-beta-1").status ==
        200);
}

TEST_CASE("past its concurrency limit a key gets 429 until its request in flight completes") {
  TenantConfig limited = tenant("acme", "sk-acme-1");
  limited.max_concurrent = 1;
  const AccessControl access = access_for({limited});
  auto gated = std::make_shared<GatedIdentity>();
  gated->set_open(false);
  BatchPolicy policy;
  policy.max_batch_size = 8;
  TestServer server(test_config(), 1, policy, gated, &access);

  Client first(server.port());
  http::request<http::string_body> held{http::verb::post, "/v2/models/identity/infer", 11};
  held.set(http::field::host, "127.0.0.1");
  held.set(http::field::content_type, "application/json");
  held.set(http::field::authorization, "Bearer sk-acme-1");
  held.body() = infer_body(4, "held");
  held.prepare_payload();
  http::write(first.socket(), held);
  gated->wait_held();

  Client second(server.port());
  const Reply refused = post_with_key(second, "/v2/models/identity/infer", infer_body(4), "sk-acme-1");
  CHECK(refused.status == 429);
  CHECK(refused.headers[http::field::retry_after] == "1");
  CHECK(refused.body.find("concurrency limit of tenant 'acme'") != std::string::npos);

  gated->set_open(true);
  CHECK(first.receive().status == 200);
  CHECK(post_with_key(second, "/v2/models/identity/infer", infer_body(4), "sk-acme-1").status ==
        200);
  const Tenant* acme = nullptr;
  REQUIRE(access.authenticate("Bearer sk-acme-1", acme).ok());
  CHECK(acme->in_flight() == 0);  // every permit given back before its reply was written
}

TEST_CASE("WebSocket: the upgrade needs a key, and each message is checked against its models") {
  const AccessControl access =
      access_for({tenant("acme", "sk-acme-1"), tenant("beta", "sk-beta-1", {"digits"})});
  TestServer server(test_config(), 1, {}, nullptr, &access);
  asio::io_context io;
  {
    client::WsClient anonymous(io.get_executor());
    const Status status = run_task(io, anonymous.connect("127.0.0.1", server.port(), "/v2/ws"));
    CHECK(status.code() == Errc::unavailable);
    CHECK_MESSAGE(status.message().find("HTTP 401") != std::string::npos, status.message());
  }
  const std::string message = R"({"model_name":"identity","id":"m1",)" + infer_body(4).substr(1);
  for (const auto& [key, expect] : {std::pair{"sk-acme-1", std::string(R"("name":"OUTPUT1")")},
                                    std::pair{"sk-beta-1", std::string(R"("status":403)")}}) {
    client::WsClient ws(io.get_executor(),
                        client::WsClientConfig{.authorization = std::string("Bearer ") + key});
    REQUIRE(run_task(io, ws.connect("127.0.0.1", server.port(), "/v2/ws")).ok());
    REQUIRE(run_task(io, ws.send(message)).ok());
    std::string reply;
    REQUIRE(run_task(io, ws.receive(reply)).ok());
    CHECK_MESSAGE(reply.find(expect) != std::string::npos, reply);
    (void)run_task(io, ws.close());
  }
}

TEST_CASE("the HttpClient sends its configured key") {
  const AccessControl access = access_for({tenant("acme", "sk-acme-1")});
  TestServer server(test_config(), 1, {}, nullptr, &access);
  asio::io_context io;
  client::HttpResult out;
  client::HttpClient without(io.get_executor(), "127.0.0.1", server.port());
  CHECK(run_task(io, client::model_metadata(without, "identity", out)).code() ==
        Errc::unauthenticated);
  client::HttpClient with(io.get_executor(), "127.0.0.1", server.port(),
                          client::HttpClientConfig{.authorization = "Bearer sk-acme-1"});
  CHECK(run_task(io, client::model_metadata(with, "identity", out)).ok());
}
