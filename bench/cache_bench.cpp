// The response cache measured through its own parts (docs/CACHE.md).
//
//   coinfer-cache-bench quality MODEL_DIR SOURCE.jsonl... [--target P] [--threshold T]
//                       [--explain SOURCE] [--dump FILE]
//     Embeds both prompts of every labelled pair (cached `a`, later `b`) with
//     all-MiniLM-L6-v2 (INT8, as the server does) and answers, per source, threshold and
//     variant, what a cache holding `a` alone would answer `b`: a hit when the earlier messages
//     agree, the cosine reaches the threshold and the agreement checks (agreement.hpp) agree.
//     Reports hit precision with its 95% lower bound, the should-hit rate and each kind's hits;
//     then, leaving one source out at a time, the threshold the other sources choose (the
//     lowest reaching precision P, 0.97) and the left-out source's figures at it, with no
//     checks, all checks, and each check left out; and the checks' time per candidate.
//     --verifier SOURCE=ADAPTER (repeatable; * for every source) scores SOURCE's pairs with
//     the cross-encoder ADAPTER (INT8, one pair a forward, timed) and adds the variants
//     "verifier" (score >= --verifier-threshold, 0.9, no checks) and "checks_verifier" (both);
//     give each source the adapter trained without it for held-out figures.
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
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "coinfer/cache/agreement.hpp"
#include "coinfer/cache/semantic_cache.hpp"
#include "coinfer/core/json_writer.hpp"
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
  std::size_t source = 0;
  std::string kind, a, b;
  std::string context_a, context_b;  // earlier messages, serialized: part of the scope
  bool hit = false;
  float cosine = 0.0f;
  std::vector<float> va, vb;  // the embeddings, unit length
  // Whether the agreement checks refuse b against a: all of them, and each one left out.
  bool refused = false;
  std::vector<bool> refused_without;
  float verifier = -1.0f;  // the verifier's score of (a, b); < 0: not scored
};

// The verifier's bar (--verifier-threshold) for the variants that use it.
float verifier_bar = 0.9f;

// The checks whose contribution is measured (left out one at a time).
constexpr Disagreement kChecks[] = {
    Disagreement::negation, Disagreement::number,  Disagreement::entity,
    Disagreement::format,   Disagreement::antonym, Disagreement::substitution,
    Disagreement::role,     Disagreement::scope,   Disagreement::condition};

// One row of token ids through `model`, as a batch of one.
Status forward_row(BertEncoder& model, const std::vector<std::int32_t>& ids,
                   std::vector<Tensor>& outputs) {
  ConstTensorView view;
  view.dtype = DType::Int32;
  view.shape = {static_cast<std::int64_t>(ids.size())};
  view.data = reinterpret_cast<const std::byte*>(ids.data());
  const std::int64_t offsets[2] = {0, static_cast<std::int64_t>(ids.size())};
  return model.forward(Batch{1, {&view, 1}, offsets, {}}, outputs);
}

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
  std::map<std::string, std::vector<float>> vectors;  // a text asked twice is embedded once
  auto embed = [&](const std::string& text, const std::vector<float>*& out) -> Status {
    auto [it, fresh] = vectors.try_emplace(text);
    out = &it->second;
    if (!fresh) return {};
    std::vector<std::int32_t> ids;
    if (auto s = tokenizer.encode(text, ids, 256); !s) return s;
    if (auto s = forward_row(*model, ids, outputs); !s) return s;
    const auto values = outputs[0].values<float>();
    it->second.assign(values.begin(), values.end());
    double norm = 0;
    for (float v : it->second) norm += static_cast<double>(v) * v;
    for (float& v : it->second) v = static_cast<float>(v / std::sqrt(norm));
    return {};
  };
  for (Pair& p : pairs) {
    const std::vector<float>*va = nullptr, *vb = nullptr;
    if (auto s = embed(p.a, va); !s) return s;
    if (auto s = embed(p.b, vb); !s) return s;
    double dot = 0;
    for (std::size_t k = 0; k < va->size(); ++k) dot += static_cast<double>((*va)[k]) * (*vb)[k];
    p.cosine = static_cast<float>(dot);
    p.va = *va;
    p.vb = *vb;
  }
  return {};
}

// Scores (a, b) with the cross-encoder `adapter` (INT8, as the server runs it) for every pair
// of `source` (all sources for "*"), one pair a forward as a lookup's verification runs;
// appends each forward's time and its tokens.
Status verify_all(const std::filesystem::path& model_dir, const std::string& adapter,
                  const std::vector<std::string>& sources, const std::string& source,
                  std::vector<Pair>& pairs, std::vector<double>& micros,
                  std::vector<double>& tokens) {
  WordPieceTokenizer tokenizer;
  if (auto s = WordPieceTokenizer::load(model_dir / "vocab.txt", tokenizer); !s) return s;
  BertEncoderOptions options;
  options.max_batch_size = 1;
  options.adapter = adapter;
  std::unique_ptr<BertEncoder> model;
  if (auto s = BertEncoder::load(model_dir / "model.safetensors", "verifier", "1", options, model);
      !s) {
    return s;
  }
  std::vector<Tensor> outputs(1);
  std::vector<std::int32_t> ids;
  for (Pair& p : pairs) {
    if (source != "*" && sources[p.source] != source) continue;
    if (p.context_a != p.context_b) continue;
    const auto start = Clock::now();
    // [CLS] a [SEP] b [SEP], cut longest first to 128 as the served verifier does.
    ids.clear();
    std::size_t needed = 0;
    if (auto s = encode_pair(tokenizer, p.a, p.b, 128, ids, needed); !s) return s;
    if (auto s = forward_row(*model, ids, outputs); !s) return s;
    p.verifier = outputs[0].values<float>()[0];
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    tokens.push_back(static_cast<double>(ids.size()));
  }
  return {};
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// What a cache with one entry per pair (a stored, b asked in the same namespace) answers:
// a hit when the contexts are the same, the cosine reaches the threshold and, with guards,
// the checks in `leave_out` aside (-1: none left out), the checks agree.
// leave_out -3: the verifier alone (no checks); -4: the checks and the verifier.
bool hits(const Pair& p, float threshold, bool guards, int leave_out = -1) {
  if (p.context_a != p.context_b || p.cosine < threshold) return false;
  if (leave_out == -3) return p.verifier >= verifier_bar;
  if (leave_out == -4) return !p.refused && p.verifier >= verifier_bar;
  if (!guards) return true;
  return leave_out < 0 ? !p.refused : !p.refused_without[static_cast<std::size_t>(leave_out)];
}

struct Score {
  int hits = 0, right = 0;                           // hits, and those on should-hit pairs
  int should = 0, should_hit = 0;                    // should-hit pairs, and those hit
  std::map<std::string, std::pair<int, int>> kinds;  // hits, pairs
  double precision() const { return hits ? static_cast<double>(right) / hits : 1.0; }
  double hit_rate() const { return should ? static_cast<double>(should_hit) / should : 0.0; }
  // Wilson score interval's lower bound (95%) of the precision.
  double precision_low() const {
    if (hits == 0) return 0.0;
    const double z = 1.96, n = hits, p = precision();
    const double centre = p + z * z / (2 * n);
    const double spread = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
    return (centre - spread) / (1 + z * z / n);
  }
};

template <class Take>
Score score(const std::vector<Pair>& pairs, Take&& take, float threshold, bool guards,
            int leave_out = -1) {
  Score s;
  for (const Pair& p : pairs) {
    if (!take(p)) continue;
    const bool hit = hits(p, threshold, guards, leave_out);
    auto& [kind_hits, kind_pairs] = s.kinds[p.kind];
    ++kind_pairs;
    if (p.hit) ++s.should;
    if (!hit) continue;
    ++kind_hits;
    ++s.hits;
    if (p.hit) {
      ++s.right;
      ++s.should_hit;
    }
  }
  return s;
}

Status read_source(const char* file, std::size_t source, std::vector<Pair>& pairs) {
  simdjson::dom::parser parser;
  simdjson::dom::document_stream docs;
  if (parser.load_many(file).get(docs)) return Status::invalid(std::string("cannot read ") + file);
  std::size_t line = 0;
  for (auto doc : docs) {
    ++line;
    simdjson::dom::element e;
    std::string_view kind, a, b;
    bool hit = false;
    if (doc.get(e) || e["kind"].get(kind) || e["a"].get(a) || e["b"].get(b) || e["hit"].get(hit)) {
      return Status::invalid(std::string(file) + ":" + std::to_string(line) +
                             ": each line needs kind, a, b, hit");
    }
    Pair p;
    p.source = source;
    p.kind = kind;
    p.a = a;
    p.b = b;
    p.hit = hit;
    for (auto [field, out] : {std::pair{"context_a", &p.context_a}, {"context_b", &p.context_b}}) {
      simdjson::dom::element context;
      if (!e[field].get(context)) *out = simdjson::minify(context);
    }
    pairs.push_back(std::move(p));
  }
  return {};
}

std::string stem(const char* file) {
  return std::filesystem::path(file).stem().string();
}

// Feedback at work: one cache per source holding every `a` in one namespace (scoped by its
// earlier messages); every `b` is asked in a fixed random order, and each semantic hit is
// reported right (the entry is b's own `a` and the pair should hit, or the entry's text is b
// itself) or wrong, with the entry's similarity. Without feedback, and with it at a target
// error rate: the precision and should-hit rate of the first and the second half of the
// questions, and the namespace's threshold at the end.
void feedback_run(const std::vector<Pair>& pairs, std::size_t source, const std::string& name,
                  float threshold, float target, bool report) {
  CacheOptions options;
  options.dimension = static_cast<int>(pairs.front().va.size());
  options.similarity_threshold = threshold;
  options.target_error_rate = target;
  options.ttl = std::chrono::milliseconds(0);
  SemanticCache cache(options);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].source != source) continue;
    const Pair& p = pairs[i];
    cache.insert({"s", p.context_a, p.a}, p.va, p.a);  // the payload: the question it answers
    order.push_back(i);
  }
  std::mt19937 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  Score halves[2];
  for (std::size_t n = 0; n < order.size(); ++n) {
    const Pair& p = pairs[order[n]];
    Score& s = halves[n * 2 >= order.size() ? 1 : 0];
    if (p.hit) ++s.should;
    CacheHit hit;
    if (!cache.lookup({"s", p.context_b, p.b}, p.vb, hit)) continue;
    const bool right = *hit.payload == p.b || (*hit.payload == p.a && p.hit);
    ++s.hits;
    if (right) ++s.right;
    if (right && p.hit) ++s.should_hit;
    FeedbackResult result;
    if (report) (void)cache.feedback(hit.id, right, hit.similarity, "", result);
  }
  for (int h = 0; h < 2; ++h) {
    std::printf(
        "{\"bench\":\"cache_feedback\",\"source\":\"%s\",\"feedback\":%s,\"target\":%.3f,"
        "\"half\":%d,\"precision\":%.4f,\"precision_low\":%.4f,\"hits\":%d,\"wrong_hits\":%d,"
        "\"should_hit_rate\":%.4f,\"threshold_at_end\":%.4f}\n",
        name.c_str(), report ? "true" : "false", static_cast<double>(target), h + 1,
        halves[h].precision(), halves[h].precision_low(), halves[h].hits,
        halves[h].hits - halves[h].right, halves[h].hit_rate(),
        static_cast<double>(cache.namespace_state("s").threshold));
  }
}

// coinfer-cache-bench quality MODEL_DIR SOURCE.jsonl... [--target P] [--threshold T]
//   [--explain SOURCE]
int quality(int argc, char** argv) {
  const std::filesystem::path model_dir = argv[2];
  std::vector<std::string> sources;
  double target = 0.97;
  float fixed = 0.86f;  // the configured default, reported beside the chosen one
  std::string explain, dump;
  std::vector<std::pair<std::string, std::string>> verifiers;  // source (or *), adapter
  std::vector<Pair> pairs;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--target" && i + 1 < argc) {
      target = std::atof(argv[++i]);
    } else if (arg == "--threshold" && i + 1 < argc) {
      fixed = static_cast<float>(std::atof(argv[++i]));
    } else if (arg == "--explain" && i + 1 < argc) {
      explain = argv[++i];
    } else if (arg == "--dump" && i + 1 < argc) {
      dump = argv[++i];
    } else if (arg == "--verifier" && i + 1 < argc) {
      const std::string spec = argv[++i];
      const auto equals = spec.find('=');
      if (equals == std::string::npos) return fail("--verifier SOURCE=ADAPTER (or *=ADAPTER)");
      verifiers.emplace_back(spec.substr(0, equals), spec.substr(equals + 1));
    } else if (arg == "--verifier-threshold" && i + 1 < argc) {
      verifier_bar = static_cast<float>(std::atof(argv[++i]));
    } else {
      if (auto s = read_source(argv[i], sources.size(), pairs); !s) return fail(s.message());
      sources.push_back(stem(argv[i]));
    }
  }
  if (sources.empty()) return fail("no source of pairs given");
  if (auto s = embed_all(model_dir, pairs); !s) return fail(s.message());
  std::vector<double> verify_us, verify_tokens;
  for (const auto& [source, adapter] : verifiers) {
    if (auto s = verify_all(model_dir, adapter, sources, source, pairs, verify_us, verify_tokens);
        !s) {
      return fail(adapter + ": " + s.message());
    }
  }
  if (!verify_us.empty()) {
    std::printf("{\"bench\":\"cache_verifier\",\"pairs\":%zu,\"p50_us\":%.1f,\"p99_us\":%.1f,"
                "\"tokens_p50\":%.0f,\"tokens_p99\":%.0f}\n",
                verify_us.size(), percentile(verify_us, 0.5), percentile(verify_us, 0.99),
                percentile(verify_tokens, 0.5), percentile(verify_tokens, 0.99));
  }
  // --dump FILE: every pair with its cosine, one JSON line each, for analyses elsewhere.
  if (!dump.empty()) {
    std::string out;
    for (const Pair& p : pairs) {
      out += R"({"source":)";
      json_append_string(out, sources[p.source]);
      out += R"(,"kind":)";
      json_append_string(out, p.kind);
      out += R"(,"hit":)";
      out += p.hit ? "true" : "false";
      out += R"(,"same_context":)";
      out += p.context_a == p.context_b ? "true" : "false";
      out += R"(,"cosine":)";
      json_append_number(out, p.cosine);
      out += R"(,"checks":)";
      json_append_string(out, to_string(disagreement(p.b, p.a)));
      out += R"(,"verifier":)";
      json_append_number(out, p.verifier);
      out += R"(,"a":)";
      json_append_string(out, p.a);
      out += R"(,"b":)";
      json_append_string(out, p.b);
      out += "}\n";
    }
    std::ofstream(dump) << out;
  }
  // The checks, timed: the verification step's cost per candidate.
  std::vector<double> check_us;
  for (Pair& p : pairs) {
    const auto start = Clock::now();
    p.refused = disagreement(p.b, p.a) != Disagreement::none;
    check_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    for (Disagreement d : kChecks) {
      p.refused_without.push_back(disagreement(p.b, p.a, kAllChecks & ~check_bit(d)) !=
                                  Disagreement::none);
    }
  }
  std::printf("{\"bench\":\"cache_checks\",\"pairs\":%zu,\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
              pairs.size(), percentile(check_us, 0.5), percentile(check_us, 0.99));

  std::vector<float> grid;
  for (int step = 0; step <= 29; ++step) grid.push_back(0.70f + 0.01f * static_cast<float>(step));
  const auto print = [&](const char* name, const std::string& source, const char* variant,
                         float threshold, const Score& s) {
    std::printf(
        "{\"bench\":\"%s\",\"source\":\"%s\",\"variant\":\"%s\",\"threshold\":%.2f,"
        "\"precision\":%.4f,\"precision_low\":%.4f,\"hits\":%d,\"wrong_hits\":%d,"
        "\"should_hit_rate\":%.4f",
        name, source.c_str(), variant, static_cast<double>(threshold), s.precision(),
        s.precision_low(), s.hits, s.hits - s.right, s.hit_rate());
    for (const auto& [kind, counts] : s.kinds) {
      std::printf(",\"%s\":[%d,%d]", kind.c_str(), counts.first, counts.second);
    }
    std::printf("}\n");
  };

  // Every source alone, over the thresholds, guards off and on.
  for (std::size_t src = 0; src < sources.size(); ++src) {
    const auto take = [src](const Pair& p) { return p.source == src; };
    for (float t : grid) {
      print("cache_quality", sources[src], "off", t, score(pairs, take, t, false));
      print("cache_quality", sources[src], "checks", t, score(pairs, take, t, true));
      if (!verifiers.empty()) {
        print("cache_quality", sources[src], "verifier", t, score(pairs, take, t, true, -3));
        print("cache_quality", sources[src], "checks_verifier", t,
              score(pairs, take, t, true, -4));
      }
    }
  }

  // Leave one source out: the threshold is the lowest at which the other sources, pooled,
  // reach the target precision; the left-out source is scored at it. Per variant: no checks,
  // all, and all but one.
  std::vector<std::pair<std::string, int>> variants{{"off", -2}, {"checks", -1}};
  if (!verifiers.empty()) {
    variants.emplace_back("verifier", -3);
    variants.emplace_back("checks_verifier", -4);
  }
  for (std::size_t d = 0; d < std::size(kChecks); ++d) {
    variants.emplace_back("without_" + std::string(to_string(kChecks[d])), static_cast<int>(d));
  }
  for (std::size_t src = 0; src < sources.size(); ++src) {
    const auto held_out = [src](const Pair& p) { return p.source == src; };
    const auto others = [src](const Pair& p) { return p.source != src; };
    for (const auto& [variant, leave_out] : variants) {
      const bool guards = leave_out != -2;
      float chosen = 1.0f;
      for (float t : grid) {
        if (score(pairs, others, t, guards, leave_out).precision() >= target) {
          chosen = t;
          break;
        }
      }
      print("cache_loso", sources[src], variant.c_str(), chosen,
            score(pairs, held_out, chosen, guards, leave_out));
    }
    for (const auto& [variant, leave_out] : variants) {
      print("cache_fixed", sources[src], variant.c_str(), fixed,
            score(pairs, held_out, fixed, leave_out != -2, leave_out));
    }
  }

  for (std::size_t src = 0; src < sources.size(); ++src) {
    feedback_run(pairs, src, sources[src], fixed, 0.0f, false);
    for (float error_rate : {0.03f, 0.1f}) {
      feedback_run(pairs, src, sources[src], fixed, error_rate, true);
    }
  }

  // --explain SOURCE: that source's wrong answers at the fixed threshold, to read (only for
  // sources used to write the checks: reading a held-out source's errors makes it a tuning
  // source).
  for (const Pair& p : pairs) {
    if (sources[p.source] != explain) continue;
    const bool hit = hits(p, fixed, true);
    if (hit == p.hit) continue;
    std::fprintf(stderr, "%s %s (cosine %.3f, checks: %s): %s | %s\n", hit ? "FALSE HIT" : "missed",
                 p.kind.c_str(), static_cast<double>(p.cosine),
                 std::string(to_string(disagreement(p.b, p.a))).c_str(), p.a.c_str(), p.b.c_str());
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
  // As coinfer-serve's compute team waits, so that the verifier's cost is the server's: a
  // forward is some sixty short parallel regions, and waking sleeping threads for each one
  // more than doubles it.
  ensure_compute_wait_policy(argv, ComputeWait::short_spin);
  if (argc >= 4 && std::string(argv[1]) == "quality") return quality(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "index") return index_bench(argc, argv);
  return fail(
      "usage: quality MODEL_DIR SOURCE.jsonl... [--target P] [--threshold T] [--explain SOURCE] "
      "[--dump FILE] [--verifier SOURCE=ADAPTER]... [--verifier-threshold P] "
      "| index [--entries N] [--dim D] "
      "[--index auto|flat|ivf] [--nprobe P] [--queries Q]");
}
