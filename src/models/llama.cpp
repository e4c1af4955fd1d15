#include "coinfer/models/llama.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <variant>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "coinfer/core/half.hpp"
#include "coinfer/core/page_arena.hpp"
#include <cstdlib>
#include <cstdio>
#include <string>

#include "coinfer/ops/block_linear.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/fp32_linear.hpp"
#include "coinfer/ops/vector_exp.hpp"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace coinfer {
namespace {

using simd::v8f;

v8f load8(const float* p) noexcept {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store8(float* p, v8f v) noexcept { std::memcpy(p, &v, sizeof v); }

// The KV cache holds FP16 (IEEE binary16), as llama.cpp's does by default: half the memory
// and half the bytes attention reads. F16C converts eight at a time where the target has it.
using half_t = std::uint16_t;

v8f load8_half(const half_t* p) noexcept {
#if defined(__F16C__)
  const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  v8f out;
  std::memcpy(&out, &v, sizeof out);
  return out;
#else
  v8f out;
  for (int l = 0; l < 8; ++l) out[l] = half_to_float(p[l]);
  return out;
#endif
}

void store8_half(half_t* p, v8f v) noexcept {
#if defined(__F16C__)
  __m256 x;
  std::memcpy(&x, &v, sizeof x);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
#else
  for (int l = 0; l < 8; ++l) p[l] = float_to_half(v[l]);
#endif
}

float hsum8(v8f v) noexcept {
  float s = 0;
  for (int l = 0; l < 8; ++l) s += v[l];
  return s;
}

// Query heads that share a KV head are attended together, up to this many at a time: each
// cached key and value is read and widened from FP16 once for all of them.
constexpr int kHeadsTogether = 4;

// Where one sequence's cached keys and values of one KV head lie: position j at
// cache + table[j / block] * block_values + (kv_head * block + j % block) * head_dim.
struct KvRows {
  const half_t* k;
  const half_t* v;
  std::span<const std::int32_t> table;
  std::size_t block_values;
  int block, kv_head, head_dim;
  std::size_t at(int j) const noexcept {
    return static_cast<std::size_t>(table[j / block]) * block_values +
           (static_cast<std::size_t>(kv_head) * block + j % block) * head_dim;
  }
};

// Causal attention of G query heads (q: G x head_dim, consecutive) over positions 0..last of
// one KV head, into out (G x head_dim). scores: G x stride floats of scratch. Per head the sums
// run in the same order as for one head alone.
template <int G>
void attend(const float* q, const KvRows& kv, int last, float scale, float* scores, int stride,
            float* out) noexcept {
  const int hd = kv.head_dim;
  float max[G], inv[G];
  for (int g = 0; g < G; ++g) max[g] = -std::numeric_limits<float>::infinity();
  for (int j = 0; j <= last; ++j) {
    const half_t* k = kv.k + kv.at(j);
    v8f acc[G] = {};
    for (int d = 0; d < hd; d += 8) {
      const v8f kd = load8_half(k + d);
      for (int g = 0; g < G; ++g) acc[g] += load8(q + g * hd + d) * kd;
    }
    for (int g = 0; g < G; ++g) {
      const float score = hsum8(acc[g]) * scale;
      scores[g * stride + j] = score;
      max[g] = std::max(max[g], score);
    }
  }
  // e^(score - max) with libm's expf and summed in order. Eight at a time (simd::exp8, a
  // Cephes polynomial, and eight partial sums) was measured a few percent faster at 16 streams
  // and moved which near-ties INT8's greedy answers flip: on an AVX-512 VNNI CPU INT8 then
  // equalled FP32's 16 greedy tokens on 4 of the 10 reference prompts, under the bound of 5
  // (tests/reference/llm_reference_test.cpp; docs/BENCHMARKS.md).
  for (int g = 0; g < G; ++g) {
    float* sg = scores + g * stride;
    float sum = 0;
    for (int j = 0; j <= last; ++j) {
      sg[j] = std::exp(sg[j] - max[g]);
      sum += sg[j];
    }
    inv[g] = 1.0f / sum;
  }
  // The weighted values, C vectors of 8 dimensions per head at a time held in registers over
  // every position (G x C accumulators): each sum runs over the positions in order, as it
  // would through memory.
  constexpr int C = 12 / G;
  for (int d0 = 0; d0 < hd; d0 += 8 * C) {
    const int n = std::min(C, (hd - d0) / 8);
    v8f acc[G][C] = {};
    for (int j = 0; j <= last; ++j) {
      const half_t* v = kv.v + kv.at(j) + d0;
      v8f p[G];
      for (int g = 0; g < G; ++g) p[g] = v8f{} + scores[g * stride + j] * inv[g];
      for (int c = 0; c < C; ++c) {
        if (c >= n) break;
        const v8f vd = load8_half(v + 8 * c);
        for (int g = 0; g < G; ++g) acc[g][c] += p[g] * vd;
      }
    }
    for (int g = 0; g < G; ++g) {
      for (int c = 0; c < n; ++c) store8(out + g * hd + d0 + 8 * c, acc[g][c]);
    }
  }
}

// y = x / sqrt(mean(x^2) + eps) * w, as llama.cpp's ggml_rms_norm followed by the weight.
void rms_norm(const float* x, const float* w, float eps, int n, float* y) noexcept {
  double ss = 0;
  for (int i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / n + eps));
  for (int i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

// RoPE on one head's vector, `in` to `out` (which may be `in`): each pair of dimensions rotates
// by its angle, cos cs[i] and sin sn[i]. The pairs are (2i, 2i+1) ("normal") or (i, i + half)
// ("neox").
inline void rotate(const float* in, float* out, const float* cs, const float* sn, int half,
                   bool neox) {
  if (!neox) {
    for (int i = 0; i < half; ++i) {
      const float x0 = in[2 * i], x1 = in[2 * i + 1];
      out[2 * i] = x0 * cs[i] - x1 * sn[i];
      out[2 * i + 1] = x0 * sn[i] + x1 * cs[i];
    }
    return;
  }
  for (int i = 0; i < half; ++i) {
    const float x0 = in[i], x1 = in[i + half];
    out[i] = x0 * cs[i] - x1 * sn[i];
    out[i + half] = x0 * sn[i] + x1 * cs[i];
  }
}

// A linear layer: FP32 on the reference path, else ggml weight blocks.
class Linear {
 public:
  Status create(std::span<const float> weight, int out, int in, std::span<const float> bias = {}) {
    return Fp32Linear::create(weight, bias, out, in, Activation::none, layer_.emplace<Fp32Linear>());
  }
  Status create(WeightBlocks format, std::span<const std::byte> blocks, int out, int in, int max_rows,
                BlockActivations activations, PageArena& arena, std::span<const float> bias = {}) {
    return BlockLinear::create(format, blocks, bias, out, in, max_rows, layer_.emplace<BlockLinear>(), activations,
                               BlockKernels::amx, &arena);
  }
  Status forward(const float* x, int m, float* y) {
    if (auto* l = std::get_if<BlockLinear>(&layer_)) return l->forward(x, m, y);
    return std::get<Fp32Linear>(layer_).forward(x, m, y);
  }

 private:
  std::variant<std::monostate, Fp32Linear, BlockLinear> layer_;
};

Status read_int(const GgufFile& f, const std::string& key, int& out) {
  std::int64_t v = 0;
  if (auto s = f.get(key, v); !s.ok()) return s;
  if (v <= 0 || v > (1 << 24)) return Status::invalid("metadata '" + key + "' = " + std::to_string(v) + " is out of range");
  out = static_cast<int>(v);
  return {};
}

}  // namespace

LlamaPrecision file_precision(const GgufFile& file) noexcept {
  std::size_t four_bit = 0, other = 0;
  for (const GgufTensor& t : file.tensors()) {
    if (t.name.rfind("blk.", 0) != 0 || t.dims.size() != 2) continue;  // the layers' matrices
    const bool q4 = t.type == static_cast<std::uint32_t>(GgmlType::q4_0) ||
                    t.type == static_cast<std::uint32_t>(GgmlType::q4_1);
    (q4 ? four_bit : other) += static_cast<std::size_t>(t.elements());
  }
  return four_bit > other ? LlamaPrecision::int4 : LlamaPrecision::int8;
}

Status DecoderSpec::from_gguf(const GgufFile& f, DecoderSpec& out) {
  DecoderSpec c;
  if (auto s = f.get("general.architecture", c.architecture); !s.ok()) return s;
  // What each architecture fixes that its metadata does not say.
  if (c.architecture == "llama") {
    c.rope = Rope::normal;
  } else if (c.architecture == "qwen2") {
    c.rope = Rope::neox;
  } else {
    return Status::invalid("general.architecture: '" + c.architecture +
                           "' is not supported (known: llama, qwen2)");
  }
  const std::string a = c.architecture + ".";
  if (auto s = read_int(f, a + "block_count", c.layers); !s.ok()) return s;
  if (auto s = read_int(f, a + "embedding_length", c.hidden); !s.ok()) return s;
  if (auto s = read_int(f, a + "feed_forward_length", c.ffn); !s.ok()) return s;
  if (auto s = read_int(f, a + "attention.head_count", c.heads); !s.ok()) return s;
  c.kv_heads = c.heads;
  if (f.find(a + "attention.head_count_kv")) {
    if (auto s = read_int(f, a + "attention.head_count_kv", c.kv_heads); !s.ok()) return s;
  }
  if (auto s = read_int(f, a + "context_length", c.context); !s.ok()) return s;
  double eps = 1e-5, theta = 10000.0;
  if (auto s = f.get(a + "attention.layer_norm_rms_epsilon", eps); !s.ok()) return s;
  if (f.find(a + "rope.freq_base")) {
    if (auto s = f.get(a + "rope.freq_base", theta); !s.ok()) return s;
  }
  c.rms_eps = static_cast<float>(eps);
  c.rope_theta = static_cast<float>(theta);
  if (c.hidden % c.heads != 0 || c.heads % c.kv_heads != 0) {
    return Status::invalid(c.architecture + ": " + std::to_string(c.heads) + " heads and " +
                           std::to_string(c.kv_heads) + " KV heads do not divide hidden size " +
                           std::to_string(c.hidden));
  }
  c.head_dim = c.hidden / c.heads;
  for (const char* key :
       {"rope.dimension_count", "attention.key_length", "attention.value_length"}) {
    if (!f.find(a + key)) continue;
    int dims = 0;
    if (auto s = read_int(f, a + key, dims); !s.ok()) return s;
    if (dims != c.head_dim) {
      return Status::invalid(a + key + ": " + std::to_string(dims) +
                             " differs from the head size " + std::to_string(c.head_dim) +
                             " (not supported)");
    }
  }
  // RoPE scaling (linear, YaRN, Llama 3.1's frequency factors) changes every angle: refused
  // rather than served wrong.
  if (f.find(a + "rope.scaling.type")) {
    std::string type;
    if (auto s = f.get(a + "rope.scaling.type", type); !s.ok()) return s;
    if (type != "none") {
      return Status::invalid(a + "rope.scaling.type: '" + type + "' is not supported (only none)");
    }
  }
  if (f.tensor("rope_freqs.weight")) {
    return Status::invalid("tensor 'rope_freqs.weight' (RoPE frequency factors) is not supported");
  }
  if (c.head_dim % 8 != 0 || c.head_dim > 256 || c.hidden % 8 != 0 || c.ffn % 8 != 0) {
    return Status::invalid(c.architecture + ": hidden, head and FFN sizes must be multiples of 8");
  }
  const GgufTensor* embedding = f.tensor("token_embd.weight");
  if (!embedding) return Status::invalid("tensor 'token_embd.weight' is missing");
  c.vocab = static_cast<int>(embedding->rows());
  c.attention_bias = f.tensor("blk.0.attn_q.bias") != nullptr;
  c.tied_output = f.tensor("output.weight") == nullptr;
  if (f.find("tokenizer.ggml.model")) {
    if (auto s = f.get("tokenizer.ggml.model", c.vocabulary); !s.ok()) return s;
  }
  out = c;
  return {};
}

struct LlamaModel::Weights {
  // The quantized layers' repacked weights, side by side on 2 MiB pages (page_arena.hpp).
  // First, so that it outlives the layers.
  PageArena arena;
  struct Layer {
    std::vector<float> attn_norm, ffn_norm;
    Linear qkv, o, gate_up, down;
  };
  std::vector<Layer> layers;
  std::vector<float> output_norm;
  Linear head;
  const GgufTensor* embedding = nullptr;
  std::vector<float> rope_cos, rope_sin;  // [context][head_dim / 2]
  // FP16 [layer][block][kv_head][slot][head_dim]. Left uninitialized: a slot is written before
  // attention reads it, and untouched pages of a large cache cost no memory until used.
  std::unique_ptr<half_t[]> k_cache, v_cache;
  void allocate_kv(std::size_t values) {
    k_cache.reset(new half_t[values]);
    v_cache.reset(new half_t[values]);
  }

  // Step scratch, sized for max_step_tokens rows.
  std::vector<float> x, xn, qkv, attn, proj, gate_up, act, hidden_rows;
  std::vector<float> scores;  // per compute thread: [kHeadsTogether][context]
  std::vector<int> token_seq;  // step token -> sequence index
};

LlamaModel::LlamaModel() = default;
LlamaModel::~LlamaModel() = default;

std::size_t LlamaModel::kv_block_bytes(const DecoderSpec& c, int block_size) noexcept {
  return 2ull * static_cast<std::size_t>(c.layers) * c.kv_heads * block_size * c.head_dim *
         sizeof(std::uint16_t);  // FP16 K and V
}

Status LlamaModel::load(const std::string& path, const LlamaOptions& options,
                        std::unique_ptr<LlamaModel>& out) {
  GgufFile file;
  if (auto s = GgufFile::open(path, file); !s.ok()) return s;
  return load(std::move(file), options, out);
}

Status LlamaModel::load(GgufFile file, const LlamaOptions& options,
                        std::unique_ptr<LlamaModel>& out) {
  std::unique_ptr<LlamaModel> model(new LlamaModel());
  if (auto s = model->init(std::move(file), options); !s.ok()) return s;
  out = std::move(model);
  return {};
}

Status LlamaModel::init(GgufFile file, const LlamaOptions& options) {
  file_ = std::move(file);
  options_ = options;
  if (options.max_step_tokens < 1 || options.kv_blocks < 1 || options.block_size < 1) {
    return Status::invalid("llama: max_step_tokens, kv_blocks and block_size must be positive");
  }
  if (auto s = DecoderSpec::from_gguf(file_, config_); !s.ok()) return s;
  const DecoderSpec& c = config_;
  weights_ = std::make_unique<Weights>();
  Weights& w = *weights_;
  const int rows = options.max_step_tokens;

  // Reads a tensor as FP32 after checking its shape (ggml order: {in, out}).
  std::vector<float> buffer;
  auto shaped = [&](const std::string& name, std::int64_t in, std::int64_t out_rows,
                    const GgufTensor*& t) -> Status {
    t = file_.tensor(name);
    if (!t) return Status::invalid("tensor '" + name + "' is missing");
    const bool vector = out_rows == 0;
    if (t->row_size() != in || (vector ? t->elements() != in : t->rows() != out_rows)) {
      std::string dims;
      for (auto d : t->dims) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      return Status::invalid("tensor '" + name + "' has dims [" + dims + "], expected [" +
                             std::to_string(in) + (vector ? "" : ", " + std::to_string(out_rows)) + "]");
    }
    return {};
  };
  auto read = [&](const std::string& name, std::int64_t in, std::int64_t out_rows,
                  std::vector<float>& dst) -> Status {
    const GgufTensor* t = nullptr;
    if (auto s = shaped(name, in, out_rows, t); !s.ok()) return s;
    dst.resize(static_cast<std::size_t>(t->elements()));
    return file_.dequantize(*t, dst);
  };
  // A weight's rows as ggml blocks of `format`, appended to dst: the file's own bytes
  // where the tensor is stored in that format, else its values quantized to it as ggml does.
  std::vector<float> values;
  auto read_blocks = [&](const std::string& name, std::int64_t in, std::int64_t out_rows,
                         WeightBlocks format, std::vector<std::byte>& dst) -> Status {
    const GgufTensor* t = nullptr;
    if (auto s = shaped(name, in, out_rows, t); !s.ok()) return s;
    if (in % BlockLinear::block != 0) {
      return Status::invalid("tensor '" + name + "': rows of " + std::to_string(in) +
                             " values do not divide into blocks of 32 (precision " +
                             std::string(format == WeightBlocks::q4_1 ? "int4" : "int8") + ")");
    }
    const auto type = static_cast<std::uint32_t>(format == WeightBlocks::q4_1 ? GgmlType::q4_1 : GgmlType::q8_0);
    if (t->type == type) {
      dst.insert(dst.end(), t->data.begin(), t->data.end());
      return {};
    }
    if (auto s = read(name, in, out_rows, values); !s.ok()) return s;
    ggml_quantize(type, values.data(), values.size(), dst);
    return {};
  };

  // The linear layers.
  w.layers.resize(c.layers);
  std::vector<float> part;
  // INT8: every linear layer and the output head in Q8_0 blocks. INT4: the linear layers in
  // Q4_1 blocks, the head in Q8_0 (in 4 bits the tied head loses too much: 86.4% teacher-forced
  // agreement with transformers against 96.7%).
  auto build_blocks = [&](WeightBlocks format) -> Status {
    const BlockActivations act = options.activations;
    std::vector<std::byte> blocks;
    const int kv_width = c.kv_heads * c.head_dim;
    for (int l = 0; l < c.layers; ++l) {
      auto& layer = w.layers[l];
      const std::string p = "blk." + std::to_string(l) + ".";
      if (auto s = read(p + "attn_norm.weight", c.hidden, 0, layer.attn_norm); !s.ok()) return s;
      if (auto s = read(p + "ffn_norm.weight", c.hidden, 0, layer.ffn_norm); !s.ok()) return s;
      blocks.clear();
      for (auto [name, out_rows] : {std::pair{"attn_q.weight", c.hidden}, {"attn_k.weight", kv_width},
                                    {"attn_v.weight", kv_width}}) {
        if (auto s = read_blocks(p + name, c.hidden, out_rows, format, blocks); !s.ok()) return s;
      }
      std::vector<float> qkv_bias;
      if (c.attention_bias) {
        for (auto [name, width] : {std::pair{"attn_q.bias", c.hidden}, {"attn_k.bias", kv_width},
                                   {"attn_v.bias", kv_width}}) {
          if (auto s = read(p + name, width, 0, part); !s.ok()) return s;
          qkv_bias.insert(qkv_bias.end(), part.begin(), part.end());
        }
      }
      if (auto s = layer.qkv.create(format, blocks, c.qkv_width(), c.hidden, rows, act, w.arena, qkv_bias); !s.ok()) return s;
      blocks.clear();
      if (auto s = read_blocks(p + "attn_output.weight", c.hidden, c.hidden, format, blocks); !s.ok()) return s;
      if (auto s = layer.o.create(format, blocks, c.hidden, c.hidden, rows, act, w.arena); !s.ok()) return s;
      blocks.clear();
      for (const char* name : {"ffn_gate.weight", "ffn_up.weight"}) {
        if (auto s = read_blocks(p + name, c.hidden, c.ffn, format, blocks); !s.ok()) return s;
      }
      if (auto s = layer.gate_up.create(format, blocks, 2 * c.ffn, c.hidden, rows, act, w.arena); !s.ok()) return s;
      blocks.clear();
      if (auto s = read_blocks(p + "ffn_down.weight", c.ffn, c.hidden, format, blocks); !s.ok()) return s;
      if (auto s = layer.down.create(format, blocks, c.hidden, c.ffn, rows, act, w.arena); !s.ok()) return s;
    }
    if (auto s = read("output_norm.weight", c.hidden, 0, w.output_norm); !s.ok()) return s;
    const std::string head_name = file_.tensor("output.weight") ? "output.weight" : "token_embd.weight";
    blocks.clear();
    if (auto s = read_blocks(head_name, c.hidden, c.vocab, WeightBlocks::q8_0, blocks); !s.ok()) return s;
    return w.head.create(WeightBlocks::q8_0, blocks, c.vocab, c.hidden, rows, act, w.arena);
  };
  // FP32: every weight dequantized.
  auto build = [&]() -> Status {
  for (int l = 0; l < c.layers; ++l) {
    auto& layer = w.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    if (auto s = read(p + "attn_norm.weight", c.hidden, 0, layer.attn_norm); !s.ok()) return s;
    if (auto s = read(p + "ffn_norm.weight", c.hidden, 0, layer.ffn_norm); !s.ok()) return s;
    // Q, K and V as one GEMM: their weights stacked by output channel.
    buffer.clear();
    const int kv_width = c.kv_heads * c.head_dim;
    for (auto [name, out_rows] : {std::pair{"attn_q.weight", c.hidden}, {"attn_k.weight", kv_width},
                                  {"attn_v.weight", kv_width}}) {
      if (auto s = read(p + name, c.hidden, out_rows, part); !s.ok()) return s;
      buffer.insert(buffer.end(), part.begin(), part.end());
    }
    std::vector<float> qkv_bias;  // [q; k; v], empty without attention biases
    if (c.attention_bias) {
      for (auto [name, width] : {std::pair{"attn_q.bias", c.hidden},
                                 {"attn_k.bias", kv_width},
                                 {"attn_v.bias", kv_width}}) {
        if (auto s = read(p + name, width, 0, part); !s.ok()) return s;
        qkv_bias.insert(qkv_bias.end(), part.begin(), part.end());
      }
    }
    if (auto s = layer.qkv.create(buffer, c.qkv_width(), c.hidden, qkv_bias); !s.ok()) return s;
    if (auto s = read(p + "attn_output.weight", c.hidden, c.hidden, part); !s.ok()) return s;
    if (auto s = layer.o.create(part, c.hidden, c.hidden); !s.ok()) return s;
    // Gate and up as one GEMM: [gate; up].
    buffer.clear();
    for (const char* name : {"ffn_gate.weight", "ffn_up.weight"}) {
      if (auto s = read(p + name, c.hidden, c.ffn, part); !s.ok()) return s;
      buffer.insert(buffer.end(), part.begin(), part.end());
    }
    if (auto s = layer.gate_up.create(buffer, 2 * c.ffn, c.hidden); !s.ok()) return s;
    if (auto s = read(p + "ffn_down.weight", c.ffn, c.hidden, part); !s.ok()) return s;
    if (auto s = layer.down.create(part, c.hidden, c.ffn); !s.ok()) return s;
  }
  if (auto s = read("output_norm.weight", c.hidden, 0, w.output_norm); !s.ok()) return s;
  // The output head: its own tensor, or tied to the token embedding.
  const std::string head_name = file_.tensor("output.weight") ? "output.weight" : "token_embd.weight";
  if (auto s = read(head_name, c.hidden, c.vocab, buffer); !s.ok()) return s;
  if (auto s = w.head.create(buffer, c.vocab, c.hidden); !s.ok()) return s;
  return {};
  };
  const Status built = options.precision == LlamaPrecision::fp32 ? build()
                       : build_blocks(options.precision == LlamaPrecision::int4 ? WeightBlocks::q4_1
                                                                                : WeightBlocks::q8_0);
  if (!built.ok()) return built;
  buffer = {};
  part = {};
  values = {};
  w.embedding = file_.tensor("token_embd.weight");

  // RoPE angles: pair i rotates by pos * theta^(-2i/d), whichever dimensions the pair holds
  // (rotate(): ggml's "normal" pairs (2i, 2i+1), for which the GGUF converter permuted a llama
  // checkpoint's Q and K rows, or "neox" pairs (i, i + d/2), as Hugging Face's checkpoints).
  const int half = c.head_dim / 2;
  w.rope_cos.resize(static_cast<std::size_t>(c.context) * half);
  w.rope_sin.resize(w.rope_cos.size());
  for (int pos = 0; pos < c.context; ++pos) {
    for (int i = 0; i < half; ++i) {
      const double angle = pos * std::pow(static_cast<double>(c.rope_theta), -2.0 * i / c.head_dim);
      w.rope_cos[static_cast<std::size_t>(pos) * half + i] = static_cast<float>(std::cos(angle));
      w.rope_sin[static_cast<std::size_t>(pos) * half + i] = static_cast<float>(std::sin(angle));
    }
  }
  const std::size_t kv_values = kv_block_bytes(c, options.block_size) / sizeof(half_t) / 2 *
                                static_cast<std::size_t>(options.kv_blocks);
  w.allocate_kv(kv_values);

  const auto r = static_cast<std::size_t>(rows);
  w.x.resize(r * c.hidden);
  w.xn.resize(r * c.hidden);
  w.qkv.resize(r * c.qkv_width());
  w.attn.resize(r * c.hidden);
  w.proj.resize(r * c.hidden);
  w.gate_up.resize(r * 2 * c.ffn);
  w.act.resize(r * c.ffn);
  w.hidden_rows.resize(r * c.hidden);
  w.token_seq.resize(r);

  // Every tensor was read to build the weights; from now on only token embeddings are, a row
  // per token. Without this the whole file (98 MB for SmolLM2's Q4_1) stays resident.
  file_.release_resident_pages();
  return {};
}

LlamaModel::WeightMemory LlamaModel::weight_memory() const {
  // The chunks' huge pages also cover the unused ends of chunks.
  const std::size_t bytes = weights_->arena.allocated_bytes();
  return {bytes, std::min(bytes, weights_->arena.huge_bytes())};
}

void LlamaModel::copy_block(std::int32_t src, std::int32_t dst) noexcept {
  const DecoderSpec& c = config_;
  const std::size_t block = static_cast<std::size_t>(c.kv_heads) * options_.block_size * c.head_dim;
  for (int l = 0; l < c.layers; ++l) {
    const std::size_t base = static_cast<std::size_t>(l) * options_.kv_blocks * block;
    for (half_t* cache : {weights_->k_cache.get(), weights_->v_cache.get()}) {
      std::memcpy(cache + base + dst * block, cache + base + src * block,
                  block * sizeof(half_t));
    }
  }
}

Status LlamaModel::forward(std::span<const std::int32_t> tokens,
                           std::span<const LlamaSequenceStep> steps, std::vector<float>& logits) {
  const DecoderSpec& c = config_;
  Weights& w = *weights_;
  const int n = static_cast<int>(tokens.size());
  if (n < 1 || n > options_.max_step_tokens) {
    return Status::invalid("llama: a step of " + std::to_string(n) + " tokens (1 to " +
                           std::to_string(options_.max_step_tokens) + " fit)");
  }
  const int bs = options_.block_size;
  int logit_rows = 0;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const auto& st = steps[s];
    const std::string name = "sequence " + std::to_string(s);
    if (st.token_count < 1 || st.token_begin < 0 || st.token_begin > n - st.token_count) {
      return Status::invalid(name + ": tokens outside the step");
    }
    if (st.position < 0 || st.position + st.token_count > c.context) {
      return Status::invalid(name + ": positions up to " +
                             std::to_string(st.position + st.token_count) +
                             " pass the model's context of " + std::to_string(c.context));
    }
    const auto needed = static_cast<std::size_t>((st.position + st.token_count + bs - 1) / bs);
    if (st.block_table.size() < needed) return Status::invalid(name + ": block table too short");
    for (std::size_t b = 0; b < needed; ++b) {
      if (st.block_table[b] < 0 || st.block_table[b] >= options_.kv_blocks) {
        return Status::invalid(name + ": block " + std::to_string(st.block_table[b]) + " is out of range");
      }
    }
    for (int t = st.token_begin; t < st.token_begin + st.token_count; ++t) {
      if (tokens[t] < 0 || tokens[t] >= c.vocab) {
        return Status::invalid(name + ": token id " + std::to_string(tokens[t]) +
                               " is outside the vocabulary of " + std::to_string(c.vocab));
      }
      w.token_seq[t] = static_cast<int>(s);
    }
    if (st.logit_rows < 0 || st.logit_rows > st.token_count) {
      return Status::invalid(name + ": logits for " + std::to_string(st.logit_rows) + " of " +
                             std::to_string(st.token_count) + " tokens");
    }
    logit_rows += st.logit_rows;
  }

  const int h = c.hidden;
  const int hd = c.head_dim;
  const int half = hd / 2;
  const bool neox = c.rope == DecoderSpec::Rope::neox;
  const int qkv_w = c.qkv_width();
  const int group = c.heads / c.kv_heads;
  const std::size_t block_values = static_cast<std::size_t>(c.kv_heads) * bs * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));

  for (int t = 0; t < n; ++t) {
    (void)file_.dequantize_rows(*w.embedding, tokens[t], 1,
                                std::span<float>(w.x.data() + static_cast<std::size_t>(t) * h, h));
  }
  const int team = std::max(1, compute_team_size());
  if (w.scores.size() < static_cast<std::size_t>(team) * kHeadsTogether * c.context) {
    w.scores.resize(static_cast<std::size_t>(team) * kHeadsTogether * c.context);
  }
  // Position of step token t.
  auto position_of = [&](int t) {
    const auto& st = steps[w.token_seq[t]];
    return st.position + (t - st.token_begin);
  };

  for (int l = 0; l < c.layers; ++l) {
    auto& layer = w.layers[l];
    half_t* k_cache = w.k_cache.get() + static_cast<std::size_t>(l) * options_.kv_blocks * block_values;
    half_t* v_cache = w.v_cache.get() + static_cast<std::size_t>(l) * options_.kv_blocks * block_values;
    parallel_for(n, 8, 0, [&](int, std::int64_t b, std::int64_t e) {
      for (auto t = b; t < e; ++t) rms_norm(&w.x[t * h], layer.attn_norm.data(), c.rms_eps, h, &w.xn[t * h]);
    });
    if (auto s = layer.qkv.forward(w.xn.data(), n, w.qkv.data()); !s.ok()) return s;
    // RoPE on Q in place; K rotated as it is written into its KV slot, V copied.
    parallel_for(n, 8, 0, [&](int, std::int64_t b, std::int64_t e) {
      for (auto t = b; t < e; ++t) {
        const int pos = position_of(static_cast<int>(t));
        const float* cs = &w.rope_cos[static_cast<std::size_t>(pos) * half];
        const float* sn = &w.rope_sin[static_cast<std::size_t>(pos) * half];
        float* row = &w.qkv[t * qkv_w];
        for (int head = 0; head < c.heads; ++head)
          rotate(row + head * hd, row + head * hd, cs, sn, half, neox);
        const auto& st = steps[w.token_seq[t]];
        const std::size_t block = static_cast<std::size_t>(st.block_table[pos / bs]);
        const int slot = pos % bs;
        for (int kvh = 0; kvh < c.kv_heads; ++kvh) {
          const float* k = row + h + kvh * hd;
          const float* v = row + h + c.kv_heads * hd + kvh * hd;
          const std::size_t at = block * block_values + (static_cast<std::size_t>(kvh) * bs + slot) * hd;
          float rotated[256];
          rotate(k, rotated, cs, sn, half, neox);
          for (int i = 0; i < hd; i += 8) {
            store8_half(k_cache + at + i, load8(rotated + i));
            store8_half(v_cache + at + i, load8(v + i));
          }
        }
      }
    });
    // Causal attention of every (token, KV head) over its sequence's cached positions 0..pos,
    // for the query heads that share the KV head (grouped-query attention), kHeadsTogether at
    // a time.
    parallel_for(static_cast<std::int64_t>(n) * c.kv_heads, 2, 0,
                 [&](int thread, std::int64_t b, std::int64_t e) {
      float* scores = w.scores.data() + static_cast<std::size_t>(thread) * kHeadsTogether * c.context;
      for (auto i = b; i < e; ++i) {
        const int t = static_cast<int>(i / c.kv_heads);
        const int kvh = static_cast<int>(i % c.kv_heads);
        const KvRows kv{k_cache, v_cache, steps[w.token_seq[t]].block_table, block_values, bs, kvh, hd};
        const int pos = position_of(t);
        for (int g0 = 0; g0 < group; g0 += kHeadsTogether) {
          const int head0 = kvh * group + g0;
          const float* q = &w.qkv[static_cast<std::size_t>(t) * qkv_w + head0 * hd];
          float* out = &w.attn[static_cast<std::size_t>(t) * h + head0 * hd];
          switch (std::min(kHeadsTogether, group - g0)) {
            case 4: attend<4>(q, kv, pos, scale, scores, c.context, out); break;
            case 3: attend<3>(q, kv, pos, scale, scores, c.context, out); break;
            case 2: attend<2>(q, kv, pos, scale, scores, c.context, out); break;
            default: attend<1>(q, kv, pos, scale, scores, c.context, out); break;
          }
        }
      }
    });
    if (auto s = layer.o.forward(w.attn.data(), n, w.proj.data()); !s.ok()) return s;
    parallel_for(n, 8, 0, [&](int, std::int64_t b, std::int64_t e) {
      for (auto t = b; t < e; ++t) {
        float* x = &w.x[t * h];
        const float* p = &w.proj[t * h];
        for (int i = 0; i < h; ++i) x[i] += p[i];
        rms_norm(x, layer.ffn_norm.data(), c.rms_eps, h, &w.xn[t * h]);
      }
    });
    if (auto s = layer.gate_up.forward(w.xn.data(), n, w.gate_up.data()); !s.ok()) return s;
    // SwiGLU: silu(gate) * up.
    parallel_for(n, 8, 0, [&](int, std::int64_t b, std::int64_t e) {
      for (auto t = b; t < e; ++t) {
        const float* g = &w.gate_up[t * 2 * c.ffn];
        const float* u = g + c.ffn;
        float* a = &w.act[t * c.ffn];
        for (int i = 0; i < c.ffn; ++i) a[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
      }
    });
    if (auto s = layer.down.forward(w.act.data(), n, w.proj.data()); !s.ok()) return s;
    parallel_for(n, 16, 0, [&](int, std::int64_t b, std::int64_t e) {
      for (auto t = b; t < e; ++t) {
        float* x = &w.x[t * h];
        const float* p = &w.proj[t * h];
        for (int i = 0; i < h; ++i) x[i] += p[i];
      }
    });
  }

  // The final norm on the rows whose logits were asked for, then the output head.
  int row = 0;
  for (const auto& st : steps) {
    const int first = st.token_begin + st.token_count - st.logit_rows;
    for (int t = first; t < st.token_begin + st.token_count; ++t, ++row) {
      rms_norm(&w.x[static_cast<std::size_t>(t) * h], w.output_norm.data(), c.rms_eps, h,
               &w.hidden_rows[static_cast<std::size_t>(row) * h]);
    }
  }
  logits.resize(static_cast<std::size_t>(logit_rows) * c.vocab);
  if (logit_rows > 0) {
    if (auto s = w.head.forward(w.hidden_rows.data(), logit_rows, logits.data()); !s.ok()) return s;
  }
  return {};
}

}  // namespace coinfer
