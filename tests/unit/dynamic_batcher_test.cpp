#include "coinfer/batching/dynamic_batcher.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <condition_variable>
#include <future>
#include <limits>
#include <memory_resource>
#include <thread>

#include "coinfer/core/metrics.hpp"
#include "coinfer/runtime/cpu_executor.hpp"

using namespace coinfer;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

// Echoes INPUT0 (FP32 [-1, -1]) as OUTPUT0 and records each batch's first column and width.
// While closed, the gate holds forward() so that tests can fill the queue behind a batch.
class EchoModel final : public Model {
 public:
  EchoModel() {
    meta_.name = "echo";
    meta_.max_batch_size = 1024;
    meta_.inputs = {{"INPUT0", DType::FP32, {-1, -1}}};
    meta_.outputs = {{"OUTPUT0", DType::FP32, {-1, -1}}};
  }
  const ModelMetadata& metadata() const noexcept override { return meta_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override {
    {
      std::unique_lock lock(mutex_);
      ++waiting_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return open_; });
      --waiting_;
      const auto rows = batch.inputs[0].shape[0];
      const auto cols = batch.inputs[0].shape[1];
      std::vector<float> first_column;
      for (std::int64_t r = 0; r < rows; ++r)
        first_column.push_back(batch.inputs[0].values<float>()[r * cols]);
      batches_.push_back(std::move(first_column));
      widths_.push_back(cols);
    }
    outputs[0].resize(DType::FP32, batch.inputs[0].shape);
    std::memcpy(outputs[0].bytes().data(), batch.inputs[0].data, batch.inputs[0].size_bytes());
    return {};
  }
  void close() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  // Waits until a batch is held at the closed gate.
  void wait_held() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return waiting_ > 0; });
  }
  std::vector<std::vector<float>> batches() {
    std::lock_guard lock(mutex_);
    return batches_;
  }
  std::vector<std::int64_t> widths() {
    std::lock_guard lock(mutex_);
    return widths_;
  }

 private:
  ModelMetadata meta_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  int waiting_ = 0;
  std::vector<std::vector<float>> batches_;
  std::vector<std::int64_t> widths_;
};

struct Result {
  Status status;
  std::vector<float> output;
  std::chrono::steady_clock::duration elapsed{};
};

// Runs a batcher on an io_context driven by one background thread.
struct Fixture {
  explicit Fixture(BatchPolicy policy)
      : batcher(io.get_executor(), executor, model, policy, &metrics) {}
  ~Fixture() {
    model.open();
    work.reset();
    thread.join();
  }

  // One request: a row of `width` floats all equal to `value`.
  asio::awaitable<Result> request(float value, SubmitOptions options = {}, int width = 1) {
    const auto started = std::chrono::steady_clock::now();
    BatchTicket ticket;
    const Shape shapes[] = {{1, width}};
    Result result;
    result.status = batcher.reserve(shapes, options, ticket);
    if (!result.status.ok()) co_return result;
    auto row = ticket.input(0);
    for (int i = 0; i < width; ++i)
      std::memcpy(row.data() + i * sizeof(float), &value, sizeof value);
    result.status = co_await batcher.async_submit(ticket, options, asio::use_awaitable);
    if (result.status.ok()) {
      auto out = ticket.outputs()[0].values<float>();
      result.output.assign(out.begin(), out.end());
    }
    result.elapsed = std::chrono::steady_clock::now() - started;
    co_return result;
  }

  std::future<Result> spawn(float value, SubmitOptions options = {}, int width = 1) {
    return asio::co_spawn(io, request(value, options, width), asio::use_future);
  }

  asio::io_context io;
  EchoModel model;
  ModelMetrics metrics;
  CpuExecutor executor{1};
  DynamicBatcher batcher;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::thread thread{[this] { io.run(); }};
};

BatchPolicy policy(int max_batch, std::chrono::microseconds delay, std::size_t max_queue = 1024) {
  BatchPolicy p;
  p.max_batch_size = max_batch;
  p.max_queue_delay = delay;
  p.max_queue_size = max_queue;
  return p;
}

}  // namespace

TEST_CASE("a batch is formed at once when it reaches max_batch_size") {
  Fixture f(policy(4, 10s));
  std::vector<std::future<Result>> results;
  f.model.close();
  for (int i = 0; i < 4; ++i) results.push_back(f.spawn(static_cast<float>(i)));
  f.model.wait_held();  // formed without waiting for the 10 s delay
  f.model.open();
  for (int i = 0; i < 4; ++i) {
    auto r = results[i].get();
    REQUIRE(r.status.ok());
    CHECK(r.output == std::vector<float>{static_cast<float>(i)});
  }
  CHECK(f.model.batches() == std::vector<std::vector<float>>{{0, 1, 2, 3}});
  CHECK(f.metrics.exec_count.value() == 1);
  CHECK(f.metrics.inference_count.value() == 4);
}

TEST_CASE("a partial batch is formed when the oldest request has waited max_queue_delay") {
  Fixture f(policy(64, 50ms));
  auto a = f.spawn(1);
  auto b = f.spawn(2);
  auto c = f.spawn(3);
  const auto ra = a.get();
  REQUIRE(ra.status.ok());
  CHECK(ra.elapsed >= 45ms);
  CHECK(b.get().output == std::vector<float>{2});
  CHECK(c.get().output == std::vector<float>{3});
  CHECK(f.model.batches() == std::vector<std::vector<float>>{{1, 2, 3}});
}

TEST_CASE("with no delay, a lone request runs at once and requests of one I/O pass share a batch") {
  Fixture f(policy(64, 0us));
  auto lone = f.spawn(7);
  REQUIRE(lone.wait_for(5s) == std::future_status::ready);
  CHECK(lone.get().output == std::vector<float>{7});
  // Three requests started by one handler on the I/O thread: the first one's flush is posted
  // behind the other two, which join its batch.
  std::promise<std::array<std::future<Result>, 3>> started;
  asio::post(f.io, [&] {
    started.set_value({asio::co_spawn(f.io, f.request(1), asio::use_future),
                       asio::co_spawn(f.io, f.request(2), asio::use_future),
                       asio::co_spawn(f.io, f.request(3), asio::use_future)});
  });
  auto futures = started.get_future().get();
  for (auto& future : futures) CHECK(future.get().status.ok());
  CHECK(f.model.batches() == std::vector<std::vector<float>>{{7}, {1, 2, 3}});
}

TEST_CASE("a finished ticket's output storage goes to the next ticket on its thread, answers intact") {
  Fixture f(policy(64, 0us));
  // On the I/O thread, one after another: each ticket's outputs are the last one's storage.
  auto run = [&]() -> asio::awaitable<std::vector<const std::byte*>> {
    std::vector<const std::byte*> storage;
    for (int i = 0; i < 4; ++i) {
      BatchTicket ticket;
      const Shape shapes[] = {{1, 3}};
      REQUIRE(f.batcher.reserve(shapes, {}, ticket).ok());
      const float row[3] = {float(i), float(i) + 0.5f, -float(i)};
      std::memcpy(ticket.input(0).data(), row, sizeof row);
      REQUIRE((co_await f.batcher.async_submit(ticket, {}, asio::use_awaitable)).ok());
      const Tensor& out = ticket.outputs().at(0);
      CHECK(out.shape() == Shape{1, 3});
      CHECK(std::vector<float>(out.values<float>().begin(), out.values<float>().end()) ==
            std::vector<float>(row, row + 3));
      storage.push_back(out.bytes().data());
    }
    co_return storage;
  };
  const auto storage = asio::co_spawn(f.io, run(), asio::use_future).get();
  REQUIRE(storage.size() == 4);
  CHECK(storage[1] == storage[0]);
  CHECK(storage[2] == storage[0]);
  CHECK(storage[3] == storage[0]);
}

TEST_CASE("a preferred batch size is flushed without waiting for the delay") {
  auto p = policy(64, 10s);
  p.preferred_batch_sizes = {2};
  Fixture f(p);
  auto a = f.spawn(1);
  auto b = f.spawn(2);
  REQUIRE(a.wait_for(5s) == std::future_status::ready);
  CHECK(a.get().status.ok());
  CHECK(b.get().status.ok());
  CHECK(f.model.batches() == std::vector<std::vector<float>>{{1, 2}});
}

TEST_CASE("a full queue rejects at once with unavailable") {
  Fixture f(policy(1, 0us, /*max_queue=*/2));
  f.model.close();
  auto running = f.spawn(0);
  f.model.wait_held();
  auto q1 = f.spawn(1);
  auto q2 = f.spawn(2);
  auto rejected = f.spawn(3);
  REQUIRE(rejected.wait_for(5s) == std::future_status::ready);  // while the gate is still closed
  const auto r = rejected.get();
  CHECK(r.status.code() == Errc::unavailable);
  CHECK(r.status.message().find("max_queue_size 2") != std::string::npos);
  CHECK(f.metrics.rejected.value() == 1);
  f.model.open();
  CHECK(running.get().status.ok());
  CHECK(q1.get().status.ok());
  CHECK(q2.get().status.ok());
}

TEST_CASE("a request that times out in the queue gets deadline_exceeded and is never computed") {
  Fixture f(policy(1, 0us));
  f.model.close();
  auto running = f.spawn(0);
  f.model.wait_held();
  SubmitOptions options;
  options.timeout = 20ms;
  auto expiring = f.spawn(7, options);
  REQUIRE(expiring.wait_for(5s) == std::future_status::ready);  // answered while compute is busy
  const auto r = expiring.get();
  CHECK(r.status.code() == Errc::deadline_exceeded);
  f.model.open();
  CHECK(running.get().status.ok());
  f.spawn(8).get();
  CHECK(f.model.batches() == std::vector<std::vector<float>>{{0}, {8}});
  CHECK(f.metrics.expired.value() == 1);
}

TEST_CASE("a request may shorten the default timeout but not lengthen it") {
  auto p = policy(1, 0us);
  p.default_timeout = 30ms;
  Fixture f(p);
  f.model.close();
  auto running = f.spawn(0);
  f.model.wait_held();
  SubmitOptions longer;
  longer.timeout = 60s;
  auto r = f.spawn(1, longer);
  REQUIRE(r.wait_for(5s) == std::future_status::ready);
  CHECK(r.get().status.code() == Errc::deadline_exceeded);
  f.model.open();
  CHECK(running.get().status.ok());
}

TEST_CASE("a timeout too long to represent as a deadline never expires") {
  // The OIP parameter takes any non-negative int64 of µs; added to the clock in nanoseconds it
  // would overflow into the past and expire the request at once.
  for (const auto default_timeout : {std::chrono::microseconds(0), std::chrono::microseconds::max()}) {
    auto p = policy(1, 0us);
    p.default_timeout = default_timeout;
    Fixture f(p);
    f.model.close();
    auto running = f.spawn(0);
    f.model.wait_held();
    SubmitOptions huge;
    huge.timeout = std::chrono::microseconds(std::numeric_limits<std::int64_t>::max());
    auto r = f.spawn(1, huge);
    for (int i = 0; i < 1000 && f.batcher.queue_depth() < 1; ++i) {
      if (r.wait_for(1ms) == std::future_status::ready) break;
    }
    CHECK(r.wait_for(50ms) == std::future_status::timeout);  // still queued, not expired
    f.model.open();
    CHECK(running.get().status.ok());
    CHECK(r.get().status.ok());
    CHECK(f.metrics.expired.value() == 0);
  }
}

TEST_CASE("higher priority requests are computed first, FIFO within a level") {
  auto p = policy(1, 0us);
  p.priority_levels = 2;
  p.default_priority = 2;
  Fixture f(p);
  f.model.close();
  auto running = f.spawn(0);
  f.model.wait_held();
  SubmitOptions high;
  high.priority = 1;
  auto low1 = f.spawn(1);
  auto low2 = f.spawn(2);
  auto high1 = f.spawn(3, high);
  auto high2 = f.spawn(4, high);
  while (f.batcher.queue_depth() < 4) std::this_thread::sleep_for(1ms);
  f.model.open();
  for (auto* r : {&running, &low1, &low2, &high1, &high2}) CHECK(r->get().status.ok());
  CHECK(f.model.batches() == std::vector<std::vector<float>>{{0}, {3}, {4}, {1}, {2}});
}

TEST_CASE("a policy built in code with a batch size below 1 is refused by name") {
  // A preferred size of 0 would make every buffer "ready": batching silently off.
  asio::io_context io;
  EchoModel model;
  CpuExecutor executor{1};
  auto p = policy(8, 1ms);
  p.preferred_batch_sizes = {4, 0};
  CHECK_THROWS_WITH_AS(DynamicBatcher(io.get_executor(), executor, model, p),
                       "preferred_batch_sizes: 0 is not within 1..max_batch_size",
                       std::invalid_argument);
  p.preferred_batch_sizes = {16};
  CHECK_THROWS_AS(DynamicBatcher(io.get_executor(), executor, model, p), std::invalid_argument);
  p.preferred_batch_sizes = {8};
  CHECK(validate(p).ok());
  p.max_batch_size = 0;
  CHECK(validate(p).message() == "max_batch_size: must be at least 1");
}

TEST_CASE("a priority outside the configured levels is rejected") {
  Fixture f(policy(4, 1ms));
  SubmitOptions options;
  options.priority = 5;
  const auto r = f.spawn(1, options).get();
  CHECK(r.status.code() == Errc::invalid_argument);
  CHECK(r.status.message() == "parameters.priority: 5 is outside 1..1");
}

TEST_CASE("a request cancelled while queued is dropped before compute") {
  Fixture f(policy(1, 0us));
  f.model.close();
  auto running = f.spawn(0);
  f.model.wait_held();

  BatchTicket ticket;
  const Shape shapes[] = {{1, 1}};
  REQUIRE(f.batcher.reserve(shapes, {}, ticket).ok());
  const float value = 9;
  std::memcpy(ticket.input(0).data(), &value, sizeof value);
  asio::cancellation_signal signal;
  std::promise<Status> done;
  asio::post(f.io, [&] {
    f.batcher.async_submit(ticket, {}, asio::bind_cancellation_slot(signal.slot(), [&](Status s) {
                             done.set_value(std::move(s));
                           }));
  });
  while (f.batcher.queue_depth() < 1) std::this_thread::sleep_for(1ms);
  asio::post(f.io, [&] { signal.emit(asio::cancellation_type::terminal); });
  auto result = done.get_future();
  REQUIRE(result.wait_for(5s) == std::future_status::ready);
  CHECK(result.get().code() == Errc::cancelled);
  f.model.open();
  CHECK(running.get().status.ok());
  f.spawn(10).get();
  CHECK(f.model.batches() == std::vector<std::vector<float>>{{0}, {10}});
  CHECK(f.metrics.cancelled.value() == 1);
}

TEST_CASE("a completed request leaves nothing on its caller's cancellation slot") {
  // The slot outlives the request (a connection's signal is reused for the next one): a
  // handler left on it would call cancel() on a ticket that no longer exists.
  Fixture f(policy(1, 0us));
  asio::cancellation_signal signal;
  std::promise<Status> done;
  {
    BatchTicket ticket;
    const Shape shapes[] = {{1, 1}};
    REQUIRE(f.batcher.reserve(shapes, {}, ticket).ok());
    const float value = 3;
    std::memcpy(ticket.input(0).data(), &value, sizeof value);
    asio::post(f.io, [&] {
      f.batcher.async_submit(ticket, {}, asio::bind_cancellation_slot(signal.slot(), [&](Status s) {
                               done.set_value(std::move(s));
                             }));
    });
    auto result = done.get_future();
    REQUIRE(result.wait_for(5s) == std::future_status::ready);
    CHECK(result.get().ok());
  }
  std::promise<bool> has_handler;
  asio::post(f.io, [&] {
    has_handler.set_value(signal.slot().has_handler());
    signal.emit(asio::cancellation_type::terminal);  // must touch no ticket
  });
  CHECK_FALSE(has_handler.get_future().get());
}

TEST_CASE("1000 concurrent submitters each get their own row back") {
  Fixture f(policy(64, 1ms));
  std::vector<std::future<Result>> results;
  for (int i = 0; i < 1000; ++i) results.push_back(f.spawn(static_cast<float>(i), {}, 4));
  for (int i = 0; i < 1000; ++i) {
    const auto r = results[i].get();
    REQUIRE(r.status.ok());
    REQUIRE(r.output == std::vector<float>(4, static_cast<float>(i)));
  }
  CHECK(f.metrics.inference_count.value() == 1000);
  CHECK(f.metrics.queue_depth.load() == 0);
}

TEST_CASE("rows of different lengths are batched in separate buckets") {
  Fixture f(policy(8, 20ms));
  auto a = f.spawn(1, {}, 3);
  auto b = f.spawn(2, {}, 5);
  auto c = f.spawn(3, {}, 3);
  CHECK(a.get().output == std::vector<float>(3, 1));
  CHECK(b.get().output == std::vector<float>(5, 2));
  CHECK(c.get().output == std::vector<float>(3, 3));
  auto widths = f.model.widths();
  std::sort(widths.begin(), widths.end());
  CHECK(widths == std::vector<std::int64_t>{3, 5});
}

TEST_CASE("a reserved ticket that is never submitted gives its rows back") {
  Fixture f(policy(4, 1ms, /*max_queue=*/1));
  {
    BatchTicket abandoned;
    const Shape shapes[] = {{1, 1}};
    REQUIRE(f.batcher.reserve(shapes, {}, abandoned).ok());
    CHECK(f.batcher.queue_depth() == 1);
  }
  CHECK(f.batcher.queue_depth() == 0);
  CHECK(f.spawn(5).get().output == std::vector<float>{5});
}

TEST_CASE("a batch dimension over max_batch_size is rejected") {
  Fixture f(policy(4, 1ms));
  BatchTicket ticket;
  const Shape shapes[] = {{5, 1}};
  const auto status = f.batcher.reserve(shapes, {}, ticket);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message() == "batch dimension 5 exceeds max_batch_size 4");
}

namespace {

// A memory resource that remembers what it handed out (as a CUDA executor's pinned memory
// would be), so a test can tell whether a pointer lies in it.
class RecordingResource final : public std::pmr::memory_resource {
 public:
  std::size_t allocations() {
    std::lock_guard lock(mutex_);
    return allocations_;
  }
  std::size_t live_bytes() {
    std::lock_guard lock(mutex_);
    std::size_t total = 0;
    for (const auto& block : live_) total += block.second;
    return total;
  }
  bool owns(const void* p) {
    std::lock_guard lock(mutex_);
    const auto* b = static_cast<const std::byte*>(p);
    return std::any_of(live_.begin(), live_.end(), [b](const auto& block) {
      return b >= block.first && b < block.first + block.second;
    });
  }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    void* p = std::pmr::new_delete_resource()->allocate(bytes, alignment);
    std::lock_guard lock(mutex_);
    ++allocations_;
    live_.emplace_back(static_cast<std::byte*>(p), bytes);
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    {
      std::lock_guard lock(mutex_);
      std::erase_if(live_, [p](const auto& block) { return block.first == p; });
    }
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  std::mutex mutex_;
  std::size_t allocations_ = 0;
  std::vector<std::pair<std::byte*, std::size_t>> live_;
};

class StagingExecutor final : public Executor {
 public:
  void submit(std::function<void()> work) override { inner_.submit(std::move(work)); }
  int concurrency() const noexcept override { return 1; }
  std::pmr::memory_resource* staging_memory() const noexcept override { return &resource_; }
  RecordingResource& resource() { return resource_; }

 private:
  mutable RecordingResource resource_;
  CpuExecutor inner_{1};
};

// Echoes a fixed-width input ([-1, 4]) and notes whether the rows it read were the executor's.
class FixedEchoModel final : public Model {
 public:
  explicit FixedEchoModel(RecordingResource& staging) : staging_(staging) {
    meta_.name = "fixed";
    meta_.max_batch_size = 64;
    meta_.inputs = {{"INPUT0", DType::FP32, {-1, 4}}};
    meta_.outputs = {{"OUTPUT0", DType::FP32, {-1, 4}}};
  }
  const ModelMetadata& metadata() const noexcept override { return meta_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override {
    if (!staging_.owns(batch.inputs[0].data)) ++foreign_;
    outputs[0].resize(DType::FP32, batch.inputs[0].shape);
    std::memcpy(outputs[0].bytes().data(), batch.inputs[0].data, batch.inputs[0].size_bytes());
    return {};
  }
  std::atomic<int> foreign_{0};

 private:
  ModelMetadata meta_;
  RecordingResource& staging_;
};

}  // namespace

TEST_CASE("staging rows come from the executor's staging memory, taken up front for fixed shapes") {
  asio::io_context io;
  StagingExecutor executor;
  FixedEchoModel model(executor.resource());
  DynamicBatcher batcher(io.get_executor(), executor, model, policy(8, 200us, 256));
  const std::size_t at_start = executor.resource().allocations();
  CHECK(at_start >= 2);  // every buffer's rows, before any request

  auto request = [&](float value) -> asio::awaitable<std::vector<float>> {
    BatchTicket ticket;
    const Shape shapes[] = {{1, 4}};
    if (!batcher.reserve(shapes, {}, ticket).ok()) co_return std::vector<float>{};
    CHECK(executor.resource().owns(ticket.input(0).data()));
    for (int i = 0; i < 4; ++i) std::memcpy(ticket.input(0).data() + i * 4, &value, 4);
    if (!(co_await batcher.async_submit(ticket, {}, asio::use_awaitable)).ok()) {
      co_return std::vector<float>{};
    }
    auto out = ticket.outputs()[0].values<float>();
    co_return std::vector<float>(out.begin(), out.end());
  };
  std::vector<std::future<std::vector<float>>> results;
  for (int i = 0; i < 200; ++i) {
    results.push_back(asio::co_spawn(io, request(static_cast<float>(i)), asio::use_future));
  }
  std::thread runner([&] { io.run(); });
  for (int i = 0; i < 200; ++i) CHECK(results[i].get() == std::vector<float>(4, float(i)));
  runner.join();
  CHECK(model.foreign_ == 0);                            // read in place
  CHECK(executor.resource().allocations() == at_start);  // nothing taken while serving
}

TEST_CASE("once nothing waits, no timer is left armed to hold the io_context") {
  asio::io_context io;
  EchoModel model;
  CpuExecutor executor{1};
  DynamicBatcher batcher(io.get_executor(), executor, model, policy(2, 10s));
  auto request = [&](float value) -> asio::awaitable<Status> {
    BatchTicket ticket;
    const Shape shapes[] = {{1, 1}};
    if (auto s = batcher.reserve(shapes, {}, ticket); !s) co_return s;
    std::memcpy(ticket.input(0).data(), &value, sizeof value);
    co_return co_await batcher.async_submit(ticket, {}, asio::use_awaitable);
  };
  // The first request arms the 10 s delay timer; the second fills the batch, which runs at once.
  auto a = asio::co_spawn(io, request(1), asio::use_future);
  auto b = asio::co_spawn(io, request(2), asio::use_future);
  const auto started = std::chrono::steady_clock::now();
  io.run();  // returns when both are answered and nothing else is pending
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  CHECK(a.get().ok());
  CHECK(b.get().ok());
}

TEST_CASE("a large variable-shape request's staging is given back once its batch is done") {
  asio::io_context io;
  StagingExecutor executor;
  EchoModel model;
  DynamicBatcher batcher(io.get_executor(), executor, model, policy(64, 0us, 256));
  const std::size_t at_start = executor.resource().live_bytes();
  auto request = [&](int width) -> asio::awaitable<Status> {
    BatchTicket ticket;
    const Shape shapes[] = {{1, width}};
    if (auto s = batcher.reserve(shapes, {}, ticket); !s) co_return s;
    CHECK(ticket.input(0).size() == static_cast<std::size_t>(width) * 4);
    co_return co_await batcher.async_submit(ticket, {}, asio::use_awaitable);
  };
  // 4 M floats (16 MiB): only its own rows are staged (not max_batch_size of them) ...
  auto big = asio::co_spawn(io, request(4 << 20), asio::use_future);
  io.run();
  CHECK(big.get().ok());
  // ... and they are not kept once the batch is done.
  CHECK(executor.resource().live_bytes() <= at_start + DynamicBatcher::kept_variable_bytes);
}

TEST_CASE("a request needing more staging than max_batch_bytes is rejected") {
  asio::io_context io;
  CpuExecutor executor{1};
  EchoModel model;
  auto p = policy(64, 0us);
  p.max_batch_bytes = 1024;
  DynamicBatcher batcher(io.get_executor(), executor, model, p);
  BatchTicket ticket;
  const Shape shapes[] = {{2, 200}};
  const Status status = batcher.reserve(shapes, {}, ticket);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message() == "the inputs need 1600 bytes of staging, over max_batch_bytes 1024");
}

namespace {

// A ragged model: INPUT_IDS INT32 [-1, -1] (packed rows). Returns each row's length, first id
// and the value of its request's parameter "tag" (-1 when absent), and records every batch.
class RaggedModel final : public Model {
 public:
  explicit RaggedModel(std::int64_t max_batch_tokens) {
    meta_.name = "ragged";
    meta_.max_batch_size = 8;
    meta_.max_batch_tokens = max_batch_tokens;
    meta_.inputs = {{"INPUT_IDS", DType::Int32, {-1, -1}, /*ragged=*/true}};
    meta_.outputs = {{"SUMMARY", DType::Int64, {-1, 3}}};
  }
  const ModelMetadata& metadata() const noexcept override { return meta_; }
  Status forward(const Batch& batch, std::span<Tensor> outputs) override {
    const auto ids = batch.inputs[0].values<std::int32_t>();
    REQUIRE(static_cast<std::int64_t>(ids.size()) == batch.offsets.back());
    outputs[0].resize(DType::Int64, {batch.rows, 3});
    auto out = outputs[0].values<std::int64_t>();
    for (int r = 0; r < batch.rows; ++r) {
      out[r * 3] = batch.length(r);
      out[r * 3 + 1] = ids[static_cast<std::size_t>(batch.offsets[r])];
      const ParameterValue* tag = find_parameter(*batch.parameters[r], "tag");
      out[r * 3 + 2] = tag ? std::get<std::int64_t>(*tag) : -1;
    }
    std::lock_guard lock(mutex_);
    offsets_.emplace_back(batch.offsets.begin(), batch.offsets.end());
    return {};
  }
  std::vector<std::vector<std::int64_t>> offsets() {
    std::lock_guard lock(mutex_);
    return offsets_;
  }

 private:
  ModelMetadata meta_;
  std::mutex mutex_;
  std::vector<std::vector<std::int64_t>> offsets_;
};

// One request of rows with these lengths; row r's ids are all `first + r`.
asio::awaitable<std::vector<std::int64_t>> ragged_request(DynamicBatcher& batcher,
                                                          std::vector<std::int64_t> lengths,
                                                          std::int32_t first,
                                                          const Parameters* parameters,
                                                          Status& status) {
  BatchTicket ticket;
  const Shape shapes[] = {{static_cast<std::int64_t>(lengths.size()), -1}};
  status = batcher.reserve(shapes, {}, ticket, lengths, parameters);
  if (!status) co_return std::vector<std::int64_t>{};
  auto ids = ticket.input(0);
  std::size_t at = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    for (std::int64_t i = 0; i < lengths[r]; ++i, at += 4) {
      const std::int32_t id = first + static_cast<std::int32_t>(r);
      std::memcpy(ids.data() + at, &id, 4);
    }
  }
  CHECK(at == ids.size());
  status = co_await batcher.async_submit(ticket, {}, asio::use_awaitable);
  if (!status) co_return std::vector<std::int64_t>{};
  auto out = ticket.outputs()[0].values<std::int64_t>();
  co_return std::vector<std::int64_t>(out.begin(), out.end());
}

}  // namespace

TEST_CASE("rows of different lengths share one batch, packed, with their offsets and parameters") {
  asio::io_context io;
  CpuExecutor executor{1};
  RaggedModel model(64);
  DynamicBatcher batcher(io.get_executor(), executor, model, policy(8, 50ms));
  const Parameters tagged = {{"tag", std::int64_t{7}}};
  Status sa, sb;
  auto a = asio::co_spawn(io, ragged_request(batcher, {3, 5}, 10, &tagged, sa), asio::use_future);
  auto b = asio::co_spawn(io, ragged_request(batcher, {2}, 20, nullptr, sb), asio::use_future);
  io.run();
  CHECK(a.get() == std::vector<std::int64_t>{3, 10, 7, 5, 11, 7});
  CHECK(b.get() == std::vector<std::int64_t>{2, 20, -1});
  CHECK(sa.ok());
  CHECK(sb.ok());
  CHECK(model.offsets() == std::vector<std::vector<std::int64_t>>{{0, 3, 8, 10}});
}

TEST_CASE("a batch never holds more tokens than max_batch_tokens") {
  asio::io_context io;
  CpuExecutor executor{1};
  RaggedModel model(8);
  DynamicBatcher batcher(io.get_executor(), executor, model, policy(8, 20ms));
  Status s1, s2, s3;
  auto a = asio::co_spawn(io, ragged_request(batcher, {5}, 1, nullptr, s1), asio::use_future);
  auto b = asio::co_spawn(io, ragged_request(batcher, {4}, 2, nullptr, s2), asio::use_future);
  auto c = asio::co_spawn(io, ragged_request(batcher, {3}, 3, nullptr, s3), asio::use_future);
  io.run();
  CHECK(a.get() == std::vector<std::int64_t>{5, 1, -1});
  CHECK(b.get() == std::vector<std::int64_t>{4, 2, -1});
  CHECK(c.get() == std::vector<std::int64_t>{3, 3, -1});
  for (const auto& offsets : model.offsets()) CHECK(offsets.back() <= 8);
  CHECK(model.offsets().size() == 2);  // 5 | 4 + 3
}

TEST_CASE("a request over the token budget or with an empty row is rejected") {
  asio::io_context io;
  CpuExecutor executor{1};
  RaggedModel model(8);
  DynamicBatcher batcher(io.get_executor(), executor, model, policy(8, 0us));
  BatchTicket ticket;
  const Shape shapes[] = {{2, -1}};
  const std::int64_t too_long[] = {5, 4};
  Status status = batcher.reserve(shapes, {}, ticket, too_long);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message() == "9 tokens exceed max_batch_tokens 8 (one batch's budget)");
  const std::int64_t empty_row[] = {5, 0};
  status = batcher.reserve(shapes, {}, ticket, empty_row);
  CHECK(status.message() == "row 1 is empty");
  CHECK(batcher.queue_depth() == 0);
}
