#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "coinfer/ops/cuda/cuda_status.hpp"
#include "coinfer/ops/cuda/int8_mlp.hpp"
#include "coinfer/runtime/cuda_executor.hpp"
#include "host_reference.hpp"

using namespace coinfer;
using namespace coinfer::cuda;

namespace {

constexpr int max_batch = 256;

// One batch through an executor lane: pinned staging -> H2D -> network -> D2H -> host.
Status run_batch(CudaExecutor& executor, const Int8Mlp& mlp, std::vector<Int8Mlp::Scratch>& scratch,
                 const float* x, int m, std::vector<float>& probabilities,
                 std::vector<std::int64_t>& labels) {
  const int classes = mlp.classes();
  const std::size_t in_bytes = sizeof(float) * std::size_t(m) * mlp.in_features();
  const std::size_t p_bytes = sizeof(float) * std::size_t(m) * classes;
  const std::size_t labels_offset = align_up(sizeof(float) * max_batch * classes);
  probabilities.resize(std::size_t(m) * classes);
  labels.resize(std::size_t(m));
  using Lane = CudaExecutor::Scheduler::Lane;
  return executor.scheduler().run(
      [&](Lane& lane) -> Status {
        Int8Mlp::Scratch& s = scratch[std::size_t(lane.index)];
        const void* source = x;
        if (!is_pinned(x)) {  // as CudaMlp::forward: pinned rows are copied from in place
          std::memcpy(lane.input.data(), x, in_bytes);
          source = lane.input.data();
        }
        Status st = cuda_status(
            cudaMemcpyAsync(s.input(), source, in_bytes, cudaMemcpyHostToDevice, lane.stream),
            "H2D");
        if (st) st = mlp.enqueue(s, m, lane.stream);
        if (st) {
          st = cuda_status(cudaMemcpyAsync(lane.output.data(), s.probabilities(), p_bytes,
                                           cudaMemcpyDeviceToHost, lane.stream),
                           "D2H");
        }
        if (st) {
          st = cuda_status(
              cudaMemcpyAsync(lane.output.data() + labels_offset, s.labels(),
                              sizeof(std::int64_t) * m, cudaMemcpyDeviceToHost, lane.stream),
              "D2H");
        }
        return st;
      },
      [&](Lane& lane) -> Status {
        std::memcpy(probabilities.data(), lane.output.data(), p_bytes);
        std::memcpy(labels.data(), lane.output.data() + labels_offset, sizeof(std::int64_t) * m);
        return {};
      });
}

struct Fixture {
  std::mt19937 rng{7};
  std::vector<gpu_test::HostLayer> layers = gpu_test::random_mlp(rng);
  std::unique_ptr<CudaExecutor> executor;
  Int8Mlp mlp;
  std::vector<Int8Mlp::Scratch> scratch;

  explicit Fixture(int streams = 2) {
    const Status s = CudaExecutor::create(0, streams, executor);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(Int8Mlp::create(gpu_test::as_weights(layers), max_batch, mlp).ok());
    scratch.resize(std::size_t(streams));
    for (auto& sc : scratch) REQUIRE(mlp.create_scratch(sc).ok());
    REQUIRE(executor->scheduler()
                .reserve_staging(sizeof(float) * max_batch * mlp.in_features(),
                                 align_up(sizeof(float) * max_batch * mlp.classes()) +
                                     sizeof(std::int64_t) * max_batch)
                .ok());
  }
};

}  // namespace

TEST_CASE("the GPU INT8 MLP gives the host INT8 path's labels and probabilities within 1e-4") {
  Fixture f;
  int rows = 0, differ_fp32 = 0;
  for (int m : {1, 7, 64, 256}) {
    CAPTURE(m);
    std::vector<float> x = gpu_test::random_floats(std::size_t(m) * 64, f.rng, 2.0f);
    std::vector<float> p, p_host;
    std::vector<std::int64_t> labels, labels_host, labels_fp32;
    const Status s = run_batch(*f.executor, f.mlp, f.scratch, x.data(), m, p, labels);
    REQUIRE_MESSAGE(s.ok(), s.message());
    gpu_test::int8_forward(f.layers, x.data(), m, p_host, labels_host);
    gpu_test::fp32_forward(f.layers, x.data(), m, labels_fp32);
    double worst = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i)
      worst = std::max(worst, double(std::abs(p[i] - p_host[i])));
    CHECK(worst < 1e-4);
    int differ = 0;
    rows += m;
    for (int r = 0; r < m; ++r) {
      differ += labels[std::size_t(r)] != labels_host[std::size_t(r)];
      differ_fp32 += labels[std::size_t(r)] != labels_fp32[std::size_t(r)];
    }
    CHECK(differ == 0);
  }
  MESSAGE("INT8 vs FP32 labels differ on " << differ_fp32 << " of " << rows << " random rows");
  CHECK(differ_fp32 <= rows / 20);  // INT8 vs FP32: near-ties only
}

TEST_CASE("every lane runs batches concurrently and each batch gets its own results") {
  for (int streams : {2, 4}) {
    CAPTURE(streams);
    Fixture f(streams);
    const int m = 64, batches = 40;
    std::vector<std::vector<float>> inputs;
    for (int i = 0; i < batches; ++i)
      inputs.push_back(gpu_test::random_floats(std::size_t(m) * 64, f.rng));
    std::vector<std::vector<std::int64_t>> serial(batches), concurrent(batches);
    std::vector<float> p;
    for (int i = 0; i < batches; ++i) {
      REQUIRE(run_batch(*f.executor, f.mlp, f.scratch, inputs[i].data(), m, p, serial[i]).ok());
    }
    std::atomic<int> failures{0};
    std::atomic<int> done{0};
    for (int i = 0; i < batches; ++i) {
      f.executor->submit([&, i] {
        std::vector<float> probabilities;
        if (!run_batch(*f.executor, f.mlp, f.scratch, inputs[i].data(), m, probabilities,
                       concurrent[i])
                 .ok()) {
          ++failures;
        }
        ++done;
      });
    }
    while (done < batches) std::this_thread::yield();
    CHECK(failures == 0);
    CHECK(serial == concurrent);
    CHECK(f.executor->concurrency() == streams);
    for (int lane = 0; lane < streams; ++lane) {
      CAPTURE(lane);
      CHECK(f.executor->scheduler().lane(lane).batches > 0);
    }
  }
}

TEST_CASE("the executor's staging memory is page-locked and ordinary memory is not") {
  Fixture f;
  std::pmr::vector<std::byte> rows(f.executor->staging_memory());
  rows.resize(std::size_t(max_batch) * 64 * sizeof(float));
  CHECK(is_pinned(rows.data()));
  CHECK(is_pinned(rows.data() + rows.size() / 2));
  std::vector<std::byte> pageable(rows.size());
  CHECK_FALSE(is_pinned(pageable.data()));
  // An H2D copy straight from the staging rows, as CudaMlp::forward makes it.
  std::vector<float> x = gpu_test::random_floats(std::size_t(8) * 64, f.rng);
  std::memcpy(rows.data(), x.data(), x.size() * sizeof(float));
  std::vector<float> p, p_direct, p_staged;
  std::vector<std::int64_t> labels, labels_direct;
  REQUIRE(run_batch(*f.executor, f.mlp, f.scratch, x.data(), 8, p_staged, labels).ok());
  REQUIRE(run_batch(*f.executor, f.mlp, f.scratch, reinterpret_cast<const float*>(rows.data()), 8,
                    p_direct, labels_direct)
              .ok());
  CHECK(p_direct == p_staged);
  CHECK(labels_direct == labels);
}

TEST_CASE("a replayed graph gives the bits of kernel-by-kernel launches and reads each input") {
  std::mt19937 rng{19};
  const auto layers = gpu_test::random_mlp(rng);
  Int8Mlp graphed, direct;
  REQUIRE(Int8Mlp::create(gpu_test::as_weights(layers), max_batch, graphed).ok());
  REQUIRE(Int8Mlp::create(gpu_test::as_weights(layers), max_batch, direct).ok());
  direct.set_graphs(false);
  Int8Mlp::Scratch gs, ds;
  REQUIRE(graphed.create_scratch(gs).ok());
  REQUIRE(direct.create_scratch(ds).ok());
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  // m up, down and repeated: a repeat replays the graph captured before, on a new input.
  for (int m : {5, 64, 5, 256, 64, 1, 5}) {
    CAPTURE(m);
    const auto x = gpu_test::random_floats(std::size_t(m) * 64, rng, 2.0f);
    std::vector<float> pg(std::size_t(m) * 10), pd(pg.size());
    std::vector<std::int64_t> lg(static_cast<std::size_t>(m)), ld(lg.size());
    for (auto [mlp, sc, p, l] : {std::tuple{&graphed, &gs, &pg, &lg}, {&direct, &ds, &pd, &ld}}) {
      REQUIRE(cudaMemcpyAsync(sc->input(), x.data(), x.size() * sizeof(float),
                              cudaMemcpyHostToDevice, stream) == cudaSuccess);
      const Status st = mlp->enqueue(*sc, m, stream);
      REQUIRE_MESSAGE(st.ok(), st.message());
      REQUIRE(cudaMemcpyAsync(p->data(), sc->probabilities(), p->size() * sizeof(float),
                              cudaMemcpyDeviceToHost, stream) == cudaSuccess);
      REQUIRE(cudaMemcpyAsync(l->data(), sc->labels(), l->size() * sizeof(std::int64_t),
                              cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    }
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(pg == pd);
    CHECK(lg == ld);
    std::vector<float> p_host;
    std::vector<std::int64_t> labels_host;
    gpu_test::int8_forward(layers, x.data(), m, p_host, labels_host);
    CHECK(lg == labels_host);
  }
  cudaStreamDestroy(stream);
}

TEST_CASE("a batch larger than the network's max_batch is a clear error, and the next runs") {
  Fixture f;
  std::vector<float> x(std::size_t(max_batch + 1) * 64, 0.5f), p;
  std::vector<std::int64_t> labels;
  Int8Mlp::Scratch& s = f.scratch[0];
  const Status too_big = f.mlp.enqueue(s, max_batch + 1, nullptr);
  CHECK(too_big.code() == Errc::invalid_argument);
  CHECK(too_big.message() == "batch of 257 outside 1..256");
  CHECK(run_batch(*f.executor, f.mlp, f.scratch, x.data(), 3, p, labels).ok());
}

TEST_CASE("a bad device index is a startup error, not a crash") {
  std::unique_ptr<CudaExecutor> executor;
  const Status s = CudaExecutor::create(1000, 2, executor);
  CHECK(s.code() == Errc::unavailable);
  CHECK(s.message().find("CUDA device 1000 does not exist") == 0);
}
