// GPU tests of the served path, built only in the main build (they need the whole library:
// the safetensors loader, the CPU Mlp and the batcher): CudaMlp on the real digits weights
// against the CPU Mlp, and batches formed by a DynamicBatcher on a CudaExecutor.
// Assets are found under $COINFER_SOURCE_DIR (set it when the binary runs away from the
// checkout it was built in), else the build's source directory.
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "coinfer/batching/dynamic_batcher.hpp"
#include "coinfer/core/config.hpp"
#include "coinfer/core/metrics.hpp"
#include "coinfer/models/builtin_models.hpp"
#include "coinfer/models/cuda_mlp.hpp"
#include "coinfer/models/mlp.hpp"
#include "coinfer/models/safetensors.hpp"

using namespace coinfer;
namespace asio = boost::asio;

namespace {

std::filesystem::path asset(const char* name) {
  const char* root = std::getenv("COINFER_SOURCE_DIR");
  return std::filesystem::path(root != nullptr ? root : COINFER_SOURCE_DIR) /
         "assets/digits_mlp" / name;
}

// The held-out split: x FP32 [n, 64], y INT64 [n].
struct TestSplit {
  std::vector<float> x;
  std::vector<std::int64_t> y;
  std::int64_t rows() const { return std::int64_t(y.size()); }
  ConstTensorView view(std::int64_t begin, std::int64_t count) const {
    return {DType::FP32, {count, 64}, reinterpret_cast<const std::byte*>(x.data() + begin * 64)};
  }
};

TestSplit load_split() {
  SafetensorsFile file;
  const Status s = SafetensorsFile::open(asset("test_split.safetensors"), file);
  REQUIRE_MESSAGE(s.ok(), s.message());
  const SafetensorsTensor* x = file.tensor("x");
  const SafetensorsTensor* y = file.tensor("y");
  REQUIRE(x != nullptr);
  REQUIRE(y != nullptr);
  TestSplit split;
  split.x.resize(x->data.size() / sizeof(float));
  std::memcpy(split.x.data(), x->data.data(), x->data.size());
  split.y.resize(y->data.size() / sizeof(std::int64_t));
  std::memcpy(split.y.data(), y->data.data(), y->data.size());
  REQUIRE(split.x.size() == split.y.size() * 64);
  return split;
}

}  // namespace

TEST_CASE("CudaMlp on the digits weights gives the CPU Mlp's labels, probabilities within 1e-3") {
  const TestSplit split = load_split();
  const int batch = 64;
  std::unique_ptr<CudaExecutor> executor;
  REQUIRE(CudaExecutor::create(0, 2, executor).ok());
  std::unique_ptr<CudaMlp> gpu;
  const Status loaded = CudaMlp::load(asset("model.safetensors"), "digits", "1", batch, *executor, gpu);
  REQUIRE_MESSAGE(loaded.ok(), loaded.message());
  std::unique_ptr<Mlp> cpu;
  REQUIRE(Mlp::load(asset("model.safetensors"), "digits", "1", batch, cpu).ok());
  CHECK(gpu->metadata().inputs[0].shape == cpu->metadata().inputs[0].shape);

  int gpu_correct = 0, cpu_correct = 0, differ = 0;
  double worst = 0.0;
  Tensor g[2], c[2];
  for (std::int64_t begin = 0; begin < split.rows(); begin += batch) {
    const std::int64_t rows = std::min<std::int64_t>(batch, split.rows() - begin);
    const ConstTensorView x = split.view(begin, rows);  // pageable: the staged path
    const Status s = gpu->forward(Batch::dense({&x, 1}), g);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(cpu->forward(Batch::dense({&x, 1}), c).ok());
    REQUIRE(g[0].shape() == c[0].shape());
    for (std::size_t i = 0; i < g[0].values<float>().size(); ++i) {
      worst = std::max(worst, double(std::abs(g[0].values<float>()[i] - c[0].values<float>()[i])));
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto expected = split.y[std::size_t(begin + r)];
      gpu_correct += g[1].values<std::int64_t>()[std::size_t(r)] == expected;
      cpu_correct += c[1].values<std::int64_t>()[std::size_t(r)] == expected;
      differ += g[1].values<std::int64_t>()[std::size_t(r)] != c[1].values<std::int64_t>()[std::size_t(r)];
    }
  }
  MESSAGE("digits held-out " << split.rows() << ": GPU INT8 " << gpu_correct << " correct, CPU INT8 "
                             << cpu_correct << ", labels differ on " << differ
                             << ", max |p_gpu - p_cpu| = " << worst);
  CHECK(worst < 1e-3);
  CHECK(differ == 0);
  CHECK(gpu_correct == cpu_correct);
}

TEST_CASE("a DynamicBatcher on a CudaExecutor batches pinned rows and answers every request") {
  const TestSplit split = load_split();
  Config config;
  const std::string toml = "[models.digits]\nkind = \"mlp\"\ndevice = \"cuda:0\"\ncuda_streams = 3\n"
                           "max_batch_size = 32\nmax_queue_delay_us = 500\nweights = \"" +
                           asset("model.safetensors").string() + "\"\n";
  REQUIRE(parse_config(toml, config).ok());
  LoadedModel loaded;
  const Status made = make_model(config.models[0], loaded);
  std::shared_ptr<Model> model = std::move(loaded.model);
  std::unique_ptr<Executor> executor = std::move(loaded.device_executor);
  REQUIRE_MESSAGE(made.ok(), made.message());
  REQUIRE(executor != nullptr);
  CHECK(executor->concurrency() == 3);
  std::unique_ptr<Mlp> cpu;
  REQUIRE(Mlp::load(asset("model.safetensors"), "digits", "1", 1, cpu).ok());

  asio::io_context io;
  ModelMetrics metrics;
  {
    BatchPolicy policy;
    policy.max_batch_size = 32;
    policy.max_queue_delay = std::chrono::microseconds(500);
    DynamicBatcher batcher(io.get_executor(), *executor, *model, policy, &metrics);
    struct Answer {
      Status status;
      std::int64_t label = -1;
      bool pinned = false;
    };
    auto request = [&](std::int64_t row) -> asio::awaitable<Answer> {
      Answer answer;
      BatchTicket ticket;
      const Shape shapes[] = {{1, 64}};
      answer.status = batcher.reserve(shapes, {}, ticket);
      if (!answer.status) co_return answer;
      answer.pinned = cuda::is_pinned(ticket.input(0).data());
      std::memcpy(ticket.input(0).data(), split.x.data() + row * 64, 64 * sizeof(float));
      answer.status = co_await batcher.async_submit(ticket, {}, asio::use_awaitable);
      if (answer.status) answer.label = ticket.outputs()[1].values<std::int64_t>()[0];
      co_return answer;
    };
    std::vector<std::future<Answer>> answers;
    for (std::int64_t r = 0; r < split.rows(); ++r) {
      answers.push_back(asio::co_spawn(io, request(r), asio::use_future));
    }
    // A failed check below must not leave a joinable thread behind (std::terminate).
    std::jthread runner([&] { io.run(); });
    int wrong = 0, unpinned = 0, failed = 0;
    Tensor c[2];
    for (std::int64_t r = 0; r < split.rows(); ++r) {
      Answer a = answers[std::size_t(r)].get();
      if (!a.status) {
        if (failed++ == 0) MESSAGE("request " << r << " failed: " << a.status.message());
        continue;
      }
      unpinned += !a.pinned;
      const ConstTensorView x = split.view(r, 1);
      if (!cpu->forward(Batch::dense({&x, 1}), c).ok()) {
        ++failed;
        continue;
      }
      wrong += a.label != c[1].values<std::int64_t>()[0];
    }
    runner.join();
    CHECK(failed == 0);
    CHECK(unpinned == 0);
    CHECK(wrong == 0);
  }
  const double mean_batch =
      double(metrics.inference_count.value()) / double(std::max<std::uint64_t>(metrics.exec_count.value(), 1));
  MESSAGE(split.rows() << " requests in " << metrics.exec_count.value() << " GPU batches (mean "
                       << mean_batch << ")");
  CHECK(metrics.inference_count.value() == std::uint64_t(split.rows()));
  CHECK(mean_batch > 1.0);
  executor.reset();  // joins its threads before the model goes
}
