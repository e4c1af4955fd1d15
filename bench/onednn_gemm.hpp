// The peer of the INT8 benchmarks (int8_gemm_bench.cpp, micro_bench.cpp): a oneDNN
// u8 x s8 -> s32 matmul Y[M, N] = X[M, K] W[K, N], as Int8Linear's GEMM and nothing else (no
// quantization, no epilogue). W is made [N, K] row-major (the PyTorch layout) and reordered to
// the layout the primitive prefers; user-mode scratchpad; executed through the C API, as
// Int8Linear does (the C++ execute() builds an unordered_map per call).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace coinfer::bench {

class OneDnnGemm {
 public:
  // runtime_m: the primitive is created with M unknown (DNNL_RUNTIME_DIM_VAL), as Int8Linear
  // creates its general one; the memories are still made for exactly m rows. Inputs and
  // weights are random (from `rng`).
  OneDnnGemm(dnnl::engine& engine, std::int64_t m, std::int64_t n, std::int64_t k, bool runtime_m,
             std::mt19937& rng)
      : stream_(engine), x_(static_cast<std::size_t>(m * k)), y_(static_cast<std::size_t>(m * n)) {
    using dt = dnnl::memory::data_type;
    using dims = dnnl::memory::dims;
    std::uniform_int_distribution<int> u8(1, 255), s8(-127, 127);
    for (auto& v : x_) v = static_cast<std::uint8_t>(u8(rng));
    std::vector<std::int8_t> w(static_cast<std::size_t>(n * k));
    for (auto& v : w) v = static_cast<std::int8_t>(s8(rng));

    const dnnl::memory::dim pm = runtime_m ? DNNL_RUNTIME_DIM_VAL : m;
    const dnnl::memory::desc src_md({pm, k}, dt::u8, dims{k, 1});
    const dnnl::memory::desc w_any({k, n}, dt::s8, dnnl::memory::format_tag::any);
    const dnnl::memory::desc dst_md({pm, n}, dt::s32, dims{n, 1});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, w_any, dst_md), attr,
                                          engine);
    impl_ = pd.impl_info_str();
    matmul_ = dnnl::matmul(pd);
    dnnl::memory user_w(dnnl::memory::desc({k, n}, dt::s8, dims{1, k}), engine, w.data());
    weights_ = dnnl::memory(pd.weights_desc(), engine);
    dnnl::reorder(user_w, weights_).execute(stream_, user_w, weights_);
    stream_.wait();
    scratchpad_ = dnnl::memory(pd.scratchpad_desc(), engine);
    src_ = dnnl::memory(dnnl::memory::desc({m, k}, dt::u8, dims{k, 1}), engine, x_.data());
    dst_ = dnnl::memory(dnnl::memory::desc({m, n}, dt::s32, dims{n, 1}), engine, y_.data());
  }

  // One multiplication, waited for; false when oneDNN failed.
  bool run() {
    dnnl_exec_arg_t args[4] = {
        {DNNL_ARG_SRC, src_.get()},
        {DNNL_ARG_WEIGHTS, weights_.get()},
        {DNNL_ARG_DST, dst_.get()},
        {DNNL_ARG_SCRATCHPAD, scratchpad_.get()},
    };
    return dnnl_primitive_execute(matmul_.get(), stream_.get(), 4, args) == dnnl_success &&
           dnnl_stream_wait(stream_.get()) == dnnl_success;
  }
  const std::int32_t* result() const noexcept { return y_.data(); }
  const std::string& impl() const noexcept { return impl_; }  // oneDNN's kernel, by name

 private:
  dnnl::stream stream_;
  std::vector<std::uint8_t> x_;  // UINT8 [m, k] row-major
  std::vector<std::int32_t> y_;  // INT32 [m, n] row-major
  dnnl::matmul matmul_;
  dnnl::memory weights_, scratchpad_, src_, dst_;
  std::string impl_;
};

}  // namespace coinfer::bench
