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

// Design: a few oneDNN matmul primitives per layer, created at load for fixed batch sizes
// M = 1, 2, 4, ... up to max_batch (the buckets); a batch of m rows runs the smallest bucket
// >= m, its extra rows zero and their results ignored. oneDNN 2.6 picks its fast kernels
// (VNNI/AMX brgemm) only when M is known at creation: with a run-time M
// (DNNL_RUNTIME_DIM_VAL) it falls back to a generic JIT GEMM measured 5-13x slower at these
// shapes (bench/int8_gemm_bench.cpp). INT32 accumulation is exact, so a row's result does not
// depend on the bucket. The source is u8: activations are quantized
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
  // One per bucket, ascending M.
  struct Bucket {
    int m = 0;
    dnnl::matmul matmul;
    // INT8 quantized W in the layout this primitive asked for (each M may pick its own).
    dnnl::memory weights;
    dnnl::memory src;  // views x_q as u8 [m, k]
    dnnl::memory dst;  // views acc as s32 [m, n]
  };
  std::vector<Bucket> buckets;
  dnnl::memory scratchpad;  // user-mode, sized for the largest bucket: none allocated per call
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
          out[c] = dequantize(static_cast<float>(a[c] - comp[c]), rs, col_scale[c], bias[c]);
        }
        break;
      case Activation::relu:
        for (int c = 0; c < n; ++c) {
          const float v = dequantize(static_cast<float>(a[c] - comp[c]), rs, col_scale[c], bias[c]);
          out[c] = std::max(v, 0.0f);
        }
        break;
      case Activation::gelu:
        for (int c = 0; c < n; ++c) {
          const float v = dequantize(static_cast<float>(a[c] - comp[c]), rs, col_scale[c], bias[c]);
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
    const dnnl::memory::desc user_weights_md({K, N}, dt::s8, dims{1, K});
    dnnl::memory user_weights(user_weights_md, s->engine, w_q.data());
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    std::size_t scratchpad_bytes = 0;
    for (int m = 1;; m = std::min(2 * m, max_batch)) {
      const dnnl::memory::dim M = m;
      const dnnl::memory::desc src_md({M, K}, dt::u8, dims{K, 1});
      const dnnl::memory::desc any_weights_md({K, N}, dt::s8, dnnl::memory::format_tag::any);
      const dnnl::memory::desc dst_md({M, N}, dt::s32, dims{N, 1});
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, any_weights_md, dst_md),
                                            attr, s->engine);
      State::Bucket bucket;
      bucket.m = m;
      bucket.matmul = dnnl::matmul(pd);
      bucket.weights = dnnl::memory(pd.weights_desc(), s->engine);
      dnnl::reorder(user_weights, bucket.weights).execute(s->stream, user_weights, bucket.weights);
      bucket.src = dnnl::memory(src_md, s->engine, s->x_q.data());
      bucket.dst = dnnl::memory(dst_md, s->engine, s->acc.data());
      scratchpad_bytes = std::max(scratchpad_bytes, pd.scratchpad_desc().get_size());
      s->buckets.push_back(std::move(bucket));
      if (m == max_batch) break;
    }
    s->stream.wait();
    s->scratchpad = dnnl::memory(
        dnnl::memory::desc({static_cast<dnnl::memory::dim>(scratchpad_bytes)}, dt::u8, dims{1}),
        s->engine);
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
  const State::Bucket& bucket =
      *std::find_if(s->buckets.begin(), s->buckets.end(), [m](const auto& b) { return b.m >= m; });
  quantize_activations_per_row_u8(x, m, s->k, s->x_q.data(), s->row_scale.data());
  // Rows m..bucket.m-1 hold whatever an earlier, larger batch left: their results are ignored.

  // The C API takes the arguments as an array: the C++ one wants an unordered_map, which would
  // allocate on every call.
  dnnl_exec_arg_t args[4] = {
      {DNNL_ARG_SRC, bucket.src.get()},
      {DNNL_ARG_WEIGHTS, bucket.weights.get()},
      {DNNL_ARG_DST, bucket.dst.get()},
      {DNNL_ARG_SCRATCHPAD, s->scratchpad.get()},
  };
  if (const auto st = dnnl_primitive_execute(bucket.matmul.get(), s->stream.get(), 4, args);
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
