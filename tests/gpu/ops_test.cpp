#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "coinfer/ops/cuda/cublaslt_gemm.hpp"
#include "coinfer/ops/cuda/cuda_memory.hpp"
#include "coinfer/ops/cuda/kernels.hpp"
#include "coinfer/ops/quantize.hpp"
#include "coinfer/ops/softmax.hpp"
#include "host_reference.hpp"

using namespace coinfer;
using namespace coinfer::cuda;

namespace {

template <class T>
DeviceBuffer upload(const std::vector<T>& v) {
  DeviceBuffer b;
  REQUIRE(DeviceBuffer::allocate(v.size() * sizeof(T), b).ok());
  REQUIRE(cudaMemcpy(b.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  return b;
}

template <class T>
std::vector<T> download(const DeviceBuffer& b, std::size_t count) {
  std::vector<T> v(count);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(v.data(), b.data(), count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  return v;
}

}  // namespace

TEST_CASE("row quantization on the GPU equals the CPU's bit for bit, padding included") {
  std::mt19937 rng(1);
  for (int k : {66, 1000}) {
    CAPTURE(k);
    const int m = 40, k_padded = (k + 3) / 4 * 4 + 4;  // extra padding columns to clear
    std::vector<float> x = gpu_test::random_floats(std::size_t(m) * k, rng);
    auto row = [&](int r) { return x.begin() + std::ptrdiff_t(r) * k; };
    std::fill(row(5), row(6), 0.0f);  // all zeros: scale 0, q 0
    // Exact .5 ties with amax 127 (so 127 / amax is exactly 1): half to even, as nearbyint.
    const float ties[] = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 126.5f};
    std::fill(row(6), row(7), 0.0f);
    std::copy(std::begin(ties), std::end(ties), row(6));
    std::fill(row(7), row(8), 1.0f);
    x[std::size_t(7) * k + 3] = INFINITY;  // an Inf row: zeros, scale Inf (NaN outputs)
    std::fill(row(8), row(9), 1.0f);
    x[std::size_t(8) * k + 1] = NAN;  // a NaN row: zeros, scale 0
    std::vector<std::int8_t> q_cpu(x.size());
    std::vector<float> s_cpu(m);
    quantize_activations_per_row(x.data(), m, k, q_cpu.data(), s_cpu.data());

    DeviceBuffer dx = upload(x), dq, ds;
    REQUIRE(DeviceBuffer::allocate(std::size_t(m) * k_padded, dq).ok());
    REQUIRE(DeviceBuffer::allocate(sizeof(float) * m, ds).ok());
    REQUIRE(cudaMemset(dq.data(), 0x55, dq.bytes()) == cudaSuccess);  // stale values to clear
    REQUIRE(quantize_rows_int8(dx.as<float>(), m, k, k_padded, dq.as<std::int8_t>(), ds.as<float>(),
                               nullptr)
                .ok());
    auto q = download<std::int8_t>(dq, std::size_t(m) * k_padded);
    auto s = download<float>(ds, m);
    int wrong = 0, wrong_padding = 0, wrong_scales = 0;
    for (int r = 0; r < m; ++r) {
      wrong_scales += std::memcmp(&s[r], &s_cpu[r], sizeof(float)) != 0;
      for (int c = 0; c < k; ++c) {
        wrong += q[std::size_t(r) * k_padded + c] != q_cpu[std::size_t(r) * k + c];
      }
      for (int c = k; c < k_padded; ++c) wrong_padding += q[std::size_t(r) * k_padded + c] != 0;
    }
    CHECK(wrong == 0);
    CHECK(wrong_padding == 0);
    CHECK(wrong_scales == 0);
    CHECK(s[5] == 0.0f);
    CHECK(std::isinf(s[7]));
    CHECK(s[8] == 0.0f);
    const std::int8_t tie_q[] = {127, 0, 2, 2, 0, -2, 126};
    for (int c = 0; c < 7; ++c) CHECK(q[std::size_t(6) * k_padded + c] == tie_q[c]);
  }
}

TEST_CASE("the INT8 cuBLASLt GEMM is exact at the MLP's shapes and odd batch sizes") {
  std::mt19937 rng(2);
  std::uniform_int_distribution<int> d(-127, 127);
  CublasLt lt;
  REQUIRE(CublasLt::create(lt).ok());
  DeviceBuffer workspace;
  REQUIRE(DeviceBuffer::allocate(4 << 20, workspace).ok());
  // {n_padded, k_padded}: the digits MLP's (its head padded to 16), and N = 12, the smallest
  const int shapes[][2] = {{256, 64}, {256, 256}, {16, 256}, {12, 256}};
  for (const auto& [n, k] : shapes) {
    GemmPlan plan;
    REQUIRE(
        GemmPlan::create(lt, GemmKind::int8, 300, n, k, workspace.data(), workspace.bytes(), plan)
            .ok());
    if (n == 256 && k == 256) REQUIRE(plan.prepare().ok());  // the others query on first use
    // Up, down and up again: a cached algorithm is reused after the layouts were rewritten.
    for (int m : {1, 3, 64, 300, 3, 300}) {
      CAPTURE(n);
      CAPTURE(k);
      CAPTURE(m);
      std::vector<std::int8_t> x(std::size_t(m) * k), w(std::size_t(n) * k);
      for (auto& v : x) v = static_cast<std::int8_t>(d(rng));
      for (auto& v : w) v = static_cast<std::int8_t>(d(rng));
      DeviceBuffer dx = upload(x), dw = upload(w), dy;
      REQUIRE(DeviceBuffer::allocate(sizeof(std::int32_t) * m * n, dy).ok());
      const Status s = plan.run(dx.data(), m, dw.data(), dy.data(), nullptr);
      REQUIRE_MESSAGE(s.ok(), s.message());
      auto y = download<std::int32_t>(dy, std::size_t(m) * n);
      int wrong = 0;
      for (int r = 0; r < m; ++r) {
        for (int c = 0; c < n; ++c) {
          std::int32_t acc = 0;
          for (int i = 0; i < k; ++i)
            acc += std::int32_t(x[std::size_t(r) * k + i]) * w[std::size_t(c) * k + i];
          wrong += acc != y[std::size_t(r) * n + c];
        }
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("an INT8 GEMM plan refuses dimensions that are not multiples of 4") {
  CublasLt lt;
  REQUIRE(CublasLt::create(lt).ok());
  GemmPlan plan;
  const Status s = GemmPlan::create(lt, GemmKind::int8, 8, 10, 64, nullptr, 0, plan);
  CHECK(s.code() == Errc::invalid_argument);
  CHECK(s.message().find("multiples of 4") != std::string::npos);
}

TEST_CASE("the FP16 GEMM agrees with an FP32 host GEMM to FP16 precision") {
  std::mt19937 rng(3);
  const int m = 64, n = 256, k = 256;
  std::vector<float> x = gpu_test::random_floats(std::size_t(m) * k, rng),
                     w = gpu_test::random_floats(std::size_t(n) * k, rng);
  CublasLt lt;
  REQUIRE(CublasLt::create(lt).ok());
  DeviceBuffer workspace, dxh, dwh, dy;
  REQUIRE(DeviceBuffer::allocate(4 << 20, workspace).ok());
  DeviceBuffer dx = upload(x), dw = upload(w);
  REQUIRE(DeviceBuffer::allocate(2 * x.size(), dxh).ok());
  REQUIRE(DeviceBuffer::allocate(2 * w.size(), dwh).ok());
  REQUIRE(DeviceBuffer::allocate(2 * std::size_t(m) * n, dy).ok());
  REQUIRE(float_to_half(dx.as<float>(), x.size(), dxh.as<std::uint16_t>(), nullptr).ok());
  REQUIRE(float_to_half(dw.as<float>(), w.size(), dwh.as<std::uint16_t>(), nullptr).ok());
  GemmPlan plan;
  REQUIRE(GemmPlan::create(lt, GemmKind::fp16, m, n, k, workspace.data(), workspace.bytes(), plan)
              .ok());
  REQUIRE(plan.run(dxh.data(), m, dwh.data(), dy.data(), nullptr).ok());
  auto y = download<std::uint16_t>(dy, std::size_t(m) * n);
  // FP16 -> float by hand (no CUDA headers needed on the host side of the check).
  auto to_float = [](std::uint16_t h) {
    const int e = (h >> 10) & 31, f = h & 1023;
    const float v = e == 0 ? std::ldexp(float(f), -24) : std::ldexp(float(f + 1024), e - 25);
    return (h & 0x8000) ? -v : v;
  };
  double worst = 0.0;
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < n; ++c) {
      double acc = 0.0;
      for (int i = 0; i < k; ++i)
        acc += double(x[std::size_t(r) * k + i]) * w[std::size_t(c) * k + i];
      worst = std::max(worst, std::abs(acc - to_float(y[std::size_t(r) * n + c])));
    }
  }
  CHECK(worst < 0.25);  // |y| ~ 16; FP16 inputs and output carry ~3 decimal digits
}

TEST_CASE("the epilogue equals the CPU's formula bit for bit: scales, bias, each activation") {
  const int m = 3, n = 5, ld = 8;
  std::vector<std::int32_t> acc(std::size_t(m) * ld);
  for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = (static_cast<std::int32_t>(i) - 10) * 977;
  std::vector<float> rs{0.0005f, 0.0013f, 0.002f}, cs{0.01f, 0.02f, 0.031f, 0.04f, 0.05f},
      bias{0.0f, 1.0f, -1.0f, 0.5f, 0.1f};
  DeviceBuffer da = upload(acc), dr = upload(rs), dc = upload(cs), db = upload(bias), dy;
  REQUIRE(DeviceBuffer::allocate(sizeof(float) * m * n, dy).ok());
  for (Activation activation : {Activation::none, Activation::relu, Activation::gelu}) {
    CAPTURE(to_string(activation));
    REQUIRE(dequantize_bias_activation(da.as<std::int32_t>(), m, n, ld, dr.as<float>(),
                                       dc.as<float>(), db.as<float>(), activation, dy.as<float>(),
                                       nullptr)
                .ok());
    auto y = download<float>(dy, std::size_t(m) * n);
    int wrong = 0;
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < n; ++c) {
        float v = dequantize(float(acc[std::size_t(r) * ld + c]), rs[r], cs[c], bias[c]);
        if (activation == Activation::relu) v = std::max(v, 0.0f);
        if (activation == Activation::gelu) v = gelu(v);
        wrong += std::memcmp(&y[std::size_t(r) * n + c], &v, sizeof v) != 0;
        if (activation == Activation::gelu) {
          CHECK(y[std::size_t(r) * n + c] ==
                doctest::Approx(
                    gelu_reference(float(acc[std::size_t(r) * ld + c]) * rs[r] * cs[c] + bias[c]))
                    .epsilon(1e-5));
        }
      }
    }
    CHECK(wrong == 0);
  }

  // No bias, added to a residual stream: y += acc * row_scale * col_scale, the same rounding.
  std::vector<float> residual(std::size_t(m) * n);
  for (std::size_t i = 0; i < residual.size(); ++i) residual[i] = 0.25f * float(i) - 1.0f;
  DeviceBuffer dres = upload(residual);
  REQUIRE(dequantize_bias_activation(da.as<std::int32_t>(), m, n, ld, dr.as<float>(),
                                     dc.as<float>(), nullptr, Activation::none, dres.as<float>(),
                                     nullptr, {}, /*accumulate=*/true)
              .ok());
  const auto sum = download<float>(dres, residual.size());
  int wrong = 0;
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < n; ++c) {
      const float v = residual[std::size_t(r) * n + c] +
                      dequantize(float(acc[std::size_t(r) * ld + c]), rs[r], cs[c], 0.0f);
      wrong += std::memcmp(&sum[std::size_t(r) * n + c], &v, sizeof v) != 0;
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("softmax and argmax on the GPU match the CPU's, ties to the lowest index") {
  std::mt19937 rng(4);
  for (int n : {10, 1000}) {  // 1000: many elements per lane
    CAPTURE(n);
    const int m = 50;
    std::vector<float> x = gpu_test::random_floats(std::size_t(m) * n, rng, 3.0f);
    for (int c = 0; c < n; ++c) x[c] = 1.0f;  // row 0: all equal -> label 0
    // Row 1: the maximum twice, in the same lane (c and c + 32) and in another lane before it.
    x[std::size_t(n) + 7] = 50.0f;
    x[std::size_t(n) + 5] = 50.0f;
    if (n > 40) x[std::size_t(n) + 37] = 50.0f;
    std::vector<float> expected = x;
    std::vector<std::int64_t> expected_labels(m);
    softmax_rows(expected.data(), m, n);
    argmax_rows(expected.data(), m, n, expected_labels.data());
    DeviceBuffer dx = upload(x), dl;
    REQUIRE(DeviceBuffer::allocate(sizeof(std::int64_t) * m, dl).ok());
    REQUIRE(softmax_argmax_rows(dx.as<float>(), m, n, dl.as<std::int64_t>(), nullptr).ok());
    auto p = download<float>(dx, std::size_t(m) * n);
    auto labels = download<std::int64_t>(dl, m);
    for (std::size_t i = 0; i < p.size(); ++i)
      CHECK(p[i] == doctest::Approx(expected[i]).epsilon(1e-5));
    CHECK(labels == expected_labels);
    CHECK(labels[1] == 5);
  }
}
