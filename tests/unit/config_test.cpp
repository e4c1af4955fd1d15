#include <doctest/doctest.h>

#include "coinfer/core/config.hpp"
#include "coinfer/generation/engine.hpp"
#include "coinfer/generation/llm_kind.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include <filesystem>
#include <fstream>

using namespace coinfer;

TEST_CASE("an empty config gives every default") {
  Config config;
  REQUIRE(parse_config("", config).ok());
  CHECK(config.server.port == 8000);
  CHECK(config.server.max_body_bytes == 16 * 1024 * 1024);
  CHECK(config.models.empty());
}

TEST_CASE("compute threads default to every usable core, and a number in the file stands") {
  const int cores = usable_cores();
  CHECK(cores >= 1);
  CHECK(cores <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  Config config;
  REQUIRE(parse_config("", config).ok());
  CHECK(config.compute.threads == cores);
  CHECK(config.compute.threads_from_cores);
  REQUIRE(parse_config("[compute]\nthreads = 0\n", config).ok());
  CHECK(config.compute.threads == cores);
  Config three;
  REQUIRE(parse_config("[compute]\nthreads = 3\n", three).ok());
  CHECK(three.compute.threads == 3);
  CHECK_FALSE(three.compute.threads_from_cores);
  Config bad;
  const Status status = parse_config("[compute]\nthreads = -1\n", bad);
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find("compute.threads") != std::string::npos);
}

TEST_CASE("fields and models are read") {
  Config config;
  REQUIRE(parse_config(R"(
    [server]
    port = 9000
    max_connections = 7
    [log]
    level = "debug"
    format = "json"
    access = true
    [models.a]
    kind = "identity"
    max_batch_size = 8
  )", config).ok());
  CHECK(config.server.port == 9000);
  CHECK(config.server.max_connections == 7);
  CHECK(config.log.level == "debug");
  CHECK(config.log.format == "json");
  CHECK(config.log.access);
  REQUIRE(config.models.size() == 1);
  CHECK(config.models[0].name == "a");
  CHECK(config.models[0].max_batch_size == 8);
}

TEST_CASE("an unknown key is rejected with its full name") {
  Config config;
  CHECK(parse_config("[server]\nprot = 1\n", config).message() == "server.prot: unknown key");
  CHECK(parse_config("colour = 1\n", config).message() == "colour: unknown key");
  // A model section's other keys belong to its kind, whose loader rejects those it does not
  // know (models/model_kind.hpp); values must still be plain.
  REQUIRE(parse_config("[models.m]\nkind = \"identity\"\nsize = 1\n", config).ok());
  CHECK(config.models[0].options == Parameters{{"size", std::int64_t{1}}});
  CHECK(parse_config("[models.m]\nkind = \"identity\"\nsize = [1]\n", config).message() ==
        "models.m.size: expected a boolean, a number or a string");
  // Strings with control characters would not even read back from the logged config (a
  // leading newline is dropped there): refused wherever a string goes.
  Config control;
  CHECK(parse_config("[models.m]\nkind = \"identity\"\nname = \"\\ny\"\n", control).message() ==
        "models.m.name: control characters are not allowed");
  CHECK(parse_config("[server]\nhost = \"\\t127.0.0.1\"\n", control).message() ==
        "server.host: control characters are not allowed");
}

TEST_CASE("wrong types and out-of-range values name the key") {
  Config config;
  CHECK(parse_config("[server]\nport = \"x\"\n", config).message() ==
        "server.port: expected an integer");
  CHECK(parse_config("[server]\nport = 70000\n", config).message() ==
        "server.port: 70000 is out of range");
  CHECK(parse_config("[log]\nlevel = \"loud\"\n", config).message() ==
        "log.level: unknown level 'loud'");
  Config log_format, log_access;
  CHECK(parse_config("[log]\nformat = \"xml\"\n", log_format).message() ==
        "log.format: unknown format 'xml' (text or json)");
  CHECK(parse_config("[log]\naccess = 1\n", log_access).message() ==
        "log.access: expected a boolean");
  CHECK(parse_config("[models.m]\n", config).message().find("models.m.kind") == 0);
  CHECK(parse_config("[models.m]\nkind = \"identity\"\nmax_batch_size = 0\n", config).message() ==
        "models.m.max_batch_size: must be at least 1 (1: no batching)");
  CHECK(parse_config("[models.m]\nkind = \"identity\"\npreferred_batch_sizes = [\"a\"]\n", config)
            .message() == "models.m.preferred_batch_sizes: expected an array of positive integers");
  CHECK(parse_config("[models.m]\nkind = \"identity\"\npreferred_batch_sizes = [4, 0]\n", config)
            .message() == "models.m.preferred_batch_sizes: expected an array of positive integers");
  CHECK(parse_config("[models.m]\nkind = \"identity\"\npreferred_batch_sizes = [-2]\n", config)
            .message() == "models.m.preferred_batch_sizes: expected an array of positive integers");
}

TEST_CASE("grpc_port defaults to 8001, takes 0 (any free port) and -1 (off), refuses the rest by key") {
  Config config;
  REQUIRE(parse_config("", config).ok());
  CHECK(config.server.grpc_port == 8001);
  Config off;
  REQUIRE(parse_config("[server]\ngrpc_port = -1\n", off).ok());
  CHECK(off.server.grpc_port == -1);
  Config any;
  REQUIRE(parse_config("[server]\ngrpc_port = 0\n", any).ok());
  CHECK(any.server.grpc_port == 0);
  Config bad;
  CHECK(parse_config("[server]\ngrpc_port = 65536\n", bad).message() ==
        "server.grpc_port: 65536 is not a port (0: any free port, -1: off)");
  CHECK(parse_config("[server]\ngrpc_port = -2\n", bad).message() ==
        "server.grpc_port: -2 is not a port (0: any free port, -1: off)");
  CHECK(parse_config("[server]\ngrpc_port = \"8001\"\n", bad).message() ==
        "server.grpc_port: expected an integer");
}

TEST_CASE("TOML syntax errors give the line") {
  Config config;
  const auto status = parse_config("[server\n", config);
  CHECK_FALSE(status.ok());
  CHECK(status.message().rfind("line 1", 0) == 0);
}

TEST_CASE("the effective config round-trips through TOML") {
  Config config;
  config.server.port = 1234;
  config.server.grpc_port = 4321;
  ModelConfig model;
  // Moved-in strings: assigning literals here trips GCC 12's -Wrestrict false positive (PR 105329).
  model.name = std::string("m");
  model.kind = std::string("identity");
  model.version = std::string("2");
  model.preferred_batch_sizes = {2, 4};
  config.models.push_back(model);
  Config again;
  REQUIRE(parse_config(to_toml(config), again).ok());
  CHECK(again.server.port == 1234);
  CHECK(again.server.grpc_port == 4321);
  REQUIRE(again.models.size() == 1);
  CHECK(again.models[0].version == "2");
  CHECK(again.models[0].preferred_batch_sizes == std::vector<int>{2, 4});
}

TEST_CASE("a model's device defaults to cpu, reads cuda:N and rejects anything else by key") {
  Config config;
  REQUIRE(parse_config("[models.m]\nkind = \"mlp\"\n", config).ok());
  CHECK(config.models[0].device == "cpu");
  REQUIRE(parse_config("[models.m]\nkind = \"mlp\"\ndevice = \"cuda:1\"\n", config).ok());
  CHECK(config.models[0].device == "cuda:1");
  Config again;
  REQUIRE(parse_config(to_toml(config), again).ok());
  CHECK(again.models[0].device == "cuda:1");
  CHECK(parse_config("[models.m]\nkind = \"mlp\"\ndevice = \"tpu\"\n", config).message() ==
        "models.m.device: unknown device 'tpu' (known: cpu, cuda, cuda:N)");
  CHECK(parse_config("[models.m]\nkind = \"mlp\"\ndevice = \"cuda:\"\n", config).message() ==
        "models.m.device: unknown device 'cuda:' (known: cpu, cuda, cuda:N)");
}

TEST_CASE("cuda_streams defaults to 2, is read for cuda devices and refused for cpu by key") {
  Config config;
  REQUIRE(parse_config("[models.m]\nkind = \"mlp\"\ndevice = \"cuda\"\n", config).ok());
  CHECK(config.models[0].cuda_streams == 2);
  REQUIRE(parse_config("[models.m]\nkind = \"mlp\"\ndevice = \"cuda:0\"\ncuda_streams = 4\n", config)
              .ok());
  CHECK(config.models[0].cuda_streams == 4);
  Config again;
  REQUIRE(parse_config(to_toml(config), again).ok());
  CHECK(again.models[0].cuda_streams == 4);
  CHECK(parse_config("[models.m]\nkind = \"mlp\"\ndevice = \"cuda\"\ncuda_streams = 0\n", config)
            .message() == "models.m.cuda_streams: must be within 1..16");
  CHECK(parse_config("[models.m]\nkind = \"mlp\"\ncuda_streams = 2\n", config).message() ==
        "models.m.cuda_streams: applies to a cuda device only (device is cpu)");
  // A cpu model's effective config does not carry the key, so it parses again.
  REQUIRE(parse_config("[models.m]\nkind = \"mlp\"\n", config).ok());
  CHECK(to_toml(config).find("cuda_streams") == std::string::npos);
}

TEST_CASE("relative weight paths are resolved against the config file's directory") {
  const auto dir = std::filesystem::temp_directory_path() / "coinfer_config_test";
  std::filesystem::create_directories(dir / "configs");
  const auto file = dir / "configs" / "service.toml";
  std::ofstream(file) << "[models.m]\nkind = \"mlp\"\nweights = \"../assets/m.safetensors\"\n"
                         "[models.n]\nkind = \"mlp\"\nweights = \"/abs/n.safetensors\"\n";
  Config config;
  REQUIRE(load_config(file, config).ok());
  CHECK(config.models[0].weights == (dir / "assets" / "m.safetensors").string());
  CHECK(config.models[1].weights == "/abs/n.safetensors");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a missing config file is reported by name") {
  Config config;
  const auto status = load_config("/nonexistent/coinfer.toml", config);
  CHECK(status.code() == Errc::not_found);
  CHECK(status.message() == "config file /nonexistent/coinfer.toml: cannot be opened");
}

TEST_CASE("a float where an integer is expected is refused, however large") {
  Config config;
  // value<int64_t>() converted the float, out of range undefined (fuzz/toml_config_fuzzer).
  const auto status =
      parse_config("[models.digits]\npriority_levels = 8446744073709551616e4\n", config);
  CHECK(status.message() == "models.digits.priority_levels: expected an integer");
  CHECK(parse_config("[server]\nport = 80.0\n", config).message() ==
        "server.port: expected an integer");
  CHECK(parse_config("[models.m]\npreferred_batch_sizes = [1.5e300]\n", config).message() ==
        "models.m.preferred_batch_sizes: expected an array of positive integers");
}

TEST_CASE("a model option whose key is no bare name is refused, so the logged config reads back") {
  Config config;
  // toml++ wrote the quoted key "x\ty" back without quotes (fuzz/toml_config_fuzzer).
  const auto status = parse_config("[models.a]\nkind = \"id\"\n\"x\\ty\" = false\n", config);
  CHECK(status.message() == "models.a.x\ty: unknown key (keys are letters, digits, '_' and '-')");
  REQUIRE(parse_config("[models.a]\nkind = \"id\"\nmax-len = 3\n", config).ok());
  Config again;
  CHECK(parse_config(to_toml(config), again).ok());
}

TEST_CASE("model and tenant names are plain names, so the logged config reads back") {
  Config config;
  // [models."b't"] came back from to_toml as [models.'b't'] (fuzz/toml_config_fuzzer).
  CHECK(parse_config("[models.\"b't\"]\nkind = \"mlp\"\n", config).message() ==
        "models.b't: a model name is letters, digits, '_', '-' and '.'");
  CHECK(parse_config("[auth.tenants.\"a b\"]\nkey = \"k\"\n", config).message() ==
        "auth.tenants.a b: a tenant name is letters, digits, '_', '-' and '.'");
  REQUIRE(parse_config("[models.\"mini-lm.v2\"]\nkind = \"mlp\"\n", config).ok());
  Config again;
  REQUIRE(parse_config(to_toml(config), again).ok());
  CHECK(again.models[0].name == "mini-lm.v2");
}

TEST_CASE("--model keeps only the named models and names one the config lacks") {
  Config config;
  REQUIRE(parse_config(R"(
    [models.a]
    kind = "identity"
    [models.b]
    kind = "identity"
    [models.c]
    kind = "identity"
  )", config).ok());
  Config all = config;
  REQUIRE(keep_only_models({}, all).ok());
  CHECK(all.models.size() == 3);

  REQUIRE(keep_only_models({"c", "a"}, config).ok());
  REQUIRE(config.models.size() == 2);
  CHECK(config.models[0].name == "a");
  CHECK(config.models[1].name == "c");

  const Status missing = keep_only_models({"a", "nope"}, config);
  CHECK_FALSE(missing.ok());
  CHECK(missing.message() == "--model nope: no such model in the config");
  CHECK(config.models.size() == 2);
}

TEST_CASE("[cache] and a model's cache mode are read, checked by key and written back") {
  Config config;
  REQUIRE(parse_config("[cache]\nmax_entries = 10\nttl_s = 0\nsimilarity_threshold = 0.9\n"
                       "guards = false\nindex = \"flat\"\nsnapshot_file = \"c.snapshot\"\n"
                       "[models.m]\nkind = \"llm\"\ncache = \"semantic\"\n",
                       config)
              .ok());
  CHECK(config.cache.max_entries == 10);
  CHECK(config.cache.ttl_s == 0);
  CHECK(config.cache.similarity_threshold == doctest::Approx(0.9));
  CHECK_FALSE(config.cache.guards);
  CHECK(config.cache.index == "flat");
  CHECK(config.models[0].cache == CacheMode::semantic);
  Config again;
  REQUIRE(parse_config(to_toml(config), again).ok());
  CHECK(again.cache.max_entries == 10);
  CHECK(again.cache.snapshot_file == "c.snapshot");
  CHECK_FALSE(again.cache.guards);
  CHECK(again.models[0].cache == CacheMode::semantic);

  Config defaults;
  REQUIRE(parse_config("[models.m]\nkind = \"mlp\"\n", defaults).ok());
  CHECK(defaults.models[0].cache == CacheMode::off);
  const auto error = [](const char* text) {
    Config fresh;
    return parse_config(text, fresh).message();
  };
  CHECK(error("[models.m]\nkind = \"mlp\"\ncache = \"fuzzy\"\n") ==
        "models.m.cache: unknown mode 'fuzzy' (known: off, exact, semantic)");
  CHECK(error("[cache]\nsimilarity_threshold = 1.5\n") ==
        "cache.similarity_threshold: must be in (0, 1]");
  CHECK(error("[cache]\nindex = \"hnsw\"\n") ==
        "cache.index: unknown index 'hnsw' (known: auto, flat, ivf)");
  CHECK(error("[cache]\nguards = 1\n") == "cache.guards: expected a boolean");
  CHECK(error("[cache]\nmax_entrys = 1\n") == "cache.max_entrys: unknown key");
}

TEST_CASE("[cache.namespaces.NAME] gives a namespace its own threshold and target error rate") {
  Config config;
  REQUIRE(parse_config("[cache]\ntarget_error_rate = 0.05\n"
                       "[cache.namespaces.support]\nsimilarity_threshold = 0.93\n"
                       "[cache.namespaces.\"acme/faq\"]\ntarget_error_rate = 0.01\n",
                       config)
              .ok());
  CHECK(config.cache.target_error_rate == doctest::Approx(0.05));
  REQUIRE(config.cache.namespaces.size() == 2);
  const auto& a = config.cache.namespaces[0].name == "support" ? config.cache.namespaces[0]
                                                               : config.cache.namespaces[1];
  const auto& b = &a == &config.cache.namespaces[0] ? config.cache.namespaces[1]
                                                    : config.cache.namespaces[0];
  CHECK(a.similarity_threshold == doctest::Approx(0.93));
  CHECK(a.target_error_rate == -1);
  CHECK(b.name == "acme/faq");
  CHECK(b.similarity_threshold == 0);
  CHECK(b.target_error_rate == doctest::Approx(0.01));
  Config again;
  REQUIRE(parse_config(to_toml(config), again).ok());
  CHECK(again.cache.namespaces.size() == 2);
  CHECK(again.cache.target_error_rate == doctest::Approx(0.05));

  const auto error = [](const char* text) {
    Config fresh;
    return parse_config(text, fresh).message();
  };
  CHECK(error("[cache.namespaces.s]\nsimilarity_threshold = 2\n") ==
        "cache.namespaces.s.similarity_threshold: must be in (0, 1]");
  CHECK(error("[cache.namespaces.s]\nthreshold = 0.9\n") ==
        "cache.namespaces.s.threshold: unknown key");
  CHECK(error("[cache.namespaces.\"a b\"]\nsimilarity_threshold = 0.9\n").starts_with(
      "cache.namespaces.a b: a namespace is"));
  CHECK(error("[cache]\ntarget_error_rate = 1.5\n") ==
        "cache.target_error_rate: must be in [0, 1]");
  CHECK(error("[cache]\nverifier_threshold = 1.5\n") ==
        "cache.verifier_threshold: must be in [0, 1]");
  CHECK(error("[cache]\nverifier_candidates = 0\n") ==
        "cache.verifier_candidates: must be in 1..16");
  CHECK(error("[cache]\nverifier_model = 3\n").starts_with("cache.verifier_model: "));
}

TEST_CASE("an llm's precision and speculation settings are checked and refused by key otherwise") {
  const auto error = [](const std::string& lines) {
    Config config;
    const std::string toml = "[models.m]\nkind = \"llm\"\nweights = \"/nonexistent.gguf\"\n" + lines;
    REQUIRE(parse_config(toml, config).ok());
    std::unique_ptr<generation::Engine> engine;
    return generation::make_generator(config.models[0], 1, engine).message();
  };
  // INT8 no longer calibrates outlier channels: the old keys are unknown, not ignored.
  CHECK(error("outlier_ratio = 2.0\n") == "models.m.outlier_ratio: unknown key for kind 'llm'");
  CHECK(error("num_speculative_tokens = 17\n") ==
        "models.m.num_speculative_tokens: must be within 0..16");
  CHECK(error("prompt_lookup_min = 5\n") ==
        "models.m.prompt_lookup_min: must not exceed prompt_lookup_max (4)");
  CHECK(error("speculative_max_running = 0\n") ==
        "models.m.speculative_max_running: must be within 1..4096");
  CHECK(error("precision = \"int2\"\n") ==
        "models.m.precision: expected \"auto\", \"int8\", \"int4\" or \"fp32\", got \"int2\"");
  CHECK(error("activations = \"fp16\"\n") == "models.m.activations: expected \"int8\" or \"int16\", got \"fp16\"");
  CHECK(error("precision = \"fp32\"\nactivations = \"int16\"\n") ==
        "models.m.activations: applies to \"int8\" and \"int4\" weights; \"fp32\" multiplies FP32 "
        "activations");
  // Accepted: loading then fails on the missing file, not on the keys.
  for (const char* ok : {"num_speculative_tokens = 0\nprompt_lookup_min = 1\nprompt_lookup_max = 1\n",
                         "precision = \"auto\"\n", "precision = \"int8\"\n", "precision = \"int4\"\n",
                         "precision = \"fp32\"\n", "activations = \"int16\"\n",
                         "precision = \"int4\"\nactivations = \"int8\"\n",
                         "precision = \"fp32\"\nactivations = \"int8\"\n"}) {
    CAPTURE(ok);
    CHECK(error(ok).find("models.m.weights") == 0);
  }
}
