#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/gelu.hpp"
#include "coinfer/ops/int8_linear.hpp"
#include "coinfer/ops/quantize.hpp"
#include "coinfer/ops/reference.hpp"
#include "coinfer/ops/softmax.hpp"
#include "test_data.hpp"

using namespace coinfer;
using coinfer::test::random_normal;

namespace {

struct Layer {
  int n, k;
  std::vector<float> w;  // FP32 [n, k]
  std::vector<float> b;  // FP32 [n]
};

Layer random_layer(int n, int k, std::uint32_t seed) {
  // Kaiming-like weights keep outputs O(1), as in a trained network.
  return {n, k, random_normal(std::size_t(n) * k, seed, 1.0f / std::sqrt(float(k))),
          random_normal(std::size_t(n), seed + 1, 0.1f)};
}

// ||a - b|| / ||b|| over all elements.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace

TEST_CASE("weight quantization keeps one scale per output channel, max|W_c| / 127") {
  // W: FP32 [3, 4]; row 1 is all zeros.
  const std::vector<float> w = {0.5f, -1.0f, 0.25f, 0.0f, 0, 0, 0, 0, 3.0f, 1.5f, -0.75f, 2.0f};
  std::vector<std::int8_t> q(12);
  std::vector<float> scales(3);
  quantize_weights_per_channel(w.data(), 3, 4, q.data(), scales.data());
  CHECK(scales[0] == doctest::Approx(1.0f / 127));
  CHECK(scales[1] == 0.0f);
  CHECK(scales[2] == doctest::Approx(3.0f / 127));
  CHECK(q[1] == -127);  // the largest magnitude maps to +-127
  CHECK(q[8] == 127);
  CHECK(q[0] == 64);  // round(0.5 * 127) = round(63.5) = 64 (ties to even)
  CHECK(std::all_of(q.begin() + 4, q.begin() + 8, [](std::int8_t v) { return v == 0; }));
}

TEST_CASE("activation quantization is per row and maps a zero row to zeros with scale 0") {
  const std::vector<float> x = {0, 0, 0, 0, 1.0f, -2.0f, 0.5f, 4.0f};  // FP32 [2, 4]
  std::vector<std::int8_t> q(8, 99);
  std::vector<float> scales(2, 99.0f);
  quantize_activations_per_row(x.data(), 2, 4, q.data(), scales.data());
  CHECK(scales[0] == 0.0f);
  CHECK(std::all_of(q.begin(), q.begin() + 4, [](std::int8_t v) { return v == 0; }));
  CHECK(scales[1] == doctest::Approx(4.0f / 127));
  CHECK(q[7] == 127);
  CHECK(q[5] == -64);  // round(-2 * 127 / 4) = round(-63.5) = -64
}

TEST_CASE("u8 activation quantization is the int8 one shifted by 128") {
  const int m = 3, k = 50;
  auto x = random_normal(std::size_t(m) * k, 3);
  std::fill(x.begin() + k, x.begin() + 2 * k, 0.0f);  // a zero row
  std::vector<std::int8_t> q(x.size());
  std::vector<std::uint8_t> q_u8(x.size());
  std::vector<float> scales(m), scales_u8(m);
  quantize_activations_per_row(x.data(), m, k, q.data(), scales.data());
  quantize_activations_per_row_u8(x.data(), m, k, q_u8.data(), scales_u8.data());
  CHECK(scales == scales_u8);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(int(q_u8[i]) == int(q[i]) + 128);
}

TEST_CASE("quantization error is at most half a step per element") {
  const int m = 16, k = 300;
  const auto x = random_normal(std::size_t(m) * k, 7);
  std::vector<std::int8_t> q(x.size());
  std::vector<float> scales(m);
  quantize_activations_per_row(x.data(), m, k, q.data(), scales.data());
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < k; ++c) {
      const float v = x[std::size_t(r) * k + c];
      const float back = q[std::size_t(r) * k + c] * scales[r];
      CHECK(std::fabs(v - back) <= 0.5f * scales[r] * (1 + 1e-5f));
    }
  }
}

TEST_CASE("non-finite activations do not crash quantization") {
  const std::vector<float> x = {INFINITY, 1.0f, NAN, -INFINITY};
  std::vector<std::int8_t> q(4);
  float scale = 0;
  quantize_activations_per_row(x.data(), 1, 4, q.data(), &scale);
  CHECK(std::all_of(q.begin(), q.end(), [](std::int8_t v) { return v >= -127 && v <= 127; }));
}

TEST_CASE("channels left out of the scale quantize to zero, whatever they hold") {
  const int k = 6;
  // Channels 1 and 4 are side channels: an outlier and a NaN, then Inf and a negative outlier.
  const std::vector<float> x = {0.5f, 1000.0f, -2.0f, 1.0f, NAN, 0.25f,
                                1.0f, INFINITY, 0.5f, -4.0f, -900.0f, 2.0f};
  const std::vector<std::uint32_t> keep = {~0u, 0u, ~0u, ~0u, 0u, ~0u};
  std::vector<std::uint8_t> q(x.size(), 7);
  std::vector<float> scales(2);
  quantize_activations_per_row_u8(x.data(), 2, k, keep.data(), q.data(), scales.data());
  CHECK(scales[0] == 2.0f / 127);  // from the kept channels alone
  CHECK(scales[1] == 4.0f / 127);
  CHECK(int(q[1]) == 128);  // zero, stored +128
  CHECK(int(q[4]) == 128);
  CHECK(int(q[k + 1]) == 128);
  CHECK(int(q[k + 4]) == 128);
  CHECK(int(q[2]) == 128 - 127);  // the kept channels as without side channels
  CHECK(int(q[0]) == 128 + 32);   // round(0.5 * 127 / 2) = round(31.75)
  CHECK(int(q[k + 3]) == 128 - 127);
  CHECK(int(q[k + 5]) == 128 + 64);  // round(63.5), ties to even
}

TEST_CASE("a row with an infinite activation quantizes to zeros with an infinite scale") {
  const std::vector<float> x = {1.0f, -INFINITY, 3.0f, 0.5f};
  std::vector<std::uint8_t> q(4, 7);
  float scale = 0;
  quantize_activations_per_row_u8(x.data(), 1, 4, q.data(), &scale);
  CHECK(std::isinf(scale));
  CHECK(std::all_of(q.begin(), q.end(), [](std::uint8_t v) { return v == 128; }));
}

// Each element obeys a worst-case bound, whatever the data. With x = s_x q_x + e_x and
// w = s_w q_w + e_w, |e_x| <= s_x / 2, |e_w| <= s_w / 2, the INT8 result is
// sum (x - e_x)(w - e_w) + b, so |y_int8 - y_fp32| <= s_w/2 sum|x| + s_x/2 sum|w| + k s_x s_w / 4.
TEST_CASE("every int8 linear output lies within the worst-case quantization bound") {
  const int m = 9, n = 70, k = 200;
  const Layer layer = random_layer(n, k, 11);
  auto x = random_normal(std::size_t(m) * k, 12);
  x[5] = 25.0f;  // an outlier widens row 0's step: the bound must still hold
  Int8Linear linear;
  REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::none, m, linear).ok());
  std::vector<float> y(std::size_t(m) * n), ref(y.size());
  REQUIRE(linear.forward(x.data(), m, y.data()).ok());
  linear_fp32_reference(x.data(), m, k, layer.w.data(), n, layer.b.data(), Activation::none,
                        ref.data());
  for (int r = 0; r < m; ++r) {
    const float* xr = &x[std::size_t(r) * k];
    double max_x = 0, sum_x = 0;
    for (int i = 0; i < k; ++i) max_x = std::max(max_x, double(std::fabs(xr[i])));
    for (int i = 0; i < k; ++i) sum_x += std::fabs(xr[i]);
    const double s_x = max_x / 127;
    for (int c = 0; c < n; ++c) {
      const float* wc = &layer.w[std::size_t(c) * k];
      double max_w = 0, sum_w = 0;
      for (int i = 0; i < k; ++i) max_w = std::max(max_w, double(std::fabs(wc[i])));
      for (int i = 0; i < k; ++i) sum_w += std::fabs(wc[i]);
      const double s_w = max_w / linear.weight_qmax();  // 63 where the CPU lacks VNNI
      const double bound = s_w / 2 * sum_x + s_x / 2 * sum_w + k * s_x * s_w / 4;
      const double err = std::fabs(double(y[std::size_t(r) * n + c]) - ref[std::size_t(r) * n + c]);
      // 1e-5 relative slack for the FP32 epilogue's own rounding.
      CHECK(err <= bound + 1e-5 * std::fabs(ref[std::size_t(r) * n + c]) + 1e-6);
    }
  }
}

TEST_CASE("int8 linear is exact when inputs and weights already lie on the int8 grid") {
  // Every row of x holds integers in [-127, 127] including a +-127, and every row of W integers
  // in [-qmax, qmax] including a +-qmax (the layer's weight grid: 127, or 63 without VNNI), so
  // both scales are 1 and quantization is lossless: any error would come from the GEMM (a
  // saturated INT16 pair sum, say) or the u8-shift term.
  const int m = 6, n = 33, k = 257;
  const int qmax = Int8Linear::saturation_free_weight_qmax();
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dist(-127, 127), wdist(-qmax, qmax);
  std::vector<float> x(std::size_t(m) * k), w(std::size_t(n) * k), b(std::size_t(n), 0.5f);
  for (float& v : x) v = float(dist(rng));
  for (float& v : w) v = float(wdist(rng));
  for (int r = 0; r < m; ++r) x[std::size_t(r) * k + std::size_t(r)] = (r % 2) ? 127.0f : -127.0f;
  for (int c = 0; c < n; ++c) {
    w[std::size_t(c) * k + std::size_t(c)] = float((c % 2) ? -qmax : qmax);
  }
  Int8Linear linear;
  REQUIRE(Int8Linear::create(w, b, n, k, Activation::none, m, linear).ok());
  std::vector<float> y(std::size_t(m) * n), ref(y.size());
  REQUIRE(linear.forward(x.data(), m, y.data()).ok());
  linear_fp32_reference(x.data(), m, k, w.data(), n, b.data(), Activation::none, ref.data());
  CHECK(y == ref);  // |y| < 2^24: every value is exact in FP32
}

// Random-rounding errors add in quadrature: each operand's per-element error is ~step/sqrt(12)
// with step = max|row| / 127 ~ 3.5 sigma / 127 for Gaussian rows of a few hundred elements,
// i.e. ~0.8% of the RMS value; two operands give ~1.1% relative error on the output (~1.6%
// with the 63-level weight grid of a CPU without VNNI). 2% leaves margin for the largest shapes
// (larger k means a larger max, hence a coarser step).
TEST_CASE("int8 linear error on random data is below 2% of the output magnitude") {
  struct Case {
    int m, n, k;
  };
  for (const Case c : {Case{1, 64, 64}, Case{32, 256, 256}, Case{64, 10, 256}, Case{17, 384, 768},
                       Case{8, 1536, 384}}) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    const Layer layer = random_layer(c.n, c.k, std::uint32_t(c.n * 31 + c.k));
    const auto x = random_normal(std::size_t(c.m) * c.k, std::uint32_t(c.m + 5));
    Int8Linear linear;
    REQUIRE(Int8Linear::create(layer.w, layer.b, c.n, c.k, Activation::none, c.m, linear).ok());
    std::vector<float> y(std::size_t(c.m) * c.n), ref(y.size());
    REQUIRE(linear.forward(x.data(), c.m, y.data()).ok());
    linear_fp32_reference(x.data(), c.m, c.k, layer.w.data(), c.n, layer.b.data(), Activation::none,
                          ref.data());
    const double rel = relative_error(y, ref);
    MESSAGE("m=" << c.m << " n=" << c.n << " k=" << c.k << " relative error " << rel);
    CHECK(rel < 0.02);
  }
}

TEST_CASE("a row's int8 output does not depend on the batch it runs in") {
  // Quantization is per row and the GEMM accumulates exactly in INT32, so row r of any batch
  // is bit-identical to running row r alone.
  const int max_batch = 48, n = 96, k = 128;
  const Layer layer = random_layer(n, k, 21);
  const auto x = random_normal(std::size_t(max_batch) * k, 22);
  Int8Linear linear;
  REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::relu, max_batch, linear).ok());
  std::vector<float> alone(std::size_t(max_batch) * n);
  for (int r = 0; r < max_batch; ++r) {
    REQUIRE(linear.forward(&x[std::size_t(r) * k], 1, &alone[std::size_t(r) * n]).ok());
  }
  for (int m = 1; m <= max_batch; ++m) {
    std::vector<float> y(std::size_t(m) * n);
    REQUIRE(linear.forward(x.data(), m, y.data()).ok());
    CHECK(std::equal(y.begin(), y.end(), alone.begin()));
  }
}

TEST_CASE("every batch-size bucket of a layer shares one weight copy") {
  // max_batch 64: buckets M = 1, 2, 4, ..., 64, each its own oneDNN primitive, one INT8 copy
  // of W among them. Shapes of the digits MLP, MiniLM and SmolLM2's layers.
  for (auto [n, k] : {std::pair{256, 64}, {10, 256}, {384, 384}, {1536, 384}, {1536, 576}}) {
    CAPTURE(n);
    CAPTURE(k);
    const Layer layer = random_layer(n, k, 23);
    Int8Linear linear;
    REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::none, 64, linear).ok());
    CHECK(linear.weight_copies() == 1);
    // One INT8 byte per weight plus the layout's padding (oneDNN's blocked layouts pad N and
    // K up to blocks of at most 64: on AVX-512, N = 10 takes 64 rows), then FP32 scales and
    // bias and the INT32 compensation per output channel. Two copies would not fit.
    const std::size_t per_channel = 3 * 4 * std::size_t(n);
    const auto padded = [](int v) { return (std::size_t(v) + 63) / 64 * 64; };
    CHECK(linear.weight_bytes() >= std::size_t(n) * k + per_channel);
    CHECK(linear.weight_bytes() < padded(n) * padded(k) + std::size_t(n) * k + per_channel);
  }
}

TEST_CASE("the relu and gelu epilogues apply the reference activations") {
  const int m = 5, n = 40, k = 64;
  const Layer layer = random_layer(n, k, 31);
  const auto x = random_normal(std::size_t(m) * k, 32);
  Int8Linear plain, relu, gelu;
  REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::none, m, plain).ok());
  REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::relu, m, relu).ok());
  REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::gelu, m, gelu).ok());
  std::vector<float> y(std::size_t(m) * n), y_relu(y.size()), y_gelu(y.size());
  REQUIRE(plain.forward(x.data(), m, y.data()).ok());
  REQUIRE(relu.forward(x.data(), m, y_relu.data()).ok());
  REQUIRE(gelu.forward(x.data(), m, y_gelu.data()).ok());
  for (std::size_t i = 0; i < y.size(); ++i) {
    CHECK(y_relu[i] == relu_reference(y[i]));
    // gelu = 0.5 v (1 + erf): erf_fast's 4e-7 error scales by 0.5 |v|; plus FP32 rounding.
    const double allowed = 0.5 * std::fabs(y[i]) * 4e-7 + 1e-6 * std::fabs(y_gelu[i]) + 1e-7;
    CHECK(std::fabs(double(y_gelu[i]) - gelu_reference(y[i])) <= allowed);
  }
  CHECK(gelu_reference(0.0f) == 0.0f);
  CHECK(gelu_reference(1.0f) == doctest::Approx(0.8413447f));
  CHECK(gelu_reference(-1.0f) == doctest::Approx(-0.1586553f));
}

TEST_CASE("the fast erf used by the gelu epilogue stays within 4e-7 of std::erf") {
  double worst = 0;
  for (float x = -6.0f; x <= 6.0f; x += 1.0f / 1024) {
    worst = std::max(worst, std::fabs(double(erf_fast(x)) - std::erf(double(x))));
  }
  MESSAGE("erf_fast max abs error on [-6, 6]: " << worst);
  CHECK(worst < 4e-7);
}

TEST_CASE("int8 linear rejects a batch outside 1..max_batch and mismatched weights") {
  const Layer layer = random_layer(8, 16, 41);
  Int8Linear linear;
  REQUIRE(Int8Linear::create(layer.w, layer.b, 8, 16, Activation::none, 4, linear).ok());
  std::vector<float> x(5 * 16), y(5 * 8);
  CHECK(linear.forward(x.data(), 5, y.data()).code() == Errc::invalid_argument);
  CHECK(linear.forward(x.data(), 0, y.data()).code() == Errc::invalid_argument);
  Int8Linear bad;
  CHECK(Int8Linear::create(layer.w, layer.b, 8, 15, Activation::none, 4, bad).code() ==
        Errc::invalid_argument);
  CHECK(Int8Linear::create(layer.w, std::span(layer.b).first(3), 8, 16, Activation::none, 4, bad)
            .code() == Errc::invalid_argument);
  CHECK(Int8Linear().forward(x.data(), 1, y.data()).code() == Errc::internal);
}

TEST_CASE("int8 linear keeps the fp32 weights only when asked") {
  const Layer layer = random_layer(8, 16, 51);
  Int8Linear serving, reference;
  REQUIRE(Int8Linear::create(layer.w, {}, 8, 16, Activation::none, 2, serving).ok());
  REQUIRE(Int8Linear::create(layer.w, {}, 8, 16, Activation::none, 2, reference, true).ok());
  CHECK(serving.fp32_weight().empty());
  CHECK(std::equal(layer.w.begin(), layer.w.end(), reference.fp32_weight().begin()));
  CHECK(
      std::all_of(serving.bias().begin(), serving.bias().end(), [](float b) { return b == 0.0f; }));
}

TEST_CASE("int8 results are identical with one or two compute threads") {
  const int m = 32, n = 256, k = 256;
  const Layer layer = random_layer(n, k, 61);
  const auto x = random_normal(std::size_t(m) * k, 62);
  Int8Linear linear;
  REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::none, m, linear).ok());
  std::vector<float> one(std::size_t(m) * n), two(one.size());
  set_compute_threads(1);
  REQUIRE(linear.forward(x.data(), m, one.data()).ok());
  set_compute_threads(2);
  REQUIRE(linear.forward(x.data(), m, two.data()).ok());
  CHECK(one == two);
}

TEST_CASE("softmax rows sum to one, match the reference and survive large logits") {
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 1000.0f, 1001.0f, 999.0f};  // FP32 [2, 3]
  std::vector<float> ref = x;
  softmax_rows(x.data(), 2, 3);
  softmax_reference(ref.data(), 2, 3);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(x[i] == doctest::Approx(ref[i]).epsilon(1e-6));
  CHECK(x[0] + x[1] + x[2] == doctest::Approx(1.0f));
  CHECK(x[3] + x[4] + x[5] == doctest::Approx(1.0f));
  std::int64_t labels[2];
  argmax_rows(x.data(), 2, 3, labels);
  CHECK(labels[0] == 2);
  CHECK(labels[1] == 1);
}

TEST_CASE("a batch over max_gemm_rows runs in chunks and gives each row the same result") {
  const int m = 300, n = 48, k = 96;
  const Layer layer = random_layer(n, k, 31);
  const auto x = random_normal(std::size_t(m) * k, 32);
  Int8Linear whole, chunked;
  REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::gelu, m, whole).ok());
  Int8LinearOptions options;
  options.max_batch = m;
  options.max_gemm_rows = 64;  // 4 chunks of 64 and one of 44 (bucket 64)
  REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::gelu, options, chunked).ok());
  CHECK(chunked.max_gemm_rows() == 64);
  std::vector<float> a(std::size_t(m) * n), b(a.size());
  REQUIRE(whole.forward(x.data(), m, a.data()).ok());
  REQUIRE(chunked.forward(x.data(), m, b.data()).ok());
  CHECK(a == b);
}

TEST_CASE("weights quantized to 63 levels keep int8 linear exact on CPUs without VNNI") {
  // Inputs on the int8 grid with +-127 in every row (u8 values up to 255) and weights on the
  // 63 grid: every pair of u8 x s8 products stays within INT16, so even AVX2's saturating
  // vpmaddubsw adds them exactly.
  const int m = 6, n = 33, k = 257;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> xs(-127, 127), ws(-63, 63);
  std::vector<float> x(std::size_t(m) * k), w(std::size_t(n) * k), b(std::size_t(n), 0.5f);
  for (float& v : x) v = float(xs(rng));
  for (float& v : w) v = float(ws(rng));
  for (int r = 0; r < m; ++r) x[std::size_t(r) * k + std::size_t(r)] = (r % 2) ? 127.0f : -127.0f;
  for (int c = 0; c < n; ++c) w[std::size_t(c) * k + std::size_t(c)] = (c % 2) ? -63.0f : 63.0f;
  Int8LinearOptions options;
  options.max_batch = m;
  options.weight_qmax = 63;
  Int8Linear linear;
  REQUIRE(Int8Linear::create(w, b, n, k, Activation::none, options, linear).ok());
  std::vector<float> y(std::size_t(m) * n), ref(y.size());
  REQUIRE(linear.forward(x.data(), m, y.data()).ok());
  linear_fp32_reference(x.data(), m, k, w.data(), n, b.data(), Activation::none, ref.data());
  CHECK(y == ref);
  const int qmax = Int8Linear::saturation_free_weight_qmax();
  CHECK((qmax == 63 || qmax == 127));
}

TEST_CASE("an outlier input channel run in fp32 no longer coarsens the other channels") {
  const int m = 8, n = 64, k = 256, outlier = 37;
  const Layer layer = random_layer(n, k, 41);
  auto x = random_normal(std::size_t(m) * k, 42);
  for (int r = 0; r < m; ++r) x[std::size_t(r) * k + outlier] = 60.0f + float(r);
  std::vector<float> ref(std::size_t(m) * n), y(ref.size());
  linear_fp32_reference(x.data(), m, k, layer.w.data(), n, layer.b.data(), Activation::relu,
                        ref.data());
  const int channels[] = {outlier};
  double errors[2];
  for (int side = 0; side < 2; ++side) {
    Int8LinearOptions options;
    options.max_batch = m;
    if (side == 1) options.fp32_input_channels = channels;
    Int8Linear linear;
    REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, Activation::relu, options, linear).ok());
    CHECK(linear.fp32_input_channels().size() == std::size_t(side));
    REQUIRE(linear.forward(x.data(), m, y.data()).ok());
    errors[side] = relative_error(y, ref);
  }
  MESSAGE("relative error with the outlier quantized " << errors[0] << ", in fp32 " << errors[1]);
  CHECK(errors[1] < 0.02);
  CHECK(errors[1] < errors[0] / 3);

  Int8LinearOptions bad;
  bad.max_batch = m;
  const int out_of_range[] = {k};
  bad.fp32_input_channels = out_of_range;
  Int8Linear linear;
  CHECK(Int8Linear::create(layer.w, layer.b, n, k, Activation::none, bad, linear).code() ==
        Errc::invalid_argument);
}

TEST_CASE("fp32 side channels of any count, with every activation, stay close to fp32") {
  const int m = 5, n = 40, k = 96;
  const Layer layer = random_layer(n, k, 43);
  auto x = random_normal(std::size_t(m) * k, 44);
  // Up to 20 outliers: the epilogue adds 8 side channels per pass over a row, so 1 and 4 take
  // one pass and 20 three (8 + 8 + 4), as an LLM's linears with dozens of outliers do.
  std::vector<int> all;
  for (int j = 0; j < 20; ++j) all.push_back(2 + 4 * j);
  for (int r = 0; r < m; ++r) {
    for (std::size_t j = 0; j < all.size(); ++j) {
      x[std::size_t(r) * k + all[j]] = 30.0f + float(j + r);
    }
  }
  for (const Activation activation : {Activation::none, Activation::relu, Activation::gelu}) {
    std::vector<float> ref(std::size_t(m) * n), y(ref.size());
    linear_fp32_reference(x.data(), m, k, layer.w.data(), n, layer.b.data(), activation,
                          ref.data());
    for (const std::size_t count : {std::size_t(1), std::size_t(4), all.size()}) {
      CAPTURE(count);
      CAPTURE(int(activation));
      Int8LinearOptions options;
      options.max_batch = m;
      // The largest outliers are the last ones: with fewer side channels the rest are
      // quantized, as a model calibrated for fewer would.
      options.fp32_input_channels = std::span(all).last(count);
      Int8Linear linear;
      REQUIRE(Int8Linear::create(layer.w, layer.b, n, k, activation, options, linear).ok());
      REQUIRE(linear.forward(x.data(), m, y.data()).ok());
      CHECK(relative_error(y, ref) < (count == all.size() ? 0.02 : 0.2));
    }
  }
}

TEST_CASE("the vectorized gelu gives gelu()'s bits for every input") {
  std::vector<float> v;
  for (float x = -10.0f; x <= 10.0f; x += 0.00123f) v.push_back(x);
  for (float x : {0.0f, -0.0f, 4.0f * 1.41421356f, -4.0f * 1.41421356f, 1e-30f, -1e30f, 1e30f}) {
    v.push_back(x);
  }
  std::vector<float> y = v;
  gelu_in_place(y.data(), y.size());
  std::size_t same = 0;
  for (std::size_t i = 0; i < v.size(); ++i) same += y[i] == gelu(v[i]) ? 1 : 0;
  CHECK(same == v.size());
}
