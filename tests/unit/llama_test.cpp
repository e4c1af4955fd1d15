#include "coinfer/models/llama.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace coinfer;

namespace {

// A small random llama-architecture model (2 layers, hidden 64, 4 heads sharing 2 KV heads,
// SwiGLU 128, vocab 96) written as GGUF, F32 weights.
// `extra` adds metadata or tensors before the file is written.
// `linear` is the type of the linear layers' weights and `embedding` the token embedding's.
GgufFile tiny_llama(std::uint32_t seed = 7, const std::function<void(GgufWriter&)>& extra = {},
                    GgmlType linear = GgmlType::f32, GgmlType embedding = GgmlType::f32,
                    int ffn = 128) {
  constexpr int hidden = 64, vocab = 96, kv = 32, layers = 2;
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
  w.add_tensor("token_embd.weight", {hidden, vocab}, embedding, random(hidden * vocab));
  for (int l = 0; l < layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    w.add_tensor(p + "attn_norm.weight", {hidden}, GgmlType::f32, ones(hidden));
    w.add_tensor(p + "ffn_norm.weight", {hidden}, GgmlType::f32, ones(hidden));
    w.add_tensor(p + "attn_q.weight", {hidden, hidden}, linear, random(hidden * hidden));
    w.add_tensor(p + "attn_k.weight", {hidden, kv}, linear, random(hidden * kv));
    w.add_tensor(p + "attn_v.weight", {hidden, kv}, linear, random(hidden * kv));
    w.add_tensor(p + "attn_output.weight", {hidden, hidden}, linear,
                 random(hidden * hidden));
    w.add_tensor(p + "ffn_gate.weight", {hidden, ffn}, linear, random(hidden * ffn));
    w.add_tensor(p + "ffn_up.weight", {hidden, ffn}, linear, random(hidden * ffn));
    w.add_tensor(p + "ffn_down.weight", {ffn, hidden}, linear, random(ffn * hidden));
  }
  w.add_tensor("output_norm.weight", {hidden}, GgmlType::f32, ones(hidden));
  if (extra) extra(w);
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
    st.logit_rows = 1;
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
  DecoderSpec c;
  REQUIRE(DecoderSpec::from_gguf(f, c).ok());
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
  for (auto precision : {LlamaPrecision::fp32, LlamaPrecision::int8, LlamaPrecision::int4}) {
    CAPTURE(static_cast<int>(precision));
    auto m = load(precision);
    const auto ids = prompt(37, 1);
    const auto whole = last_logits(*m, ids, 64, iota_table(10));
    const auto chunked = last_logits(*m, ids, 5, iota_table(10, 10));
    const auto decoded = last_logits(*m, ids, 1, iota_table(10, 20));
    if (precision != LlamaPrecision::fp32) {
      // Per-token (per-block) scales and exact integer sums: a token's result does not depend
      // on its company.
      CHECK(max_diff(whole, chunked) == 0.0f);
      CHECK(max_diff(whole, decoded) == 0.0f);
    } else {
      CHECK(max_diff(whole, chunked) < 1e-4f);
      CHECK(max_diff(whole, decoded) < 1e-4f);
    }
  }
}

TEST_CASE("a sequence's logits do not depend on the others in its step (INT8, INT4: bit for bit)") {
  for (auto precision : {LlamaPrecision::int8, LlamaPrecision::int4}) {
  CAPTURE(static_cast<int>(precision));
  auto m = load(precision, 64);
  const auto a = prompt(9, 2), b = prompt(14, 3), c = prompt(3, 4);
  const auto alone = last_logits(*m, a, 64, iota_table(4, 0));
  // a beside b and c in one step, with blocks in scattered order.
  const std::vector<std::int32_t> ta{40, 3, 17}, tb{5, 60, 6, 7}, tc{50};
  std::vector<std::int32_t> tokens = b;
  tokens.insert(tokens.end(), a.begin(), a.end());
  tokens.insert(tokens.end(), c.begin(), c.end());
  LlamaSequenceStep steps[3];
  steps[0] = {0, 14, 0, tb, 14};
  steps[1] = {14, 9, 0, ta, 1};
  steps[2] = {23, 3, 0, tc, 0};
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
}

TEST_CASE("int4 and int8 multiply a file's Q4_1 and Q8_0 blocks as they are, beside the FP32 path on the same values") {
  // Linear weights in the precision's blocks and a Q8_0 embedding (SmolLM2's GGUF is Q4_1 and
  // Q8_0): the FP32 path multiplies their dequantized values, INT4/INT8 the blocks themselves
  // with 8-bit activations per 32 inputs, so the two differ only by the activations' rounding.
  for (auto [precision, blocks] : {std::pair{LlamaPrecision::int4, GgmlType::q4_1},
                                   std::pair{LlamaPrecision::int8, GgmlType::q8_0}}) {
    CAPTURE(static_cast<int>(precision));
    LlamaOptions o;
    o.kv_blocks = 32;
    o.block_size = 4;
    o.max_step_tokens = 64;
    std::unique_ptr<LlamaModel> fp32, quantized, from_f32;
    o.precision = LlamaPrecision::fp32;
    REQUIRE(LlamaModel::load(tiny_llama(7, {}, blocks, GgmlType::q8_0), o, fp32).ok());
    o.precision = precision;
    REQUIRE(LlamaModel::load(tiny_llama(7, {}, blocks, GgmlType::q8_0), o, quantized).ok());
    // The same linear weights in F32, quantized at load as ggml quantizes: the same blocks.
    REQUIRE(LlamaModel::load(tiny_llama(7, {}, GgmlType::f32, GgmlType::q8_0), o, from_f32).ok());
    int same_top1 = 0;
    for (std::uint32_t seed = 1; seed <= 8; ++seed) {
      const auto ids = prompt(11, seed);
      const auto reference = last_logits(*fp32, ids, 64, iota_table(4));
      const auto got = last_logits(*quantized, ids, 64, iota_table(4));
      const float range = *std::max_element(reference.begin(), reference.end()) -
                          *std::min_element(reference.begin(), reference.end());
      CHECK(max_diff(reference, got) < 0.05f * range);
      same_top1 += std::max_element(reference.begin(), reference.end()) - reference.begin() ==
                   std::max_element(got.begin(), got.end()) - got.begin();
      CHECK(max_diff(got, last_logits(*from_f32, ids, 64, iota_table(4))) == 0.0f);
    }
    CHECK(same_top1 >= 7);
  }
}

TEST_CASE("int4 and int8 refuse a layer whose inputs do not divide into blocks of 32, naming it") {
  // An MLP of 48: the down projection's rows are 48 inputs. FP32 takes it.
  LlamaOptions o;
  o.kv_blocks = 8;
  o.max_step_tokens = 16;
  std::unique_ptr<LlamaModel> m;
  o.precision = LlamaPrecision::fp32;
  CHECK(LlamaModel::load(tiny_llama(7, {}, GgmlType::f32, GgmlType::f32, 48), o, m).ok());
  for (auto [precision, name] : {std::pair{LlamaPrecision::int8, "int8"}, {LlamaPrecision::int4, "int4"}}) {
    o.precision = precision;
    CHECK(LlamaModel::load(tiny_llama(7, {}, GgmlType::f32, GgmlType::f32, 48), o, m).message() ==
          "tensor 'blk.0.ffn_down.weight': rows of 48 values do not divide into blocks of 32 (precision " +
              std::string(name) + ")");
  }
}

TEST_CASE("auto runs the file's own quantization: the layers' type decides and not the embedding's") {
  CHECK(file_precision(tiny_llama(7, {}, GgmlType::q4_1, GgmlType::q8_0)) == LlamaPrecision::int4);
  CHECK(file_precision(tiny_llama(7, {}, GgmlType::q8_0, GgmlType::q8_0)) == LlamaPrecision::int8);
  CHECK(file_precision(tiny_llama(7, {}, GgmlType::f32, GgmlType::q4_1)) == LlamaPrecision::int8);
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
  LlamaSequenceStep st{0, 1, 5, table, 1};
  std::vector<float> logits;
  REQUIRE(m->forward(std::span(ids).subspan(5, 1), {&st, 1}, logits).ok());
  CHECK(max_diff(reference, logits) == 0.0f);
}

TEST_CASE("llama steps with bad ids, positions or tables are refused before touching the cache") {
  auto m = load(LlamaPrecision::fp32);
  const std::vector<std::int32_t> table{0, 1};
  std::vector<float> logits;
  std::vector<std::int32_t> ids{1, 2, 96};
  LlamaSequenceStep st{0, 3, 0, table, 1};
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
  st = {0, 3, 0, bad, 1};
  s = m->forward(ids, {&st, 1}, logits);
  CHECK(s.message().find("block 99 is out of range") != std::string::npos);
  st = {0, 3, 0, table, 4};
  CHECK(m->forward(ids, {&st, 1}, logits).message() == "sequence 0: logits for 4 of 3 tokens");
  std::vector<std::int32_t> many(65, 1);
  st = {0, 65, 0, table, 1};
  CHECK(m->forward(many, {&st, 1}, logits).message().find("a step of 65 tokens") !=
        std::string::npos);
}

TEST_CASE("a GGUF file that is not a llama-family model is refused by name") {
  GgufWriter w;
  w.set("general.architecture", "gpt2");
  const auto bytes = w.bytes();
  GgufFile f;
  REQUIRE(GgufFile::parse(bytes, "x.gguf", f).ok());
  std::unique_ptr<LlamaModel> m;
  CHECK(LlamaModel::load(std::move(f), {}, m).message() ==
        "general.architecture: 'gpt2' is not supported (known: llama, qwen2)");
}

namespace {

// tests/fixtures/qwen2_tiny (scripts/qwen2_tiny_reference.py): a random Qwen2 as GGUF and
// transformers' FP32 logits for 16 tokens.
struct Qwen2Reference {
  std::vector<std::int32_t> tokens;
  std::vector<std::vector<double>> logits;
};

Qwen2Reference read_qwen2_reference() {
  std::ifstream in(std::filesystem::path(COINFER_SOURCE_DIR) /
                   "tests/fixtures/qwen2_tiny/reference.json");
  REQUIRE(in.good());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A small reader for this file's two arrays: "tokens": [...] and "logits": [[...], ...].
  Qwen2Reference r;
  auto numbers = [](std::string_view s) {
    std::vector<double> out;
    std::size_t i = 0;
    while (i < s.size()) {
      if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9')) {
        std::size_t used = 0;
        out.push_back(std::stod(std::string(s.substr(i, 32)), &used));
        i += used;
      } else {
        ++i;
      }
    }
    return out;
  };
  const auto tokens_at = text.find("\"tokens\"");
  const auto tokens_end = text.find(']', tokens_at);
  for (double t : numbers(std::string_view(text).substr(tokens_at + 9, tokens_end - tokens_at - 9)))
    r.tokens.push_back(static_cast<std::int32_t>(t));
  auto at = text.find('[', text.find("\"logits\""));
  for (std::size_t row = 0; row < r.tokens.size(); ++row) {
    const auto open = text.find('[', at + 1);
    const auto close = text.find(']', open);
    r.logits.push_back(numbers(std::string_view(text).substr(open + 1, close - open - 1)));
    at = close;
  }
  return r;
}

std::unique_ptr<LlamaModel> load_qwen2(LlamaPrecision precision) {
  LlamaOptions o;
  o.precision = precision;
  o.kv_blocks = 16;
  o.block_size = 4;
  o.max_step_tokens = 64;
  std::unique_ptr<LlamaModel> m;
  const Status s = LlamaModel::load(
      (std::filesystem::path(COINFER_SOURCE_DIR) / "tests/fixtures/qwen2_tiny/model.gguf").string(),
      o, m);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return m;
}

}  // namespace

TEST_CASE(
    "a Qwen2 GGUF (QKV biases, NEOX RoPE, its own head) loads as data and matches transformers' "
    "logits") {
  const auto ref = read_qwen2_reference();
  REQUIRE(ref.tokens.size() == 16);
  REQUIRE(ref.logits.size() == 16);
  auto m = load_qwen2(LlamaPrecision::fp32);
  const DecoderSpec& spec = m->config();
  CHECK(spec.architecture == "qwen2");
  CHECK(spec.rope == DecoderSpec::Rope::neox);
  CHECK(spec.attention_bias);
  CHECK_FALSE(spec.tied_output);
  CHECK(spec.rope_theta == 1e6f);
  CHECK(spec.kv_heads == 2);
  const int vocab = spec.vocab;
  REQUIRE(static_cast<std::size_t>(vocab) == ref.logits[0].size());
  const std::vector<std::int32_t> table = {0, 1, 2, 3};
  // All 16 in one prefill, every position's logits; then the same positions again as a
  // 10-token prefill and six single-token decodes through the KV cache.
  auto compare = [&](const std::vector<float>& logits, std::size_t first_row, std::size_t rows) {
    double worst = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      for (int v = 0; v < vocab; ++v) {
        worst = std::max(worst, std::fabs(logits[r * vocab + v] - ref.logits[first_row + r][v]));
      }
    }
    return worst;
  };
  std::vector<float> logits;
  LlamaSequenceStep all{0, 16, 0, table, 16};
  REQUIRE(m->forward(ref.tokens, {&all, 1}, logits).ok());
  // Logits of magnitude ~4. FP32 GEMMs, but K and V pass through the FP16 KV cache (11-bit
  // mantissas): 0.0030 worst measured on this machine; 0.01 bounds that with room for other
  // CPUs' summation orders. A structural error (RoPE pairs, a missing bias, the wrong head)
  // moves logits by ~1: with the "normal" pairing instead, 3.9.
  constexpr double kBound = 0.01;
  CHECK(compare(logits, 0, 16) < kBound);
  for (std::size_t r = 0; r < 16; ++r) {  // the same argmax at every position
    const auto ours =
        std::max_element(logits.begin() + static_cast<std::ptrdiff_t>(r * vocab),
                         logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * vocab)) -
        (logits.begin() + static_cast<std::ptrdiff_t>(r * vocab));
    const auto theirs =
        std::max_element(ref.logits[r].begin(), ref.logits[r].end()) - ref.logits[r].begin();
    CHECK(ours == theirs);
  }
  auto fresh = load_qwen2(LlamaPrecision::fp32);
  LlamaSequenceStep prefill{0, 10, 0, table, 10};
  REQUIRE(fresh->forward(std::span(ref.tokens).first(10), {&prefill, 1}, logits).ok());
  CHECK(compare(logits, 0, 10) < kBound);
  // Positions 10..12 in one chunk with logits for each, as a decode that verifies a draft of
  // two tokens; then single-token decodes.
  LlamaSequenceStep verify{0, 3, 10, table, 3};
  REQUIRE(fresh->forward(std::span(ref.tokens).subspan(10, 3), {&verify, 1}, logits).ok());
  REQUIRE(logits.size() == 3u * static_cast<std::size_t>(vocab));
  CHECK(compare(logits, 10, 3) < kBound);
  for (int pos = 13; pos < 16; ++pos) {
    LlamaSequenceStep decode{0, 1, pos, table, 1};
    REQUIRE(fresh->forward(std::span(ref.tokens).subspan(pos, 1), {&decode, 1}, logits).ok());
    CAPTURE(pos);
    CHECK(compare(logits, static_cast<std::size_t>(pos), 1) < kBound);
  }
}

TEST_CASE("decoder metadata the model cannot honour is refused naming the key") {
  std::unique_ptr<LlamaModel> m;
  auto error = [&](const std::function<void(GgufWriter&)>& extra) {
    return LlamaModel::load(tiny_llama(7, extra), {}, m).message();
  };
  CHECK(error([](GgufWriter& w) { w.set("llama.rope.scaling.type", "yarn"); }) ==
        "llama.rope.scaling.type: 'yarn' is not supported (only none)");
  CHECK(error([](GgufWriter& w) { w.set_uint32("llama.attention.key_length", 32); }) ==
        "llama.attention.key_length: 32 differs from the head size 16 (not supported)");
  CHECK(error([](GgufWriter& w) {
          w.add_tensor("rope_freqs.weight", {8}, GgmlType::f32, std::vector<float>(8, 1.0f));
        }) == "tensor 'rope_freqs.weight' (RoPE frequency factors) is not supported");
  // "none" is what converters write for no scaling.
  CHECK(LlamaModel::load(
            tiny_llama(7, [](GgufWriter& w) { w.set("llama.rope.scaling.type", "none"); }), {}, m)
            .ok());
}
