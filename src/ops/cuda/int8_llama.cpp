#include "coinfer/ops/cuda/int8_llama.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "coinfer/core/half.hpp"
#include "coinfer/ops/cuda/cuda_status.hpp"
#include "coinfer/ops/cuda/kernels.hpp"
#include "coinfer/ops/cuda/llm_kernels.hpp"
#include "coinfer/ops/quantize.hpp"

namespace coinfer::cuda {
namespace {

Status expect_size(std::span<const float> values, std::size_t size, const std::string& what) {
  if (values.size() == size) return {};
  return Status::invalid("Int8Llama: " + what + " has " + std::to_string(values.size()) +
                         " values, expected " + std::to_string(size));
}

}  // namespace

void Int8Llama::GraphDeleter::operator()(cudaGraphExec_t graph) const noexcept {
  cudaGraphExecDestroy(graph);
}

Status Int8Llama::create(const LlamaWeights& w, const Int8LlamaOptions& options, Int8Llama& out) {
  const int block_size = options.block_size, max_step_tokens = options.max_step_tokens,
            max_rows = options.max_rows;
  if (w.layers < 1 || w.layers != static_cast<int>(w.blocks.size()) || w.hidden < 1 ||
      w.heads < 1 || w.kv_heads < 1 || w.ffn < 1 || w.vocab < 1 || w.context < 1) {
    return Status::invalid("Int8Llama: layers, sizes, vocabulary and context must be positive");
  }
  if (w.head_dim % 32 != 0 || w.head_dim > 128 || w.heads % w.kv_heads != 0 ||
      w.heads / w.kv_heads > 32) {
    return Status::invalid("Int8Llama: " + std::to_string(w.heads) + " heads of " +
                           std::to_string(w.head_dim) + " over " + std::to_string(w.kv_heads) +
                           " KV heads (head size a multiple of 32 up to 128, at most 32 query "
                           "heads per KV head)");
  }
  const int qkv_width = (w.heads + 2 * w.kv_heads) * w.head_dim;
  const int attention_width = w.heads * w.head_dim;
  for (int v : {w.hidden, qkv_width, attention_width, w.ffn, w.vocab}) {
    if (v % 4 != 0) {  // cuBLASLt's INT8 GEMMs: n and k multiples of 4
      return Status::invalid("Int8Llama: size " + std::to_string(v) +
                             " is not a multiple of 4 (the INT8 GEMMs need it)");
    }
  }
  if (options.kv_blocks < 0 || block_size < 1 || max_step_tokens < 1 || max_rows < 1 ||
      !(options.memory_fraction > 0.0 && options.memory_fraction <= 1.0)) {
    return Status::invalid(
        "Int8Llama: block size, step tokens and rows must be positive, KV blocks not negative, "
        "the memory fraction in (0, 1]");
  }
  const auto h = static_cast<std::size_t>(w.hidden);
  if (auto s = expect_size(w.embedding, static_cast<std::size_t>(w.vocab) * h, "the embedding"); !s)
    return s;
  if (auto s = expect_size(w.head, static_cast<std::size_t>(w.vocab) * h, "the output head"); !s)
    return s;
  if (auto s = expect_size(w.output_norm, h, "the output norm"); !s) return s;

  Int8Llama m;
  m.layers_ = w.layers;
  m.hidden_ = w.hidden;
  m.heads_ = w.heads;
  m.kv_heads_ = w.kv_heads;
  m.head_dim_ = w.head_dim;
  m.ffn_ = w.ffn;
  m.vocab_ = w.vocab;
  m.block_size_ = block_size;
  m.max_tokens_ = max_step_tokens;
  m.max_rows_ = max_rows;
  m.eps_ = w.rms_eps;
  m.neox_ = w.neox;
  m.context_ = w.context;

  AllocationLayout layout;
  m.embedding_ = layout.add(sizeof(std::uint16_t) * w.embedding.size());
  m.output_norm_ = layout.add(sizeof(float) * h);
  const auto half = static_cast<std::size_t>(w.head_dim / 2);
  m.cos_ = layout.add(sizeof(float) * static_cast<std::size_t>(w.context) * half);
  m.sin_ = layout.add(sizeof(float) * static_cast<std::size_t>(w.context) * half);
  const auto place = [&](int n, int k, bool bias, Linear& l) {
    l.n = n;
    l.k = k;
    l.weight = layout.add(static_cast<std::size_t>(n) * static_cast<std::size_t>(k));
    l.scale = layout.add(sizeof(float) * static_cast<std::size_t>(n));
    l.bias = bias ? layout.add(sizeof(float) * static_cast<std::size_t>(n)) : kNone;
    const std::pair<int, int> shape{n, k};
    const auto found = std::find(m.plan_shapes_.begin(), m.plan_shapes_.end(), shape);
    l.plan = static_cast<std::size_t>(found - m.plan_shapes_.begin());
    if (found == m.plan_shapes_.end()) m.plan_shapes_.push_back(shape);
  };
  m.blocks_.resize(static_cast<std::size_t>(w.layers));
  for (int i = 0; i < w.layers; ++i) {
    const LlamaWeights::Layer& src = w.blocks[static_cast<std::size_t>(i)];
    const std::string where = "layer " + std::to_string(i) + " ";
    const auto n_qkv = static_cast<std::size_t>(qkv_width);
    if (auto s = expect_size(src.attention_norm, h, where + "attention norm"); !s) return s;
    if (auto s = expect_size(src.ffn_norm, h, where + "FFN norm"); !s) return s;
    if (auto s = expect_size(src.qkv, n_qkv * h, where + "QKV"); !s) return s;
    if (!src.qkv_bias.empty()) {
      if (auto s = expect_size(src.qkv_bias, n_qkv, where + "QKV bias"); !s) return s;
    }
    if (auto s = expect_size(src.attention_out, h * static_cast<std::size_t>(attention_width),
                             where + "attention output");
        !s) {
      return s;
    }
    if (auto s =
            expect_size(src.gate_up, 2 * static_cast<std::size_t>(w.ffn) * h, where + "gate/up");
        !s)
      return s;
    if (auto s = expect_size(src.down, h * static_cast<std::size_t>(w.ffn), where + "down"); !s)
      return s;
    Layer& d = m.blocks_[static_cast<std::size_t>(i)];
    d.attention_norm = layout.add(sizeof(float) * h);
    d.ffn_norm = layout.add(sizeof(float) * h);
    place(qkv_width, w.hidden, !src.qkv_bias.empty(), d.qkv);
    place(w.hidden, attention_width, false, d.attention_out);
    place(2 * w.ffn, w.hidden, false, d.gate_up);
    place(w.hidden, w.ffn, false, d.down);
  }
  place(w.vocab, w.hidden, false, m.head_);

  // The host image of the device weights, uploaded in one copy.
  std::vector<std::byte> image(layout.bytes());
  const auto put = [&](std::size_t offset, std::span<const float> values) {
    std::memcpy(image.data() + offset, values.data(), values.size_bytes());
  };
  auto* embedding = reinterpret_cast<std::uint16_t*>(image.data() + m.embedding_);
  for (std::size_t i = 0; i < w.embedding.size(); ++i) embedding[i] = coinfer::float_to_half(w.embedding[i]);
  put(m.output_norm_, w.output_norm);
  auto* cos_table = reinterpret_cast<float*>(image.data() + m.cos_);
  auto* sin_table = reinterpret_cast<float*>(image.data() + m.sin_);
  for (int p = 0; p < w.context; ++p) {  // models/llama.cpp's angles: p * theta^(-2i / d)
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = p * std::pow(static_cast<double>(w.rope_theta),
                                        -2.0 * static_cast<double>(i) / w.head_dim);
      cos_table[static_cast<std::size_t>(p) * half + i] = static_cast<float>(std::cos(angle));
      sin_table[static_cast<std::size_t>(p) * half + i] = static_cast<float>(std::sin(angle));
    }
  }
  std::vector<float> scales;
  const auto quantize = [&](const Linear& l, std::span<const float> weight,
                            std::span<const float> bias) {
    scales.resize(static_cast<std::size_t>(l.n));
    quantize_weights_per_channel(weight.data(), l.n, l.k,
                                 reinterpret_cast<std::int8_t*>(image.data() + l.weight),
                                 scales.data());
    put(l.scale, scales);
    if (l.bias != kNone) put(l.bias, bias);
  };
  for (int i = 0; i < w.layers; ++i) {
    const LlamaWeights::Layer& src = w.blocks[static_cast<std::size_t>(i)];
    const Layer& d = m.blocks_[static_cast<std::size_t>(i)];
    put(d.attention_norm, src.attention_norm);
    put(d.ffn_norm, src.ffn_norm);
    quantize(d.qkv, src.qkv, src.qkv_bias);
    quantize(d.attention_out, src.attention_out, {});
    quantize(d.gate_up, src.gate_up, {});
    quantize(d.down, src.down, {});
  }
  quantize(m.head_, w.head, {});

  if (auto s = CublasLt::create(m.lt_); !s) return s;
  if (auto s = DeviceBuffer::allocate(image.size(), m.weights_); !s) return s;
  if (auto s = cuda_status(
          cudaMemcpy(m.weights_.data(), image.data(), image.size(), cudaMemcpyHostToDevice),
          "cudaMemcpy (language model weights, " + std::to_string(image.size()) + " bytes)");
      !s) {
    return s;
  }

  // Scratch for max_step_tokens tokens over max_rows rows.
  const auto t = static_cast<std::size_t>(max_step_tokens);
  const auto r = static_cast<std::size_t>(max_rows);
  const auto table_width = static_cast<std::size_t>((w.context + block_size - 1) / block_size);
  m.max_table_width_ = static_cast<int>(table_width);
  // At fixed offsets, so that a graph's kernels find every step's inputs where it captured
  // them: ids, positions, slots, logit tokens [t each]; starts [r + 1], lengths [r]; tables.
  m.step_ints_ = 4 * t + 2 * r + 1 + r * table_width;
  const std::size_t wide =
      std::max(static_cast<std::size_t>(qkv_width), 2 * static_cast<std::size_t>(w.ffn));
  const std::size_t widest_k =
      std::max({h, static_cast<std::size_t>(attention_width), static_cast<std::size_t>(w.ffn)});
  const std::size_t widest_n = std::max({wide, h, static_cast<std::size_t>(w.vocab)});
  AllocationLayout scratch;
  const std::size_t ints = scratch.add(sizeof(std::int32_t) * m.step_ints_);
  const std::size_t x = scratch.add(sizeof(float) * t * h);
  const std::size_t wide_at = scratch.add(sizeof(float) * t * wide);
  const std::size_t attention =
      scratch.add(sizeof(float) * t * static_cast<std::size_t>(attention_width));
  const std::size_t gathered = scratch.add(sizeof(float) * t * h);
  const std::size_t quantized = scratch.add(t * widest_k);
  const std::size_t row_scales = scratch.add(sizeof(float) * t);
  const std::size_t accumulator = scratch.add(sizeof(std::int32_t) * t * widest_n);
  const std::size_t logits = scratch.add(sizeof(float) * t * static_cast<std::size_t>(w.vocab));
  const std::size_t workspace = scratch.add(workspace_bytes);
  const std::size_t draws = scratch.add(sizeof(RowSampling) * t);
  const std::size_t sampled = scratch.add(sizeof(std::int32_t) * t);
  if (auto s = DeviceBuffer::allocate(scratch.bytes(), m.scratch_); !s) return s;
  m.ints_ = m.scratch_.as<std::int32_t>(ints);
  m.x_ = m.scratch_.as<float>(x);
  m.wide_ = m.scratch_.as<float>(wide_at);
  m.attention_ = m.scratch_.as<float>(attention);
  m.gathered_ = m.scratch_.as<float>(gathered);
  m.quantized_ = m.scratch_.as<std::int8_t>(quantized);
  m.row_scales_ = m.scratch_.as<float>(row_scales);
  m.accumulator_ = m.scratch_.as<std::int32_t>(accumulator);
  m.logits_ = m.scratch_.as<float>(logits);
  m.draws_ = m.scratch_.as<RowSampling>(draws);
  m.tokens_ = m.scratch_.as<std::int32_t>(sampled);
  m.plans_.resize(m.plan_shapes_.size());
  for (std::size_t i = 0; i < m.plan_shapes_.size(); ++i) {
    if (auto s = GemmPlan::create(m.lt_, GemmKind::int8, max_step_tokens, m.plan_shapes_[i].first,
                                  m.plan_shapes_[i].second, m.scratch_.data() + workspace,
                                  workspace_bytes, m.plans_[i]);
        !s) {
      return s;
    }
  }
  if (auto s = PinnedBuffer::allocate(sizeof(std::int32_t) * m.step_ints_, m.host_ints_); !s)
    return s;
  if (auto s = PinnedBuffer::allocate((sizeof(RowSampling) + sizeof(std::int32_t)) * t,
                                      m.host_draws_);
      !s) {
    return s;
  }

  // The KV cache, last: sized from what the rest left when no size is given. Per layer its
  // keys, then its values.
  const std::size_t block_bytes = sizeof(std::uint16_t) * 2 * static_cast<std::size_t>(w.layers) *
                                  static_cast<std::size_t>(block_size) *
                                  static_cast<std::size_t>(w.kv_heads) *
                                  static_cast<std::size_t>(w.head_dim);
  std::size_t kv_blocks = static_cast<std::size_t>(options.kv_blocks);
  if (kv_blocks == 0) {
    std::size_t free = 0, total = 0;
    if (auto s = cuda_status(cudaMemGetInfo(&free, &total), "cudaMemGetInfo"); !s) return s;
    const double allowed = options.memory_fraction * static_cast<double>(total);
    const double held = static_cast<double>(total - free);  // ours and everyone else's
    kv_blocks = allowed > held ? static_cast<std::size_t>((allowed - held) /
                                                          static_cast<double>(block_bytes))
                               : 0;
    kv_blocks = std::min<std::size_t>(kv_blocks, std::size_t{1} << 30);
    if (kv_blocks == 0) {
      return Status(Errc::unavailable,
                    "Int8Llama: no device memory left for the KV cache (" +
                        std::to_string(free >> 20) + " MiB free of " +
                        std::to_string(total >> 20) + " MiB, memory fraction " +
                        std::to_string(options.memory_fraction) + ")");
    }
  }
  m.kv_blocks_ = static_cast<int>(kv_blocks);
  m.layer_kv_values_ = kv_blocks * static_cast<std::size_t>(block_size) *
                       static_cast<std::size_t>(w.kv_heads) * static_cast<std::size_t>(w.head_dim);
  if (auto s = DeviceBuffer::allocate(
          sizeof(std::uint16_t) * 2 * static_cast<std::size_t>(w.layers) * m.layer_kv_values_,
          m.kv_);
      !s) {
    return s;
  }
  out = std::move(m);
  return {};
}

Status Int8Llama::gemm(const Linear& l, int m, cudaStream_t stream) {
  return plans_[l.plan].run(quantized_, m, weights_.data() + l.weight, accumulator_, stream);
}

Status Int8Llama::forward(const LlamaStepView& step, std::vector<float>& logits,
                          cudaStream_t stream, bool graph) {
  int returned = 0;
  Status st = run(step, stream, graph, returned);
  logits.resize(static_cast<std::size_t>(returned) * static_cast<std::size_t>(vocab_));
  if (st && returned > 0) {
    st = cuda_status(cudaMemcpyAsync(logits.data(), logits_, sizeof(float) * logits.size(),
                                     cudaMemcpyDeviceToHost, stream),
                     "cudaMemcpyAsync (logits)");
  }
  if (st) st = cuda_status(cudaStreamSynchronize(stream), "cudaStreamSynchronize (step)");
  return st;
}

Status Int8Llama::forward_sampled(const LlamaStepView& step, std::span<const RowSampling> draws,
                                  std::vector<std::int32_t>& tokens, cudaStream_t stream,
                                  bool graph) {
  int returned = 0;
  Status st = run(step, stream, graph, returned);
  if (st && draws.size() != static_cast<std::size_t>(returned)) {
    st = Status::invalid("Int8Llama: " + std::to_string(draws.size()) + " draws for " +
                         std::to_string(returned) + " logit rows");
  }
  tokens.resize(static_cast<std::size_t>(returned));
  if (!st || returned == 0) return st;
  auto* host_draws = reinterpret_cast<RowSampling*>(host_draws_.data());
  auto* host_tokens = reinterpret_cast<std::int32_t*>(host_draws + max_tokens_);
  std::copy(draws.begin(), draws.end(), host_draws);
  st = cuda_status(cudaMemcpyAsync(draws_, host_draws, draws.size_bytes(), cudaMemcpyHostToDevice,
                                   stream),
                   "cudaMemcpyAsync (sampling settings)");
  // The weights' scratch: the accumulator, free once the head's epilogue has run.
  if (st) {
    st = sample_rows(logits_, returned, vocab_, draws_, reinterpret_cast<float*>(accumulator_),
                     tokens_, stream);
  }
  if (st) {
    st = cuda_status(cudaMemcpyAsync(host_tokens, tokens_, sizeof(std::int32_t) * tokens.size(),
                                     cudaMemcpyDeviceToHost, stream),
                     "cudaMemcpyAsync (sampled tokens)");
  }
  if (st) st = cuda_status(cudaStreamSynchronize(stream), "cudaStreamSynchronize (step)");
  if (st) std::copy_n(host_tokens, tokens.size(), tokens.begin());
  return st;
}

Status Int8Llama::run(const LlamaStepView& step, cudaStream_t stream, bool graph, int& returned) {
  const auto tokens = static_cast<int>(step.token_ids.size());
  const int rows = static_cast<int>(step.query_start.size()) - 1;
  const auto wanted = static_cast<int>(step.logit_tokens.size());
  returned = step.returned_logits < 0 ? wanted : step.returned_logits;
  if (tokens < 1 || tokens > max_tokens_ || rows < 1 || rows > max_rows_ || step.table_width < 1 ||
      step.table_width > max_table_width_ || step.positions.size() != step.token_ids.size() ||
      step.slots.size() != step.token_ids.size() ||
      step.context_lens.size() != static_cast<std::size_t>(rows) ||
      step.block_tables.size() != static_cast<std::size_t>(rows) * step.table_width ||
      wanted > tokens || returned > wanted) {
    return Status::invalid("Int8Llama: a step of " + std::to_string(tokens) + " tokens in " +
                           std::to_string(rows) + " rows does not fit (at most " +
                           std::to_string(max_tokens_) + " tokens, " + std::to_string(max_rows_) +
                           " rows) or its arrays disagree");
  }
  if (graph && (tokens != rows || wanted != tokens || step.table_width != max_table_width_)) {
    return Status::invalid("Int8Llama: a graph step has one token per row, every row's logits "
                           "and tables " + std::to_string(max_table_width_) + " wide");
  }
  if (stream == nullptr) graph = false;  // the legacy default stream cannot be captured

  // The step's INT32 arrays at the offsets compute() reads them from, in one copy.
  const auto t = static_cast<std::size_t>(max_tokens_);
  const auto r = static_cast<std::size_t>(max_rows_);
  auto* host = reinterpret_cast<std::int32_t*>(host_ints_.data());
  std::size_t used = 0;
  const auto put = [&](std::size_t at, std::span<const std::int32_t> part) {
    std::copy(part.begin(), part.end(), host + at);
    used = std::max(used, at + part.size());
  };
  put(0, step.token_ids);
  put(t, step.positions);
  put(2 * t, step.slots);
  put(3 * t, step.logit_tokens);
  put(4 * t, step.query_start);
  put(4 * t + r + 1, step.context_lens);
  put(4 * t + 2 * r + 1, step.block_tables);
  Status st = cuda_status(cudaMemcpyAsync(ints_, host, sizeof(std::int32_t) * used,
                                          cudaMemcpyHostToDevice, stream),
                          "cudaMemcpyAsync (step inputs)");

  const auto known = [&] {
    return std::find_if(graphs_.begin(), graphs_.end(),
                        [&](const auto& g) { return g.first == tokens; });
  };
  if (graph && std::find(eager_sizes_.begin(), eager_sizes_.end(), tokens) != eager_sizes_.end())
    graph = false;
  if (st && graph && known() != graphs_.end()) {
    st = cuda_status(cudaGraphLaunch(known()->second.get(), stream), "cudaGraphLaunch");
  } else if (st) {
    st = compute(tokens, rows, wanted, step.table_width, graph ? 1 : step.max_query_tokens, stream);
    if (st && graph) {  // this size's first step: captured now for the next ones
      GraphExec exec;
      if (Status captured = capture(tokens, stream, exec); captured) {
        graphs_.emplace_back(tokens, std::move(exec));
      } else {
        eager_sizes_.push_back(tokens);
        graph_error_ = captured;
      }
    }
  }
  return st;
}

Status Int8Llama::capture(int tokens, cudaStream_t stream, GraphExec& out) {
  Status st = cuda_status(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                          "cudaStreamBeginCapture");
  if (!st) return st;
  st = compute(tokens, tokens, tokens, max_table_width_, 1, stream);
  cudaGraph_t graph = nullptr;
  const Status ended = cuda_status(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  if (st) st = ended;
  cudaGraphExec_t exec = nullptr;
  if (st) st = cuda_status(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  if (graph) cudaGraphDestroy(graph);
  (void)cudaGetLastError();  // a failed capture's error is not the next step's
  if (!st) return Status(st.code(), "capturing the " + std::to_string(tokens) + "-row decode step: " + st.message());
  out.reset(exec);
  return {};
}

Status Int8Llama::compute(int tokens, int rows, int wanted, int table_width,
                          int max_query_tokens, cudaStream_t stream) {
  const auto t = static_cast<std::size_t>(max_tokens_);
  const auto r = static_cast<std::size_t>(max_rows_);
  const std::int32_t* ids = ints_;
  const std::int32_t* positions = ints_ + t;
  const std::int32_t* slots = ints_ + 2 * t;
  const std::int32_t* logit_tokens = ints_ + 3 * t;
  const std::int32_t* query_start = ints_ + 4 * t;
  const std::int32_t* context_lens = query_start + r + 1;
  const std::int32_t* tables = context_lens + r;

  const int qkv_width = (heads_ + 2 * kv_heads_) * head_dim_;
  const int attention_width = heads_ * head_dim_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
  const auto norm = [&](std::size_t offset) { return weights_.as<float>(offset); };
  const auto epilogue = [&](const Linear& l, int m, float* y, bool accumulate) {
    return dequantize_bias_activation(accumulator_, m, l.n, l.n, row_scales_,
                                      weights_.as<float>(l.scale),
                                      l.bias == kNone ? nullptr : weights_.as<float>(l.bias),
                                      Activation::none, y, stream, {}, accumulate);
  };
  Status st = embed_tokens(ids, tokens, weights_.as<std::uint16_t>(embedding_), vocab_, hidden_,
                           x_, stream);
  for (int i = 0; st && i < layers_; ++i) {
    const Layer& l = blocks_[static_cast<std::size_t>(i)];
    auto* keys = kv_.as<std::uint16_t>(sizeof(std::uint16_t) * 2 * static_cast<std::size_t>(i) *
                                       layer_kv_values_);
    auto* values = keys + layer_kv_values_;
    st = rms_norm_quantize(x_, norm(l.attention_norm), tokens, hidden_, eps_, quantized_,
                           row_scales_, stream);
    if (st) st = gemm(l.qkv, tokens, stream);
    if (st) st = epilogue(l.qkv, tokens, wide_, false);
    if (st) {
      st = rope_write_kv(wide_, positions, slots, tokens, heads_, kv_heads_, head_dim_, block_size_,
                         weights_.as<float>(cos_), weights_.as<float>(sin_), neox_, keys, values,
                         stream);
    }
    if (st && max_query_tokens > 1) {
      st = prefill_attention(wide_, qkv_width, keys, values, positions, query_start, context_lens,
                             tables, table_width, rows, tokens, max_query_tokens, heads_,
                             kv_heads_, head_dim_, block_size_, scale, attention_, stream);
    } else if (st) {
      st = paged_attention(wide_, qkv_width, keys, values, positions, query_start, context_lens,
                           tables, table_width, rows, tokens, heads_, kv_heads_, head_dim_,
                           block_size_, scale, attention_, stream);
    }
    if (st) {
      st = quantize_rows_int8(attention_, tokens, attention_width, attention_width, quantized_,
                              row_scales_, stream);
    }
    if (st) st = gemm(l.attention_out, tokens, stream);
    if (st) st = epilogue(l.attention_out, tokens, x_, true);
    if (st) {
      st = rms_norm_quantize(x_, norm(l.ffn_norm), tokens, hidden_, eps_, quantized_, row_scales_,
                             stream);
    }
    if (st) st = gemm(l.gate_up, tokens, stream);
    if (st) st = epilogue(l.gate_up, tokens, wide_, false);
    if (st) st = silu_mul_quantize(wide_, tokens, ffn_, quantized_, row_scales_, stream);
    if (st) st = gemm(l.down, tokens, stream);
    if (st) st = epilogue(l.down, tokens, x_, true);
    if (!st) return Status(st.code(), "layer " + std::to_string(i) + ": " + st.message());
  }
  if (wanted == 0) return st;
  if (st) st = gather_rows(x_, logit_tokens, wanted, hidden_, gathered_, stream);
  if (st) {
    st = rms_norm_quantize(gathered_, norm(output_norm_), wanted, hidden_, eps_, quantized_,
                           row_scales_, stream);
  }
  if (st) st = gemm(head_, wanted, stream);
  if (st) st = epilogue(head_, wanted, logits_, false);
  return st;
}

Status Int8Llama::copy_block(std::int32_t src, std::int32_t dst, cudaStream_t stream) {
  if (src < 0 || src >= kv_blocks_ || dst < 0 || dst >= kv_blocks_) {
    return Status::invalid("Int8Llama: block copy " + std::to_string(src) + " -> " +
                           std::to_string(dst) + " outside the " + std::to_string(kv_blocks_) +
                           "-block cache");
  }
  const std::size_t block_values =
      static_cast<std::size_t>(block_size_) * kv_heads_ * static_cast<std::size_t>(head_dim_);
  auto* base = kv_.as<std::uint16_t>();
  for (std::size_t part = 0; part < 2 * static_cast<std::size_t>(layers_); ++part) {
    std::uint16_t* region = base + part * layer_kv_values_;
    if (auto s = cuda_status(
            cudaMemcpyAsync(region + static_cast<std::size_t>(dst) * block_values,
                            region + static_cast<std::size_t>(src) * block_values,
                            sizeof(std::uint16_t) * block_values, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync (KV block copy)");
        !s) {
      return s;
    }
  }
  return {};
}

}  // namespace coinfer::cuda
