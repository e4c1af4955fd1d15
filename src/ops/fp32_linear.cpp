#include "coinfer/ops/fp32_linear.hpp"

#include <algorithm>
#include <exception>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

namespace coinfer {

struct Fp32Linear::State {
  int n = 0;  // out_features
  int k = 0;  // in_features
  std::vector<float>
      weight;               // FP32 [n, k] row-major; oneDNN reads it as W^T [k, n], strides {1, k}
  std::vector<float> bias;  // FP32 [n] (zeros when the layer has none)
  dnnl::engine engine;
  dnnl::stream stream;
  dnnl::matmul matmul;  // src [M, k] with M given at run time
  dnnl::memory weights;
  dnnl::memory bias_memory;
};

namespace {
using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;
}  // namespace

Fp32Linear::Fp32Linear() = default;
Fp32Linear::~Fp32Linear() = default;
Fp32Linear::Fp32Linear(Fp32Linear&&) noexcept = default;
Fp32Linear& Fp32Linear::operator=(Fp32Linear&&) noexcept = default;

Status Fp32Linear::create(std::span<const float> weight, std::span<const float> bias,
                          int out_features, int in_features, Activation activation,
                          Fp32Linear& out) {
  if (out_features < 1 || in_features < 1) {
    return Status::invalid("Fp32Linear: out_features and in_features must be >= 1 (got " +
                           std::to_string(out_features) + ", " + std::to_string(in_features) + ")");
  }
  const auto n = static_cast<std::size_t>(out_features);
  const auto k = static_cast<std::size_t>(in_features);
  if (weight.size() != n * k || (!bias.empty() && bias.size() != n)) {
    return Status::invalid("Fp32Linear: weight has " + std::to_string(weight.size()) +
                           " elements and bias " + std::to_string(bias.size()) + ", expected [" +
                           std::to_string(n) + ", " + std::to_string(k) + "] and [" +
                           std::to_string(n) + "]");
  }
  try {
    auto s = std::make_unique<State>();
    s->n = out_features;
    s->k = in_features;
    s->weight.assign(weight.begin(), weight.end());
    s->bias.assign(n, 0.0f);
    std::copy(bias.begin(), bias.end(), s->bias.begin());
    s->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    s->stream = dnnl::stream(s->engine);
    const dnnl::memory::dim K = in_features;
    const dnnl::memory::dim N = out_features;
    const dnnl::memory::dim M = DNNL_RUNTIME_DIM_VAL;
    const dnnl::memory::desc src_md({M, K}, dt::f32, dims{K, 1});
    const dnnl::memory::desc weights_md({K, N}, dt::f32, dims{1, K});
    const dnnl::memory::desc bias_md({1, N}, dt::f32, dims{N, 1});
    const dnnl::memory::desc dst_md({M, N}, dt::f32, dims{N, 1});
    dnnl::post_ops post_ops;
    if (activation == Activation::relu) {
      post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    } else if (activation == Activation::gelu) {
      post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(post_ops);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, weights_md, bias_md, dst_md),
                                          attr, s->engine);
    s->matmul = dnnl::matmul(pd);
    s->weights = dnnl::memory(weights_md, s->engine, s->weight.data());
    s->bias_memory = dnnl::memory(bias_md, s->engine, s->bias.data());
    out.state_ = std::move(s);
    return {};
  } catch (const dnnl::error& e) {
    return {Errc::internal, std::string("Fp32Linear: oneDNN: ") + e.what()};
  } catch (const std::exception& e) {
    return {Errc::internal, std::string("Fp32Linear: ") + e.what()};
  }
}

Status Fp32Linear::forward(const float* x, int m, float* y) {
  State* s = state_.get();
  if (s == nullptr) return {Errc::internal, "Fp32Linear::forward on a layer never created"};
  if (m < 1) return Status::invalid("Fp32Linear: batch of " + std::to_string(m) + " rows");
  try {
    const dnnl::memory::dim M = m;
    const dnnl::memory::dim K = s->k;
    const dnnl::memory::dim N = s->n;
    dnnl::memory src({{M, K}, dt::f32, dims{K, 1}}, s->engine, const_cast<float*>(x));
    dnnl::memory dst({{M, N}, dt::f32, dims{N, 1}}, s->engine, y);
    s->matmul.execute(s->stream, {{DNNL_ARG_SRC, src},
                                  {DNNL_ARG_WEIGHTS, s->weights},
                                  {DNNL_ARG_BIAS, s->bias_memory},
                                  {DNNL_ARG_DST, dst}});
    s->stream.wait();
    return {};
  } catch (const dnnl::error& e) {
    return {Errc::internal, std::string("Fp32Linear: oneDNN: ") + e.what()};
  }
}

int Fp32Linear::in_features() const noexcept {
  return state_ ? state_->k : 0;
}
int Fp32Linear::out_features() const noexcept {
  return state_ ? state_->n : 0;
}

}  // namespace coinfer
