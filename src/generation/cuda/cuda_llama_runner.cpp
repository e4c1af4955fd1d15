#include "coinfer/generation/cuda_llama_runner.hpp"

#include <numeric>
#include <string>
#include <utility>

#include "coinfer/models/llama.hpp"
#include "coinfer/ops/cuda/cuda_status.hpp"

namespace coinfer::generation {
namespace {

// The FP32 weights of a GGUF decoder, rows [out, in] as the file stores them (the CPU
// loader's order: Q, K, V stacked; gate then up).
struct HostWeights {
  std::vector<float> embedding, output_norm, head;
  struct Layer {
    std::vector<float> attention_norm, ffn_norm, qkv, qkv_bias, attention_out, gate_up, down;
  };
  std::vector<Layer> layers;
};

Status read_weights(const GgufFile& file, const DecoderSpec& c, HostWeights& w) {
  std::vector<float> part;
  const auto read = [&](const std::string& name, std::vector<float>& dst, bool append) -> Status {
    const GgufTensor* t = file.tensor(name);
    if (!t) return Status::invalid("tensor '" + name + "' is missing");
    part.resize(static_cast<std::size_t>(t->elements()));
    if (auto s = file.dequantize(*t, part); !s.ok()) return s;
    if (!append) dst.clear();
    dst.insert(dst.end(), part.begin(), part.end());
    return {};
  };
  if (auto s = read("token_embd.weight", w.embedding, false); !s.ok()) return s;
  if (auto s = read("output_norm.weight", w.output_norm, false); !s.ok()) return s;
  if (file.tensor("output.weight")) {
    if (auto s = read("output.weight", w.head, false); !s.ok()) return s;
  }
  w.layers.resize(static_cast<std::size_t>(c.layers));
  for (int l = 0; l < c.layers; ++l) {
    HostWeights::Layer& layer = w.layers[static_cast<std::size_t>(l)];
    const std::string p = "blk." + std::to_string(l) + ".";
    Status s = read(p + "attn_norm.weight", layer.attention_norm, false);
    if (s.ok()) s = read(p + "ffn_norm.weight", layer.ffn_norm, false);
    for (const char* name : {"attn_q.weight", "attn_k.weight", "attn_v.weight"}) {
      if (s.ok()) s = read(p + name, layer.qkv, true);
    }
    if (c.attention_bias) {
      for (const char* name : {"attn_q.bias", "attn_k.bias", "attn_v.bias"}) {
        if (s.ok()) s = read(p + name, layer.qkv_bias, true);
      }
    }
    if (s.ok()) s = read(p + "attn_output.weight", layer.attention_out, false);
    for (const char* name : {"ffn_gate.weight", "ffn_up.weight"}) {
      if (s.ok()) s = read(p + name, layer.gate_up, true);
    }
    if (s.ok()) s = read(p + "ffn_down.weight", layer.down, false);
    if (!s.ok()) return s;
  }
  return {};
}

}  // namespace

Status CudaLlamaRunner::load(const GgufFile& file, const CudaLlamaOptions& options,
                             std::unique_ptr<CudaLlamaRunner>& out) {
  DecoderSpec c;
  if (auto s = DecoderSpec::from_gguf(file, c); !s.ok()) return s;
  if (auto s = cuda::cuda_status(cudaSetDevice(options.device),
                                 "cudaSetDevice(" + std::to_string(options.device) + ")");
      !s.ok()) {
    return s;
  }
  HostWeights host;
  if (auto s = read_weights(file, c, host); !s.ok()) return s;
  cuda::LlamaWeights w;
  w.layers = c.layers;
  w.hidden = c.hidden;
  w.heads = c.heads;
  w.kv_heads = c.kv_heads;
  w.head_dim = c.head_dim;
  w.ffn = c.ffn;
  w.vocab = c.vocab;
  w.context = c.context;
  w.rms_eps = c.rms_eps;
  w.rope_theta = c.rope_theta;
  w.neox = c.rope == DecoderSpec::Rope::neox;
  for (const HostWeights::Layer& l : host.layers) {
    w.blocks.push_back(
        {l.attention_norm, l.qkv, l.qkv_bias, l.attention_out, l.ffn_norm, l.gate_up, l.down});
  }
  w.embedding = host.embedding;
  w.output_norm = host.output_norm;
  w.head = host.head.empty() ? std::span<const float>(host.embedding) : host.head;

  std::unique_ptr<CudaLlamaRunner> runner(new CudaLlamaRunner());
  runner->options_ = options;
  if (auto s = cuda::Int8Llama::create(w, options.model, runner->model_); !s.ok()) return s;
  if (options.graphs) {
    // Only the buckets a step can fill: no graph holds more rows than a step may carry.
    std::vector<std::int32_t> sizes;
    for (std::int32_t b : options.buckets.sizes()) {
      if (b <= options.model.max_rows && b <= options.model.max_step_tokens) sizes.push_back(b);
    }
    if (auto s = GraphBuckets::make(std::move(sizes), runner->buckets_); !s.ok()) return s;
  } else if (auto s = GraphBuckets::make({}, runner->buckets_); !s.ok()) {
    return s;
  }
  runner->limits_.vocab = c.vocab;
  runner->limits_.context = c.context;
  runner->limits_.kv_blocks = runner->model_.kv_blocks();
  runner->limits_.block_size = options.model.block_size;
  runner->limits_.max_step_tokens = options.model.max_step_tokens;
  out = std::move(runner);
  return {};
}

CudaLlamaRunner::~CudaLlamaRunner() {
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaLlamaRunner::bind_thread() {
  stream_status_ = cuda::cuda_status(cudaSetDevice(options_.device), "cudaSetDevice");
  if (stream_status_.ok() && !stream_) {
    stream_status_ = cuda::cuda_status(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                                       "cudaStreamCreate");
  }
}

void CudaLlamaRunner::copy_blocks(std::span<const std::pair<std::int32_t, std::int32_t>> copies) {
  for (auto [src, dst] : copies) {
    if (auto s = model_.copy_block(src, dst, stream_); !s.ok()) copy_status_ = s;
  }
}

Status CudaLlamaRunner::prepare(std::span<const ScheduledChunk> chunks,
                                cuda::LlamaStepView& view) {
  if (!stream_status_.ok()) return stream_status_;
  if (!copy_status_.ok()) return std::exchange(copy_status_, Status());
  for (std::size_t r = 0; r < chunks.size(); ++r) {  // what the kernels cannot check
    const ScheduledChunk& c = chunks[r];
    if (c.position + static_cast<std::int64_t>(c.tokens.size()) > limits_.context) {
      return Status::invalid("chunk " + std::to_string(r) + ": positions past the context of " +
                             std::to_string(limits_.context));
    }
    for (std::int32_t id : c.tokens) {
      if (id < 0 || id >= limits_.vocab) {
        return Status::invalid("chunk " + std::to_string(r) + ": token id " + std::to_string(id) +
                               " outside the vocabulary of " + std::to_string(limits_.vocab));
      }
    }
  }
  if (chunks.size() > static_cast<std::size_t>(options_.model.max_rows)) {
    return Status::invalid(std::to_string(chunks.size()) + " chunks in one step, at most " +
                           std::to_string(options_.model.max_rows));
  }
  if (auto s = build_device_step(chunks, limits_.block_size, limits_.kv_blocks,
                                 model_.max_table_width(), buckets_, step_);
      !s.ok()) {
    return s;
  }
  view.token_ids = step_.token_ids;
  view.positions = step_.positions;
  view.slots = step_.slots;
  view.query_start = step_.query_start;
  view.context_lens = step_.context_lens;
  view.block_tables = step_.block_tables;
  view.table_width = step_.table_width;
  view.logit_tokens = step_.logit_tokens;
  view.max_query_tokens = step_.max_query_tokens;
  if (step_.graph != 0) {
    // A graph step computes every row's logits (its shape is fixed) and returns the chunks'
    // rows: those of the chunks' logit tokens are picked from them.
    every_row_.resize(static_cast<std::size_t>(step_.rows));
    std::iota(every_row_.begin(), every_row_.end(), 0);
    view.logit_tokens = every_row_;
    view.returned_logits = step_.chunks;
  }
  return {};
}

Status CudaLlamaRunner::execute(std::span<const ScheduledChunk> chunks,
                                std::vector<float>& logits) {
  cuda::LlamaStepView view;
  if (auto s = prepare(chunks, view); !s.ok()) return s;
  if (step_.graph == 0) return model_.forward(view, logits, stream_);
  if (auto s = model_.forward(view, graph_logits_, stream_, true); !s.ok()) return s;
  const auto vocab = static_cast<std::size_t>(limits_.vocab);
  bool leading = step_.logit_tokens.size() == static_cast<std::size_t>(step_.chunks);
  for (std::size_t i = 0; leading && i < step_.logit_tokens.size(); ++i)
    leading = step_.logit_tokens[i] == static_cast<std::int32_t>(i);
  if (leading) {  // every chunk's one token: the rows copied back, as they are
    logits.swap(graph_logits_);
    return {};
  }
  logits.resize(step_.logit_tokens.size() * vocab);
  for (std::size_t i = 0; i < step_.logit_tokens.size(); ++i) {
    const auto row = static_cast<std::size_t>(step_.logit_tokens[i]);
    std::copy_n(graph_logits_.begin() + static_cast<std::ptrdiff_t>(row * vocab), vocab,
                logits.begin() + static_cast<std::ptrdiff_t>(i * vocab));
  }
  return {};
}

Status CudaLlamaRunner::execute_sampled(std::span<const ScheduledChunk> chunks,
                                        std::span<const DeviceDraw> draws,
                                        std::vector<std::int32_t>& tokens) {
  cuda::LlamaStepView view;
  if (auto s = prepare(chunks, view); !s.ok()) return s;
  if (draws.size() != step_.logit_tokens.size()) {
    return Status::invalid(std::to_string(draws.size()) + " draws for " +
                           std::to_string(step_.logit_tokens.size()) + " logit rows");
  }
  // Per returned row its draw: the logit tokens' own, or (a graph step) those of the rows
  // that are logit tokens, greedy for the rest (drawn, never read).
  draws_.assign(static_cast<std::size_t>(step_.graph != 0 ? step_.chunks : draws.size()), {});
  for (std::size_t i = 0; i < draws.size(); ++i) {
    const auto row = step_.graph != 0 ? static_cast<std::size_t>(step_.logit_tokens[i]) : i;
    const DeviceDraw& d = draws[i];
    draws_[row] = {d.temperature, d.top_k, d.top_p, d.min_p, d.uniform};
  }
  if (step_.graph == 0) return model_.forward_sampled(view, draws_, tokens, stream_);
  if (auto s = model_.forward_sampled(view, draws_, graph_tokens_, stream_, true); !s.ok())
    return s;
  tokens.resize(draws.size());
  for (std::size_t i = 0; i < draws.size(); ++i)
    tokens[i] = graph_tokens_[static_cast<std::size_t>(step_.logit_tokens[i])];
  return {};
}

}  // namespace coinfer::generation
