#include "coinfer/batching/dynamic_batcher.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cassert>
#include <cstring>

#include "coinfer/core/metrics.hpp"

namespace coinfer {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

double micros(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

}  // namespace

// --- BatchTicket ----------------------------------------------------------------------------

BatchTicket::~BatchTicket() {
  if (batcher_ && (state_ == State::reserved || state_ == State::queued)) batcher_->release(*this);
}

std::span<std::byte> BatchTicket::input(std::size_t i) {
  assert(state_ == State::reserved);
  return {buffer_->row(i, row_), buffer_->row_bytes[i] * static_cast<std::size_t>(rows_)};
}

// --- DynamicBatcher -------------------------------------------------------------------------

DynamicBatcher::DynamicBatcher(asio::any_io_executor io, Executor& executor, Model& model,
                               BatchPolicy policy, ModelMetrics* metrics)
    : executor_(executor),
      model_(model),
      policy_(std::move(policy)),
      metrics_(metrics),
      strand_(asio::make_strand(io)),
      timer_(strand_) {
  assert(policy_.max_batch_size >= 1);
  // Enough buffers to hold a full queue, plus the ones computing.
  const auto per_buffer = static_cast<std::size_t>(policy_.max_batch_size);
  const auto count = (policy_.max_queue_size + per_buffer - 1) / per_buffer +
                     static_cast<std::size_t>(executor_.concurrency()) + 1;
  const auto& specs = model_.metadata().inputs;
  for (std::size_t i = 0; i < std::max<std::size_t>(count, 2); ++i) {
    auto buffer = std::make_unique<StagingBuffer>();
    buffer->tickets.reserve(per_buffer);
    buffer->inputs.reserve(specs.size());
    for (const TensorSpec& spec : specs) {
      buffer->inputs.emplace_back(executor_.staging_memory());
      // Fixed row shape ([-1, 64]): the rows' memory is taken now, not on the serving path.
      const bool fixed = spec.dtype != DType::Bytes && !spec.shape.empty() &&
                         std::all_of(spec.shape.begin() + 1, spec.shape.end(),
                                     [](std::int64_t d) { return d >= 0; });
      if (fixed) {
        const Shape row(spec.shape.begin() + 1, spec.shape.end());
        buffer->inputs.back().reserve(static_cast<std::size_t>(element_count(row)) *
                                      element_size(spec.dtype) * per_buffer);
      }
    }
    buffer->outputs.resize(model_.metadata().outputs.size());
    buffers_.push_back(std::move(buffer));
  }
}

DynamicBatcher::~DynamicBatcher() {
  std::unique_lock lock(mutex_);
  no_batch_in_flight_.wait(lock, [this] { return in_flight_ == 0; });
}

std::size_t DynamicBatcher::queue_depth() const {
  std::lock_guard lock(mutex_);
  return queued_;
}

Status DynamicBatcher::reserve(std::span<const Shape> input_shapes, const SubmitOptions& options,
                               BatchTicket& ticket) {
  assert(ticket.state_ == BatchTicket::State::empty);
  const auto& inputs = model_.metadata().inputs;
  assert(input_shapes.size() == inputs.size());
  std::int64_t rows = -1;
  for (std::size_t i = 0; i < input_shapes.size(); ++i) {
    if (inputs[i].dtype == DType::Bytes) {
      return Status::invalid("input '" + inputs[i].name + "': BYTES inputs cannot be batched");
    }
    if (input_shapes[i].empty()) {
      return Status::invalid("input '" + inputs[i].name + "': missing the batch dimension");
    }
    if (rows >= 0 && input_shapes[i][0] != rows) {
      return Status::invalid("input '" + inputs[i].name + "': batch dimension " +
                             std::to_string(input_shapes[i][0]) + " differs from the other inputs' " +
                             std::to_string(rows));
    }
    rows = input_shapes[i][0];
  }
  if (rows < 1) return Status::invalid("the batch dimension must be at least 1");
  if (rows > policy_.max_batch_size) {
    return Status::invalid("batch dimension " + std::to_string(rows) + " exceeds max_batch_size " +
                           std::to_string(policy_.max_batch_size));
  }
  const int priority = options.priority == 0 ? policy_.default_priority : options.priority;
  if (priority < 1 || priority > policy_.priority_levels) {
    return Status::invalid("parameters.priority: " + std::to_string(options.priority) +
                           " is outside 1.." + std::to_string(policy_.priority_levels));
  }

  std::lock_guard lock(mutex_);
  StagingBuffer* buffer = nullptr;
  if (queued_ < policy_.max_queue_size) buffer = place(input_shapes, priority, static_cast<int>(rows));
  if (!buffer) {
    if (metrics_) metrics_->rejected.add();
    return Status(Errc::unavailable, "queue full: " + std::to_string(queued_) +
                                         " requests waiting (max_queue_size " +
                                         std::to_string(policy_.max_queue_size) + ")");
  }
  ticket.batcher_ = this;
  ticket.buffer_ = buffer;
  ticket.state_ = BatchTicket::State::reserved;
  ticket.row_ = buffer->used_rows;
  ticket.rows_ = static_cast<int>(rows);
  ticket.index_ = buffer->tickets.size();
  buffer->tickets.push_back(&ticket);
  buffer->used_rows += ticket.rows_;
  buffer->writers += 1;
  if (buffer->used_rows == policy_.max_batch_size) buffer->state = StagingBuffer::State::sealed;
  ++queued_;
  if (metrics_) metrics_->queue_depth = static_cast<std::int64_t>(queued_);
  return {};
}

// Finds the filling buffer of this priority and row shape with room for `rows`, or starts one.
StagingBuffer* DynamicBatcher::place(std::span<const Shape> input_shapes, int priority, int rows) {
  auto same_rows = [&](const StagingBuffer& b) {
    for (std::size_t i = 0; i < input_shapes.size(); ++i) {
      if (!std::equal(input_shapes[i].begin() + 1, input_shapes[i].end(), b.row_shapes[i].begin(),
                      b.row_shapes[i].end())) {
        return false;
      }
    }
    return true;
  };
  for (auto& b : buffers_) {
    if (b->state != StagingBuffer::State::filling || b->priority != priority || !same_rows(*b)) {
      continue;
    }
    if (b->used_rows + rows <= policy_.max_batch_size) return b.get();
    b->state = StagingBuffer::State::sealed;  // no room: it is ready to go as it is
  }
  for (auto& b : buffers_) {
    if (b->state != StagingBuffer::State::free) continue;
    const auto& specs = model_.metadata().inputs;
    b->state = StagingBuffer::State::filling;
    b->priority = priority;
    b->used_rows = 0;
    b->writers = 0;
    b->tickets.clear();
    b->row_shapes.resize(input_shapes.size());
    b->row_bytes.resize(input_shapes.size());
    for (std::size_t i = 0; i < input_shapes.size(); ++i) {
      b->row_shapes[i].assign(input_shapes[i].begin() + 1, input_shapes[i].end());
      b->row_bytes[i] = static_cast<std::size_t>(element_count(b->row_shapes[i])) *
                        element_size(specs[i].dtype);
      // Keeps its capacity from earlier batches: allocation only while buckets grow.
      b->inputs[i].resize(b->row_bytes[i] * static_cast<std::size_t>(policy_.max_batch_size));
    }
    return b.get();
  }
  return nullptr;
}

void DynamicBatcher::enqueue(BatchTicket& ticket, const SubmitOptions& options) {
  std::lock_guard lock(mutex_);
  assert(ticket.state_ == BatchTicket::State::reserved);
  StagingBuffer& buffer = *ticket.buffer_;
  buffer.writers -= 1;
  ticket.state_ = BatchTicket::State::queued;
  ticket.enqueued_ = clock::now();
  auto timeout = policy_.default_timeout;
  if (options.timeout > 0us && (timeout == 0us || options.timeout < timeout)) {
    timeout = options.timeout;
  }
  ticket.deadline_ = timeout > 0us ? ticket.enqueued_ + timeout : clock::time_point::max();
  maybe_flush_locked();
}

void DynamicBatcher::release(BatchTicket& ticket) {
  std::lock_guard lock(mutex_);
  if (ticket.state_ == BatchTicket::State::reserved) ticket.buffer_->writers -= 1;
  remove_locked(ticket);
  maybe_flush_locked();
}

void DynamicBatcher::cancel(BatchTicket& ticket) {
  std::lock_guard lock(mutex_);
  if (ticket.state_ != BatchTicket::State::queued) return;  // computing or done: too late
  remove_locked(ticket);
  if (metrics_) metrics_->cancelled.add();
  complete(ticket, Status(Errc::cancelled, "cancelled while queued"));
  maybe_flush_locked();
}

void DynamicBatcher::remove_locked(BatchTicket& ticket) {
  ticket.buffer_->tickets[ticket.index_] = nullptr;  // a hole, compacted before compute
  ticket.state_ = BatchTicket::State::done;
  --queued_;
  if (metrics_) metrics_->queue_depth = static_cast<std::int64_t>(queued_);
}

void DynamicBatcher::expire_locked(clock::time_point now) {
  for (auto& b : buffers_) {
    if (b->state == StagingBuffer::State::free || b->state == StagingBuffer::State::computing) {
      continue;
    }
    for (BatchTicket* t : b->tickets) {
      if (!t || t->state_ != BatchTicket::State::queued || t->deadline_ > now) continue;
      remove_locked(*t);
      if (metrics_) metrics_->expired.add();
      complete(*t, Status(Errc::deadline_exceeded,
                          "timed out after " +
                              std::to_string(static_cast<long long>(micros(now - t->enqueued_))) +
                              " µs in the queue"));
    }
  }
}

// A buffer is ready when it is full, holds a preferred batch size, or its oldest request has
// waited max_queue_delay. Among ready buffers the highest priority goes first, then the oldest.
StagingBuffer* DynamicBatcher::pick_ready_locked(clock::time_point now,
                                                 clock::time_point& next_wake) {
  const int min_preferred =
      policy_.preferred_batch_sizes.empty()
          ? policy_.max_batch_size
          : *std::min_element(policy_.preferred_batch_sizes.begin(),
                              policy_.preferred_batch_sizes.end());
  StagingBuffer* best = nullptr;
  clock::time_point best_oldest{};
  for (auto& b : buffers_) {
    if (b->state != StagingBuffer::State::filling && b->state != StagingBuffer::State::sealed) {
      continue;
    }
    int rows = 0;
    auto oldest = clock::time_point::max();
    for (const BatchTicket* t : b->tickets) {
      if (!t || t->state_ != BatchTicket::State::queued) continue;
      rows += t->rows_;
      oldest = std::min(oldest, t->enqueued_);
    }
    if (rows == 0 && b->writers == 0) {  // everything in it left the queue
      b->state = StagingBuffer::State::free;
      b->tickets.clear();
      continue;
    }
    if (rows == 0 || b->writers > 0) continue;  // a writer's enqueue re-checks
    const bool ready = b->state == StagingBuffer::State::sealed || rows >= min_preferred ||
                       now >= oldest + policy_.max_queue_delay;
    if (!ready) {
      next_wake = std::min(next_wake, oldest + policy_.max_queue_delay);
      continue;
    }
    if (!best || b->priority < best->priority ||
        (b->priority == best->priority && oldest < best_oldest)) {
      best = b.get();
      best_oldest = oldest;
    }
  }
  return best;
}

void DynamicBatcher::compact_locked(StagingBuffer& buffer) {
  std::size_t write = 0;
  int row = 0;
  for (BatchTicket* t : buffer.tickets) {
    if (!t) continue;
    if (t->row_ != row) {
      for (std::size_t i = 0; i < buffer.inputs.size(); ++i) {
        std::memmove(buffer.row(i, row), buffer.row(i, t->row_),
                     buffer.row_bytes[i] * static_cast<std::size_t>(t->rows_));
      }
      t->row_ = row;
    }
    t->index_ = write;
    buffer.tickets[write++] = t;
    row += t->rows_;
  }
  buffer.tickets.resize(write);
  buffer.used_rows = row;
}

void DynamicBatcher::maybe_flush_locked() {
  const auto now = clock::now();
  expire_locked(now);
  auto next_wake = clock::time_point::max();
  while (in_flight_ < executor_.concurrency()) {
    StagingBuffer* buffer = pick_ready_locked(now, next_wake);
    if (!buffer) break;
    compact_locked(*buffer);
    buffer->state = StagingBuffer::State::computing;
    for (BatchTicket* t : buffer->tickets) {
      t->state_ = BatchTicket::State::computing;
      t->started_ = now;
      --queued_;
    }
    ++in_flight_;
    if (metrics_) metrics_->queue_depth = static_cast<std::int64_t>(queued_);
    executor_.submit([this, buffer] { run_batch(*buffer); });
  }
  if (in_flight_ >= executor_.concurrency()) {
    // The batch in flight re-checks when it completes; only deadlines need a timer meanwhile.
    next_wake = clock::time_point::max();
  }
  for (auto& b : buffers_) {
    if (b->state == StagingBuffer::State::free || b->state == StagingBuffer::State::computing) {
      continue;
    }
    for (const BatchTicket* t : b->tickets) {
      if (t && t->state_ == BatchTicket::State::queued) next_wake = std::min(next_wake, t->deadline_);
    }
  }
  arm_timer_locked(next_wake);
}

void DynamicBatcher::arm_timer_locked(clock::time_point wake) {
  if (wake == clock::time_point::max()) {
    // Nothing waits for a time any more: a timer left armed would only keep the caller's
    // io_context busy (its run() would not return) until it fired for nothing.
    if (armed_for_ == clock::time_point::max()) return;
    armed_for_ = clock::time_point::max();
    asio::post(strand_, [this] { timer_.cancel(); });
    return;
  }
  if (wake >= armed_for_) return;
  armed_for_ = wake;
  asio::post(strand_, [this, wake] {
    timer_.expires_at(wake);
    timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) on_timer();
    });
  });
}

void DynamicBatcher::on_timer() {
  std::lock_guard lock(mutex_);
  armed_for_ = clock::time_point::max();
  maybe_flush_locked();
}

// Delivers the result on the request's own executor; never runs the handler inline, so it is
// safe under the lock. The ticket may be destroyed as soon as the handler runs.
void DynamicBatcher::complete(BatchTicket& ticket, Status status) {
  auto executor = std::move(ticket.handler_executor_);
  asio::post(executor, [handler = std::move(ticket.handler_), status = std::move(status),
                        work = executor]() mutable { std::move(handler)(std::move(status)); });
}

void DynamicBatcher::run_batch(StagingBuffer& buffer) {
  const auto& meta = model_.metadata();
  const auto rows = static_cast<std::int64_t>(buffer.used_rows);
  // One view per input over the staging rows; a handful of small allocations per batch.
  std::vector<ConstTensorView> views(meta.inputs.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    views[i].dtype = meta.inputs[i].dtype;
    views[i].shape.reserve(buffer.row_shapes[i].size() + 1);
    views[i].shape.push_back(rows);
    views[i].shape.insert(views[i].shape.end(), buffer.row_shapes[i].begin(),
                          buffer.row_shapes[i].end());
    views[i].data = buffer.inputs[i].data();
  }
  const auto started = clock::now();
  Status status = model_.forward(views, buffer.outputs);
  const auto finished = clock::now();
  if (metrics_) {
    metrics_->exec_count.add();
    metrics_->inference_count.add(static_cast<std::uint64_t>(rows));
    metrics_->batch_size.observe(static_cast<double>(rows));
    metrics_->compute_duration_us.observe(micros(finished - started));
  }

  for (BatchTicket* t : buffer.tickets) {
    if (status.ok()) {
      t->outputs_.resize(buffer.outputs.size());
      for (std::size_t j = 0; j < buffer.outputs.size(); ++j) {
        const Tensor& out = buffer.outputs[j];
        Shape shape = out.shape();
        shape[0] = t->rows_;
        t->outputs_[j].resize(out.dtype(), std::move(shape));
        if (out.dtype() == DType::Bytes) {
          const auto per_row = out.strings().size() / static_cast<std::size_t>(rows);
          std::copy_n(out.strings().begin() + static_cast<std::ptrdiff_t>(per_row * t->row_),
                      per_row * static_cast<std::size_t>(t->rows_), t->outputs_[j].strings().begin());
        } else {
          const auto per_row = out.bytes().size() / static_cast<std::size_t>(rows);
          std::memcpy(t->outputs_[j].bytes().data(),
                      out.bytes().data() + per_row * static_cast<std::size_t>(t->row_),
                      per_row * static_cast<std::size_t>(t->rows_));
        }
      }
    }
    t->started_ = started;
    t->finished_ = finished;
    t->state_ = BatchTicket::State::done;
    if (metrics_) metrics_->queue_duration_us.observe(micros(started - t->enqueued_));
    complete(*t, status);
  }

  std::lock_guard lock(mutex_);
  buffer.tickets.clear();
  buffer.used_rows = 0;
  buffer.state = StagingBuffer::State::free;
  --in_flight_;
  maybe_flush_locked();
  // Notified under the lock: a destructor waiting for it cannot run before this returns.
  if (in_flight_ == 0) no_batch_in_flight_.notify_all();
}

}  // namespace coinfer
