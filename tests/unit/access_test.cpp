// API keys: [auth] read from TOML (keys hashed, never kept), and a tenant's limits.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "coinfer/core/access.hpp"
#include "coinfer/core/config.hpp"

using namespace coinfer;

TEST_CASE("sha256_hex matches the standard test vectors and sha256sum") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // printf %s sk-test | sha256sum: how an operator makes key_sha256
  CHECK(sha256_hex("sk-test") == "f3abf2a6cc4f00987743db5f544ba345b4899ae31f326d8ee9c4816de153c9e0");
}

TEST_CASE("[auth] tenants: a plain key is hashed as it is read and never written back") {
  Config config;
  REQUIRE(parse_config(R"(
[auth.tenants.acme]
key = "sk-test"
models = ["minilm"]
max_concurrent = 4
requests_per_s = 2.5
burst = 10
[auth.tenants.beta]
key_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
)",
                       config)
              .ok());
  REQUIRE(config.auth.tenants.size() == 2);
  const TenantConfig& acme = config.auth.tenants[0];
  CHECK(acme.name == "acme");
  CHECK(acme.key_sha256 == sha256_hex("sk-test"));
  CHECK(acme.models == std::vector<std::string>{"minilm"});
  CHECK(acme.max_concurrent == 4);
  CHECK(acme.requests_per_s == 2.5);
  CHECK(acme.burst == 10);
  CHECK(config.auth.tenants[1].models.empty());
  CHECK(config.auth.public_paths ==
        std::vector<std::string>{"/v2/health/live", "/v2/health/ready", "/metrics"});

  const std::string effective = to_toml(config);
  CHECK(effective.find("sk-test") == std::string::npos);
  CHECK(effective.find(sha256_hex("sk-test")) != std::string::npos);
  Config again;
  REQUIRE(parse_config(effective, again).ok());  // the log's config reads back the same
  CHECK(again.auth.tenants[0].key_sha256 == acme.key_sha256);
  CHECK(again.auth.tenants[0].requests_per_s == 2.5);
}

TEST_CASE("[auth] mistakes are named by key") {
  const auto error = [](std::string_view toml) {
    Config config;
    return parse_config(toml, config).message();
  };
  CHECK(error("[auth.tenants.a]\nmodels = []\n") == "auth.tenants.a.key: missing (key or key_sha256)");
  CHECK(error("[auth.tenants.a]\nkey_sha256 = \"ABC\"\n") ==
        "auth.tenants.a.key_sha256: expected 64 lowercase hex digits (a SHA-256)");
  CHECK(error("[auth.tenants.a]\nkey = \"x\"\nkey_sha256 = \"" + sha256_hex("x") + "\"\n") ==
        "auth.tenants.a.key: give key or key_sha256, not both");
  CHECK(error("[auth.tenants.a]\nkey = \"x\"\n[auth.tenants.b]\nkey = \"x\"\n") ==
        "auth.tenants.b: same key as tenant 'a'");
  CHECK(error("[auth.tenants.a]\nkey = \"x\"\nrate = 3\n") == "auth.tenants.a.rate: unknown key");
  CHECK(error("[auth.tenants.a]\nkey = \"x\"\nrequests_per_s = -1\n") ==
        "auth.tenants.a.requests_per_s: expected a number from 0 to 1e9");
  CHECK(error("[auth]\nkeys = 1\n") == "auth.keys: unknown key");
}

TEST_CASE("[auth] keys_file adds tenants from a file of their own, relative to the config") {
  const auto dir = std::filesystem::temp_directory_path() / "coinfer_access_test";
  std::filesystem::create_directories(dir / "secrets");
  std::ofstream(dir / "service.toml") << "[auth]\nkeys_file = \"secrets/keys.toml\"\n"
                                         "[auth.tenants.inline]\nkey = \"sk-inline\"\n";
  std::ofstream(dir / "secrets" / "keys.toml")
      << "[tenants.filed]\nkey_sha256 = \"" << sha256_hex("sk-filed") << "\"\nmax_concurrent = 2\n";
  Config config;
  const Status status = load_config(dir / "service.toml", config);
  REQUIRE_MESSAGE(status.ok(), status.message());
  REQUIRE(config.auth.tenants.size() == 2);
  CHECK(config.auth.tenants[1].name == "filed");
  CHECK(config.auth.tenants[1].max_concurrent == 2);

  std::ofstream(dir / "secrets" / "keys.toml") << "[tenants.filed]\nkey = \"k\"\n[server]\n";
  const Status bad = load_config(dir / "service.toml", config = {});
  CHECK(bad.message().find("secrets/keys.toml: server: unknown key") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a tenant's rate bucket refills at requests_per_s and holds at most burst") {
  Tenant tenant("acme", {}, 0, 20, 2);  // a token every 50 ms
  TenantPermit a, b, c;
  CHECK(tenant.admit(a).ok());
  CHECK(tenant.admit(b).ok());
  const Status refused = tenant.admit(c);
  CHECK(refused.code() == Errc::too_many_requests);
  CHECK(tenant.retry_after_s() == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  CHECK(tenant.admit(c).ok());
  CHECK(tenant.in_flight() == 3);
  a.release();
  b = std::move(c);  // b's slot is given back, c's moves over
  CHECK(tenant.in_flight() == 1);
}

TEST_CASE("a tenant's concurrency slots are given back by permits, however they end") {
  Tenant tenant("acme", {"minilm"}, 2, 0, 0);
  CHECK(tenant.may_use("minilm"));
  CHECK_FALSE(tenant.may_use("digits"));
  CHECK(tenant.forbidden("digits").code() == Errc::forbidden);
  {
    TenantPermit a, b, c;
    CHECK(tenant.admit(a).ok());
    CHECK(tenant.admit(b).ok());
    CHECK(tenant.admit(c).code() == Errc::too_many_requests);
    CHECK(tenant.in_flight() == 2);
  }
  CHECK(tenant.in_flight() == 0);
}

TEST_CASE("authenticate: Bearer keys by digest, saying what was wrong but never the key") {
  AuthConfig auth;
  auth.tenants.push_back({.name = "acme", .key_sha256 = sha256_hex("sk-test")});
  AccessControl access;
  REQUIRE(access.configure(auth).ok());
  CHECK(access.enabled());
  const Tenant* tenant = nullptr;
  CHECK(access.authenticate("Bearer sk-test", tenant).ok());
  REQUIRE(tenant != nullptr);
  CHECK(tenant->name() == "acme");
  CHECK(access.authenticate("BEARER sk-test ", tenant).ok());
  CHECK(access.authenticate("", tenant).code() == Errc::unauthenticated);
  CHECK(access.authenticate("Bearer", tenant).code() == Errc::unauthenticated);
  CHECK(access.authenticate("Bearer ", tenant).message() == "invalid API key");
  CHECK(access.authenticate("Bearersk-test", tenant).code() == Errc::unauthenticated);
  CHECK(access.authenticate("Token sk-test", tenant).message().find("sk-test") ==
        std::string::npos);
  CHECK(tenant == nullptr);
  CHECK(access.is_public("/v2/health/ready"));
  CHECK_FALSE(access.is_public("/v2/health/ready/"));
  CHECK_FALSE(AccessControl{}.enabled());
}
