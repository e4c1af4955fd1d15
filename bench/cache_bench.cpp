// The response cache measured through SemanticCache itself (docs/CACHE.md).
//
//   coinfer-cache-bench quality MODEL_DIR PAIRS.jsonl
//     Embeds both prompts of every labelled pair with all-MiniLM-L6-v2 (INT8, as the server
//     does), stores `a` and looks `b` up at each threshold, guards on and off. Reports per
//     threshold the paraphrase hit rate, each must-not-hit kind's false-hit rate and the hit
//     precision, on the tuning half (even lines) and the held-out half (odd lines).
//
//   coinfer-cache-bench index [--entries N] [--dim D] [--index auto|flat|ivf] [--nprobe P]
//     Fills a cache with N unit vectors, then times inserts into the full cache (each evicts
//     the least recently used entry and its vector) and lookups of near duplicates of stored
//     vectors (cosine 0.97), reporting p50/p99 and the share of lookups that found theirs.
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "coinfer/cache/agreement.hpp"
#include "coinfer/cache/semantic_cache.hpp"
#include "coinfer/models/bert_encoder.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/tokenizers/wordpiece.hpp"

using namespace coinfer;
using namespace coinfer::cache;
using Clock = std::chrono::steady_clock;

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "coinfer-cache-bench: %s\n", message.c_str());
  return 1;
}

// GCC 12 warns (falsely) on "literal" + std::string at -O3.
std::string named(const char* prefix, std::size_t i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

struct Pair {
  std::string kind, a, b;
  bool hit = false;
  std::vector<float> va, vb;
};

Status embed_all(const std::filesystem::path& model_dir, std::vector<Pair>& pairs) {
  WordPieceTokenizer tokenizer;
  if (auto s = WordPieceTokenizer::load(model_dir / "vocab.txt", tokenizer); !s) return s;
  BertEncoderOptions options;
  options.max_batch_size = 1;
  std::unique_ptr<BertEncoder> model;
  if (auto s = BertEncoder::load(model_dir / "model.safetensors", "minilm", "1", options, model);
      !s) {
    return s;
  }
  std::vector<Tensor> outputs(1);
  auto embed = [&](const std::string& text, std::vector<float>& out) -> Status {
    std::vector<std::int32_t> ids;
    if (auto s = tokenizer.encode(text, ids, 256); !s) return s;
    ConstTensorView view;
    view.dtype = DType::Int32;
    view.shape = {static_cast<std::int64_t>(ids.size())};
    view.data = reinterpret_cast<const std::byte*>(ids.data());
    const std::int64_t offsets[2] = {0, static_cast<std::int64_t>(ids.size())};
    const Batch batch{1, {&view, 1}, offsets, {}};
    if (auto s = model->forward(batch, outputs); !s) return s;
    const auto values = outputs[0].values<float>();
    out.assign(values.begin(), values.end());
    double norm = 0;
    for (float v : out) norm += static_cast<double>(v) * v;
    for (float& v : out) v = static_cast<float>(v / std::sqrt(norm));
    return {};
  };
  for (Pair& p : pairs) {
    if (auto s = embed(p.a, p.va); !s) return s;
    if (auto s = embed(p.b, p.vb); !s) return s;
  }
  return {};
}

struct Tally {
  std::map<std::string, std::pair<int, int>> by_kind;  // hits, pairs
  int hits = 0, true_hits = 0;
};

Tally run(const std::vector<Pair>& pairs, int parity, float threshold, bool guards) {
  CacheOptions options;
  options.dimension = static_cast<int>(pairs.front().va.size());
  options.similarity_threshold = threshold;
  options.guards = guards;
  SemanticCache cache(options);
  Tally t;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (parity >= 0 && static_cast<int>(i % 2) != parity) continue;
    const Pair& p = pairs[i];
    const std::string ns = named("pair", i);  // one namespace per pair
    cache.insert({ns, "chat", p.a}, p.va, p.a);
    CacheHit hit;
    const bool found = cache.lookup({ns, "chat", p.b}, p.vb, hit);
    // COINFER_CACHE_EXPLAIN=T: the tuning half's wrong answers at threshold T, to read.
    if (const char* explain = std::getenv("COINFER_CACHE_EXPLAIN");
        explain && guards && parity == 0 && std::fabs(std::atof(explain) - threshold) < 1e-4 &&
        found != p.hit) {
      float cosine = 0;
      for (std::size_t k = 0; k < p.va.size(); ++k) cosine += p.va[k] * p.vb[k];
      std::fprintf(stderr, "%s %s (cosine %.3f, guards: %s): %s | %s\n",
                   found ? "FALSE HIT" : "missed", p.kind.c_str(), static_cast<double>(cosine),
                   std::string(to_string(disagreement(p.b, p.a))).c_str(), p.a.c_str(),
                   p.b.c_str());
    }
    auto& [hits, total] = t.by_kind[p.kind];
    ++total;
    if (found) {
      ++hits;
      ++t.hits;
      if (p.hit) ++t.true_hits;
    }
  }
  return t;
}

int quality(const std::filesystem::path& model_dir, const char* pairs_file) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string json;
  if (simdjson::padded_string::load(pairs_file).get(json))
    return fail(std::string("cannot read ") + pairs_file);
  std::vector<Pair> pairs;
  simdjson::ondemand::document_stream docs;
  if (parser.iterate_many(json).get(docs)) return fail("bad JSONL");
  for (auto doc : docs) {
    Pair p;
    std::string_view kind, a, b;
    bool hit = false;
    if (doc["kind"].get(kind) || doc["a"].get(a) || doc["b"].get(b) || doc["hit"].get(hit)) {
      return fail("each line needs kind, a, b, hit");
    }
    p.kind = kind;
    p.a = a;
    p.b = b;
    p.hit = hit;
    pairs.push_back(std::move(p));
  }
  if (auto s = embed_all(model_dir, pairs); !s) return fail(s.message());
  const char* halves[] = {"tune", "test"};
  for (int guards = 0; guards <= 1; ++guards) {
    for (int parity = 0; parity <= 1; ++parity) {
      for (int step = 0; step <= 19; ++step) {
        const float threshold = 0.80f + 0.01f * static_cast<float>(step);
        const Tally t = run(pairs, parity, threshold, guards == 1);
        std::printf(
            "{\"bench\":\"cache_quality\",\"half\":\"%s\",\"guards\":%s,\"threshold\":%.2f,"
            "\"precision\":%.4f,\"hits\":%d",
            halves[parity], guards ? "true" : "false", static_cast<double>(threshold),
            t.hits ? static_cast<double>(t.true_hits) / t.hits : 1.0, t.hits);
        for (const auto& [kind, counts] : t.by_kind) {
          std::printf(",\"%s\":%.4f", kind.c_str(),
                      static_cast<double>(counts.first) / counts.second);
        }
        std::printf("}\n");
      }
    }
  }
  return 0;
}

std::vector<float> random_unit(std::mt19937& rng, int dim) {
  std::normal_distribution<float> normal;
  std::vector<float> v(static_cast<std::size_t>(dim));
  double norm = 0;
  for (float& x : v) {
    x = normal(rng);
    norm += static_cast<double>(x) * x;
  }
  for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
  return v;
}

std::vector<float> nearby(const std::vector<float>& v, float cosine, std::mt19937& rng) {
  std::vector<float> other = random_unit(rng, static_cast<int>(v.size()));
  double dot = 0;
  for (std::size_t i = 0; i < v.size(); ++i) dot += static_cast<double>(other[i]) * v[i];
  double norm = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    other[i] = static_cast<float>(other[i] - dot * v[i]);
    norm += static_cast<double>(other[i]) * other[i];
  }
  const float sine = std::sqrt(1 - cosine * cosine);
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[i] = cosine * v[i] + sine * static_cast<float>(other[i] / std::sqrt(norm));
  }
  return out;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

int index_bench(int argc, char** argv) {
  std::size_t entries = 100'000, queries = 2000;
  int dim = 384;
  CacheOptions options;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--entries") {
      entries = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--dim") {
      dim = std::atoi(value.c_str());
    } else if (flag == "--index") {
      if (!parse_index_kind(value, options.index.kind)) return fail("unknown --index " + value);
    } else if (flag == "--nprobe") {
      options.index.nprobe = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--queries") {
      queries = std::strtoull(value.c_str(), nullptr, 10);
    } else {
      return fail("unknown option " + flag);
    }
  }
  options.dimension = dim;
  options.max_entries = entries;
  options.max_bytes = std::size_t{1} << 40;
  options.similarity_threshold = 0.95f;
  options.guards = false;  // texts here are ids
  SemanticCache cache(options);
  std::mt19937 rng(42);
  std::vector<std::vector<float>> stored;
  stored.reserve(entries + queries);
  const auto fill_start = Clock::now();
  std::size_t rebuild_ms = 0;
  for (std::size_t i = 0; i < entries; ++i) {
    stored.push_back(random_unit(rng, dim));
    cache.insert({"ns", "scope", named("q", i)}, stored.back(), "answer");
    if ((i + 1) % 4096 == 0) {
      const auto t0 = Clock::now();
      cache.rebuild_indexes();  // the housekeeping thread's tick
      rebuild_ms += static_cast<std::size_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
    }
  }
  const auto t0 = Clock::now();
  cache.rebuild_indexes();
  rebuild_ms += static_cast<std::size_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
  const double fill_s = std::chrono::duration<double>(Clock::now() - fill_start).count();
  // Inserts into the full cache: each one evicts (vector removal included).
  std::vector<double> insert_us, lookup_us;
  for (std::size_t i = 0; i < queries; ++i) {
    auto v = random_unit(rng, dim);
    const auto start = Clock::now();
    cache.insert({"ns", "scope", named("new", i)}, v, "answer");
    insert_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  // Near duplicates of entries still in the cache (the newest `entries - queries`).
  std::size_t found = 0;
  for (std::size_t i = 0; i < queries; ++i) {
    const std::size_t target = queries + (rng() % (entries - queries));
    const auto q = nearby(stored[target], 0.97f, rng);
    CacheHit hit;
    const auto start = Clock::now();
    const bool ok = cache.lookup({"ns", "scope", named("q", target)}, q, hit);
    lookup_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (ok && hit.id == target + 1) ++found;
  }
  const auto stats = cache.stats();
  std::printf(
      "{\"bench\":\"cache_index\",\"index\":\"%s\",\"entries\":%zu,\"dim\":%d,\"ivf\":%s,"
      "\"nprobe\":%zu,\"fill_s\":%.2f,\"rebuild_ms\":%zu,\"insert_p50_us\":%.1f,"
      "\"insert_p99_us\":%.1f,\"lookup_p50_us\":%.1f,\"lookup_p99_us\":%.1f,"
      "\"near_duplicates_found\":%.4f,\"vectors\":%zu}\n",
      std::string(to_string(options.index.kind)).c_str(), entries, dim,
      stats.ivf_partitions ? "true" : "false", options.index.nprobe, fill_s, rebuild_ms,
      percentile(insert_us, 0.5), percentile(insert_us, 0.99), percentile(lookup_us, 0.5),
      percentile(lookup_us, 0.99), static_cast<double>(found) / static_cast<double>(queries),
      stats.vectors);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ensure_passive_compute_wait(argv);
  if (argc >= 4 && std::string(argv[1]) == "quality") return quality(argv[2], argv[3]);
  if (argc >= 2 && std::string(argv[1]) == "index") return index_bench(argc, argv);
  return fail(
      "usage: quality MODEL_DIR PAIRS.jsonl | index [--entries N] [--dim D] "
      "[--index auto|flat|ivf] [--nprobe P] [--queries Q]");
}
