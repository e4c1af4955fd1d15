#include "coinfer/models/llama.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace coinfer;

namespace {

// A small random llama-architecture model (2 layers, hidden 64, 4 heads sharing 2 KV heads,
// SwiGLU 128, vocab 96) written as GGUF, F32 weights.
GgufFile tiny_llama(std::uint32_t seed = 7) {
  constexpr int hidden = 64, ffn = 128, vocab = 96, kv = 32, layers = 2;
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.2f);
  auto random = [&](std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
  };
  auto ones = [&](std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = 1.0f + dist(rng) * 0.1f;
    return v;
  };
  GgufWriter w;
  w.set("general.architecture", "llama");
  w.set_uint32("llama.block_count", layers);
  w.set_uint32("llama.embedding_length", hidden);
  w.set_uint32("llama.feed_forward_length", ffn);
  w.set_uint32("llama.attention.head_count", 4);
  w.set_uint32("llama.attention.head_count_kv", 2);
  w.set_uint32("llama.context_length", 128);
  w.set_float32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_float32("llama.rope.freq_base", 10000.0f);
  w.add_tensor("token_embd.weight", {hidden, vocab}, GgmlType::f32, random(hidden * vocab));
  for (int l = 0; l < layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    w.add_tensor(p + "attn_norm.weight", {hidden}, GgmlType::f32, ones(hidden));
    w.add_tensor(p + "ffn_norm.weight", {hidden}, GgmlType::f32, ones(hidden));
    w.add_tensor(p + "attn_q.weight", {hidden, hidden}, GgmlType::f32, random(hidden * hidden));
    w.add_tensor(p + "attn_k.weight", {hidden, kv}, GgmlType::f32, random(hidden * kv));
    w.add_tensor(p + "attn_v.weight", {hidden, kv}, GgmlType::f32, random(hidden * kv));
    w.add_tensor(p + "attn_output.weight", {hidden, hidden}, GgmlType::f32,
                 random(hidden * hidden));
    w.add_tensor(p + "ffn_gate.weight", {hidden, ffn}, GgmlType::f32, random(hidden * ffn));
    w.add_tensor(p + "ffn_up.weight", {hidden, ffn}, GgmlType::f32, random(hidden * ffn));
    w.add_tensor(p + "ffn_down.weight", {ffn, hidden}, GgmlType::f32, random(ffn * hidden));
  }
  w.add_tensor("output_norm.weight", {hidden}, GgmlType::f32, ones(hidden));
  static std::vector<std::vector<std::byte>> keep;  // parse() keeps the bytes by reference
  keep.push_back(w.bytes());
  GgufFile f;
  REQUIRE(GgufFile::parse(keep.back(), "tiny.gguf", f).ok());
  return f;
}

std::unique_ptr<LlamaModel> load(LlamaPrecision precision, int blocks = 32) {
  LlamaOptions o;
  o.precision = precision;
  o.kv_blocks = blocks;
  o.block_size = 4;
  o.max_step_tokens = 64;
  std::unique_ptr<LlamaModel> m;
  REQUIRE(LlamaModel::load(tiny_llama(), o, m).ok());
  return m;
}

std::vector<std::int32_t> prompt(int n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids) id = static_cast<std::int32_t>(rng() % 96);
  return ids;
}

// The last position's logits after feeding `ids` in chunks of `chunk`.
std::vector<float> last_logits(LlamaModel& m, const std::vector<std::int32_t>& ids, int chunk,
                               const std::vector<std::int32_t>& table) {
  std::vector<float> logits;
  for (int at = 0; at < static_cast<int>(ids.size()); at += chunk) {
    const int n = std::min<int>(chunk, static_cast<int>(ids.size()) - at);
    LlamaSequenceStep st;
    st.token_count = n;
    st.position = at;
    st.block_table = table;
    st.logits = LlamaSequenceStep::Logits::last;
    REQUIRE(m.forward(std::span(ids).subspan(at, n), {&st, 1}, logits).ok());
  }
  return logits;
}

float max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

std::vector<std::int32_t> iota_table(int n, int first = 0) {
  std::vector<std::int32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

}  // namespace

TEST_CASE("llama config comes from the GGUF metadata") {
  GgufFile f = tiny_llama();
  LlamaConfig c;
  REQUIRE(LlamaConfig::from_gguf(f, c).ok());
  CHECK(c.layers == 2);
  CHECK(c.hidden == 64);
  CHECK(c.heads == 4);
  CHECK(c.kv_heads == 2);
  CHECK(c.head_dim == 16);
  CHECK(c.ffn == 128);
  CHECK(c.vocab == 96);
  CHECK(c.context == 128);
  CHECK(c.qkv_width() == 128);
  CHECK(LlamaModel::kv_block_bytes(c, 16) == 2u * 2 * 2 * 16 * 16 * 2);  // FP16 K and V
}

TEST_CASE("chunked prefill gives the logits of a one-shot prefill") {
  for (auto precision : {LlamaPrecision::fp32, LlamaPrecision::int8}) {
    CAPTURE(static_cast<int>(precision));
    auto m = load(precision);
    const auto ids = prompt(37, 1);
    const auto whole = last_logits(*m, ids, 64, iota_table(10));
    const auto chunked = last_logits(*m, ids, 5, iota_table(10, 10));
    const auto decoded = last_logits(*m, ids, 1, iota_table(10, 20));
    if (precision == LlamaPrecision::int8) {
      // Per-token scales and exact INT32 sums: a token's result does not depend on its company.
      CHECK(max_diff(whole, chunked) == 0.0f);
      CHECK(max_diff(whole, decoded) == 0.0f);
    } else {
      CHECK(max_diff(whole, chunked) < 1e-4f);
      CHECK(max_diff(whole, decoded) < 1e-4f);
    }
  }
}

TEST_CASE("a sequence's logits do not depend on the others in its step (INT8: bit for bit)") {
  auto m = load(LlamaPrecision::int8, 64);
  const auto a = prompt(9, 2), b = prompt(14, 3), c = prompt(3, 4);
  const auto alone = last_logits(*m, a, 64, iota_table(4, 0));
  // a beside b and c in one step, with blocks in scattered order.
  const std::vector<std::int32_t> ta{40, 3, 17}, tb{5, 60, 6, 7}, tc{50};
  std::vector<std::int32_t> tokens = b;
  tokens.insert(tokens.end(), a.begin(), a.end());
  tokens.insert(tokens.end(), c.begin(), c.end());
  LlamaSequenceStep steps[3];
  steps[0] = {0, 14, 0, tb, LlamaSequenceStep::Logits::all};
  steps[1] = {14, 9, 0, ta, LlamaSequenceStep::Logits::last};
  steps[2] = {23, 3, 0, tc, LlamaSequenceStep::Logits::none};
  std::vector<float> logits;
  REQUIRE(m->forward(tokens, steps, logits).ok());
  REQUIRE(logits.size() == (14 + 1) * 96u);
  const std::vector<float> a_row(logits.begin() + 14 * 96, logits.end());
  CHECK(max_diff(alone, a_row) == 0.0f);
  // b's last row equals b alone too.
  const auto b_alone = last_logits(*m, b, 64, iota_table(4, 8));
  const std::vector<float> b_last(logits.begin() + 13 * 96, logits.begin() + 14 * 96);
  CHECK(max_diff(b_alone, b_last) == 0.0f);
}

TEST_CASE("a copied KV block continues the sequence it came from") {
  auto m = load(LlamaPrecision::int8);
  const auto ids = prompt(6, 5);  // fills block 0 and half of block 1 (block size 4)
  const auto reference = last_logits(*m, ids, 64, {0, 1});
  // A second sequence shares block 0 and gets a copy of block 1, then continues.
  // Block 1 is overwritten first, so the copy must carry what the prefill below wrote.
  (void)last_logits(*m, prompt(6, 99), 64, {2, 1});
  (void)last_logits(*m, std::vector<std::int32_t>(ids.begin(), ids.end() - 1), 64, {0, 1});
  m->copy_block(1, 9);
  const std::vector<std::int32_t> table{0, 9};
  LlamaSequenceStep st{0, 1, 5, table, LlamaSequenceStep::Logits::last};
  std::vector<float> logits;
  REQUIRE(m->forward(std::span(ids).subspan(5, 1), {&st, 1}, logits).ok());
  CHECK(max_diff(reference, logits) == 0.0f);
}

TEST_CASE("llama steps with bad ids, positions or tables are refused before touching the cache") {
  auto m = load(LlamaPrecision::fp32);
  const std::vector<std::int32_t> table{0, 1};
  std::vector<float> logits;
  std::vector<std::int32_t> ids{1, 2, 96};
  LlamaSequenceStep st{0, 3, 0, table, LlamaSequenceStep::Logits::last};
  Status s = m->forward(ids, {&st, 1}, logits);
  CHECK(s.message().find("token id 96 is outside the vocabulary of 96") != std::string::npos);
  ids[2] = 3;
  st.position = 127;
  s = m->forward(ids, {&st, 1}, logits);
  CHECK(s.message().find("pass the model's context of 128") != std::string::npos);
  st.position = 6;  // positions 6..8 need 3 blocks of 4
  s = m->forward(ids, {&st, 1}, logits);
  CHECK(s.message().find("block table too short") != std::string::npos);
  const std::vector<std::int32_t> bad{99};
  st = {0, 3, 0, bad, LlamaSequenceStep::Logits::last};
  s = m->forward(ids, {&st, 1}, logits);
  CHECK(s.message().find("block 99 is out of range") != std::string::npos);
  std::vector<std::int32_t> many(65, 1);
  st = {0, 65, 0, table, LlamaSequenceStep::Logits::last};
  CHECK(m->forward(many, {&st, 1}, logits).message().find("a step of 65 tokens") !=
        std::string::npos);
}

TEST_CASE("a GGUF file that is not a llama model is refused by name") {
  GgufWriter w;
  w.set("general.architecture", "gpt2");
  const auto bytes = w.bytes();
  GgufFile f;
  REQUIRE(GgufFile::parse(bytes, "x.gguf", f).ok());
  std::unique_ptr<LlamaModel> m;
  CHECK(LlamaModel::load(std::move(f), {}, m).message().find("'gpt2', expected 'llama'") !=
        std::string::npos);
}
