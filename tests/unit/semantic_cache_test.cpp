#include "coinfer/cache/semantic_cache.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "coinfer/cache/agreement.hpp"

using namespace coinfer;
using namespace coinfer::cache;

namespace {

constexpr int kDim = 32;

std::vector<float> unit_vector(std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(kDim);
  float norm = 0;
  for (float& x : v) {
    x = normal(rng);
    norm += x * x;
  }
  for (float& x : v) x /= std::sqrt(norm);
  return v;
}

// `v` turned towards a random direction so that its cosine with v is `cosine`.
std::vector<float> near(const std::vector<float>& v, float cosine, std::mt19937& rng) {
  std::vector<float> other = unit_vector(rng);
  float dot = 0;
  for (int i = 0; i < kDim; ++i) dot += other[i] * v[i];
  float norm = 0;
  for (int i = 0; i < kDim; ++i) {
    other[i] -= dot * v[i];
    norm += other[i] * other[i];
  }
  const float sine = std::sqrt(1 - cosine * cosine);
  std::vector<float> out(kDim);
  for (int i = 0; i < kDim; ++i) out[i] = cosine * v[i] + sine * other[i] / std::sqrt(norm);
  return out;
}

CacheOptions small_options() {
  CacheOptions options;
  options.dimension = kDim;
  options.similarity_threshold = 0.9f;
  options.embedder = "test:1";
  return options;
}

std::filesystem::path temp_path(const char* name) {
  return std::filesystem::temp_directory_path() /
         (std::string("coinfer_cache_test_") + std::to_string(::getpid()) + "_" + name);
}

}  // namespace

TEST_CASE("an exact hit returns the stored payload and its entry id, another text misses") {
  SemanticCache cache(small_options());
  const auto id = cache.insert({"default", "chat m", "What is 2+2?"}, {}, "four");
  REQUIRE(id != 0);
  CacheHit hit;
  REQUIRE(cache.lookup_exact({"default", "chat m", "What is 2+2?"}, hit));
  CHECK(hit.id == id);
  CHECK(hit.kind == HitKind::exact);
  CHECK(*hit.payload == "four");
  CHECK_FALSE(cache.lookup_exact({"default", "chat m", "What is 2+3?"}, hit));
  CHECK_FALSE(cache.lookup_exact({"default", "chat m temperature=1", "What is 2+2?"}, hit));
  CHECK(cache.metrics().exact_hits.value() == 1);
}

TEST_CASE("a semantic lookup hits a vector at or above the threshold and misses below it") {
  std::mt19937 rng(1);
  SemanticCache cache(small_options());
  const auto v = unit_vector(rng);
  const auto id = cache.insert({"default", "s", "How tall is the Eiffel Tower?"}, v, "330 m");
  CacheHit hit;
  float nearest = 0;
  REQUIRE(cache.lookup({"default", "s", "What is the height of the Eiffel Tower?"},
                       near(v, 0.95f, rng), hit, &nearest));
  CHECK(hit.id == id);
  CHECK(hit.kind == HitKind::semantic);
  CHECK(hit.similarity == doctest::Approx(0.95f).epsilon(0.001));
  CHECK(*hit.payload == "330 m");
  CHECK_FALSE(cache.lookup({"default", "s", "What is the height of the Eiffel Tower?"},
                           near(v, 0.85f, rng), hit, &nearest));
  CHECK(nearest == doctest::Approx(0.85f).epsilon(0.001));
  // Same vector, other scope (another model or other sampling parameters): nothing to find.
  CHECK_FALSE(cache.lookup({"default", "s2", "How tall is the Eiffel Tower?"}, v, hit));
}

TEST_CASE("namespaces never share entries: the same key and vector in another namespace misses") {
  std::mt19937 rng(2);
  SemanticCache cache(small_options());
  const auto v = unit_vector(rng);
  cache.insert({"tenant-a/x", "s", "secret question"}, v, "a's answer");
  CacheHit hit;
  CHECK_FALSE(cache.lookup_exact({"tenant-b/x", "s", "secret question"}, hit));
  CHECK_FALSE(cache.lookup({"tenant-b/x", "s", "secret question"}, v, hit));
  CHECK_FALSE(cache.lookup({"tenant-a/x2", "s", "secret question"}, v, hit));
  REQUIRE(cache.lookup({"tenant-a/x", "s", "secret question"}, v, hit));
  CHECK(*hit.payload == "a's answer");
}

TEST_CASE("candidates: the entries a lookup would take, nearest first, taken only by accept") {
  std::mt19937 rng(11);
  SemanticCache cache(small_options());
  const auto v = unit_vector(rng);
  const std::uint64_t nearer =
      cache.insert({"d", "s", "how do I reset the router"}, near(v, 0.99f, rng), "a");
  const std::uint64_t farther =
      cache.insert({"d", "s", "How do I reset the router ?"}, near(v, 0.95f, rng), "b");
  cache.insert({"d", "s", "How do I not reset the router?"}, near(v, 0.98f, rng), "guarded");
  cache.insert({"d", "s", "Where is Paris?"}, near(v, 0.5f, rng), "below the threshold");
  std::vector<CacheHit> found;
  float nearest = 0;
  REQUIRE(cache.candidates({"d", "s", "How do I reset the router?"}, v, found, 8, &nearest) == 2);
  CHECK(found[0].id == nearer);
  CHECK(found[0].text == "how do I reset the router");
  CHECK(*found[0].payload == "a");
  CHECK(found[1].id == farther);
  CHECK(found[0].similarity > found[1].similarity);
  CHECK(nearest == doctest::Approx(found[0].similarity));
  CHECK(cache.metrics().guard_rejections.value() == 1);
  CHECK(cache.metrics().semantic_hits.value() == 0);  // nothing taken yet
  REQUIRE(cache.candidates({"d", "s", "How do I reset the router?"}, v, found, 1) == 1);
  CHECK(found[0].id == nearer);

  CHECK(cache.accept(found[0]));
  CHECK(cache.metrics().semantic_hits.value() == 1);
  CHECK(cache.erase(nearer));
  CHECK_FALSE(cache.accept(found[0]));  // gone meanwhile
  CHECK(cache.metrics().semantic_hits.value() == 1);
}

TEST_CASE("the guards refuse a near candidate that differs in negation, a number or a name") {
  std::mt19937 rng(3);
  SemanticCache cache(small_options());
  const auto v = unit_vector(rng);
  cache.insert({"d", "s", "Which foods are safe for dogs?"}, v, "carrots");
  CacheHit hit;
  const auto close = near(v, 0.97f, rng);
  CHECK_FALSE(cache.lookup({"d", "s", "Which foods are not safe for dogs?"}, close, hit));
  CHECK(cache.metrics().guard_rejections.value() == 1);
  CHECK(cache.lookup({"d", "s", "What foods are safe for dogs to eat?"}, close, hit));

  CacheOptions off = small_options();
  off.guards = false;
  SemanticCache unguarded(off);
  unguarded.insert({"d", "s", "Which foods are safe for dogs?"}, v, "carrots");
  CHECK(unguarded.lookup({"d", "s", "Which foods are not safe for dogs?"}, close, hit));
}

TEST_CASE(
    "agreement: negations, numbers, names, formats and contrasts disagree, paraphrases agree") {
  CHECK(disagreement("What is the capital of France?", "Tell me France's capital.") ==
        Disagreement::none);
  CHECK(disagreement("How do I sort a list in Python?", "How can I sort a Python list?") ==
        Disagreement::none);
  CHECK(disagreement("List 5 fruits high in iron", "List five fruits high in iron") ==
        Disagreement::none);
  CHECK(disagreement("Convert 10 miles to km", "Convert 12 miles to km") == Disagreement::number);
  CHECK(disagreement("Is coffee good for you?", "Isn't coffee good for you?") ==
        Disagreement::negation);
  CHECK(disagreement("Which mushrooms are safe to eat?", "Which mushrooms are unsafe to eat?") ==
        Disagreement::negation);
  CHECK(disagreement("What is the capital of Austria?", "What is the capital of Australia?") ==
        Disagreement::entity);
  CHECK(disagreement("Summarize this article as JSON", "Summarize this article as a table") ==
        Disagreement::format);
  CHECK(disagreement("What are the advantages of remote work?",
                     "What are the disadvantages of remote work?") == Disagreement::antonym);
}

TEST_CASE("agreement: swapped roles, scope, tense and conditions disagree, moved phrases agree") {
  // Who does what to whom.
  CHECK(disagreement("Did Sparta defeat Athens?", "Did Athens defeat Sparta?") ==
        Disagreement::role);
  CHECK(disagreement("How do I convert Celsius to Kelvin?",
                     "How do I convert Kelvin to Celsius?") == Disagreement::role);
  CHECK(disagreement("Does the landlord owe the tenant money?",
                     "Does the tenant owe the landlord money?") == Disagreement::role);
  // A symmetric connective, a moved phrase and a change of voice keep the question.
  CHECK(disagreement("Compare tea and coffee for caffeine",
                     "Compare coffee and tea for caffeine") == Disagreement::none);
  CHECK(disagreement("How do I bake bread without an oven?",
                     "Without an oven, how do I bake bread?") == Disagreement::none);
  CHECK(disagreement("Who painted the Mona Lisa?", "The Mona Lisa was painted by whom?") ==
        Disagreement::none);
  // Quantifiers, frequency, spans of time, tense.
  CHECK(disagreement("Do all spiders spin webs?", "Do some spiders spin webs?") ==
        Disagreement::scope);
  CHECK(disagreement("Do cats always purr when happy?", "Do cats purr when happy?") ==
        Disagreement::scope);
  CHECK(disagreement("How much water should I drink per day?",
                     "How much water should I drink per week?") == Disagreement::scope);
  CHECK(disagreement("Who was the mayor of Berlin?", "Who is the mayor of Berlin?") ==
        Disagreement::scope);
  CHECK(disagreement("How many eggs do I need?", "What number of eggs do I need?") ==
        Disagreement::none);  // "how many" asks, it quantifies nothing
  CHECK(disagreement("I was wondering how to boil rice", "How do you boil rice?") ==
        Disagreement::none);
  // Conditions.
  CHECK(disagreement("Can I drink coffee if I am pregnant?", "Can I drink coffee?") ==
        Disagreement::condition);
  CHECK(disagreement("Can I drink coffee if I am pregnant?",
                     "Can I drink coffee if I am diabetic?") == Disagreement::condition);
  CHECK(disagreement("Write code that checks if a year is a leap year",
                     "Write code to check whether a year is a leap year") == Disagreement::none);
  // Negation without a cue word counts as one; a typo is no substitution.
  CHECK(disagreement("Why does my car fail to start?", "Why does my car start?") ==
        Disagreement::negation);
  CHECK(disagreement("Why won't my car start?", "Why does my car fail to start?") !=
        Disagreement::negation);
  CHECK(disagreement("How do I recieve a package abroad?", "How do I receive a package abroad?") ==
        Disagreement::none);
  CHECK(disagreement("How do I uninstall Microsfot Teams?",
                     "How do I uninstall Microsoft Teams?") == Disagreement::none);
  // Past 512 words no text is taken for another (bounded cost; longer than MiniLM reads).
  std::string long_text;
  for (int i = 0; i < 600; ++i) long_text += "word ";
  CHECK(disagreement(long_text, long_text + "more") == Disagreement::length);
  // Leaving a check out (the bench's ablation) lets its case through.
  CHECK(disagreement("Did Sparta defeat Athens?", "Did Athens defeat Sparta?",
                     kAllChecks & ~check_bit(Disagreement::role)) == Disagreement::none);
}

TEST_CASE("the entry limit evicts the least recently used entry, its vector with it") {
  std::mt19937 rng(4);
  CacheOptions options = small_options();
  options.max_entries = 3;
  SemanticCache cache(options);
  std::vector<std::vector<float>> v;
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 3; ++i) {
    v.push_back(unit_vector(rng));
    ids.push_back(cache.insert({"d", "s", "q" + std::to_string(i)}, v.back(), "a"));
  }
  CacheHit hit;
  REQUIRE(cache.lookup_exact({"d", "s", "q0"}, hit));  // q0 used: q1 is now the oldest
  v.push_back(unit_vector(rng));
  cache.insert({"d", "s", "q3"}, v.back(), "a");
  CHECK(cache.stats().entries == 3);
  CHECK(cache.stats().vectors == 3);
  CHECK(cache.metrics().evictions.value() == 1);
  CHECK_FALSE(cache.lookup_exact({"d", "s", "q1"}, hit));
  CHECK_FALSE(cache.lookup({"d", "s", "q1"}, v[1], hit));  // no stale vector
  CHECK(cache.lookup_exact({"d", "s", "q0"}, hit));
  CHECK(cache.lookup({"d", "s", "q2"}, v[2], hit));
}

TEST_CASE("the byte limit evicts, and an entry larger than the limit is not stored") {
  CacheOptions options = small_options();
  options.max_bytes = 4096;
  SemanticCache cache(options);
  for (int i = 0; i < 10; ++i)
    cache.insert({"d", "s", "q" + std::to_string(i)}, {}, std::string(1000, 'x'));
  CHECK(cache.stats().bytes <= 4096);
  CHECK(cache.stats().entries < 10);
  CHECK(cache.insert({"d", "s", "big"}, {}, std::string(5000, 'x')) == 0);
}

TEST_CASE("an entry past its TTL is never returned, and expire() removes it with its vector") {
  std::mt19937 rng(5);
  CacheOptions options = small_options();
  options.ttl = std::chrono::milliseconds(50);
  SemanticCache cache(options);
  const auto v = unit_vector(rng);
  cache.insert({"d", "s", "q"}, v, "a");
  CacheHit hit;
  CHECK(cache.lookup({"d", "s", "q"}, v, hit));
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  CHECK_FALSE(cache.lookup_exact({"d", "s", "q"}, hit));
  CHECK_FALSE(cache.lookup({"d", "s", "q"}, v, hit));
  CHECK(cache.expire() == 1);
  CHECK(cache.stats().entries == 0);
  CHECK(cache.stats().vectors == 0);
  CHECK(cache.stats().partitions == 0);
}

TEST_CASE("invalidation removes one entry by id or a whole namespace, a prefix guards others") {
  std::mt19937 rng(6);
  SemanticCache cache(small_options());
  const auto a = cache.insert({"t1/x", "s", "qa"}, unit_vector(rng), "a");
  const auto b = cache.insert({"t1/x", "s", "qb"}, unit_vector(rng), "b");
  const auto c = cache.insert({"t2/x", "s", "qc"}, unit_vector(rng), "c");
  CHECK_FALSE(cache.erase(a, "t2/"));  // another tenant's entry
  CHECK(cache.erase(a, "t1/"));
  CHECK_FALSE(cache.erase(a));
  CacheHit hit;
  CHECK_FALSE(cache.lookup_exact({"t1/x", "s", "qa"}, hit));
  CHECK(cache.erase_namespace("t1/x") == 1);
  CHECK_FALSE(cache.lookup_exact({"t1/x", "s", "qb"}, hit));
  CHECK(cache.lookup_exact({"t2/x", "s", "qc"}, hit));
  CHECK(hit.id == c);
  CHECK(b != c);
  CHECK(cache.stats().vectors == 1);
}

TEST_CASE("a snapshot restores entries, vectors and ids, and new ids continue after them") {
  std::mt19937 rng(7);
  const auto path = temp_path("restore");
  const auto v = unit_vector(rng);
  std::uint64_t id = 0;
  {
    SemanticCache cache(small_options());
    id = cache.insert({"d", "s", "How tall is it?"}, v, "very");
    cache.insert({"d", "s", "exact only"}, {}, "x");
    REQUIRE(cache.save(path).ok());
  }
  SemanticCache restored(small_options());
  REQUIRE(restored.load(path).ok());
  CHECK(restored.stats().entries == 2);
  CHECK(restored.stats().vectors == 1);
  CacheHit hit;
  REQUIRE(restored.lookup({"d", "s", "How tall is it?"}, v, hit));
  CHECK(hit.id == id);
  CHECK(*hit.payload == "very");
  CHECK(restored.insert({"d", "s", "new"}, {}, "n") > id);
  std::filesystem::remove(path);
}

TEST_CASE("a corrupt, truncated or foreign snapshot is refused with a reason and changes nothing") {
  std::mt19937 rng(8);
  const auto path = temp_path("corrupt");
  {
    SemanticCache cache(small_options());
    cache.insert({"d", "s", "q"}, unit_vector(rng), "a");
    REQUIRE(cache.save(path).ok());
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  };
  SemanticCache cache(small_options());
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  write(flipped);
  Status s = cache.load(path);
  CHECK(s.message().find("checksum") != std::string::npos);
  write(bytes.substr(0, bytes.size() - 9));
  CHECK_FALSE(cache.load(path).ok());
  write("hello, not a snapshot");
  CHECK(cache.load(path).message().find("not a coinfer cache snapshot") != std::string::npos);
  write(bytes);
  CacheOptions other = small_options();
  other.embedder = "other-model:1";
  SemanticCache foreign(other);
  CHECK(foreign.load(path).message().find("other-model") != std::string::npos);
  CHECK(cache.stats().entries == 0);
  CHECK(foreign.stats().entries == 0);
  CHECK(cache.load(temp_path("missing")).code() == Errc::not_found);
  std::filesystem::remove(path);
}

TEST_CASE("past its threshold a flat index becomes an IVF that still finds and removes vectors") {
  std::mt19937 rng(9);
  CacheOptions options = small_options();
  options.index.ivf_min_entries = 1000;
  options.index.nprobe = 4;
  SemanticCache cache(options);
  std::vector<std::vector<float>> v;
  for (int i = 0; i < 1200; ++i) {
    v.push_back(unit_vector(rng));
    cache.insert({"d", "s", "q" + std::to_string(i)}, v.back(), std::to_string(i));
  }
  CHECK(cache.stats().ivf_partitions == 0);
  CHECK(cache.rebuild_indexes() == 1);
  CHECK(cache.stats().ivf_partitions == 1);
  CHECK(cache.stats().vectors == 1200);
  CacheHit hit;
  int found = 0;
  for (int i = 0; i < 1200; i += 7) {
    if (cache.lookup({"d", "s", "q" + std::to_string(i)}, v[i], hit) &&
        *hit.payload == std::to_string(i))
      ++found;
  }
  // A vector's own list is always probed: every one is found.
  CHECK(found == (1200 + 6) / 7);
  REQUIRE(cache.erase_namespace("d") == 1200);
  CHECK(cache.stats().vectors == 0);
  CHECK_FALSE(cache.lookup({"d", "s", "q7"}, v[7], hit));
}

TEST_CASE(
    "lookups run during inserts, evictions, expiry and rebuilds and only ever return their own "
    "answer") {
  CacheOptions options = small_options();
  options.max_entries = 600;
  options.index.ivf_min_entries = 300;
  options.ttl = std::chrono::milliseconds(200);
  SemanticCache cache(options);
  std::vector<std::vector<float>> v;
  std::mt19937 rng(10);
  for (int i = 0; i < 2000; ++i) v.push_back(unit_vector(rng));
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0}, hits{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 local(100 + t);
      CacheHit hit;
      while (!done.load()) {
        const int i = static_cast<int>(local() % v.size());
        const std::string text = "q" + std::to_string(i);
        if (cache.lookup({"d", "s", text}, v[i], hit)) {
          ++hits;
          if (*hit.payload != text) ++wrong;
        }
        if (cache.lookup_exact({"d", "s", text}, hit) && *hit.payload != text) ++wrong;
      }
    });
  }
  std::thread maintenance([&] {
    while (!done.load()) {
      cache.expire();
      cache.rebuild_indexes();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  // At least 3 rounds, and on until the readers have hit something while writes go on (on a
  // loaded machine they may not get a core during the first rounds).
  for (int round = 0; round < 3 || (hits.load() == 0 && round < 3000); ++round) {
    for (int i = 0; i < 2000; ++i) {
      const std::string text = "q" + std::to_string(i);
      cache.insert({"d", "s", text}, v[i], text);
      if (i % 97 == 0) cache.erase_namespace("nobody");
    }
  }
  done = true;
  for (auto& r : readers) r.join();
  maintenance.join();
  CHECK(wrong.load() == 0);
  CHECK(hits.load() > 0);
  CHECK(cache.stats().entries <= 600);
  CHECK(cache.stats().vectors == cache.stats().entries);
}

TEST_CASE("a wrong-hit report raises that entry's bar above the hit, other entries keep theirs") {
  std::mt19937 rng(21);
  SemanticCache cache(small_options());
  const auto v = unit_vector(rng);
  const auto w = unit_vector(rng);
  const auto id = cache.insert({"d", "s", "How tall is the tower?"}, v, "330 m");
  const auto other = cache.insert({"d", "s", "How old is the bridge?"}, w, "140 years");
  CacheHit hit;
  REQUIRE(cache.lookup({"d", "s", "What is the tower's height?"}, near(v, 0.95f, rng), hit));
  REQUIRE(hit.id == id);
  FeedbackResult result;
  // The similarity defaults to the entry's last semantic hit.
  REQUIRE(cache.feedback(id, false, -1.0f, "", result));
  CHECK_FALSE(result.removed);
  CHECK(result.entry_threshold > hit.similarity);
  CHECK(result.namespace_threshold > hit.similarity);  // one report, wrong: above the target
  CHECK(cache.metrics().feedback_wrong.value() == 1);
  CHECK_FALSE(cache.lookup({"d", "s", "What is the tower's height?"}, near(v, 0.94f, rng), hit));
  CHECK(cache.lookup({"d", "s", "What is the tower's height?"}, near(v, 0.99f, rng), hit));
  // The namespace's bar rose for every entry: 0.95 no longer hits the other one either; a
  // namespace setting below it changes nothing, since the reports still call for it.
  CHECK_FALSE(cache.lookup({"d", "s", "What is the bridge's age?"}, near(w, 0.94f, rng), hit));
  CHECK(cache.lookup({"d", "s", "What is the bridge's age?"}, near(w, 0.97f, rng), hit));
  CHECK(hit.id == other);
  // Another namespace is untouched.
  cache.insert({"e", "s", "How tall is the tower?"}, v, "330 m");
  CHECK(cache.lookup({"e", "s", "What is the tower's height?"}, near(v, 0.95f, rng), hit));
  CHECK(cache.namespace_state("e").threshold == doctest::Approx(0.9f));
  // An entry the caller's tenant does not own, or none at all: nothing to report on.
  CHECK_FALSE(cache.feedback(id, false, 0.95f, "tenant-b/", result));
  CHECK_FALSE(cache.feedback(9999, true, 0.95f, "", result));
}

TEST_CASE("a namespace's threshold rises only as far as its target error rate asks") {
  auto options = small_options();
  options.target_error_rate = 0.1f;
  SemanticCache cache(options);
  const auto id = cache.insert({"d", "s", "q"}, {}, "a");
  FeedbackResult result;
  // Nine right hits and one wrong at or above 0.9: 10% wrong, within the target.
  for (int i = 0; i < 9; ++i) REQUIRE(cache.feedback(id, true, 0.93f + 0.005f * i, "", result));
  REQUIRE(cache.feedback(id, false, 0.92f, "", result));
  CHECK(cache.namespace_state("d").threshold == doctest::Approx(0.9f));
  CHECK(result.entry_threshold > 0.92f);  // the entry's own bar rose all the same
  // A second wrong one lower down: 2 of 11. Just above it, 1 of 10 again.
  REQUIRE(cache.feedback(id, false, 0.91f, "", result));
  const NamespaceState state = cache.namespace_state("d");
  CHECK(state.threshold > 0.91f);
  CHECK(state.threshold < 0.911f);
  CHECK(state.configured_threshold == doctest::Approx(0.9f));
  CHECK(state.right == 9);
  CHECK(state.wrong == 2);
  // A stricter target, set for the namespace: above both wrong hits.
  NamespaceSettings settings;
  settings.target_error_rate = 0.0f;
  REQUIRE(cache.configure_namespace("d", settings));
  CHECK(cache.namespace_state("d").threshold > 0.92f);
  CHECK(cache.namespace_state("d").target_error_rate == 0.0f);
  // Deleting the namespace's entries forgets its reports, not its settings.
  cache.erase_namespace("d");
  CHECK(cache.namespace_state("d").threshold == doctest::Approx(0.9f));
  CHECK(cache.namespace_state("d").wrong == 0);
  CHECK(cache.namespace_state("d").target_error_rate == 0.0f);
}

TEST_CASE("a namespace's own threshold applies to its lookups alone") {
  std::mt19937 rng(22);
  SemanticCache cache(small_options());
  const auto v = unit_vector(rng);
  NamespaceSettings strict;
  strict.threshold = 0.97f;
  REQUIRE(cache.configure_namespace("strict", strict));
  cache.insert({"strict", "s", "How tall is the tower?"}, v, "330 m");
  cache.insert({"loose", "s", "How tall is the tower?"}, v, "330 m");
  CacheHit hit;
  const auto q = near(v, 0.95f, rng);
  CHECK_FALSE(cache.lookup({"strict", "s", "What is the tower's height?"}, q, hit));
  CHECK(cache.lookup({"loose", "s", "What is the tower's height?"}, q, hit));
  CHECK(cache.namespace_state("strict").threshold == doctest::Approx(0.97f));
}

TEST_CASE("an exact hit reported wrong removes the entry, and the raised bars survive a snapshot") {
  std::mt19937 rng(23);
  const auto path = temp_path("feedback");
  const auto v = unit_vector(rng);
  std::uint64_t kept = 0;
  {
    SemanticCache cache(small_options());
    const auto wrong = cache.insert({"d", "s", "What is 2+2?"}, {}, "five");
    CacheHit hit;
    REQUIRE(cache.lookup_exact({"d", "s", "What is 2+2?"}, hit));
    FeedbackResult result;
    REQUIRE(cache.feedback(wrong, false, -1.0f, "", result));
    CHECK(result.removed);
    CHECK_FALSE(cache.lookup_exact({"d", "s", "What is 2+2?"}, hit));
    kept = cache.insert({"d", "s", "How tall is the tower?"}, v, "330 m");
    REQUIRE(cache.feedback(kept, false, 0.95f, "", result));
    REQUIRE(cache.save(path).ok());
  }
  SemanticCache restored(small_options());
  REQUIRE(restored.load(path).ok());
  CacheHit hit;
  CHECK_FALSE(restored.lookup({"d", "s", "What is the tower's height?"}, near(v, 0.94f, rng), hit));
  REQUIRE(restored.lookup({"d", "s", "What is the tower's height?"}, near(v, 0.97f, rng), hit));
  CHECK(hit.id == kept);
  std::filesystem::remove(path);
}

TEST_CASE("feedback and namespace settings while other threads look up") {
  std::mt19937 rng(24);
  SemanticCache cache(small_options());
  std::vector<std::vector<float>> vectors;
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 16; ++i) {
    vectors.push_back(unit_vector(rng));
    ids.push_back(cache.insert({"d", "s", "question " + std::to_string(i)}, vectors.back(), "a"));
  }
  std::atomic<bool> stop{false};
  std::atomic<int> lookups{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 local(100 + t);
      while (!stop.load()) {
        const int i = static_cast<int>(local() % vectors.size());
        CacheHit hit;
        (void)cache.lookup({"d", "s", "question " + std::to_string(i)},
                           near(vectors[i], 0.95f, local), hit);
        (void)cache.lookup_exact({"d", "s", "question " + std::to_string(i)}, hit);
        ++lookups;
      }
    });
  }
  for (int round = 0; round < 200; ++round) {
    FeedbackResult result;
    const auto id = ids[static_cast<std::size_t>(round) % ids.size()];
    (void)cache.feedback(id, round % 3 != 0, 0.9f + 0.0005f * static_cast<float>(round % 100), "",
                         result);
    NamespaceSettings settings;
    settings.threshold = 0.9f + 0.001f * static_cast<float>(round % 50);
    CHECK(cache.configure_namespace("d", settings));
    (void)cache.namespace_state("d");
  }
  while (lookups.load() < 100) std::this_thread::yield();
  stop = true;
  for (auto& reader : readers) reader.join();
  CHECK(cache.stats().entries == 16);
  CHECK(cache.metrics().feedback_wrong.value() + cache.metrics().feedback_right.value() == 200);
}
