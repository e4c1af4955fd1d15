// BlockLinear: ggml block weights (Q4_1, Q8_0) times activations quantized per 32 inputs.
#include "coinfer/ops/block_linear.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coinfer/core/half.hpp"
#include "coinfer/models/gguf.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/small_m_gemm.hpp"

using namespace coinfer;

namespace {

GgmlType ggml_type(WeightBlocks f) {
  return f == WeightBlocks::q4_1 ? GgmlType::q4_1 : GgmlType::q8_0;
}

struct Case {
  int n, k;
  std::vector<float> w;  // the blocks dequantized by ggml's rule: what the layer multiplies
  std::vector<std::byte> blocks;
};

Case make_case(WeightBlocks f, int n, int k, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 0.05f);
  Case c{n, k, {}, {}};
  std::vector<float> w(static_cast<std::size_t>(n) * k);
  for (auto& v : w) v = normal(rng);
  ggml_quantize(static_cast<std::uint32_t>(ggml_type(f)), w.data(), w.size(), c.blocks);
  c.w.resize(w.size());
  ggml_dequantize(static_cast<std::uint32_t>(ggml_type(f)), c.blocks.data(), w.size(), c.w.data());
  return c;
}

// Activations like a transformer's: most channels small, a few far above them.
std::vector<float> activations(int m, int k, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(m) * k);
  for (auto& v : x) v = normal(rng);
  for (int r = 0; r < m; ++r) {
    x[static_cast<std::size_t>(r) * k + 7] *= 80.0f;
    x[static_cast<std::size_t>(r) * k + k - 3] *= 40.0f;
  }
  return x;
}

}  // namespace

constexpr BlockActivations kActivations[] = {BlockActivations::int8, BlockActivations::int16};

TEST_CASE("block linear stays within its activation rounding of the dequantized product") {
  std::mt19937 rng(11);
  for (auto f : {WeightBlocks::q4_1, WeightBlocks::q8_0}) {
    for (auto act : kActivations) {
      for (auto [n, k, m] : {std::tuple{37, 32, 1}, {96, 576, 5}, {64, 1536, 8}, {13, 96, 11}}) {
        CAPTURE(to_string(f));
        CAPTURE(to_string(act));
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(m);
        Case c = make_case(f, n, k, rng);
        std::vector<float> bias(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) bias[i] = 0.01f * static_cast<float>(i % 7) - 0.03f;
        BlockLinear layer;
        REQUIRE(BlockLinear::create(f, c.blocks, bias, n, k, m, layer, act).ok());
        CHECK(layer.activations() == act);
        const auto x = activations(m, k, rng);
        std::vector<float> y(static_cast<std::size_t>(m) * n, NAN);
        REQUIRE(layer.forward(x.data(), m, y.data()).ok());
        for (int r = 0; r < m; ++r) {
          for (int col = 0; col < n; ++col) {
            // Each activation moves by at most half its block's step (max |x| / 127 / 2), so the
            // product moves by at most sum over blocks of that step x sum |w|. With int16 the
            // second byte quantizes what is left (at most that half step) the same way: at most
            // half of its own step, 1/254 of the first's half step.
            double exact = bias[col], bound = 0, magnitude = 0;
            for (int b = 0; b < k / 32; ++b) {
              double amax = 0, wabs = 0;
              for (int j = 0; j < 32; ++j) {
                const std::size_t i = static_cast<std::size_t>(b) * 32 + j;
                const double xv = x[static_cast<std::size_t>(r) * k + i];
                const double wv = c.w[static_cast<std::size_t>(col) * k + i];
                exact += xv * wv;
                magnitude += std::fabs(xv * wv);
                amax = std::max(amax, std::fabs(xv));
                wabs += std::fabs(wv);
              }
              const double step = amax / 127.0 / 2.0;
              bound += (act == BlockActivations::int16 ? step / 254.0 : step) * wabs;
            }
            const double got = y[static_cast<std::size_t>(r) * n + col];
            REQUIRE(std::isfinite(got));
            CHECK(std::fabs(got - exact) <= bound * 1.001 + 1e-5 * magnitude + 1e-6);
          }
        }
      }
    }
  }
}

TEST_CASE("block linear computes the blocks' integer dot products and scales exactly") {
  // The same arithmetic written plainly: each 32-input block of x quantized to q = round(x *
  // 127 / max|x|) with scale max|x| / 127 (FP32, ties to even), then per block
  // d_w d_x dot(q_w, q_x) (+ m_w d_x sum(q_x)); only the order of the FP32 sums may differ.
  // With int16 a second pass of the same over each block's residual, x - d_x q_x (one
  // rounding: fma), adds its own terms.
  std::mt19937 rng(23);
  for (auto f : {WeightBlocks::q4_1, WeightBlocks::q8_0}) {
    for (auto act : kActivations) {
      const int n = 21, k = 320, m = 6;
      Case c = make_case(f, n, k, rng);
      BlockLinear layer;
      REQUIRE(BlockLinear::create(f, c.blocks, {}, n, k, m, layer, act).ok());
      const auto x = activations(m, k, rng);
      std::vector<float> y(static_cast<std::size_t>(m) * n);
      REQUIRE(layer.forward(x.data(), m, y.data()).ok());
      const std::size_t block_bytes = weight_block_bytes(f);
      for (int r = 0; r < m; ++r) {
        for (int col = 0; col < n; ++col) {
          double exact = 0, magnitude = 0;
          for (int b = 0; b < k / 32; ++b) {
            float xb[32];
            std::memcpy(xb, x.data() + static_cast<std::size_t>(r) * k + b * 32, sizeof xb);
            for (int pass = 0; pass < (act == BlockActivations::int16 ? 2 : 1); ++pass) {
              float max = 0;
              for (int j = 0; j < 32; ++j) max = std::max(max, std::fabs(xb[j]));
              const float inv = max > 0 ? 127.0f / max : 0.0f;
              const float dx = max / 127.0f;
              const std::byte* block =
                  c.blocks.data() + (static_cast<std::size_t>(col) * (k / 32) + b) * block_bytes;
              std::uint16_t bits[2];
              std::memcpy(bits, block, sizeof bits);
              long dot = 0, sum = 0;
              float residual[32];
              for (int j = 0; j < 32; ++j) {
                const int qx = static_cast<int>(std::nearbyint(xb[j] * inv));
                residual[j] = std::fma(-dx, static_cast<float>(qx), xb[j]);
                int qw;
                if (f == WeightBlocks::q4_1) {
                  const auto byte = static_cast<std::uint8_t>(block[4 + j % 16]);
                  qw = j < 16 ? (byte & 0x0f) : (byte >> 4);
                } else {
                  qw = static_cast<std::int8_t>(block[2 + j]);
                }
                dot += static_cast<long>(qw) * qx;
                sum += qx;
              }
              const double dw = half_to_float(bits[0]);
              const double term = dw * dx * static_cast<double>(dot);
              const double min_term =
                  f == WeightBlocks::q4_1
                      ? half_to_float(bits[1]) * static_cast<double>(dx * static_cast<float>(sum))
                      : 0.0;
              exact += term + min_term;
              magnitude += std::fabs(term) + std::fabs(min_term);
              std::memcpy(xb, residual, sizeof xb);
            }
          }
          CAPTURE(to_string(f));
          CAPTURE(to_string(act));
          CHECK(std::fabs(y[static_cast<std::size_t>(r) * n + col] - exact) <=
                2e-6 * magnitude + 1e-7);
        }
      }
    }
  }
}

TEST_CASE(
    "block linear gives a row the same bits alone, in any batch and on any number of threads") {
  std::mt19937 rng(5);
  for (auto f : {WeightBlocks::q4_1, WeightBlocks::q8_0}) {
    for (auto act : kActivations) {
      CAPTURE(to_string(act));
      // 20 rows: on two threads a step of up to 16 rows gives each thread one run of groups, a
      // larger one hands out chunks; the rows alone take the first, the batch the second.
      const int n = 200, k = 576, m = 20;
      Case c = make_case(f, n, k, rng);
      BlockLinear layer;
      REQUIRE(BlockLinear::create(f, c.blocks, {}, n, k, m, layer, act).ok());
      const auto x = activations(m, k, rng);
      std::vector<float> all(static_cast<std::size_t>(m) * n);
      set_compute_threads(1);
      REQUIRE(layer.forward(x.data(), m, all.data()).ok());
      for (int threads : {1, 2}) {
        set_compute_threads(threads);
        std::vector<float> batch(all.size());
        REQUIRE(layer.forward(x.data(), m, batch.data()).ok());
        CHECK(std::memcmp(batch.data(), all.data(), all.size() * sizeof(float)) == 0);
        for (int r = 0; r < m; ++r) {
          std::vector<float> one(static_cast<std::size_t>(n));
          REQUIRE(layer.forward(x.data() + static_cast<std::size_t>(r) * k, 1, one.data()).ok());
          CHECK(std::memcmp(one.data(), all.data() + static_cast<std::size_t>(r) * n,
                            n * sizeof(float)) == 0);
        }
      }
      set_compute_threads(1);
    }
  }
}

namespace {
// Two layers over the same weights give the same bits for the first 1, 2, .., m rows of x.
void check_same_bits(BlockLinear& a, BlockLinear& b, const std::vector<float>& x, int m, int n) {
  for (int rows = 1; rows <= m; ++rows) {
    CAPTURE(rows);
    std::vector<float> ya(static_cast<std::size_t>(rows) * n), yb(ya.size());
    REQUIRE(a.forward(x.data(), rows, ya.data()).ok());
    REQUIRE(b.forward(x.data(), rows, yb.data()).ok());
    CHECK(std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)) == 0);
  }
}
}  // namespace

TEST_CASE("block linear gives the same bits with AVX-512 VNNI as with AVX2") {
  // The VNNI tiles add a block's products in 32 bits with vpdpbusd where AVX2 adds them in 16
  // (exact either way), over 16 channels a vector instead of 8 and with tiles of other shapes
  // (up to 4 rows over two groups, up to 16 over one, more over two in sixes): every output must
  // match, in both formats, for every row count up to past 16 and an odd number of groups.
  // int16's residual rows run in the same tiles (twice the rows) and add into the first's.
  std::mt19937 rng(6);
  for (auto f : {WeightBlocks::q4_1, WeightBlocks::q8_0}) {
    for (auto act : kActivations) {
      CAPTURE(to_string(act));
      const int n = 203, k = 1536, m = 23;
      Case c = make_case(f, n, k, rng);
      BlockLinear best, avx2;
      REQUIRE(BlockLinear::create(f, c.blocks, {}, n, k, m, best, act, BlockKernels::avx512_vnni).ok());
      REQUIRE(BlockLinear::create(f, c.blocks, {}, n, k, m, avx2, act, BlockKernels::avx2).ok());
      if (std::string(best.kernel()) != "avx512_vnni") {
        MESSAGE("SKIPPED: " << std::string(best.kernel())
                            << ": no AVX-512 VNNI here (or oneDNN capped below it)");
        return;
      }
      CHECK(std::string(avx2.kernel()) == "avx2");
      check_same_bits(best, avx2, activations(m, k, rng), m, n);
    }
  }
}

TEST_CASE("block linear gives the same bits with AMX as with AVX-512 VNNI (needs AMX)") {
  // AMX multiplies a block of all of a step's rows at once (tdpbsud) where the VNNI tiles take
  // 8 rows at a time from panels; the integer sums are exact either way and scaled alike. Both
  // formats, int8 and int16 (whose residual rows follow the first rows in the same tile), every
  // row count up to past 16 (the fewest and prompt chunks run the VNNI tiles in both), an odd
  // number of groups, a bias, 1, 2, 3 and 48 blocks (the multiplies run up to three blocks
  // ahead of the scaling).
  std::mt19937 rng(7);
  for (auto f : {WeightBlocks::q4_1, WeightBlocks::q8_0}) {
    for (auto act : kActivations) {
      for (int k : {1536, 96, 64, 32}) {
        CAPTURE(to_string(act));
        CAPTURE(k);
        const int n = 203, m = 19;
        Case c = make_case(f, n, k, rng);
        std::vector<float> bias(n);
        for (int i = 0; i < n; ++i) bias[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
        BlockLinear best, vnni;
        REQUIRE(BlockLinear::create(f, c.blocks, bias, n, k, m, best, act).ok());
        REQUIRE(BlockLinear::create(f, c.blocks, bias, n, k, m, vnni, act, BlockKernels::avx512_vnni).ok());
        if (std::string(best.kernel()) != "amx") {
          MESSAGE("SKIPPED: " << std::string(best.kernel()) << ": no AMX-INT8 here (or oneDNN capped below it)");
          return;
        }
        CHECK(std::string(vnni.kernel()) == "avx512_vnni");
        check_same_bits(best, vnni, activations(m, k, rng), m, n);
      }
    }
  }
}

TEST_CASE("block linear's kernels follow oneDNN's ISA cap") {
  // ONEDNN_MAX_CPU_ISA, read once per process, caps the block tiles as it caps oneDNN: AVX2
  // runs the AVX2 tiles on any CPU, AVX512_CORE_VNNI the VNNI tiles and never AMX (what the
  // benchmarks' "AMX off" runs use). The capped CTest tests run this case under each cap.
  std::mt19937 rng(9);
  Case c = make_case(WeightBlocks::q8_0, 16, 64, rng);
  BlockLinear layer;
  REQUIRE(BlockLinear::create(WeightBlocks::q8_0, c.blocks, {}, 16, 64, 16, layer).ok());
  const std::string kernel = layer.kernel();
  const char* env = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string cap = env == nullptr ? "" : env;
  CAPTURE(cap);
  CAPTURE(kernel);
#if defined(__x86_64__)
  CHECK(kernel != "portable");
#endif
  if (cap == "AVX2") CHECK(kernel == "avx2");
  if (cap == "AVX512_CORE_VNNI") {
    CHECK(kernel != "amx");
    CHECK(kernel == (detect_small_m_isa() == SmallMIsa::avx512_vnni ? "avx512_vnni" : "avx2"));
  }
}

TEST_CASE("block linear gives the same bits with its weights in a page arena") {
  // LlamaModel puts every layer's repacked weights in one PageArena (2 MiB pages): the same
  // bytes at other addresses, side by side with the other layers'. Two layers in one arena (the
  // second starts where the first ends), against the same layers in memory of their own.
  std::mt19937 rng(8);
  PageArena arena(PageArena::huge_page);
  for (auto f : {WeightBlocks::q4_1, WeightBlocks::q8_0}) {
    const int n = 203, k = 1536, m = 19;
    Case c = make_case(f, n, k, rng);
    BlockLinear shared, own;
    REQUIRE(BlockLinear::create(f, c.blocks, {}, n, k, m, shared, BlockActivations::int8, BlockKernels::amx, &arena).ok());
    REQUIRE(BlockLinear::create(f, c.blocks, {}, n, k, m, own).ok());
    check_same_bits(shared, own, activations(m, k, rng), m, n);
  }
  CHECK(arena.allocated_bytes() > 0);
}

TEST_CASE("block linear: an all-zero activation block and extreme weights") {
  // A zero block has scale 0 (no division by it); q4_1 with q = 15 everywhere and q8_0 with
  // -127 and 127 reach the largest pair sums vpmaddubsw forms (no saturation).
  const int k = 64;
  for (auto f : {WeightBlocks::q4_1, WeightBlocks::q8_0}) {
    std::vector<float> w(static_cast<std::size_t>(2) * k);
    for (int i = 0; i < k; ++i) {
      w[i] = f == WeightBlocks::q4_1 ? 1.0f + (i == 0 ? -1.0f : 0.0f) : (i % 2 ? 1.0f : -1.0f);
      w[k + i] = 1.0f;
    }
    std::vector<std::byte> blocks;
    ggml_quantize(static_cast<std::uint32_t>(ggml_type(f)), w.data(), w.size(), blocks);
    std::vector<float> wd(w.size());
    ggml_dequantize(static_cast<std::uint32_t>(ggml_type(f)), blocks.data(), w.size(), wd.data());
    BlockLinear layer;
    REQUIRE(BlockLinear::create(f, blocks, {}, 2, k, 1, layer).ok());
    std::vector<float> x(k, 0.0f);
    for (int i = 32; i < k; ++i) x[i] = 127.0f;
    float y[2];
    REQUIRE(layer.forward(x.data(), 1, y).ok());
    for (int col = 0; col < 2; ++col) {
      double exact = 0;
      for (int i = 0; i < k; ++i)
        exact += static_cast<double>(x[i]) * wd[static_cast<std::size_t>(col) * k + i];
      CHECK(y[col] == doctest::Approx(exact).epsilon(1e-5));
    }
  }
}

TEST_CASE("block linear refuses shapes, byte counts and row counts it cannot take, naming them") {
  std::vector<std::byte> blocks(20 * 2);
  BlockLinear layer;
  auto s = BlockLinear::create(WeightBlocks::q4_1, blocks, {}, 2, 48, 1, layer);
  CHECK(!s.ok());
  CHECK(s.message().find("multiple of 32") != std::string::npos);
  s = BlockLinear::create(WeightBlocks::q4_1, blocks, {}, 3, 32, 1, layer);
  CHECK(!s.ok());
  CHECK(s.message().find("expected 60") != std::string::npos);
  const std::vector<float> bias(3);
  s = BlockLinear::create(WeightBlocks::q4_1, blocks, bias, 2, 32, 1, layer);
  CHECK(s.message().find("3 biases") != std::string::npos);
  REQUIRE(BlockLinear::create(WeightBlocks::q4_1, blocks, {}, 2, 32, 2, layer).ok());
  std::vector<float> x(96), y(6);
  s = layer.forward(x.data(), 3, y.data());
  CHECK(s.message().find("3 rows (1 to 2 fit)") != std::string::npos);
  // One group of channels (scales, mins, values) and its biases: 8 channels for the AVX2 tiles,
  // 16 for the VNNI ones.
  if (std::string(layer.kernel()) == "avx512_vnni" || std::string(layer.kernel()) == "amx") {
    CHECK(layer.weight_bytes() == 320 + 16 * 4);
  } else {
    CHECK(layer.weight_bytes() == 160 + 8 * 4);
  }
}
