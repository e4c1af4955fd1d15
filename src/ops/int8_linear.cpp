#include "coinfer/ops/int8_linear.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "coinfer/ops/quantize.hpp"

namespace coinfer {

// Design: one oneDNN matmul primitive per layer, created at load with a run-time M
// (DNNL_RUNTIME_DIM_VAL), so any batch 1..max_batch runs without creating primitives; oneDNN
// 2.6 serves it with its JIT int8 GEMM. The source is u8: activations are quantized
// symmetrically to [-127, 127] and stored +128. oneDNN's u8 x s8 kernels are its native ones on
// AVX2/AVX-512(-VNNI); with an s8 source it shifts and compensates internally on every call,
// which measured ~20x slower at M = 1 here. We compensate ourselves with a constant per column:
//   sum_k (q_x + 128) q_w = acc_true + 128 * sum_k q_w[n][k]   (exact in INT32).
struct Int8Linear::State {
  int n = 0;          // out_features
  int k = 0;          // in_features
  int max_batch = 0;  // rows preallocated
  Activation activation = Activation::none;

  std::vector<float> col_scale;    // FP32 [n]: per-output-channel weight scales
  std::vector<float> bias;         // FP32 [n] (zeros when the layer has none)
  std::vector<float> fp32_weight;  // FP32 [n, k] row-major; empty unless kept
  std::vector<std::int32_t> comp;  // INT32 [n]: 128 * sum_k W_q[n][k], the u8-shift term
  std::vector<std::uint8_t> x_q;   // UINT8 [max_batch, k] row-major: quantized activations +128
  std::vector<float> row_scale;    // FP32 [max_batch]: per-row activation scales
  std::vector<std::int32_t> acc;   // INT32 [max_batch, n] row-major: GEMM accumulator

  dnnl::engine engine;
  dnnl::stream stream;
  dnnl::matmul matmul;
  // INT8 quantized W, in the layout the primitive asked for (W[n][k] row-major, i.e. the
  // [k, n] matrix with strides {1, k}, unless oneDNN prefers a blocked layout).
  dnnl::memory weights;
  dnnl::memory scratchpad;            // user-mode scratchpad: none allocated per call
  std::vector<dnnl::memory> src_mem;  // [max_batch]: src_mem[m-1] views x_q as u8 [m, k]
  std::vector<dnnl::memory> dst_mem;  // [max_batch]: dst_mem[m-1] views acc as [m, n]
};

namespace {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

// One fused pass: remove the u8-shift term, dequantize, bias, activation. The activation switch
// sits outside the loops so that each loop vectorizes.
void epilogue(const std::int32_t* acc, int m, int n, const std::int32_t* comp,
              const float* row_scale, const float* col_scale, const float* bias,
              Activation activation, float* y) {
  for (int r = 0; r < m; ++r) {
    const auto offset = static_cast<std::size_t>(r) * static_cast<std::size_t>(n);
    const std::int32_t* a = acc + offset;
    float* out = y + offset;
    const float rs = row_scale[r];
    switch (activation) {
      case Activation::none:
        for (int c = 0; c < n; ++c) {
          out[c] = static_cast<float>(a[c] - comp[c]) * rs * col_scale[c] + bias[c];
        }
        break;
      case Activation::relu:
        for (int c = 0; c < n; ++c) {
          const float v = static_cast<float>(a[c] - comp[c]) * rs * col_scale[c] + bias[c];
          out[c] = std::max(v, 0.0f);
        }
        break;
      case Activation::gelu:
        for (int c = 0; c < n; ++c) {
          const float v = static_cast<float>(a[c] - comp[c]) * rs * col_scale[c] + bias[c];
          out[c] = gelu(v);
        }
        break;
    }
  }
}

}  // namespace

Int8Linear::Int8Linear() = default;
Int8Linear::~Int8Linear() = default;
Int8Linear::Int8Linear(Int8Linear&&) noexcept = default;
Int8Linear& Int8Linear::operator=(Int8Linear&&) noexcept = default;

Status Int8Linear::create(std::span<const float> weight, std::span<const float> bias,
                          int out_features, int in_features, Activation activation, int max_batch,
                          Int8Linear& out, bool keep_fp32_weight) {
  if (out_features < 1 || in_features < 1 || max_batch < 1) {
    return Status::invalid(
        "Int8Linear: out_features, in_features and max_batch must be >= 1 (got " +
        std::to_string(out_features) + ", " + std::to_string(in_features) + ", " +
        std::to_string(max_batch) + ")");
  }
  // INT32 accumulation stays exact while k * 255 * 127 < 2^31.
  if (in_features > max_in_features) {
    return Status::invalid("Int8Linear: in_features " + std::to_string(in_features) + " exceeds " +
                           std::to_string(max_in_features) + " (INT32 accumulator range)");
  }
  const auto n = static_cast<std::size_t>(out_features);
  const auto k = static_cast<std::size_t>(in_features);
  if (weight.size() != n * k) {
    return Status::invalid("Int8Linear: weight has " + std::to_string(weight.size()) +
                           " elements, expected [" + std::to_string(n) + ", " + std::to_string(k) +
                           "]");
  }
  if (!bias.empty() && bias.size() != n) {
    return Status::invalid("Int8Linear: bias has " + std::to_string(bias.size()) +
                           " elements, expected " + std::to_string(n));
  }
  try {
    auto s = std::make_unique<State>();
    s->n = out_features;
    s->k = in_features;
    s->max_batch = max_batch;
    s->activation = activation;
    s->col_scale.resize(n);
    s->bias.assign(n, 0.0f);
    std::copy(bias.begin(), bias.end(), s->bias.begin());
    if (keep_fp32_weight) s->fp32_weight.assign(weight.begin(), weight.end());
    const auto rows = static_cast<std::size_t>(max_batch);
    s->x_q.resize(rows * k);
    s->row_scale.resize(rows);
    s->acc.resize(rows * n);

    // W quantized: INT8 [n, k] row-major, the layout the user-side weights memory describes.
    std::vector<std::int8_t> w_q(n * k);
    quantize_weights_per_channel(weight.data(), out_features, in_features, w_q.data(),
                                 s->col_scale.data());
    s->comp.resize(n);
    for (std::size_t c = 0; c < n; ++c) {
      std::int32_t sum = 0;
      for (std::size_t i = 0; i < k; ++i) sum += w_q[c * k + i];
      s->comp[c] = 128 * sum;
    }

    s->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    s->stream = dnnl::stream(s->engine);
    const dnnl::memory::dim K = in_features;
    const dnnl::memory::dim N = out_features;
    const dnnl::memory::desc src_md({DNNL_RUNTIME_DIM_VAL, K}, dt::u8, dims{K, 1});
    const dnnl::memory::desc any_weights_md({K, N}, dt::s8, dnnl::memory::format_tag::any);
    const dnnl::memory::desc dst_md({DNNL_RUNTIME_DIM_VAL, N}, dt::s32, dims{N, 1});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, any_weights_md, dst_md), attr,
                                          s->engine);
    s->matmul = dnnl::matmul(pd);

    const dnnl::memory::desc user_weights_md({K, N}, dt::s8, dims{1, K});
    dnnl::memory user_weights(user_weights_md, s->engine, w_q.data());
    s->weights = dnnl::memory(pd.weights_desc(), s->engine);
    dnnl::reorder(user_weights, s->weights).execute(s->stream, user_weights, s->weights);
    s->stream.wait();

    s->scratchpad = dnnl::memory(pd.scratchpad_desc(), s->engine);
    s->src_mem.reserve(rows);
    s->dst_mem.reserve(rows);
    for (dnnl::memory::dim m = 1; m <= max_batch; ++m) {
      s->src_mem.emplace_back(dnnl::memory::desc({m, K}, dt::u8, dims{K, 1}), s->engine,
                              s->x_q.data());
      s->dst_mem.emplace_back(dnnl::memory::desc({m, N}, dt::s32, dims{N, 1}), s->engine,
                              s->acc.data());
    }
    out.state_ = std::move(s);
    return {};
  } catch (const dnnl::error& e) {
    return {Errc::internal, std::string("Int8Linear: oneDNN: ") + e.what()};
  } catch (const std::exception& e) {
    return {Errc::internal, std::string("Int8Linear: ") + e.what()};
  }
}

Status Int8Linear::forward(const float* x, int m, float* y) {
  State* s = state_.get();
  if (s == nullptr) return {Errc::internal, "Int8Linear::forward on a layer never created"};
  if (m < 1 || m > s->max_batch) {
    return Status::invalid("Int8Linear: batch of " + std::to_string(m) + " rows, expected 1.." +
                           std::to_string(s->max_batch));
  }
  quantize_activations_per_row_u8(x, m, s->k, s->x_q.data(), s->row_scale.data());

  // The C API takes the arguments as an array: the C++ one wants an unordered_map, which would
  // allocate on every call.
  dnnl_exec_arg_t args[4] = {
      {DNNL_ARG_SRC, s->src_mem[static_cast<std::size_t>(m - 1)].get()},
      {DNNL_ARG_WEIGHTS, s->weights.get()},
      {DNNL_ARG_DST, s->dst_mem[static_cast<std::size_t>(m - 1)].get()},
      {DNNL_ARG_SCRATCHPAD, s->scratchpad.get()},
  };
  if (const auto st = dnnl_primitive_execute(s->matmul.get(), s->stream.get(), 4, args);
      st != dnnl_success) {
    return {Errc::internal, "Int8Linear: oneDNN matmul failed (dnnl_status " +
                                std::to_string(static_cast<int>(st)) + ")"};
  }
  if (const auto st = dnnl_stream_wait(s->stream.get()); st != dnnl_success) {
    return {Errc::internal, "Int8Linear: oneDNN stream wait failed (dnnl_status " +
                                std::to_string(static_cast<int>(st)) + ")"};
  }
  epilogue(s->acc.data(), m, s->n, s->comp.data(), s->row_scale.data(), s->col_scale.data(),
           s->bias.data(), s->activation, y);
  return {};
}

int Int8Linear::in_features() const noexcept {
  return state_ ? state_->k : 0;
}
int Int8Linear::out_features() const noexcept {
  return state_ ? state_->n : 0;
}
int Int8Linear::max_batch() const noexcept {
  return state_ ? state_->max_batch : 0;
}
Activation Int8Linear::activation() const noexcept {
  return state_ ? state_->activation : Activation::none;
}
std::span<const float> Int8Linear::weight_scales() const noexcept {
  if (!state_) return {};
  return state_->col_scale;
}
std::span<const float> Int8Linear::bias() const noexcept {
  if (!state_) return {};
  return state_->bias;
}
std::span<const float> Int8Linear::fp32_weight() const noexcept {
  if (!state_) return {};
  return state_->fp32_weight;
}

}  // namespace coinfer
