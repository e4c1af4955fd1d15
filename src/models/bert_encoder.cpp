#include "coinfer/models/bert_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "coinfer/models/safetensors.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/layer_norm.hpp"

namespace coinfer {
namespace {

constexpr float layer_norm_eps = 1e-12f;
// [CLS] and [SEP] in the BERT (uncased) vocabularies.
constexpr std::int32_t cls_id = 101;
constexpr std::int32_t sep_id = 102;
constexpr float normalize_eps = 1e-12f;  // torch.nn.functional.normalize's default
// Rows one INT8 GEMM runs at most: measured fastest on AVX2 among 64..512 (a chunk's INT32
// accumulator, 256 x 1536 x 4 bytes, stays in L2 for the epilogue), and it caps Int8Linear's
// per-layer scratch at 256 rows whatever max_pass_tokens is.
constexpr int int8_gemm_rows = 256;
// The INT8 calibration batch: rows of 4, 8, .. 64 tokens (capped at max_length), 544 in all.
// Smaller and larger batches, other seeds and lengths found the same outlier channels.
constexpr int calibration_rows = 16;
constexpr int calibration_row_step = 4;
constexpr std::size_t calibration_tokens =
    calibration_row_step * calibration_rows * (calibration_rows + 1) / 2;

// Finds an F32 tensor of an expected shape; the error names the tensor.
class TensorReader {
 public:
  TensorReader(const SafetensorsFile& file, std::string origin)
      : file_(file), origin_(std::move(origin)) {}

  // `expected` may hold -1 for a dimension the file decides (>= 1).
  Status find(const std::string& name, const Shape& expected, const SafetensorsTensor*& out) const {
    const SafetensorsTensor* t = file_.tensor(name);
    if (t == nullptr) return Status::invalid(origin_ + ": tensor " + name + " is missing");
    bool fits = t->dtype == SafetensorsDType::F32 && t->shape.size() == expected.size();
    for (std::size_t i = 0; fits && i < expected.size(); ++i) {
      fits = expected[i] < 0 ? t->shape[i] >= 1 && t->shape[i] <= std::numeric_limits<int>::max()
                             : t->shape[i] == expected[i];
    }
    if (!fits) {
      return Status::invalid(origin_ + ": tensor " + name + ": expected F32 " +
                             to_string(expected) + ", got " + std::string(to_string(t->dtype)) +
                             " " + to_string(t->shape));
    }
    out = t;
    return {};
  }

  // Appends the tensor's elements to `out` (the file's data may be unaligned for float).
  Status append(const std::string& name, const Shape& expected, std::vector<float>& out) const {
    const SafetensorsTensor* t = nullptr;
    if (auto status = find(name, expected, t); !status) return status;
    const std::size_t old = out.size();
    out.resize(old + t->data.size() / sizeof(float));
    if (!t->data.empty()) std::memcpy(out.data() + old, t->data.data(), t->data.size());
    return {};
  }

  const std::string& origin() const noexcept { return origin_; }

 private:
  const SafetensorsFile& file_;
  std::string origin_;
};

// The `count` channels with the largest input_max, as fp32_input_channels.
std::vector<int> largest_channels(const std::vector<float>& input_max, int count) {
  std::vector<int> channels(input_max.size());
  for (std::size_t c = 0; c < channels.size(); ++c) channels[c] = static_cast<int>(c);
  const auto kept = std::min(channels.size(), static_cast<std::size_t>(std::max(count, 0)));
  std::partial_sort(channels.begin(), channels.begin() + static_cast<std::ptrdiff_t>(kept),
                    channels.end(), [&](int a, int b) {
                      return input_max[static_cast<std::size_t>(a)] >
                             input_max[static_cast<std::size_t>(b)];
                    });
  channels.resize(kept);
  return channels;
}

}  // namespace

std::string_view to_string(Precision precision) noexcept {
  return precision == Precision::fp32 ? "fp32" : "int8";
}

Status BertEncoder::load(const std::filesystem::path& weights, std::string name,
                         std::string version, const BertEncoderOptions& options,
                         std::unique_ptr<BertEncoder>& out) {
  const std::string key = "models." + name + ".";
  if (options.max_batch_size < 1) return Status::invalid(key + "max_batch_size: must be >= 1");
  if (options.max_batch_tokens < 1 || options.max_batch_tokens > std::numeric_limits<int>::max()) {
    return Status::invalid(key + "max_batch_tokens: must be in 1.." +
                           std::to_string(std::numeric_limits<int>::max()));
  }
  if (options.max_length < 1) return Status::invalid(key + "max_length: must be >= 1");
  if (options.max_pass_tokens < options.max_length ||
      options.max_pass_tokens > std::numeric_limits<int>::max()) {
    return Status::invalid(key + "max_pass_tokens: " + std::to_string(options.max_pass_tokens) +
                           " must hold a row of max_length " + std::to_string(options.max_length) +
                           " tokens");
  }

  SafetensorsFile file;
  if (auto status = SafetensorsFile::open(weights, file); !status) return status;
  const TensorReader reader(file, weights.string());

  // A pair classifier's adapter: its layer norms replace the base's, its low-rank updates are
  // added to the base's linears, and it brings the classifier.
  SafetensorsFile adapter_file;
  const bool pairs = !options.adapter.empty();
  if (pairs) {
    if (auto status = SafetensorsFile::open(options.adapter, adapter_file); !status) return status;
  }
  const TensorReader adapter(adapter_file, options.adapter.string());
  // A layer norm's gamma or beta: the adapter's when it has one.
  const auto norm = [&](const std::string& name, std::int64_t h, std::vector<float>& out) {
    return (pairs && adapter_file.tensor(name) != nullptr ? adapter : reader)
        .append(name, {h}, out);
  };

  std::unique_ptr<BertEncoder> model(new BertEncoder());
  BertEncoder& m = *model;
  m.precision_ = options.precision;

  // Sizes come from the embeddings and the first layer; every other tensor is checked
  // against them.
  const SafetensorsTensor* word = nullptr;
  const SafetensorsTensor* position = nullptr;
  const SafetensorsTensor* intermediate = nullptr;
  if (auto s = reader.find("embeddings.word_embeddings.weight", {-1, -1}, word); !s) return s;
  m.vocab_ = static_cast<int>(word->shape[0]);
  m.hidden_ = static_cast<int>(word->shape[1]);
  const std::int64_t h = m.hidden_;
  if (auto s = reader.find("embeddings.position_embeddings.weight", {-1, h}, position); !s) {
    return s;
  }
  if (options.max_length > position->shape[0]) {
    return Status::invalid(key + "max_length: " + std::to_string(options.max_length) +
                           " exceeds the " + std::to_string(position->shape[0]) + " positions of " +
                           reader.origin());
  }
  m.max_length_ = options.max_length;
  if (options.attention_heads < 1 || m.hidden_ % options.attention_heads != 0 ||
      (m.hidden_ / options.attention_heads) % 8 != 0 ||
      m.hidden_ / options.attention_heads > AttentionShape::max_head_dim) {
    return Status::invalid(key + "attention_heads: " + std::to_string(options.attention_heads) +
                           " must divide hidden size " + std::to_string(m.hidden_) +
                           " into heads of a multiple of 8 dimensions, at most " +
                           std::to_string(AttentionShape::max_head_dim));
  }
  m.attention_ = {options.attention_heads, m.hidden_ / options.attention_heads};
  if (auto s = reader.find("encoder.layer.0.intermediate.dense.weight", {-1, h}, intermediate);
      !s) {
    return s;
  }
  m.ffn_ = static_cast<int>(intermediate->shape[0]);
  const std::int64_t f = m.ffn_;

  if (auto s = reader.append("embeddings.word_embeddings.weight", {-1, h}, m.word_embeddings_);
      !s) {
    return s;
  }
  std::vector<float> token_type;  // FP32 [types, hidden]; rows past 0 unused
  if (auto s = reader.append("embeddings.token_type_embeddings.weight", {-1, h}, token_type); !s) {
    return s;
  }
  if (auto s =
          reader.append("embeddings.position_embeddings.weight", {-1, h}, m.position_embeddings_);
      !s) {
    return s;
  }
  m.position_embeddings_.resize(static_cast<std::size_t>(m.max_length_) * m.hidden_);
  for (std::size_t p = 0; p < static_cast<std::size_t>(m.max_length_); ++p) {
    for (std::size_t c = 0; c < static_cast<std::size_t>(m.hidden_); ++c) {
      m.position_embeddings_[p * m.hidden_ + c] += token_type[c];
    }
  }
  for (const char* part : {"weight", "bias"}) {
    if (auto s = norm(std::string("embeddings.LayerNorm.") + part, h, m.embedding_norm_); !s) {
      return s;
    }
  }
  if (pairs) {
    if (token_type.size() < 2 * static_cast<std::size_t>(h)) {
      return Status::invalid(reader.origin() +
                             ": embeddings.token_type_embeddings.weight has one token type; a "
                             "pair classifier needs two");
    }
    m.second_segment_.resize(static_cast<std::size_t>(h));
    for (std::size_t c = 0; c < static_cast<std::size_t>(h); ++c) {
      m.second_segment_[c] = token_type[static_cast<std::size_t>(h) + c] - token_type[c];
    }
    if (auto s = adapter.append("classifier.weight", {1, h}, m.classifier_); !s) return s;
    if (auto s = adapter.append("classifier.bias", {1}, m.classifier_); !s) return s;
  }

  int layer_count = 0;
  while (file.tensor("encoder.layer." + std::to_string(layer_count) +
                     ".attention.self.query.weight") != nullptr) {
    ++layer_count;
  }
  if (layer_count == 0) {
    return Status::invalid(reader.origin() +
                           ": tensor encoder.layer.0.attention.self.query.weight is missing");
  }

  // Every linear's FP32 weights, 4 per layer in the order they run (see linear()).
  struct LinearWeights {
    std::string name;
    std::vector<float> weight;  // FP32 [n, k] row-major
    std::vector<float> bias;    // FP32 [n]
    int n = 0;
    int k = 0;
    Activation activation = Activation::none;
  };
  std::vector<LinearWeights> linears;
  // Reads one linear from `prefixes`, their weights stacked in this order.
  const auto read = [&](const std::vector<std::string>& prefixes, std::int64_t n_each,
                        std::int64_t k, Activation activation) -> Status {
    LinearWeights l{prefixes.front(), {}, {}, 0, static_cast<int>(k), activation};
    for (const std::string& prefix : prefixes) {
      const std::size_t first_row = l.bias.size();
      if (auto s = reader.append(prefix + ".weight", {n_each, k}, l.weight); !s) return s;
      if (auto s = reader.append(prefix + ".bias", {n_each}, l.bias); !s) return s;
      if (!pairs) continue;
      // W += B A, the adapter's low-rank update (its scale folded into B).
      const SafetensorsTensor* a = nullptr;
      if (auto s = adapter.find(prefix + ".lora_a", {-1, k}, a); !s) return s;
      const std::int64_t rank = a->shape[0];
      std::vector<float> down, up;  // A [rank, k], B [n_each, rank]
      if (auto s = adapter.append(prefix + ".lora_a", {rank, k}, down); !s) return s;
      if (auto s = adapter.append(prefix + ".lora_b", {n_each, rank}, up); !s) return s;
      const auto kk = static_cast<std::size_t>(k);
      const auto r = static_cast<std::size_t>(rank);
      for (std::size_t row = 0; row < static_cast<std::size_t>(n_each); ++row) {
        float* w = l.weight.data() + (first_row + row) * kk;
        for (std::size_t j = 0; j < r; ++j) {
          const float b = up[row * r + j];
          const float* d = down.data() + j * kk;
          for (std::size_t c = 0; c < kk; ++c) w[c] += b * d[c];
        }
      }
    }
    l.n = static_cast<int>(l.bias.size());
    linears.push_back(std::move(l));
    return {};
  };
  m.layers_.resize(static_cast<std::size_t>(layer_count));
  for (int i = 0; i < layer_count; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    Layer& layer = m.layers_[static_cast<std::size_t>(i)];
    const std::string self = p + "attention.self.";
    if (auto s = read({self + "query", self + "key", self + "value"}, h, h, Activation::none); !s) {
      return s;
    }
    if (auto s = read({p + "attention.output.dense"}, h, h, Activation::none); !s) return s;
    if (auto s = read({p + "intermediate.dense"}, f, h, Activation::gelu); !s) return s;
    if (auto s = read({p + "output.dense"}, h, f, Activation::none); !s) return s;
    for (const char* part : {"weight", "bias"}) {
      if (auto s = norm(p + "attention.output.LayerNorm." + part, h, layer.attention_norm); !s) {
        return s;
      }
      if (auto s = norm(p + "output.LayerNorm." + part, h, layer.output_norm); !s) return s;
    }
  }

  // Activations and the INT8 linears' batches are sized for one pass, not for a whole batch.
  const auto pass_tokens =
      static_cast<int>(std::min(options.max_pass_tokens, options.max_batch_tokens));
  m.max_pass_tokens_ = std::max(pass_tokens, m.max_length_);
  const auto t = static_cast<std::size_t>(m.max_pass_tokens_);
  const bool calibrating = options.precision == Precision::int8 && options.int8_fp32_channels > 0;
  m.allocate_activations(calibrating ? std::max(t, calibration_tokens) : t);
  m.attention_scratch_.resize(attention_scratch_floats(m.attention_, m.max_length_) *
                              static_cast<std::size_t>(compute_team_size()));
  m.offsets_.resize(static_cast<std::size_t>(options.max_batch_size) + 1);
  m.pass_offsets_.resize(static_cast<std::size_t>(options.max_batch_size) + 1);

  ModelMetadata& md = m.metadata_;
  md.name = std::move(name);
  md.version = std::move(version);
  md.platform = "coinfer_bert_encoder";
  md.max_batch_size = options.max_batch_size;
  md.max_batch_tokens = options.max_batch_tokens;
  md.inputs = {{"input_ids", DType::Int32, {-1, -1}, true}};
  md.outputs = {{"embedding", DType::FP32, {-1, m.hidden_}}};
  if (pairs) md.outputs = {{"score", DType::FP32, {-1, 1}}};

  // Every tensor is copied out: the file's buffer can go before the linears are built.
  const std::string origin = reader.origin();
  file = SafetensorsFile();
  adapter_file = SafetensorsFile();
  const auto failed = [&](const LinearWeights& l, const Status& s) {
    return Status(s.code(), origin + ": " + l.name + ": " + s.message());
  };

  // FP32 linears: the fp32 precision's, and the INT8 precision's calibration.
  if (options.precision == Precision::fp32 || calibrating) {
    for (std::size_t i = 0; i < linears.size(); ++i) {
      const LinearWeights& l = linears[i];
      if (auto s = Fp32Linear::create(l.weight, l.bias, l.n, l.k, l.activation, m.linear(i).fp32);
          !s) {
        return failed(l, s);
      }
    }
  }
  if (options.precision == Precision::int8) {
    std::vector<std::vector<float>> input_max(linears.size());  // FP32 [k] per linear
    if (calibrating) {
      for (std::size_t i = 0; i < linears.size(); ++i) {
        input_max[i].assign(static_cast<std::size_t>(linears[i].k), 0.0f);
      }
      m.precision_ = Precision::fp32;
      if (auto s = m.calibrate(input_max); !s) return s;
      m.precision_ = Precision::int8;
      if (t < calibration_tokens) m.allocate_activations(t);
    }
    Int8LinearOptions int8;
    int8.max_batch = m.max_pass_tokens_;
    int8.max_gemm_rows = int8_gemm_rows;
    int8.weight_qmax = Int8Linear::saturation_free_weight_qmax();
    int8.keep_fp32_weight = options.keep_fp32_weights;
    for (std::size_t i = 0; i < linears.size(); ++i) {
      const LinearWeights& l = linears[i];
      const std::vector<int> channels = largest_channels(input_max[i], options.int8_fp32_channels);
      int8.fp32_input_channels = channels;
      Linear& linear = m.linear(i);
      if (auto s = Int8Linear::create(l.weight, l.bias, l.n, l.k, l.activation, int8, linear.int8);
          !s) {
        return failed(l, s);
      }
      linear.fp32 = Fp32Linear();
    }
  }

  out = std::move(model);
  return {};
}

BertEncoder::Linear& BertEncoder::linear(std::size_t index) noexcept {
  Layer& layer = layers_[index / 4];
  switch (index % 4) {
    case 0:
      return layer.qkv;
    case 1:
      return layer.attention_out;
    case 2:
      return layer.intermediate;
    default:
      return layer.output;
  }
}

template <class Observe>
Status BertEncoder::encode(const std::int32_t* ids, std::span<const std::int64_t> offsets,
                           Observe&& observe) {
  const auto h = static_cast<std::size_t>(hidden_);
  const auto rows = offsets.size() - 1;
  const int tokens = static_cast<int>(offsets[rows]);
  float* x = hidden_states_.data();

  // Embeddings: word + position (+ token type 0, folded in), then LayerNorm, token by token,
  // the rows spread over the compute team.
  parallel_for(static_cast<std::int64_t>(rows), 4, 0,
               [&](int, std::int64_t first_row, std::int64_t last_row) {
                 for (auto r = static_cast<std::size_t>(first_row);
                      r < static_cast<std::size_t>(last_row); ++r) {
                   const auto first = static_cast<std::size_t>(offsets[r]);
                   const auto length = static_cast<std::size_t>(offsets[r + 1]) - first;
                   bool second = false;  // past the row's first [SEP]: token type 1 (pairs)
                   for (std::size_t p = 0; p < length; ++p) {
                     const auto id = static_cast<std::size_t>(ids[first + p]);
                     const float* word = word_embeddings_.data() + id * h;
                     thread_local std::vector<float> typed;
                     if (second) {
                       typed.resize(h);
                       for (std::size_t c = 0; c < h; ++c) typed[c] = word[c] + second_segment_[c];
                       word = typed.data();
                     }
                     add_layer_norm(word, position_embeddings_.data() + p * h,
                                    embedding_norm_.data(), embedding_norm_.data() + h, 1, hidden_,
                                    layer_norm_eps, x + (first + p) * h);
                     second = second || (!second_segment_.empty() && ids[first + p] == sep_id);
                   }
                 }
               });

  const float scale = 1.0f / std::sqrt(static_cast<float>(attention_.head_dim));
  std::size_t index = 0;
  const auto linear_step = [&](const float* in, float* out) {
    observe(index, in, tokens);
    return run(linear(index++), in, tokens, out);
  };
  for (Layer& layer : layers_) {
    if (auto s = linear_step(x, wide_.data()); !s) return s;
    self_attention(wide_.data(), offsets, attention_, scale, attention_scratch_, context_.data());
    if (auto s = linear_step(context_.data(), wide_.data()); !s) return s;
    add_layer_norm(wide_.data(), x, layer.attention_norm.data(), layer.attention_norm.data() + h,
                   tokens, hidden_, layer_norm_eps, x);
    if (auto s = linear_step(x, wide_.data()); !s) return s;
    if (auto s = linear_step(wide_.data(), context_.data()); !s) return s;
    add_layer_norm(context_.data(), x, layer.output_norm.data(), layer.output_norm.data() + h,
                   tokens, hidden_, layer_norm_eps, x);
  }
  return {};
}

void BertEncoder::allocate_activations(std::size_t tokens) {
  const auto h = static_cast<std::size_t>(hidden_);
  hidden_states_ = std::vector<float>(tokens * h);
  context_ = std::vector<float>(tokens * h);
  wide_ = std::vector<float>(tokens * static_cast<std::size_t>(std::max(3 * hidden_, ffn_)));
}

Status BertEncoder::calibrate(std::vector<std::vector<float>>& input_max) {
  // The ids below 1000 are special or unused word pieces.
  constexpr std::int32_t cls = cls_id;
  constexpr std::int32_t sep = sep_id;
  const std::int32_t first_piece = vocab_ > 2000 ? 1000 : 0;
  std::mt19937 rng(20240611);  // raw mt19937 output is the same on every platform
  std::vector<std::int32_t> ids;
  std::vector<std::int64_t> offsets{0};
  for (int r = 0; r < calibration_rows; ++r) {
    const int length = std::min(calibration_row_step * (r + 1), max_length_);
    for (int p = 0; p < length; ++p) {
      const auto piece = static_cast<std::int32_t>(
          first_piece + rng() % static_cast<std::uint32_t>(vocab_ - first_piece));
      const bool special = vocab_ > sep && (p == 0 || p + 1 == length);
      ids.push_back(special ? (p == 0 ? cls : sep) : piece);
    }
    offsets.push_back(static_cast<std::int64_t>(ids.size()));
  }
  return encode(ids.data(), offsets, [&](std::size_t index, const float* x, int m) {
    std::vector<float>& mx = input_max[index];
    const std::size_t k = mx.size();
    for (std::size_t t = 0; t < static_cast<std::size_t>(m); ++t) {
      for (std::size_t c = 0; c < k; ++c) mx[c] = std::max(mx[c], std::abs(x[t * k + c]));
    }
  });
}

Status BertEncoder::run(Linear& linear, const float* x, int m, float* y) {
  return precision_ == Precision::int8 ? linear.int8.forward(x, m, y)
                                       : linear.fp32.forward(x, m, y);
}

Status check_encoder_batch(const Batch& batch, const ModelMetadata& metadata, int vocab,
                           int max_length, std::span<std::int64_t> dense_offsets,
                           std::span<const std::int64_t>& offsets) {
  const ConstTensorView& ids = batch.inputs[0];
  if (ids.dtype != DType::Int32) {
    return Status::invalid("input_ids: expected INT32, got " + std::string(to_string(ids.dtype)));
  }
  const int rows = batch.rows;
  if (rows < 0 || rows > metadata.max_batch_size) {
    return Status::invalid("input_ids: batch of " + std::to_string(rows) +
                           " rows exceeds max_batch_size " +
                           std::to_string(metadata.max_batch_size));
  }
  if (batch.offsets.empty()) {  // dense [rows, length]
    if (ids.shape.size() != 2 || ids.shape[0] != rows) {
      return Status::invalid(
          "input_ids: expected [rows, length] or packed rows with offsets, got " +
          to_string(ids.shape));
    }
    for (int r = 0; r <= rows; ++r) dense_offsets[static_cast<std::size_t>(r)] = r * ids.shape[1];
    offsets = std::span<const std::int64_t>(dense_offsets.data(), static_cast<std::size_t>(rows) + 1);
  } else {
    offsets = batch.offsets;
    if (offsets.size() != static_cast<std::size_t>(rows) + 1 || offsets[0] != 0 ||
        ids.shape.size() != 1 || ids.shape[0] != offsets[static_cast<std::size_t>(rows)]) {
      return Status::invalid("input_ids: packed shape " + to_string(ids.shape) +
                             " does not match the batch's " + std::to_string(rows) +
                             " row offsets");
    }
  }
  if (offsets[static_cast<std::size_t>(rows)] > metadata.max_batch_tokens) {
    return Status::invalid(
        "input_ids: batch of " + std::to_string(offsets[static_cast<std::size_t>(rows)]) +
        " tokens exceeds max_batch_tokens " + std::to_string(metadata.max_batch_tokens));
  }
  const std::int32_t* id = ids.values<std::int32_t>().data();
  for (int r = 0; r < rows; ++r) {
    const std::int64_t first = offsets[static_cast<std::size_t>(r)];
    const std::int64_t length = offsets[static_cast<std::size_t>(r) + 1] - first;
    if (length < 1 || length > max_length) {
      return Status::invalid("input_ids: row " + std::to_string(r) + " has " +
                             std::to_string(length) + " tokens, expected 1.." +
                             std::to_string(max_length) + " (max_length)");
    }
    for (std::int64_t p = 0; p < length; ++p) {
      const std::int32_t v = id[first + p];
      if (v < 0 || v >= vocab) {
        return Status::invalid("input_ids: row " + std::to_string(r) + " position " +
                               std::to_string(p) + ": token id " + std::to_string(v) +
                               " outside [0, " + std::to_string(vocab) + ")");
      }
    }
  }
  return {};
}

Status BertEncoder::forward(const Batch& batch, std::span<Tensor> outputs) {
  if (batch.inputs.size() != 1 || outputs.size() != 1) {
    return {Errc::internal, "BertEncoder::forward: expected 1 input and 1 output"};
  }
  std::span<const std::int64_t> offsets;
  if (auto status = check_encoder_batch(batch, metadata_, vocab_, max_length_, offsets_, offsets);
      !status) {
    return status;
  }
  const int rows = batch.rows;
  const auto width = static_cast<std::size_t>(scores_pairs() ? 1 : hidden_);  // score or vector
  const std::int64_t output_shape[] = {rows, static_cast<std::int64_t>(width)};
  outputs[0].resize(DType::FP32, output_shape);
  if (rows == 0) return {};

  // Attention's scratch holds one slice per compute thread: sized at load for the loading
  // thread's team; a larger team (compute.threads above it) grows it once, here.
  const std::size_t scratch = attention_scratch_floats(attention_, max_length_) *
                              static_cast<std::size_t>(compute_team_size());
  if (attention_scratch_.size() < scratch) attention_scratch_.resize(scratch);

  // Passes of whole rows, as many as fit max_pass_tokens, each through every layer.
  const std::int32_t* ids = batch.inputs[0].values<std::int32_t>().data();
  float* embedding = outputs[0].values<float>().data();
  for (std::size_t first = 0, end = 0; first < static_cast<std::size_t>(rows); first = end) {
    end = first + 1;
    while (end < static_cast<std::size_t>(rows) &&
           offsets[end + 1] - offsets[first] <= max_pass_tokens_) {
      ++end;
    }
    for (std::size_t r = first; r <= end; ++r)
      pass_offsets_[r - first] = offsets[r] - offsets[first];
    const std::span<const std::int64_t> pass(pass_offsets_.data(), end - first + 1);
    if (auto s = encode(ids + offsets[first], pass, [](std::size_t, const float*, int) {}); !s) {
      return s;
    }
    pool(pass, embedding + first * width);
  }
  return {};
}

void BertEncoder::pool(std::span<const std::int64_t> offsets, float* embedding) const noexcept {
  const auto h = static_cast<std::size_t>(hidden_);
  const float* x = hidden_states_.data();
  // Mean over each row's tokens, then L2 normalization, straight into the output row.
  for (std::size_t r = 0; r + 1 < offsets.size(); ++r) {
    const auto first = static_cast<std::size_t>(offsets[r]);
    const auto last = static_cast<std::size_t>(offsets[r + 1]);
    if (!classifier_.empty()) {  // a pair's score: sigmoid(w . mean + b), one float a row
      float dot = 0.0f;
      for (std::size_t t = first; t < last; ++t) {
        const float* xt = x + t * h;
        for (std::size_t c = 0; c < h; ++c) dot += classifier_[c] * xt[c];
      }
      const float logit = dot / static_cast<float>(last - first) + classifier_[h];
      embedding[r] = 1.0f / (1.0f + std::exp(-logit));
      continue;
    }
    float* e = embedding + r * h;
    std::fill(e, e + h, 0.0f);
    for (std::size_t t = first; t < last; ++t) {
      const float* xt = x + t * h;
      for (std::size_t c = 0; c < h; ++c) e[c] += xt[c];
    }
    float norm2 = 0.0f;
    for (std::size_t c = 0; c < h; ++c) norm2 += e[c] * e[c];
    // The mean's norm is the sum's divided by the length: one scale does both steps.
    const float length = static_cast<float>(last - first);
    const float mean_norm = std::sqrt(norm2) / length;
    const float inv = 1.0f / (length * std::max(mean_norm, normalize_eps));
    for (std::size_t c = 0; c < h; ++c) e[c] *= inv;
  }
}

}  // namespace coinfer
