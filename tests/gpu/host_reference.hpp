#pragma once

// Host-side twins of the GPU INT8 path, for the GPU tests and benchmark: the same
// quantization (ops/quantize.hpp), integer dot products and epilogue in plain loops.

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "coinfer/ops/activation.hpp"
#include "coinfer/ops/cuda/int8_mlp.hpp"
#include "coinfer/ops/quantize.hpp"
#include "coinfer/ops/reference.hpp"
#include "coinfer/ops/softmax.hpp"

namespace coinfer::gpu_test {

struct HostLayer {
  std::vector<float> weight;  // [out, in]
  std::vector<float> bias;    // [out]
  int out = 0, in = 0;
  Activation activation = Activation::none;
};

inline std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// The digits MLP's shapes: 64 -> 256 -> 256 -> 10, ReLU between layers.
inline std::vector<HostLayer> random_mlp(std::mt19937& rng) {
  const int widths[] = {64, 256, 256, 10};
  std::vector<HostLayer> layers;
  for (int i = 0; i < 3; ++i) {
    HostLayer l;
    l.in = widths[i];
    l.out = widths[i + 1];
    l.weight =
        random_floats(static_cast<std::size_t>(l.out) * l.in, rng, 1.0f / std::sqrt(float(l.in)));
    l.bias = random_floats(static_cast<std::size_t>(l.out), rng, 0.1f);
    l.activation = i < 2 ? Activation::relu : Activation::none;
    layers.push_back(std::move(l));
  }
  return layers;
}

inline std::vector<cuda::LinearWeights> as_weights(const std::vector<HostLayer>& layers) {
  std::vector<cuda::LinearWeights> w;
  for (const HostLayer& l : layers) w.push_back({l.weight, l.bias, l.out, l.in, l.activation});
  return w;
}

// The INT8 forward pass as the GPU runs it: probabilities [m, classes] and labels [m].
inline void int8_forward(const std::vector<HostLayer>& layers, const float* x, int m,
                         std::vector<float>& probabilities, std::vector<std::int64_t>& labels) {
  std::vector<float> in(x, x + static_cast<std::size_t>(m) * layers.front().in), out;
  for (const HostLayer& l : layers) {
    std::vector<std::int8_t> wq(l.weight.size()), xq(in.size());
    std::vector<float> ws(static_cast<std::size_t>(l.out)), xs(static_cast<std::size_t>(m));
    quantize_weights_per_channel(l.weight.data(), l.out, l.in, wq.data(), ws.data());
    quantize_activations_per_row(in.data(), m, l.in, xq.data(), xs.data());
    out.assign(static_cast<std::size_t>(m) * l.out, 0.0f);
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < l.out; ++c) {
        std::int32_t acc = 0;
        for (int k = 0; k < l.in; ++k) {
          acc += std::int32_t(xq[std::size_t(r) * l.in + k]) * wq[std::size_t(c) * l.in + k];
        }
        float v = dequantize(float(acc), xs[std::size_t(r)], ws[std::size_t(c)],
                             l.bias[std::size_t(c)]);
        if (l.activation == Activation::relu) v = v < 0.0f ? 0.0f : v;
        if (l.activation == Activation::gelu) v = gelu(v);
        out[std::size_t(r) * l.out + c] = v;
      }
    }
    in.swap(out);
  }
  const int classes = layers.back().out;
  probabilities = in;
  softmax_rows(probabilities.data(), m, classes);
  labels.resize(static_cast<std::size_t>(m));
  argmax_rows(probabilities.data(), m, classes, labels.data());
}

// The FP32 forward pass without quantization.
inline void fp32_forward(const std::vector<HostLayer>& layers, const float* x, int m,
                         std::vector<std::int64_t>& labels) {
  std::vector<float> in(x, x + static_cast<std::size_t>(m) * layers.front().in), out;
  for (const HostLayer& l : layers) {
    out.resize(static_cast<std::size_t>(m) * l.out);
    linear_fp32_reference(in.data(), m, l.in, l.weight.data(), l.out, l.bias.data(), l.activation,
                          out.data());
    in.swap(out);
  }
  labels.resize(static_cast<std::size_t>(m));
  argmax_rows(in.data(), m, layers.back().out, labels.data());
}

}  // namespace coinfer::gpu_test
