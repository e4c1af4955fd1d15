// GPU tests of the BERT encoder's device side (standalone build: no oneDNN): each kernel
// against the same math in double precision on the host, and cuda::Int8BertEncoder on a small
// random BERT against an FP32 forward pass on the host.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "coinfer/ops/cuda/bert_kernels.hpp"
#include "coinfer/ops/cuda/cuda_memory.hpp"
#include "coinfer/ops/cuda/int8_bert.hpp"
#include "coinfer/ops/cuda/kernels.hpp"
#include "coinfer/ops/quantize.hpp"
#include "host_reference.hpp"

using namespace coinfer;
using namespace coinfer::cuda;
using gpu_test::random_floats;

namespace {

template <class T>
DeviceBuffer to_device(const std::vector<T>& v) {
  DeviceBuffer b;
  REQUIRE(DeviceBuffer::allocate(std::max<std::size_t>(v.size() * sizeof(T), 1), b).ok());
  REQUIRE(cudaMemcpy(b.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  return b;
}

template <class T>
std::vector<T> from_device(const T* p, std::size_t count) {
  std::vector<T> v(count);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(v.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  return v;
}

DeviceBuffer device_floats(std::size_t count) {
  DeviceBuffer b;
  REQUIRE(DeviceBuffer::allocate(sizeof(float) * count, b).ok());
  return b;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Rows of these lengths, packed: offsets [rows + 1].
std::vector<std::int32_t> offsets_of(const std::vector<int>& lengths) {
  std::vector<std::int32_t> offsets{0};
  for (int l : lengths) offsets.push_back(offsets.back() + l);
  return offsets;
}

void host_layer_norm(const double* s, const float* gamma, const float* beta, int n, double eps,
                     double* y) {
  double mean = 0, var = 0;
  for (int c = 0; c < n; ++c) mean += s[c];
  mean /= n;
  for (int c = 0; c < n; ++c) var += (s[c] - mean) * (s[c] - mean);
  var /= n;
  for (int c = 0; c < n; ++c) y[c] = (s[c] - mean) / std::sqrt(var + eps) * gamma[c] + beta[c];
}

// out[t, h] = softmax(q_t scale . K_h) V_h over t's row, in double.
std::vector<double> host_attention(const std::vector<float>& qkv,
                                   const std::vector<std::int32_t>& offsets, int heads,
                                   int head_dim, double scale) {
  const int width = heads * head_dim;
  const std::size_t stride = 3 * static_cast<std::size_t>(width);
  std::vector<double> out(static_cast<std::size_t>(offsets.back()) * width);
  for (std::size_t r = 0; r + 1 < offsets.size(); ++r) {
    for (int t = offsets[r]; t < offsets[r + 1]; ++t) {
      for (int h = 0; h < heads; ++h) {
        std::vector<double> p;
        for (int j = offsets[r]; j < offsets[r + 1]; ++j) {
          double s = 0;
          for (int d = 0; d < head_dim; ++d) {
            s += double(qkv[t * stride + h * head_dim + d]) *
                 qkv[j * stride + width + h * head_dim + d];
          }
          p.push_back(s * scale);
        }
        const double top = *std::max_element(p.begin(), p.end());
        double sum = 0;
        for (double& v : p) sum += (v = std::exp(v - top));
        for (int d = 0; d < head_dim; ++d) {
          double o = 0;
          for (std::size_t j = 0; j < p.size(); ++j) {
            o += p[j] * qkv[(offsets[r] + j) * stride + 2 * width + h * head_dim + d];
          }
          out[static_cast<std::size_t>(t) * width + h * head_dim + d] = o / sum;
        }
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("BERT kernels: embeddings, layer norm, attention and pooling match the host") {
  std::mt19937 rng(7);
  const std::vector<int> lengths = {1, 7, 40, 3, 33};
  const auto offsets = offsets_of(lengths);
  const int rows = static_cast<int>(lengths.size());
  const int tokens = offsets.back();
  const int n = 96, vocab = 50, max_length = 48;
  const auto d_offsets = to_device(offsets);

  SUBCASE("embedding lookup + layer norm, positions restarting in every row") {
    const auto word = random_floats(std::size_t(vocab) * n, rng);
    const auto position = random_floats(std::size_t(max_length) * n, rng);
    const auto gamma = random_floats(n, rng), beta = random_floats(n, rng);
    std::vector<std::int32_t> ids(tokens);
    for (auto& id : ids) id = static_cast<std::int32_t>(rng() % vocab);
    const auto d_ids = to_device(ids), d_word = to_device(word), d_position = to_device(position);
    const auto d_gamma = to_device(gamma), d_beta = to_device(beta);
    auto d_x = device_floats(std::size_t(tokens) * n);
    REQUIRE(embed_layer_norm(d_ids.as<std::int32_t>(), d_offsets.as<std::int32_t>(), rows, tokens,
                             d_word.as<float>(), d_position.as<float>(), d_gamma.as<float>(),
                             d_beta.as<float>(), n, 1e-12f, d_x.as<float>(), nullptr)
                .ok());
    const auto x = from_device(d_x.as<float>(), std::size_t(tokens) * n);
    std::vector<double> expected(x.size()), s(n);
    for (int r = 0; r < rows; ++r) {
      for (int t = offsets[r]; t < offsets[r + 1]; ++t) {
        for (int c = 0; c < n; ++c) {
          s[c] = double(word[std::size_t(ids[t]) * n + c]) + position[std::size_t(t - offsets[r]) * n + c];
        }
        host_layer_norm(s.data(), gamma.data(), beta.data(), n, 1e-12, &expected[std::size_t(t) * n]);
      }
    }
    CHECK(max_abs_diff(x, expected) < 1e-4);
  }

  SUBCASE("residual + layer norm, written over its input") {
    const auto x = random_floats(std::size_t(tokens) * n, rng, 3.0f);
    const auto residual = random_floats(std::size_t(tokens) * n, rng);
    const auto gamma = random_floats(n, rng), beta = random_floats(n, rng);
    auto d_x = to_device(x);
    const auto d_residual = to_device(residual), d_gamma = to_device(gamma), d_beta = to_device(beta);
    REQUIRE(add_layer_norm(d_x.as<float>(), d_residual.as<float>(), d_gamma.as<float>(),
                           d_beta.as<float>(), tokens, n, 1e-12f, d_x.as<float>(), nullptr)
                .ok());
    const auto y = from_device(d_x.as<float>(), x.size());
    std::vector<double> expected(x.size()), s(n);
    for (int t = 0; t < tokens; ++t) {
      for (int c = 0; c < n; ++c) s[c] = double(x[std::size_t(t) * n + c]) + residual[std::size_t(t) * n + c];
      host_layer_norm(s.data(), gamma.data(), beta.data(), n, 1e-12, &expected[std::size_t(t) * n]);
    }
    CHECK(max_abs_diff(y, expected) < 1e-4);
  }

  SUBCASE("self-attention within each row, head_dim 32, 64 and 40") {
    for (const int head_dim : {32, 64, 40}) {
      CAPTURE(head_dim);
      const int heads = 3, width = heads * head_dim;
      const auto qkv = random_floats(std::size_t(tokens) * 3 * width, rng);
      const auto d_qkv = to_device(qkv);
      auto d_out = device_floats(std::size_t(tokens) * width);
      const float scale = 1.0f / std::sqrt(float(head_dim));
      REQUIRE(self_attention(d_qkv.as<float>(), d_offsets.as<std::int32_t>(), rows, tokens, heads,
                             head_dim, scale, max_length, d_out.as<float>(), nullptr)
                  .ok());
      const auto out = from_device(d_out.as<float>(), std::size_t(tokens) * width);
      CHECK(max_abs_diff(out, host_attention(qkv, offsets, heads, head_dim, scale)) < 1e-4);
    }
  }

  SUBCASE("mean pooling and L2 normalization per row") {
    const auto x = random_floats(std::size_t(tokens) * n, rng);
    const auto d_x = to_device(x);
    auto d_e = device_floats(std::size_t(rows) * n);
    REQUIRE(mean_pool_normalize(d_x.as<float>(), d_offsets.as<std::int32_t>(), rows, n,
                                d_e.as<float>(), nullptr)
                .ok());
    const auto e = from_device(d_e.as<float>(), std::size_t(rows) * n);
    std::vector<double> expected(e.size());
    for (int r = 0; r < rows; ++r) {
      double norm2 = 0;
      for (int c = 0; c < n; ++c) {
        double s = 0;
        for (int t = offsets[r]; t < offsets[r + 1]; ++t) s += x[std::size_t(t) * n + c];
        expected[std::size_t(r) * n + c] = s / lengths[r];
        norm2 += (s / lengths[r]) * (s / lengths[r]);
      }
      for (int c = 0; c < n; ++c) expected[std::size_t(r) * n + c] /= std::sqrt(norm2);
    }
    CHECK(max_abs_diff(e, expected) < 1e-5);
  }
}

TEST_CASE("quantization with side channels left out of the scale, and the side epilogue") {
  std::mt19937 rng(11);
  const int m = 20, k = 64, n = 24;
  auto x = random_floats(std::size_t(m) * k, rng);
  const std::vector<int> channels = {3, 40};
  for (int r = 0; r < m; ++r) x[std::size_t(r) * k + 40] = 50.0f + r;  // outliers
  std::vector<std::uint32_t> keep(k, 0xffffffffu);
  for (int c : channels) keep[c] = 0;
  std::vector<std::uint8_t> q_cpu(x.size());
  std::vector<float> s_cpu(m);
  quantize_activations_per_row_u8(x.data(), m, k, keep.data(), q_cpu.data(), s_cpu.data());

  const auto d_x = to_device(x), d_keep = to_device(keep);
  DeviceBuffer d_q, d_s;
  REQUIRE(DeviceBuffer::allocate(std::size_t(m) * k, d_q).ok());
  REQUIRE(DeviceBuffer::allocate(sizeof(float) * m, d_s).ok());
  REQUIRE(quantize_rows_int8(d_x.as<float>(), m, k, k, d_q.as<std::int8_t>(), d_s.as<float>(),
                             nullptr, d_keep.as<std::uint32_t>())
              .ok());
  const auto q = from_device(d_q.as<std::int8_t>(), std::size_t(m) * k);
  const auto s = from_device(d_s.as<float>(), m);
  int wrong = 0;
  for (int r = 0; r < m; ++r) {
    wrong += std::memcmp(&s[r], &s_cpu[r], sizeof(float)) != 0;
    for (int c = 0; c < k; ++c) {
      wrong += q[std::size_t(r) * k + c] != int(q_cpu[std::size_t(r) * k + c]) - 128;
    }
  }
  CHECK(wrong == 0);

  // Epilogue: acc * row_scale * col_scale + bias + sum_j x[r][c_j] w[j][c], then GELU.
  std::vector<std::int32_t> acc(std::size_t(m) * n);
  for (auto& a : acc) a = static_cast<std::int32_t>(rng() % 20001) - 10000;
  const auto col_scale = random_floats(n, rng, 0.01f), bias = random_floats(n, rng);
  const auto side_weight = random_floats(channels.size() * n, rng);
  const auto d_acc = to_device(acc), d_col = to_device(col_scale), d_bias = to_device(bias);
  const auto d_side_weight = to_device(side_weight), d_channels = to_device(channels);
  auto d_y = device_floats(std::size_t(m) * n);
  const SideChannels side{2, d_channels.as<int>(), d_x.as<float>(), k, d_side_weight.as<float>()};
  REQUIRE(dequantize_bias_activation(d_acc.as<std::int32_t>(), m, n, n, d_s.as<float>(),
                                     d_col.as<float>(), d_bias.as<float>(), Activation::gelu,
                                     d_y.as<float>(), nullptr, side)
              .ok());
  const auto y = from_device(d_y.as<float>(), std::size_t(m) * n);
  std::vector<double> expected(y.size());
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < n; ++c) {
      double v = double(acc[std::size_t(r) * n + c]) * s_cpu[r] * col_scale[c] + bias[c];
      for (std::size_t j = 0; j < channels.size(); ++j) {
        v += double(x[std::size_t(r) * k + channels[j]]) * side_weight[j * n + c];
      }
      expected[std::size_t(r) * n + c] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    }
  }
  CHECK(max_abs_diff(y, expected) < 1e-3);
}

namespace {

// A small random BERT: 2 layers, hidden 64, 2 heads of 32, FFN 128, with FP32 side channels.
struct HostBert {
  static constexpr int vocab = 60, hidden = 64, heads = 2, ffn = 128, max_length = 24;
  std::vector<float> word, position, embedding_norm;
  struct Linear {
    std::vector<float> weight, bias;
    int n, k;
    Activation activation;
    std::vector<int> channels;
  };
  struct Layer {
    Linear qkv, attention_out, intermediate, output;
    std::vector<float> attention_norm, output_norm;
  };
  std::vector<Layer> layers;

  explicit HostBert(std::mt19937& rng) {
    word = random_floats(std::size_t(vocab) * hidden, rng);
    position = random_floats(std::size_t(max_length) * hidden, rng, 0.3f);
    const auto norm = [&] {
      auto v = random_floats(2 * hidden, rng, 0.1f);
      for (int c = 0; c < hidden; ++c) v[c] += 1.0f;  // gamma near 1
      return v;
    };
    embedding_norm = norm();
    const auto linear = [&](int n, int k, Activation a) {
      return Linear{random_floats(std::size_t(n) * k, rng, 1.0f / std::sqrt(float(k))),
                    random_floats(n, rng, 0.05f), n, k, a, {1, k / 2}};
    };
    for (int i = 0; i < 2; ++i) {
      layers.push_back({linear(3 * hidden, hidden, Activation::none),
                        linear(hidden, hidden, Activation::none),
                        linear(ffn, hidden, Activation::gelu), linear(hidden, ffn, Activation::none),
                        norm(), norm()});
    }
  }

  BertWeights weights() const {
    BertWeights w;
    w.vocab = vocab;
    w.hidden = hidden;
    w.heads = heads;
    w.max_length = max_length;
    w.word_embeddings = word;
    w.position_embeddings = position;
    w.embedding_norm = embedding_norm;
    const auto as = [](const Linear& l) {
      return BertLinear{l.weight, l.bias, l.n, l.k, l.activation, l.channels};
    };
    for (const Layer& l : layers) {
      w.layers.push_back({as(l.qkv), as(l.attention_out), as(l.intermediate), as(l.output),
                          l.attention_norm, l.output_norm});
    }
    return w;
  }

  static std::vector<double> apply(const Linear& l, const std::vector<double>& x, int m) {
    std::vector<double> y(std::size_t(m) * l.n);
    for (int r = 0; r < m; ++r) {
      for (int o = 0; o < l.n; ++o) {
        double v = l.bias[o];
        for (int c = 0; c < l.k; ++c) v += x[std::size_t(r) * l.k + c] * l.weight[std::size_t(o) * l.k + c];
        if (l.activation == Activation::gelu) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        y[std::size_t(r) * l.n + o] = v;
      }
    }
    return y;
  }

  // The FP32 model in double: embeddings [rows, hidden].
  std::vector<double> forward(const std::vector<std::int32_t>& ids,
                              const std::vector<std::int32_t>& offsets) const {
    const int tokens = offsets.back(), h = hidden;
    std::vector<double> x(std::size_t(tokens) * h), s(h);
    for (std::size_t r = 0; r + 1 < offsets.size(); ++r) {
      for (int t = offsets[r]; t < offsets[r + 1]; ++t) {
        for (int c = 0; c < h; ++c) {
          s[c] = double(word[std::size_t(ids[t]) * h + c]) + position[std::size_t(t - offsets[r]) * h + c];
        }
        host_layer_norm(s.data(), embedding_norm.data(), embedding_norm.data() + h, h, 1e-12,
                        &x[std::size_t(t) * h]);
      }
    }
    const auto add_norm = [&](const std::vector<double>& a, const std::vector<float>& norm) {
      for (int t = 0; t < tokens; ++t) {
        for (int c = 0; c < h; ++c) s[c] = a[std::size_t(t) * h + c] + x[std::size_t(t) * h + c];
        host_layer_norm(s.data(), norm.data(), norm.data() + h, h, 1e-12, &x[std::size_t(t) * h]);
      }
    };
    for (const Layer& l : layers) {
      const auto qkv = apply(l.qkv, x, tokens);
      const std::vector<float> qkv_f(qkv.begin(), qkv.end());
      const auto context = host_attention(qkv_f, offsets, heads, h / heads,
                                          1.0 / std::sqrt(double(h / heads)));
      add_norm(apply(l.attention_out, context, tokens), l.attention_norm);
      add_norm(apply(l.output, apply(l.intermediate, x, tokens), tokens), l.output_norm);
    }
    std::vector<double> e((offsets.size() - 1) * h);
    for (std::size_t r = 0; r + 1 < offsets.size(); ++r) {
      double norm2 = 0;
      for (int c = 0; c < h; ++c) {
        double sum = 0;
        for (int t = offsets[r]; t < offsets[r + 1]; ++t) sum += x[std::size_t(t) * h + c];
        e[r * h + c] = sum;
        norm2 += sum * sum;
      }
      for (int c = 0; c < h; ++c) e[r * h + c] /= std::sqrt(norm2);
    }
    return e;
  }
};

}  // namespace

TEST_CASE("Int8BertEncoder on a small random BERT is within cosine 0.995 of FP32, row by row") {
  std::mt19937 rng(3);
  const HostBert bert(rng);
  const std::vector<int> lengths = {5, 1, 24, 17, 9, 2};
  const auto offsets = offsets_of(lengths);
  const int rows = static_cast<int>(lengths.size()), tokens = offsets.back();
  std::vector<std::int32_t> ids(tokens);
  for (auto& id : ids) id = static_cast<std::int32_t>(rng() % HostBert::vocab);
  const auto expected = bert.forward(ids, offsets);

  Int8BertEncoder encoder;
  const Status created = Int8BertEncoder::create(bert.weights(), 8, 128, encoder);
  REQUIRE_MESSAGE(created.ok(), created.message());
  Int8BertEncoder::Scratch scratch;
  REQUIRE(encoder.create_scratch(scratch).ok());
  for (int round = 0; round < 2; ++round) {  // the second batch reuses the scratch (and plans)
    REQUIRE(cudaMemcpy(scratch.input(), ids.data(), sizeof(std::int32_t) * tokens,
                       cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(scratch.input() + encoder.input_offsets_byte(), offsets.data(),
                       sizeof(std::int32_t) * offsets.size(), cudaMemcpyHostToDevice) == cudaSuccess);
    const Status run = encoder.enqueue(scratch, rows, tokens, nullptr);
    REQUIRE_MESSAGE(run.ok(), run.message());
    const auto e = from_device(scratch.embeddings(), std::size_t(rows) * HostBert::hidden);
    double worst = 1;
    for (int r = 0; r < rows; ++r) {
      double dot = 0, a2 = 0, b2 = 0;
      for (int c = 0; c < HostBert::hidden; ++c) {
        const double a = e[std::size_t(r) * HostBert::hidden + c];
        const double b = expected[std::size_t(r) * HostBert::hidden + c];
        dot += a * b;
        a2 += a * a;
        b2 += b * b;
      }
      worst = std::min(worst, dot / std::sqrt(a2 * b2));
      CHECK(std::abs(std::sqrt(a2) - 1.0) < 1e-4);  // L2-normalized
    }
    MESSAGE("worst cosine to the FP32 host model: " << worst);
    CHECK(worst >= 0.995);
  }
  CHECK(encoder.enqueue(scratch, 9, 20, nullptr).message().find("outside") != std::string::npos);
}
