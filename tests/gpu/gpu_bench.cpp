// coinfer-gpu-bench: INT8 vs FP16 cuBLASLt GEMM throughput at the digits MLP's shapes and at
// 4096^3, the MLP's per-batch time split into H2D / compute / D2H, and MLP rows/s through the
// CudaExecutor with 1 and 2 streams. One result per line, `key=value` fields, so scripts can
// parse it. The CPU executor is not measured here: it needs oneDNN, which GPU machines lack
// (bench/ measures it on the CPU machines).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "coinfer/ops/cuda/cublaslt_gemm.hpp"
#include "coinfer/ops/cuda/cuda_memory.hpp"
#include "coinfer/ops/cuda/cuda_status.hpp"
#include "coinfer/ops/cuda/int8_mlp.hpp"
#include "coinfer/runtime/cuda_executor.hpp"
#include "host_reference.hpp"

using namespace coinfer;
using namespace coinfer::cuda;

namespace {

bool check(const Status& s) {
  if (!s) std::printf("error %s\n", s.message().c_str());
  return s.ok();
}

// Milliseconds per call of `body` on `stream`, timed with events over enough calls to last
// about `target_ms`.
template <class Body>
float time_ms(cudaStream_t stream, float target_ms, Body&& body) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) body();  // warm-up (and heuristics)
  cudaEventRecord(start, stream);
  body();
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float one = 0.0f;
  cudaEventElapsedTime(&one, start, stop);
  const int calls = std::clamp(static_cast<int>(target_ms / std::max(one, 1e-3f)), 5, 2000);
  cudaEventRecord(start, stream);
  for (int i = 0; i < calls; ++i) body();
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float total = 0.0f;
  cudaEventElapsedTime(&total, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return total / static_cast<float>(calls);
}

void bench_gemm(const CublasLt& lt, cudaStream_t stream, DeviceBuffer& workspace, int m, int n,
                int k) {
  float ms[2] = {0, 0};
  for (int kind = 0; kind < 2; ++kind) {
    const GemmKind g = kind == 0 ? GemmKind::int8 : GemmKind::fp16;
    const std::size_t in_size = kind == 0 ? 1 : 2, out_size = kind == 0 ? 4 : 2;
    DeviceBuffer x, w, y;
    if (!check(DeviceBuffer::allocate(in_size * std::size_t(m) * k, x)) ||
        !check(DeviceBuffer::allocate(in_size * std::size_t(n) * k, w)) ||
        !check(DeviceBuffer::allocate(out_size * std::size_t(m) * n, y))) {
      return;
    }
    cudaMemsetAsync(x.data(), 1, x.bytes(), stream);  // small nonzero values in both types
    cudaMemsetAsync(w.data(), 1, w.bytes(), stream);
    GemmPlan plan;
    if (!check(GemmPlan::create(lt, g, m, n, k, workspace.data(), workspace.bytes(), plan))) return;
    Status last;
    ms[kind] =
        time_ms(stream, 50.0f, [&] { last = plan.run(x.data(), m, w.data(), y.data(), stream); });
    if (!check(last)) return;
    const double tops = 2.0 * m * n * k / (ms[kind] * 1e-3) / 1e12;
    std::printf("gemm dtype=%s m=%d n=%d k=%d us=%.2f tops=%.3f\n", kind == 0 ? "int8" : "fp16", m,
                n, k, ms[kind] * 1e3, tops);
  }
  std::printf("gemm_ratio m=%d n=%d k=%d int8_over_fp16_speed=%.2f\n", m, n, k, ms[1] / ms[0]);
}

void bench_mlp_split(Int8Mlp& mlp, Int8Mlp::Scratch& scratch, cudaStream_t stream, int m,
                     std::mt19937& rng) {
  const std::size_t in_bytes = sizeof(float) * std::size_t(m) * mlp.in_features();
  const std::size_t out_bytes = sizeof(float) * std::size_t(m) * mlp.classes();
  PinnedBuffer in, out;
  if (!check(PinnedBuffer::allocate(in_bytes, in)) ||
      !check(PinnedBuffer::allocate(out_bytes, out)))
    return;
  auto x = gpu_test::random_floats(std::size_t(m) * mlp.in_features(), rng);
  std::memcpy(in.data(), x.data(), in_bytes);
  Status last;
  const float h2d = time_ms(stream, 20.0f, [&] {
    cudaMemcpyAsync(scratch.input(), in.data(), in_bytes, cudaMemcpyHostToDevice, stream);
  });
  float compute[2];  // kernel by kernel, then one graph launch
  for (int graphs : {0, 1}) {
    mlp.set_graphs(graphs == 1);
    compute[graphs] = time_ms(stream, 20.0f, [&] { last = mlp.enqueue(scratch, m, stream); });
  }
  const float d2h = time_ms(stream, 20.0f, [&] {
    cudaMemcpyAsync(out.data(), scratch.probabilities(), out_bytes, cudaMemcpyDeviceToHost, stream);
    cudaMemcpyAsync(out.data(), scratch.labels(), sizeof(std::int64_t) * m, cudaMemcpyDeviceToHost,
                    stream);
  });
  if (!check(last)) return;
  std::printf("mlp_split m=%d h2d_us=%.2f compute_us=%.2f compute_graph_us=%.2f d2h_us=%.2f\n",
              m, h2d * 1e3, compute[0] * 1e3, compute[1] * 1e3, d2h * 1e3);
}

// Rows per second through a CudaExecutor: `batches` batches of m rows, each run as the
// batcher would (a submitted task that stages, enqueues and waits on its lane).
void bench_executor(const std::vector<gpu_test::HostLayer>& layers, int streams, int m,
                    bool graphs, std::mt19937& rng) {
  std::unique_ptr<CudaExecutor> executor;
  Int8Mlp mlp;
  if (!check(CudaExecutor::create(0, streams, executor)) ||
      !check(Int8Mlp::create(gpu_test::as_weights(layers), m, mlp))) {
    return;
  }
  mlp.set_graphs(graphs);
  std::vector<Int8Mlp::Scratch> scratch(static_cast<std::size_t>(streams));
  for (auto& s : scratch) {
    if (!check(mlp.create_scratch(s))) return;
  }
  const std::size_t in_bytes = sizeof(float) * std::size_t(m) * mlp.in_features();
  const std::size_t out_bytes = sizeof(float) * std::size_t(m) * mlp.classes();
  if (!check(executor->scheduler().reserve_staging(in_bytes, out_bytes))) return;
  auto x = gpu_test::random_floats(std::size_t(m) * mlp.in_features(), rng);
  std::vector<std::vector<float>> results(static_cast<std::size_t>(streams) * 4,
                                          std::vector<float>(std::size_t(m) * mlp.classes()));
  using Lane = CudaExecutor::Scheduler::Lane;
  const int batches = 2000;
  std::atomic<int> done{0}, failed{0};
  const auto start = std::chrono::steady_clock::now();
  for (int b = 0; b < batches; ++b) {
    executor->submit([&, b] {
      std::vector<float>& result = results[std::size_t(b) % results.size()];
      const Status s = executor->scheduler().run(
          [&](Lane& lane) -> Status {
            Int8Mlp::Scratch& sc = scratch[std::size_t(lane.index)];
            std::memcpy(lane.input.data(), x.data(), in_bytes);
            Status st = cuda_status(cudaMemcpyAsync(sc.input(), lane.input.data(), in_bytes,
                                                    cudaMemcpyHostToDevice, lane.stream),
                                    "H2D");
            if (st) st = mlp.enqueue(sc, m, lane.stream);
            if (st) {
              st = cuda_status(cudaMemcpyAsync(lane.output.data(), sc.probabilities(), out_bytes,
                                               cudaMemcpyDeviceToHost, lane.stream),
                               "D2H");
            }
            return st;
          },
          [&](Lane& lane) -> Status {
            std::memcpy(result.data(), lane.output.data(), out_bytes);
            return {};
          });
      if (!s) ++failed;
      ++done;
    });
  }
  while (done < batches) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("executor streams=%d graphs=%d m=%d batches=%d failed=%d rows_per_s=%.0f\n",
              streams, graphs ? 1 : 0, m, batches, failed.load(), batches * double(m) / seconds);
}

}  // namespace

int main() {
  std::string why;
  if (CudaStreamDevice::device_count(why) == 0) {
    std::printf("no CUDA device: skipped (%s)\n", why.c_str());
    return 77;
  }
  CudaStreamDevice device;
  if (!check(CudaStreamDevice::open(0, device))) return 1;
  std::printf("device name=\"%s\"\n", device.name().c_str());
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  CublasLt lt;
  DeviceBuffer workspace;
  if (!check(CublasLt::create(lt)) || !check(DeviceBuffer::allocate(32 << 20, workspace))) return 1;

  // The digits MLP's layers (10 classes: Int8Mlp pads them to 16; 12, the smallest INT8
  // width, to compare), then a large square GEMM.
  const int layers[][2] = {{256, 64}, {256, 256}, {12, 256}, {16, 256}};
  for (int m : {1, 64, 256, 1024}) {
    for (const auto& [n, k] : layers) bench_gemm(lt, stream, workspace, m, n, k);
  }
  bench_gemm(lt, stream, workspace, 4096, 4096, 4096);

  std::mt19937 rng(11);
  const auto host_layers = gpu_test::random_mlp(rng);
  Int8Mlp mlp;
  if (!check(Int8Mlp::create(gpu_test::as_weights(host_layers), 1024, mlp))) return 1;
  Int8Mlp::Scratch scratch;
  if (!check(mlp.create_scratch(scratch))) return 1;
  for (int m : {1, 64, 256, 1024}) bench_mlp_split(mlp, scratch, stream, m, rng);

  for (int streams : {1, 2, 4}) {
    for (bool graphs : {false, true}) bench_executor(host_layers, streams, 256, graphs, rng);
  }
  cudaStreamDestroy(stream);
  return 0;
}
