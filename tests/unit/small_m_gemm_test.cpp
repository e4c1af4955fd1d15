#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "coinfer/core/half.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/int8_linear.hpp"
#include "coinfer/ops/small_m_gemm.hpp"
#include "test_data.hpp"

using namespace coinfer;
using coinfer::test::random_normal;

namespace {

// Random INT8 weights [n][k] with |w| <= qmax and u8 activations [m][k] in 1..255 (what
// Int8Linear stores: q + 128).
struct Problem {
  int m, n, k;
  std::vector<std::int8_t> w;   // [n][k]
  std::vector<std::uint8_t> x;  // [m][k], plus slack for a blocked kernel's rounding of k
};

Problem random_problem(int m, int n, int k, int qmax, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> wd(-qmax, qmax), xd(1, 255);
  Problem p{m, n, k, std::vector<std::int8_t>(std::size_t(n) * k),
            std::vector<std::uint8_t>(std::size_t(m) * k + 4)};
  for (auto& v : p.w) v = static_cast<std::int8_t>(wd(rng));
  // Extremes too: saturation shows at the largest products.
  for (std::size_t i = 0; i < p.w.size(); i += 7) p.w[i] = static_cast<std::int8_t>(i % 2 ? qmax : -qmax);
  for (auto& v : p.x) v = static_cast<std::uint8_t>(xd(rng));
  for (std::size_t i = 0; i < p.x.size(); i += 5) p.x[i] = 255;
  return p;
}

// The plain sums, one multiply-add at a time.
std::vector<std::int32_t> reference(const Problem& p) {
  std::vector<std::int32_t> acc(std::size_t(p.m) * p.n);
  for (int r = 0; r < p.m; ++r) {
    for (int c = 0; c < p.n; ++c) {
      std::int32_t s = 0;
      for (int i = 0; i < p.k; ++i) s += std::int32_t{p.x[std::size_t(r) * p.k + i]} * p.w[std::size_t(c) * p.k + i];
      acc[std::size_t(r) * p.n + c] = s;
    }
  }
  return acc;
}

// The weights in oneDNN's VNNI blocking (BA16a{block}b4a), written from its description in
// small_m_gemm.hpp: blocks of `block` columns, each k rounded up to 64 inputs of
// [k / 4 groups][block columns][4 inputs], zeros past k and past n.
std::vector<std::int8_t> blocked(const Problem& p, int block, std::int64_t& block_stride) {
  const int k_padded = (p.k + 63) / 64 * 64;
  block_stride = std::int64_t{k_padded} * block;
  const int blocks = (p.n + block - 1) / block;
  std::vector<std::int8_t> out(std::size_t(blocks) * block_stride, 0);
  for (int c = 0; c < p.n; ++c) {
    for (int i = 0; i < p.k; ++i) {
      const std::size_t at = std::size_t(c / block) * block_stride +
                             std::size_t(i / 4) * block * 4 + std::size_t(c % block) * 4 + i % 4;
      out[at] = p.w[std::size_t(c) * p.k + i];
    }
  }
  return out;
}

// Runs the kernel over the columns in a few uneven calls (as the compute team takes them).
std::vector<std::int32_t> run(SmallMIsa isa, const SmallMWeights& w, const Problem& p) {
  std::vector<std::int32_t> acc(std::size_t(p.m) * p.n, -1);
  const int grain = small_m_column_grain(w);
  const int tiles = (p.n + grain - 1) / grain;
  for (int t = 0; t < tiles;) {
    const int take = std::min(tiles - t, 1 + t % 3);
    small_m_gemm(isa, w, p.x.data(), p.m, p.k, t * grain, std::min(p.n, (t + take) * grain),
                 acc.data(), p.n);
    t += take;
  }
  return acc;
}

struct Shape {
  int n, k;
};
// Tails in every dimension: n off the blocks and the 4-column tiles, k off 4, 32 and 64.
constexpr Shape kShapes[] = {{1, 1}, {3, 7}, {17, 33}, {64, 64}, {70, 100}, {130, 576}, {96, 1538}};
constexpr int kRows[] = {1, 2, 3, 5, 6, 7, 8, 13, 16, 32};

}  // namespace

TEST_CASE("small-M kernels give the exact int32 sums for row-major weights") {
  const SmallMIsa best = detect_small_m_isa();
  if (best == SmallMIsa::none) {
    MESSAGE("SKIPPED: this CPU has no small-M kernel (neither AVX2 nor AVX-512 VNNI)");
    return;
  }
  std::vector<SmallMIsa> isas{SmallMIsa::avx2};
  if (best == SmallMIsa::avx512_vnni) isas.push_back(SmallMIsa::avx512_vnni);
  for (const SmallMIsa isa : isas) {
    // vpmaddubsw saturates pairs above 32767: AVX2 is exact for |W| <= 63, VNNI for any.
    const int qmax = isa == SmallMIsa::avx2 ? 63 : 127;
    for (const Shape s : kShapes) {
      for (const int m : kRows) {
        CAPTURE(to_string(isa));
        CAPTURE(s.n);
        CAPTURE(s.k);
        CAPTURE(m);
        const Problem p = random_problem(m, s.n, s.k, qmax, 1000u + s.n * 31u + s.k + m);
        SmallMWeights w;
        w.layout = SmallMWeights::Layout::rows;
        w.data = p.w.data();
        w.n = s.n;
        w.k = s.k;
        REQUIRE(small_m_supports(isa, w));
        CHECK(run(isa, w, p) == reference(p));
      }
    }
  }
}

TEST_CASE("small-M kernels give the exact int32 sums for oneDNN's blocked weights (needs AVX-512 VNNI)") {
  if (detect_small_m_isa() != SmallMIsa::avx512_vnni) {
    MESSAGE("SKIPPED: this CPU has no AVX-512 VNNI (the blocked layout's only kernel)");
    return;
  }
  for (const int block : {16, 32, 64}) {
    for (const Shape s : kShapes) {
      for (const int m : kRows) {
        CAPTURE(block);
        CAPTURE(s.n);
        CAPTURE(s.k);
        CAPTURE(m);
        const Problem p = random_problem(m, s.n, s.k, 127, 7u + s.n * 13u + s.k + m);
        SmallMWeights w;
        w.layout = SmallMWeights::Layout::blocked;
        w.n = s.n;
        w.k = s.k;
        w.block = block;
        w.k_groups = (s.k + 3) / 4;
        const std::vector<std::int8_t> packed = blocked(p, block, w.block_stride);
        w.data = packed.data();
        REQUIRE(small_m_supports(SmallMIsa::avx512_vnni, w));
        CHECK(run(SmallMIsa::avx512_vnni, w, p) == reference(p));
      }
    }
  }
  // AVX2 has no kernel for the blocked layout: the layer keeps oneDNN.
  SmallMWeights w;
  w.layout = SmallMWeights::Layout::blocked;
  w.data = reinterpret_cast<const std::int8_t*>("");
  w.n = w.k = w.block = 16;
  w.k_groups = 4;
  w.block_stride = 1024;
  CHECK_FALSE(small_m_supports(SmallMIsa::avx2, w));
}

TEST_CASE("int8 linear gives the same bits through the small-M kernel and through oneDNN") {
  // Decode-sized batches (the kernel) against the same layer with the kernel off (oneDNN's
  // GEMM on the same weights): the INT32 sums are exact on both paths and the epilogue is one
  // code, so every output bit must match, with side channels, activations and 1 or 2 threads.
  struct Case {
    int n, k, side;
    Activation activation;
  };
  const Case cases[] = {{576, 576, 0, Activation::none},
                        {960, 576, 9, Activation::none},
                        {70, 100, 3, Activation::relu},
                        {384, 1536, 20, Activation::gelu}};
  for (const bool half : {false, true})
  for (const Case& c : cases) {
    CAPTURE(half);
    const auto w = random_normal(std::size_t(c.n) * c.k, 3, 0.05f);
    const auto b = random_normal(std::size_t(c.n), 4, 0.1f);
    std::vector<int> channels;
    for (int j = 0; j < c.side; ++j) channels.push_back((j * 37 + 5) % c.k);
    std::sort(channels.begin(), channels.end());
    channels.erase(std::unique(channels.begin(), channels.end()), channels.end());
    Int8LinearOptions options;
    options.max_batch = 32;
    options.fp32_input_channels = channels;
    options.small_m_rows = 16;  // as LlamaModel's layers (the default is 4)
    options.fp16_side_weights = half;
    Int8Linear kernel, onednn;
    REQUIRE(Int8Linear::create(w, b, c.n, c.k, c.activation, options, kernel).ok());
    options.small_m_rows = 0;
    REQUIRE(Int8Linear::create(w, b, c.n, c.k, c.activation, options, onednn).ok());
    CHECK(std::string(onednn.small_m_kernel()) == "none");
    if (std::string(kernel.small_m_kernel()) == "none") {
      MESSAGE("SKIPPED: no small-M kernel for oneDNN's layout on this CPU");
      return;
    }
    CHECK(kernel.small_m_rows() == 16);
    CHECK(std::string(kernel.small_m_kernel()).starts_with(to_string(detect_small_m_isa())));
    CHECK(kernel.weight_copies() == 1);
    const auto x = random_normal(std::size_t(32) * c.k, 5, 1.0f);
    for (const int threads : {1, 2}) {
      set_compute_threads(threads);
      for (const int m : {1, 2, 7, 16, 17, 32}) {
        CAPTURE(c.n);
        CAPTURE(m);
        CAPTURE(threads);
        std::vector<float> ya(std::size_t(m) * c.n), yb(ya.size());
        REQUIRE(kernel.forward(x.data(), m, ya.data()).ok());
        REQUIRE(onednn.forward(x.data(), m, yb.data()).ok());
        CHECK(ya == yb);
      }
    }
    set_compute_threads(1);
  }
}

TEST_CASE("fp16 side channels give the bits of fp32 ones holding the same values") {
  // The FP16 epilogue adds the side channels for tiles of up to 8 rows at a time; the FP32 one
  // a row at a time. With side weights that FP16 holds exactly, both make the same fused
  // multiply-adds in the same order for every element: the same bits, on both GEMM paths,
  // for batches that fill, split and leave part of a tile, and column counts off the vector.
  struct Case {
    int n, k, side;
    Activation activation;
  };
  const Case cases[] = {{960, 576, 40, Activation::none},
                        {70, 100, 3, Activation::relu},
                        {384, 1536, 20, Activation::gelu}};
  for (const Case& c : cases) {
    auto w = random_normal(std::size_t(c.n) * c.k, 21, 0.05f);
    const auto b = random_normal(std::size_t(c.n), 22, 0.1f);
    std::vector<int> channels;
    for (int j = 0; j < c.side; ++j) channels.push_back((j * 37 + 5) % c.k);
    std::sort(channels.begin(), channels.end());
    channels.erase(std::unique(channels.begin(), channels.end()), channels.end());
    for (int o = 0; o < c.n; ++o) {
      for (int ch : channels) {
        float& v = w[std::size_t(o) * c.k + ch];
        v = half_to_float(float_to_half(v));
      }
    }
    auto x = random_normal(std::size_t(32) * c.k, 23, 1.0f);
    for (int r = 0; r < 32; ++r) {
      for (int ch : channels) x[std::size_t(r) * c.k + ch] *= 30.0f;
    }
    for (const int small_m_rows : {16, 0}) {
      Int8LinearOptions options;
      options.max_batch = 32;
      options.fp32_input_channels = channels;
      options.small_m_rows = small_m_rows;
      Int8Linear fp32, fp16;
      REQUIRE(Int8Linear::create(w, b, c.n, c.k, c.activation, options, fp32).ok());
      options.fp16_side_weights = true;
      REQUIRE(Int8Linear::create(w, b, c.n, c.k, c.activation, options, fp16).ok());
      for (const int threads : {1, 2}) {
        set_compute_threads(threads);
        for (const int m : {1, 3, 8, 9, 16, 17, 32}) {
          CAPTURE(c.n);
          CAPTURE(small_m_rows);
          CAPTURE(m);
          CAPTURE(threads);
          std::vector<float> ya(std::size_t(m) * c.n), yb(ya.size());
          REQUIRE(fp32.forward(x.data(), m, ya.data()).ok());
          REQUIRE(fp16.forward(x.data(), m, yb.data()).ok());
          CHECK(ya == yb);
        }
      }
      set_compute_threads(1);
    }
  }
}

TEST_CASE("fp16 side-channel weights stay within their rounding of the fp32 ones") {
  // The side channels carry the largest activations: FP16 weights (2^-11 relative rounding)
  // must move an output by no more than that share of what the side channels add to it.
  const int n = 576, k = 576;
  const auto w = random_normal(std::size_t(n) * k, 11, 0.05f);
  std::vector<int> channels;
  for (int j = 0; j < 40; ++j) channels.push_back(j * 14 + 3);
  auto x = random_normal(std::size_t(8) * k, 12, 1.0f);
  for (int r = 0; r < 8; ++r) {
    for (int c : channels) x[std::size_t(r) * k + c] *= 50.0f;  // outliers, as calibrated
  }
  Int8LinearOptions options;
  options.max_batch = 8;
  options.fp32_input_channels = channels;
  options.small_m_rows = 16;
  Int8Linear fp32, fp16;
  REQUIRE(Int8Linear::create(w, {}, n, k, Activation::none, options, fp32).ok());
  options.fp16_side_weights = true;
  REQUIRE(Int8Linear::create(w, {}, n, k, Activation::none, options, fp16).ok());
  CHECK(fp16.weight_bytes() < fp32.weight_bytes());
  for (const int m : {1, 8}) {
    std::vector<float> a(std::size_t(m) * n), b(a.size());
    REQUIRE(fp32.forward(x.data(), m, a.data()).ok());
    REQUIRE(fp16.forward(x.data(), m, b.data()).ok());
    for (int r = 0; r < m; ++r) {
      // Bound: sum_j |x_j| |W_j| 2^-11 per output, the side channels' products in magnitude.
      for (int o = 0; o < n; ++o) {
        double bound = 0;
        for (int c : channels) {
          bound += std::fabs(double(x[std::size_t(r) * k + c]) * w[std::size_t(o) * k + c]);
        }
        bound = bound * std::ldexp(1.0, -11) + 1e-6;
        const double diff = std::fabs(double(a[std::size_t(r) * n + o]) - b[std::size_t(r) * n + o]);
        if (diff > bound) {
          CHECK(diff <= bound);
          return;
        }
      }
    }
    CHECK(a != b);  // the FP16 path is taken: some output moves
  }
}
