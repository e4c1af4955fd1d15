#include "coinfer/ops/cuda/int8_bert.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "coinfer/ops/cuda/bert_kernels.hpp"
#include "coinfer/ops/cuda/cuda_status.hpp"
#include "coinfer/ops/cuda/kernels.hpp"
#include "coinfer/ops/quantize.hpp"

namespace coinfer::cuda {
namespace {

int pad4(int v) {
  return (v + 3) / 4 * 4;
}

Status check_linear(const BertLinear& l, int n, int k, const std::string& where) {
  if (l.out_features != n || l.in_features != k ||
      l.weight.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(k) ||
      l.bias.size() != static_cast<std::size_t>(n)) {
    return Status::invalid(where + ": expected weight [" + std::to_string(n) + ", " +
                           std::to_string(k) + "] and bias [" + std::to_string(n) + "], got [" +
                           std::to_string(l.out_features) + ", " + std::to_string(l.in_features) +
                           "]");
  }
  for (int c : l.fp32_channels) {
    if (c < 0 || c >= k) {
      return Status::invalid(where + ": FP32 channel " + std::to_string(c) + " outside 0.." +
                             std::to_string(k - 1));
    }
  }
  return {};
}

}  // namespace

Status Int8BertEncoder::create(const BertWeights& w, int max_rows, int max_tokens,
                               Int8BertEncoder& out) {
  const auto h = static_cast<std::size_t>(w.hidden);
  if (w.hidden < 1 || w.heads < 1 || w.hidden % w.heads != 0 || w.hidden / w.heads > 256) {
    return Status::invalid("Int8BertEncoder: " + std::to_string(w.heads) +
                           " heads do not divide hidden size " + std::to_string(w.hidden) +
                           " into heads of at most 256");
  }
  if (max_rows < 1 || max_tokens < 1 || w.max_length < 1 || w.vocab < 1 || w.layers.empty()) {
    return Status::invalid("Int8BertEncoder: max_rows, max_tokens, max_length, vocab and the "
                           "layers must be positive");
  }
  if (w.word_embeddings.size() != static_cast<std::size_t>(w.vocab) * h ||
      w.position_embeddings.size() < static_cast<std::size_t>(w.max_length) * h ||
      w.embedding_norm.size() != 2 * h) {
    return Status::invalid("Int8BertEncoder: embeddings are not [vocab, hidden], [max_length, "
                           "hidden] and [2, hidden]");
  }
  Int8BertEncoder e;
  e.hidden_ = w.hidden;
  e.heads_ = w.heads;
  e.ffn_ = w.layers.front().intermediate.out_features;
  e.max_length_ = w.max_length;
  e.eps_ = w.layer_norm_eps;
  e.max_rows_ = max_rows;
  e.max_tokens_ = max_tokens;

  AllocationLayout layout;
  e.word_ = layout.add(sizeof(float) * w.word_embeddings.size());
  e.position_ = layout.add(sizeof(float) * static_cast<std::size_t>(w.max_length) * h);
  e.embedding_norm_ = layout.add(sizeof(float) * 2 * h);
  const auto place = [&](const BertLinear& l, Linear& d) {
    d.n = l.out_features;
    d.k = l.in_features;
    d.n_padded = pad4(d.n);
    d.k_padded = pad4(d.k);
    d.side = static_cast<int>(l.fp32_channels.size());
    d.activation = l.activation;
    const std::pair<int, int> shape{d.n_padded, d.k_padded};
    const auto found = std::find(e.plan_shapes_.begin(), e.plan_shapes_.end(), shape);
    d.plan = static_cast<std::size_t>(found - e.plan_shapes_.begin());
    if (found == e.plan_shapes_.end()) e.plan_shapes_.push_back(shape);
    d.weight = layout.add(static_cast<std::size_t>(d.n_padded) * d.k_padded);
    d.scale = layout.add(sizeof(float) * d.n_padded);
    d.bias = layout.add(sizeof(float) * d.n_padded);
    if (d.side > 0) {
      d.channels = layout.add(sizeof(int) * d.side);
      d.side_weight = layout.add(sizeof(float) * d.side * static_cast<std::size_t>(d.n));
      d.keep = layout.add(sizeof(std::uint32_t) * d.k);
    }
    e.max_k_padded_ = std::max(e.max_k_padded_, d.k_padded);
    e.max_n_padded_ = std::max(e.max_n_padded_, d.n_padded);
  };
  e.layers_.resize(w.layers.size());
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const BertLayer& l = w.layers[i];
    const std::string where = "layer " + std::to_string(i);
    const int hd = w.hidden;
    if (auto s = check_linear(l.qkv, 3 * hd, hd, where + " qkv"); !s) return s;
    if (auto s = check_linear(l.attention_out, hd, hd, where + " attention output"); !s) return s;
    if (auto s = check_linear(l.intermediate, e.ffn_, hd, where + " intermediate"); !s) return s;
    if (auto s = check_linear(l.output, hd, e.ffn_, where + " output"); !s) return s;
    if (l.attention_norm.size() != 2 * h || l.output_norm.size() != 2 * h) {
      return Status::invalid(where + ": layer norms are not [2, hidden]");
    }
    Layer& d = e.layers_[i];
    place(l.qkv, d.qkv);
    place(l.attention_out, d.attention_out);
    place(l.intermediate, d.intermediate);
    place(l.output, d.output);
    d.attention_norm = layout.add(sizeof(float) * 2 * h);
    d.output_norm = layout.add(sizeof(float) * 2 * h);
  }

  // Host image of the device weights, uploaded in one copy.
  std::vector<std::byte> image(layout.bytes());
  const auto put = [&](std::size_t offset, std::span<const float> values) {
    std::memcpy(image.data() + offset, values.data(), values.size_bytes());
  };
  put(e.word_, w.word_embeddings);
  put(e.position_, w.position_embeddings.first(static_cast<std::size_t>(w.max_length) * h));
  put(e.embedding_norm_, w.embedding_norm);
  std::vector<float> masked;
  std::vector<std::int8_t> q;
  std::vector<float> scales;
  const auto upload = [&](const BertLinear& l, const Linear& d) {
    const auto n = static_cast<std::size_t>(d.n);
    const auto k = static_cast<std::size_t>(d.k);
    masked.assign(l.weight.begin(), l.weight.end());
    auto* channels = reinterpret_cast<int*>(image.data() + d.channels);
    auto* side_weight = reinterpret_cast<float*>(image.data() + d.side_weight);
    auto* keep = reinterpret_cast<std::uint32_t*>(image.data() + d.keep);
    if (d.side > 0) std::fill(keep, keep + k, 0xffffffffu);
    for (int j = 0; j < d.side; ++j) {
      const auto c = static_cast<std::size_t>(l.fp32_channels[static_cast<std::size_t>(j)]);
      channels[j] = static_cast<int>(c);
      keep[c] = 0;
      for (std::size_t o = 0; o < n; ++o) {
        side_weight[static_cast<std::size_t>(j) * n + o] = l.weight[o * k + c];
        masked[o * k + c] = 0.0f;
      }
    }
    q.resize(masked.size());
    scales.resize(n);
    quantize_weights_per_channel(masked.data(), d.n, d.k, q.data(), scales.data());
    auto* weight = reinterpret_cast<std::int8_t*>(image.data() + d.weight);
    for (std::size_t o = 0; o < n; ++o) {
      std::copy_n(q.data() + o * k, k, weight + o * static_cast<std::size_t>(d.k_padded));
    }
    put(d.scale, scales);
    put(d.bias, l.bias);
  };
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const BertLayer& l = w.layers[i];
    const Layer& d = e.layers_[i];
    upload(l.qkv, d.qkv);
    upload(l.attention_out, d.attention_out);
    upload(l.intermediate, d.intermediate);
    upload(l.output, d.output);
    put(d.attention_norm, l.attention_norm);
    put(d.output_norm, l.output_norm);
  }

  if (auto s = CublasLt::create(e.lt_); !s) return s;
  if (auto s = DeviceBuffer::allocate(image.size(), e.weights_); !s) return s;
  if (auto s = cuda_status(
          cudaMemcpy(e.weights_.data(), image.data(), image.size(), cudaMemcpyHostToDevice),
          "cudaMemcpy (BERT weights, " + std::to_string(image.size()) + " bytes)");
      !s) {
    return s;
  }
  out = std::move(e);
  return {};
}

std::size_t Int8BertEncoder::input_offsets_byte() const noexcept {
  return align_up(sizeof(std::int32_t) * static_cast<std::size_t>(max_tokens_));
}

std::size_t Int8BertEncoder::input_bytes() const noexcept {
  return input_offsets_byte() + sizeof(std::int32_t) * (static_cast<std::size_t>(max_rows_) + 1);
}

Status Int8BertEncoder::create_scratch(Scratch& out) const {
  const auto t = static_cast<std::size_t>(max_tokens_);
  const auto h = static_cast<std::size_t>(hidden_);
  AllocationLayout layout;
  const std::size_t input = layout.add(input_bytes());
  const std::size_t x = layout.add(sizeof(float) * t * h);
  const std::size_t wide =
      layout.add(sizeof(float) * t * static_cast<std::size_t>(std::max(3 * hidden_, ffn_)));
  const std::size_t context = layout.add(sizeof(float) * t * h);
  const std::size_t projected = layout.add(sizeof(float) * t * h);
  const std::size_t quantized = layout.add(t * static_cast<std::size_t>(max_k_padded_));
  const std::size_t row_scales = layout.add(sizeof(float) * t);
  const std::size_t accumulator =
      layout.add(sizeof(std::int32_t) * t * static_cast<std::size_t>(max_n_padded_));
  const std::size_t embeddings =
      layout.add(sizeof(float) * static_cast<std::size_t>(max_rows_) * h);
  const std::size_t workspace = layout.add(workspace_bytes);

  Scratch s;
  if (auto status = DeviceBuffer::allocate(layout.bytes(), s.memory_); !status) return status;
  s.input_ = s.memory_.data() + input;
  s.ids_ = s.memory_.as<std::int32_t>(input);
  s.offsets_ = s.memory_.as<std::int32_t>(input + input_offsets_byte());
  s.x_ = s.memory_.as<float>(x);
  s.wide_ = s.memory_.as<float>(wide);
  s.context_ = s.memory_.as<float>(context);
  s.projected_ = s.memory_.as<float>(projected);
  s.quantized_ = s.memory_.as<std::int8_t>(quantized);
  s.row_scales_ = s.memory_.as<float>(row_scales);
  s.accumulator_ = s.memory_.as<std::int32_t>(accumulator);
  s.embeddings_ = s.memory_.as<float>(embeddings);
  // Algorithms are chosen per M on first use (a batch's token count takes thousands of
  // values; querying them all at load would take seconds).
  s.plans_.resize(plan_shapes_.size());
  for (std::size_t i = 0; i < plan_shapes_.size(); ++i) {
    if (auto status = GemmPlan::create(lt_, GemmKind::int8, max_tokens_, plan_shapes_[i].first,
                                       plan_shapes_[i].second, s.memory_.data() + workspace,
                                       workspace_bytes, s.plans_[i]);
        !status) {
      return status;
    }
  }
  out = std::move(s);
  return {};
}

Status Int8BertEncoder::linear(const Linear& l, Scratch& s, const float* x, int m, float* y,
                               cudaStream_t stream) const {
  const auto* keep = l.side > 0 ? weights_.as<std::uint32_t>(l.keep) : nullptr;
  if (auto st = quantize_rows_int8(x, m, l.k, l.k_padded, s.quantized_, s.row_scales_, stream,
                                   keep);
      !st) {
    return st;
  }
  if (auto st = s.plans_[l.plan].run(s.quantized_, m, weights_.data() + l.weight, s.accumulator_,
                                     stream);
      !st) {
    return st;
  }
  SideChannels side;
  if (l.side > 0) {
    side = {l.side, weights_.as<int>(l.channels), x, l.k, weights_.as<float>(l.side_weight)};
  }
  return dequantize_bias_activation(s.accumulator_, m, l.n, l.n_padded, s.row_scales_,
                                    weights_.as<float>(l.scale), weights_.as<float>(l.bias),
                                    l.activation, y, stream, side);
}

Status Int8BertEncoder::enqueue(Scratch& s, int rows, int tokens, cudaStream_t stream) const {
  if (rows < 1 || rows > max_rows_ || tokens < rows || tokens > max_tokens_) {
    return Status::invalid("Int8BertEncoder: " + std::to_string(rows) + " rows of " +
                           std::to_string(tokens) + " tokens outside 1.." +
                           std::to_string(max_rows_) + " rows, " + std::to_string(max_tokens_) +
                           " tokens");
  }
  const auto h = static_cast<std::size_t>(hidden_);
  const float* embedding_norm = weights_.as<float>(embedding_norm_);
  Status st = embed_layer_norm(s.ids_, s.offsets_, rows, tokens, weights_.as<float>(word_),
                               weights_.as<float>(position_), embedding_norm, embedding_norm + h,
                               hidden_, eps_, s.x_, stream);
  const int head_dim = hidden_ / heads_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  for (std::size_t i = 0; st && i < layers_.size(); ++i) {
    const Layer& l = layers_[i];
    const float* attention_norm = weights_.as<float>(l.attention_norm);
    const float* output_norm = weights_.as<float>(l.output_norm);
    st = linear(l.qkv, s, s.x_, tokens, s.wide_, stream);
    if (st) {
      st = self_attention(s.wide_, s.offsets_, rows, tokens, heads_, head_dim, scale, max_length_,
                          s.context_, stream);
    }
    if (st) st = linear(l.attention_out, s, s.context_, tokens, s.projected_, stream);
    if (st) {
      st = add_layer_norm(s.projected_, s.x_, attention_norm, attention_norm + h, tokens, hidden_,
                          eps_, s.x_, stream);
    }
    if (st) st = linear(l.intermediate, s, s.x_, tokens, s.wide_, stream);
    if (st) st = linear(l.output, s, s.wide_, tokens, s.context_, stream);
    if (st) {
      st = add_layer_norm(s.context_, s.x_, output_norm, output_norm + h, tokens, hidden_, eps_,
                          s.x_, stream);
    }
    if (!st) return Status(st.code(), "layer " + std::to_string(i) + ": " + st.message());
  }
  if (st) st = mean_pool_normalize(s.x_, s.offsets_, rows, hidden_, s.embeddings_, stream);
  return st;
}

}  // namespace coinfer::cuda
