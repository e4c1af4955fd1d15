#include "coinfer/batching/dynamic_batcher.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cassert>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "coinfer/core/metrics.hpp"

namespace coinfer {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

double micros(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

// --- BatchTicket ----------------------------------------------------------------------------

namespace {

// Output tensors given back by this thread's finished tickets, for its next ones: at most
// kSpareCount sets and kSpareBytes of tensor storage per thread; a larger set is freed.
constexpr std::size_t kSpareCount = 256;
constexpr std::size_t kSpareBytes = 4 << 20;

// Set once this thread's spares are destroyed (thread exit): a ticket destroyed later (in a
// frame an exiting thread still held) neither takes nor gives.
thread_local bool spare_outputs_gone = false;

struct SpareOutputs {
  ~SpareOutputs() { spare_outputs_gone = true; }
  std::vector<std::vector<Tensor>> sets;
  std::size_t bytes = 0;
};
thread_local SpareOutputs spare_outputs;

std::size_t storage_bytes(const std::vector<Tensor>& outputs) {
  std::size_t bytes = 0;
  for (const Tensor& t : outputs) bytes += t.capacity_bytes();
  return bytes;
}

}  // namespace

BatchTicket::BatchTicket() {
  if (spare_outputs_gone) return;
  auto& spare = spare_outputs;
  if (spare.sets.empty()) return;
  outputs_.swap(spare.sets.back());
  spare.sets.pop_back();
  spare.bytes -= storage_bytes(outputs_);
}

BatchTicket::~BatchTicket() {
  if (batcher_ && (state_ == State::reserved || state_ == State::queued)) batcher_->release(*this);
  if (outputs_.capacity() == 0 || spare_outputs_gone) return;
  auto& spare = spare_outputs;
  const std::size_t bytes = storage_bytes(outputs_);
  if (spare.sets.size() >= kSpareCount || spare.bytes + bytes > kSpareBytes) return;
  spare.sets.push_back(std::move(outputs_));
  spare.bytes += bytes;
}

std::span<std::byte> BatchTicket::input(std::size_t i) {
  assert(state_ == State::reserved);
  if (buffer_->ragged[i]) {
    return {buffer_->unit(i, token_), buffer_->row_bytes[i] * static_cast<std::size_t>(tokens_)};
  }
  return {buffer_->unit(i, row_), buffer_->row_bytes[i] * static_cast<std::size_t>(rows_)};
}

// --- DynamicBatcher -------------------------------------------------------------------------

namespace {

bool has_ragged_input(const ModelMetadata& meta) {
  return std::any_of(meta.inputs.begin(), meta.inputs.end(),
                     [](const TensorSpec& spec) { return spec.ragged; });
}

// The per-unit shape of an input: past the batch dimension, and past the ragged dimension
// of a ragged input.
// A view of `shape`: nothing is allocated on the request path.
std::span<const std::int64_t> unit_shape(const TensorSpec& spec, const Shape& shape) {
  const std::size_t skip = spec.ragged ? 2 : 1;
  if (shape.size() < skip) return {};
  return std::span<const std::int64_t>(shape).subspan(skip);
}


}  // namespace

Status validate(const BatchPolicy& policy) {
  if (policy.max_batch_size < 1) return Status::invalid("max_batch_size: must be at least 1");
  for (int size : policy.preferred_batch_sizes) {
    // A batch of 0 rows would always be "ready": batching would silently be off.
    if (size < 1 || size > policy.max_batch_size) {
      return Status::invalid("preferred_batch_sizes: " + std::to_string(size) +
                             " is not within 1..max_batch_size");
    }
  }
  if (policy.max_queue_delay.count() < 0) return Status::invalid("max_queue_delay: negative");
  if (policy.max_queue_size < 1) return Status::invalid("max_queue_size: must be at least 1");
  if (policy.max_batch_bytes < 1) return Status::invalid("max_batch_bytes: must be at least 1");
  if (policy.default_timeout.count() < 0) return Status::invalid("default_timeout: negative");
  if (policy.priority_levels < 1) return Status::invalid("priority_levels: must be at least 1");
  if (policy.default_priority < 1 || policy.default_priority > policy.priority_levels) {
    return Status::invalid("default_priority: must be within 1..priority_levels");
  }
  return {};
}

DynamicBatcher::DynamicBatcher(asio::any_io_executor io, Executor& executor, Model& model,
                               BatchPolicy policy, ModelMetrics* metrics)
    : executor_(executor),
      model_(model),
      policy_(std::move(policy)),
      ragged_(has_ragged_input(model.metadata())),
      max_batch_tokens_(model.metadata().max_batch_tokens),
      metrics_(metrics),
      strand_(asio::make_strand(io)),
      timer_(strand_) {
  if (auto status = validate(policy_); !status.ok()) throw std::invalid_argument(status.message());
  assert(!ragged_ || max_batch_tokens_ >= 1);
  // Enough buffers to hold a full queue, plus the ones computing.
  const auto per_buffer = static_cast<std::size_t>(policy_.max_batch_size);
  const auto count = (policy_.max_queue_size + per_buffer - 1) / per_buffer +
                     static_cast<std::size_t>(executor_.concurrency()) + 1;
  const auto& specs = model_.metadata().inputs;
  for (std::size_t i = 0; i < std::max<std::size_t>(count, 2); ++i) {
    auto buffer = std::make_unique<StagingBuffer>();
    buffer->tickets.reserve(per_buffer);
    buffer->inputs.reserve(specs.size());
    buffer->ragged.reserve(specs.size());
    for (const TensorSpec& spec : specs) {
      buffer->inputs.emplace_back(executor_.staging_memory());
      buffer->ragged.push_back(spec.ragged ? 1 : 0);
      // Fixed unit shape ([-1, 64], or a ragged [-1, -1]): the memory is taken now, not on the
      // serving path. A ragged model's dense inputs must have a fixed row shape.
      const auto unit = unit_shape(spec, spec.shape);
      const bool fixed =
          spec.dtype != DType::Bytes &&
          std::all_of(unit.begin(), unit.end(), [](std::int64_t d) { return d >= 0; });
      assert(fixed || !ragged_);
      if (fixed) {
        const auto units = spec.ragged ? static_cast<std::size_t>(max_batch_tokens_) : per_buffer;
        buffer->inputs.back().reserve(static_cast<std::size_t>(element_count(unit)) *
                                      element_size(spec.dtype) * units);
      }
    }
    if (ragged_) {
      buffer->lengths.resize(per_buffer);
      buffer->offsets.reserve(per_buffer + 1);
    }
    buffer->row_parameters.reserve(per_buffer);
    buffer->outputs.resize(model_.metadata().outputs.size());
    buffers_.push_back(std::move(buffer));
  }
  free_.reserve(buffers_.size());
  pending_.reserve(buffers_.size());
  for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) free_.push_back(it->get());
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
                               BatchTicket& ticket, std::span<const std::int64_t> lengths,
                               const Parameters* parameters) {
  assert(ticket.state_ == BatchTicket::State::empty);
  const auto& inputs = model_.metadata().inputs;
  assert(input_shapes.size() == inputs.size());
  std::int64_t rows = -1;
  std::int64_t ragged_length = -1;  // dimension 1 of the ragged inputs
  std::size_t dense_row_bytes = 0;  // all dense inputs' bytes for one row
  for (std::size_t i = 0; i < input_shapes.size(); ++i) {
    const Shape& shape = input_shapes[i];
    if (inputs[i].dtype == DType::Bytes) {
      return Status::invalid("input '" + inputs[i].name + "': BYTES inputs cannot be batched");
    }
    if (shape.empty() || (inputs[i].ragged && shape.size() < 2)) {
      return Status::invalid("input '" + inputs[i].name + "': missing the batch dimension");
    }
    if (rows >= 0 && shape[0] != rows) {
      return Status::invalid("input '" + inputs[i].name + "': batch dimension " +
                             std::to_string(shape[0]) + " differs from the other inputs' " +
                             std::to_string(rows));
    }
    rows = shape[0];
    if (inputs[i].ragged) {
      if (ragged_length >= 0 && shape[1] != ragged_length) {
        return Status::invalid("input '" + inputs[i].name + "': length " +
                               std::to_string(shape[1]) + " differs from the other inputs' " +
                               std::to_string(ragged_length));
      }
      ragged_length = shape[1];
    } else {
      dense_row_bytes += static_cast<std::size_t>(element_count(unit_shape(inputs[i], shape))) *
                         element_size(inputs[i].dtype);
    }
  }
  if (rows < 1) return Status::invalid("the batch dimension must be at least 1");
  if (rows > policy_.max_batch_size) {
    return Status::invalid("batch dimension " + std::to_string(rows) + " exceeds max_batch_size " +
                           std::to_string(policy_.max_batch_size));
  }
  std::int64_t tokens = 0;
  if (ragged_) {
    if (!lengths.empty() && static_cast<std::int64_t>(lengths.size()) != rows) {
      return Status::invalid(std::to_string(lengths.size()) + " row lengths for " +
                             std::to_string(rows) + " rows");
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t length =
          lengths.empty() ? ragged_length : lengths[static_cast<std::size_t>(r)];
      if (length < 1) return Status::invalid("row " + std::to_string(r) + " is empty");
      tokens += length;
    }
    if (tokens > max_batch_tokens_) {
      return Status::invalid(std::to_string(tokens) + " tokens exceed max_batch_tokens " +
                             std::to_string(max_batch_tokens_) + " (one batch's budget)");
    }
  }
  const std::size_t bytes = dense_row_bytes * static_cast<std::size_t>(rows);
  if (bytes > policy_.max_batch_bytes) {
    return Status::invalid("the inputs need " + std::to_string(bytes) +
                           " bytes of staging, over max_batch_bytes " +
                           std::to_string(policy_.max_batch_bytes));
  }
  const int priority = options.priority == 0 ? policy_.default_priority : options.priority;
  if (priority < 1 || priority > policy_.priority_levels) {
    return Status::invalid("parameters.priority: " + std::to_string(options.priority) +
                           " is outside 1.." + std::to_string(policy_.priority_levels));
  }

  std::lock_guard lock(mutex_);
  if (queued_ >= policy_.max_queue_size) {
    if (metrics_) metrics_->rejected.add();
    return Status(Errc::unavailable, "queue full: " + std::to_string(queued_) +
                                         " requests waiting (max_queue_size " +
                                         std::to_string(policy_.max_queue_size) + ")");
  }
  StagingBuffer* buffer = place(input_shapes, priority, static_cast<int>(rows), tokens, bytes);
  if (!buffer) {
    if (metrics_) metrics_->rejected.add();
    return Status(Errc::unavailable, "no staging buffer free: " + std::to_string(queued_) +
                                         " requests waiting in " + std::to_string(buffers_.size()) +
                                         " buffers");
  }
  ticket.batcher_ = this;
  ticket.buffer_ = buffer;
  ticket.state_ = BatchTicket::State::reserved;
  ticket.row_ = buffer->used_rows;
  ticket.rows_ = static_cast<int>(rows);
  ticket.token_ = buffer->used_tokens;
  ticket.tokens_ = tokens;
  ticket.parameters_ = parameters;
  ticket.index_ = buffer->tickets.size();
  if (ragged_) {
    for (std::int64_t r = 0; r < rows; ++r) {
      buffer->lengths[static_cast<std::size_t>(ticket.row_ + r)] =
          lengths.empty() ? ragged_length : lengths[static_cast<std::size_t>(r)];
    }
  }
  buffer->tickets.push_back(&ticket);
  buffer->used_rows += ticket.rows_;
  buffer->used_tokens += tokens;
  buffer->writers += 1;
  if (buffer->used_rows == policy_.max_batch_size ||
      (ragged_ && buffer->used_tokens == max_batch_tokens_)) {
    buffer->state = StagingBuffer::State::sealed;
  }
  ++queued_;
  if (metrics_) metrics_->queue_depth = static_cast<std::int64_t>(queued_);
  return {};
}

// Whether a filling buffer can take these rows, growing its variable-shape inputs if it must
// (only while no decoder writes into it: growing moves the rows).
bool DynamicBatcher::fits_locked(StagingBuffer& b, std::span<const Shape> input_shapes, int rows,
                                 std::int64_t tokens, std::size_t bytes) {
  if (b.used_rows + rows > policy_.max_batch_size) return false;
  if (ragged_) return b.used_tokens + tokens <= max_batch_tokens_;
  std::size_t held = 0;
  for (std::size_t i = 0; i < input_shapes.size(); ++i) {
    held += b.row_bytes[i] * static_cast<std::size_t>(b.used_rows);
  }
  if (held + bytes > policy_.max_batch_bytes) return false;
  for (std::size_t i = 0; i < input_shapes.size(); ++i) {
    const std::size_t need = b.row_bytes[i] * static_cast<std::size_t>(b.used_rows + rows);
    if (need > b.inputs[i].size()) {
      if (b.writers > 0) return false;
      b.inputs[i].resize(need);
    }
  }
  return true;
}

// Finds the filling buffer of this priority and row shape with room for the rows, or starts
// one.
StagingBuffer* DynamicBatcher::place(std::span<const Shape> input_shapes, int priority, int rows,
                                     std::int64_t tokens, std::size_t bytes) {
  const auto& specs = model_.metadata().inputs;
  auto same_rows = [&](const StagingBuffer& b) {
    for (std::size_t i = 0; i < input_shapes.size(); ++i) {
      const std::size_t skip = specs[i].ragged ? 2 : 1;
      if (!std::equal(input_shapes[i].begin() + static_cast<std::ptrdiff_t>(skip),
                      input_shapes[i].end(), b.row_shapes[i].begin(), b.row_shapes[i].end())) {
        return false;
      }
    }
    return true;
  };
  for (StagingBuffer* b : pending_) {
    if (b->state != StagingBuffer::State::filling || b->priority != priority || !same_rows(*b)) {
      continue;
    }
    if (fits_locked(*b, input_shapes, rows, tokens, bytes)) return b;
    // No room (or it cannot grow while written): ready to go as it is.
    if (b->writers == 0) b->state = StagingBuffer::State::sealed;
  }
  if (!free_.empty()) {
    StagingBuffer* b = free_.back();
    free_.pop_back();
    pending_.push_back(b);
    b->state = StagingBuffer::State::filling;
    b->priority = priority;
    b->used_rows = 0;
    b->used_tokens = 0;
    b->writers = 0;
    b->queued_rows = 0;
    b->oldest = clock::time_point::max();
    b->earliest_deadline = clock::time_point::max();
    b->times_stale = false;
    b->tickets.clear();
    b->row_shapes.resize(input_shapes.size());
    b->row_bytes.resize(input_shapes.size());
    for (std::size_t i = 0; i < input_shapes.size(); ++i) {
      const auto row_shape = unit_shape(specs[i], input_shapes[i]);
      b->row_shapes[i].assign(row_shape.begin(), row_shape.end());  // keeps its capacity
      b->row_bytes[i] =
          static_cast<std::size_t>(element_count(b->row_shapes[i])) * element_size(specs[i].dtype);
      // Fixed unit shapes: all the capacity taken at construction. Variable: these rows.
      const auto unit = unit_shape(specs[i], specs[i].shape);
      const bool fixed =
          std::all_of(unit.begin(), unit.end(), [](std::int64_t d) { return d >= 0; });
      const auto units = specs[i].ragged ? static_cast<std::size_t>(max_batch_tokens_)
                         : fixed         ? static_cast<std::size_t>(policy_.max_batch_size)
                                         : static_cast<std::size_t>(rows);
      b->inputs[i].resize(b->row_bytes[i] * units);
    }
    return b;
  }
  return nullptr;
}

// A buffer all of whose requests left: free again, giving back what variable-shape inputs
// hold past kept_variable_bytes (a large request's memory is not kept after it).
void DynamicBatcher::free_locked(StagingBuffer& b) {
  if (b.state == StagingBuffer::State::filling || b.state == StagingBuffer::State::sealed) {
    unlist_pending_locked(b);
  }
  free_.push_back(&b);
  b.state = StagingBuffer::State::free;
  b.tickets.clear();
  b.used_rows = 0;
  b.used_tokens = 0;
  b.queued_rows = 0;
  b.oldest = clock::time_point::max();
  b.earliest_deadline = clock::time_point::max();
  b.times_stale = false;
  trim_locked(b);
}

void DynamicBatcher::trim_locked(StagingBuffer& b) {
  const auto& specs = model_.metadata().inputs;
  for (std::size_t i = 0; i < b.inputs.size(); ++i) {
    const bool variable = std::any_of(specs[i].shape.begin() + 1, specs[i].shape.end(),
                                      [](std::int64_t d) { return d < 0; });
    if (variable && !specs[i].ragged && b.inputs[i].capacity() > kept_variable_bytes) {
      std::pmr::vector<std::byte>(executor_.staging_memory()).swap(b.inputs[i]);
    }
  }
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
  // Saturating: a timeout past what the clock can represent (the OIP parameter takes any
  // int64 of µs, and nanoseconds overflow first) means no deadline, not one in the past.
  const auto room = std::chrono::duration_cast<std::chrono::microseconds>(
      clock::time_point::max() - ticket.enqueued_);
  ticket.deadline_ = timeout > 0us && timeout < room ? ticket.enqueued_ + timeout
                                                     : clock::time_point::max();
  buffer.queued_rows += ticket.rows_;
  buffer.oldest = std::min(buffer.oldest, ticket.enqueued_);
  buffer.earliest_deadline = std::min(buffer.earliest_deadline, ticket.deadline_);
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
  StagingBuffer& buffer = *ticket.buffer_;
  if (ticket.state_ == BatchTicket::State::queued) {
    buffer.queued_rows -= ticket.rows_;
    if (ticket.enqueued_ <= buffer.oldest || ticket.deadline_ <= buffer.earliest_deadline) {
      buffer.times_stale = true;
    }
  }
  buffer.tickets[ticket.index_] = nullptr;  // a hole, compacted before compute
  ticket.state_ = BatchTicket::State::done;
  --queued_;
  if (metrics_) metrics_->queue_depth = static_cast<std::int64_t>(queued_);
}

// Takes a buffer out of pending_ (it starts computing, or is free again); order is not kept.
void DynamicBatcher::unlist_pending_locked(StagingBuffer& b) {
  const auto it = std::find(pending_.begin(), pending_.end(), &b);
  assert(it != pending_.end());
  *it = pending_.back();
  pending_.pop_back();
}

// The oldest arrival and earliest deadline of a buffer's queued tickets, after one of them left.
void DynamicBatcher::refresh_times_locked(StagingBuffer& b) {
  if (!b.times_stale) return;
  b.times_stale = false;
  b.oldest = clock::time_point::max();
  b.earliest_deadline = clock::time_point::max();
  for (const BatchTicket* t : b.tickets) {
    if (!t || t->state_ != BatchTicket::State::queued) continue;
    b.oldest = std::min(b.oldest, t->enqueued_);
    b.earliest_deadline = std::min(b.earliest_deadline, t->deadline_);
  }
}

void DynamicBatcher::expire_locked(clock::time_point now) {
  for (StagingBuffer* b : pending_) {
    refresh_times_locked(*b);
    if (b->earliest_deadline > now) continue;  // nothing in it has expired: no walk
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
StagingBuffer* DynamicBatcher::pick_ready_locked(clock::time_point now, bool yielded,
                                                 clock::time_point& next_wake,
                                                 bool& wants_yield) {
  const int min_preferred = policy_.preferred_batch_sizes.empty()
                                ? policy_.max_batch_size
                                : *std::min_element(policy_.preferred_batch_sizes.begin(),
                                                    policy_.preferred_batch_sizes.end());
  StagingBuffer* best = nullptr;
  clock::time_point best_oldest{};
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    StagingBuffer* b = pending_[i];
    refresh_times_locked(*b);
    const int rows = b->queued_rows;
    const auto oldest = b->oldest;
    if (rows == 0 && b->writers == 0) {  // everything in it left the queue
      free_locked(*b);  // moves pending_'s last buffer to i: looked at next
      --i;
      continue;
    }
    if (rows == 0 || b->writers > 0) continue;  // a writer's enqueue re-checks
    const bool no_delay = policy_.max_queue_delay.count() == 0;
    const bool ready = b->state == StagingBuffer::State::sealed || rows >= min_preferred ||
                       (no_delay ? yielded : now >= oldest + policy_.max_queue_delay);
    if (!ready) {
      if (no_delay) {
        wants_yield = true;
      } else {
        next_wake = std::min(next_wake, oldest + policy_.max_queue_delay);
      }
      continue;
    }
    if (!best || b->priority < best->priority ||
        (b->priority == best->priority && oldest < best_oldest)) {
      best = b;
      best_oldest = oldest;
    }
  }
  return best;
}

void DynamicBatcher::compact_locked(StagingBuffer& buffer) {
  std::size_t write = 0;
  int row = 0;
  std::int64_t token = 0;
  for (BatchTicket* t : buffer.tickets) {
    if (!t) continue;
    for (std::size_t i = 0; i < buffer.inputs.size(); ++i) {
      const bool ragged = buffer.ragged[i] != 0;
      const std::int64_t from = ragged ? t->token_ : t->row_;
      const std::int64_t to = ragged ? token : row;
      if (from == to) continue;
      const std::int64_t units = ragged ? t->tokens_ : t->rows_;
      std::memmove(buffer.unit(i, to), buffer.unit(i, from),
                   buffer.row_bytes[i] * static_cast<std::size_t>(units));
    }
    if (ragged_ && t->row_ != row) {
      std::copy_n(buffer.lengths.begin() + t->row_, t->rows_, buffer.lengths.begin() + row);
    }
    t->row_ = row;
    t->token_ = token;
    t->index_ = write;
    buffer.tickets[write++] = t;
    row += t->rows_;
    token += t->tokens_;
  }
  buffer.tickets.resize(write);
  buffer.used_rows = row;
  buffer.used_tokens = token;
}

void DynamicBatcher::maybe_flush_locked(bool yielded) {
  const auto now = clock::now();
  expire_locked(now);
  auto next_wake = clock::time_point::max();
  bool wants_yield = false;
  while (in_flight_ < executor_.concurrency()) {
    StagingBuffer* buffer = pick_ready_locked(now, yielded, next_wake, wants_yield);
    if (!buffer) break;
    compact_locked(*buffer);
    unlist_pending_locked(*buffer);
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
  } else if (wants_yield && !flush_posted_) {
    // A partial batch at a free executor: flush once the I/O threads have run what they have
    // queued (their requests join it), not now and not after a delay.
    flush_posted_ = true;
    // On the I/O executor itself, not the strand (the flush only takes the lock): posted
    // from an I/O thread, its memory comes from that thread's Asio recycling cache.
    asio::post(strand_.get_inner_executor(), [this] {
      std::lock_guard lock(mutex_);
      flush_posted_ = false;
      maybe_flush_locked(/*yielded=*/true);
    });
  }
  for (StagingBuffer* b : pending_) {
    refresh_times_locked(*b);
    next_wake = std::min(next_wake, b->earliest_deadline);
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
  auto deliver = [handler = std::move(ticket.handler_), status = std::move(status),
                  slot = std::exchange(ticket.caller_slot_, {}), work = executor]() mutable {
    // The caller's slot outlives this request, and what async_submit chained to it points at
    // the ticket. Cleared here, on the caller's executor, where the slot is emitted.
    if (slot.is_connected()) slot.clear();
    std::move(handler)(std::move(status));
  };
  // The usual caller is a coroutine on an io_context (one I/O thread): its executor then takes
  // the ticket's memory for the operation, and the hop costs no allocation. The op's memory is
  // freed before `deliver` runs, and the ticket lives in the frame that `deliver` resumes.
  using TrackedIo = decltype(asio::prefer(std::declval<asio::io_context::executor_type>(),
                                          asio::execution::outstanding_work.tracked));
  if (const auto* io = executor.target<TrackedIo>()) {
    asio::require(*io, asio::execution::blocking.never,
                  asio::execution::allocator(HandlerAllocator<void>(ticket.completion_memory_)))
        .execute(std::move(deliver));
    return;
  }
  asio::post(executor, std::move(deliver));
}

void DynamicBatcher::run_batch(StagingBuffer& buffer) {
  static const Parameters no_parameters;
  const auto& meta = model_.metadata();
  const auto rows = static_cast<std::int64_t>(buffer.used_rows);
  // The model's view of the buffer: one view per input over the staging rows, the rows'
  // offsets along the ragged dimension, and each row's request parameters.
  std::vector<ConstTensorView>& views = buffer.views;
  views.resize(meta.inputs.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    views[i].dtype = meta.inputs[i].dtype;
    views[i].shape.clear();
    views[i].shape.push_back(buffer.ragged[i] ? buffer.used_tokens : rows);
    views[i].shape.insert(views[i].shape.end(), buffer.row_shapes[i].begin(),
                          buffer.row_shapes[i].end());
    views[i].data = buffer.inputs[i].data();
  }
  buffer.offsets.clear();
  if (ragged_) {
    buffer.offsets.push_back(0);
    for (std::int64_t r = 0; r < rows; ++r) {
      buffer.offsets.push_back(buffer.offsets.back() + buffer.lengths[static_cast<std::size_t>(r)]);
    }
  }
  buffer.row_parameters.clear();
  for (const BatchTicket* t : buffer.tickets) {
    buffer.row_parameters.insert(buffer.row_parameters.end(), static_cast<std::size_t>(t->rows_),
                                 t->parameters_ ? t->parameters_ : &no_parameters);
  }
  const Batch batch{static_cast<int>(rows), views, buffer.offsets, buffer.row_parameters};
  const auto started = clock::now();
  Status status = model_.forward(batch, buffer.outputs);
  const auto finished = clock::now();
  if (metrics_) {
    metrics_->exec_count.add();
    metrics_->inference_count.add(static_cast<std::uint64_t>(rows));
    metrics_->batch_size.observe(static_cast<double>(rows));
    metrics_->compute_duration.observe(seconds(finished - started));
    const auto ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(finished - started).count());
    const auto requests = static_cast<std::uint64_t>(buffer.tickets.size());
    metrics_->compute_requests.add(requests);
    metrics_->compute_request_ns.add(ns * requests);
    auto& by_size = metrics_->by_batch_size[static_cast<std::size_t>(
        std::min<std::int64_t>(rows, ModelMetrics::kMaxStatsBatch))];
    by_size.count.add();
    by_size.compute_ns.add(ns);
    metrics_->last_inference_ms.store(
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count(),
        std::memory_order_relaxed);
  }

  for (BatchTicket* t : buffer.tickets) {
    if (status.ok()) {
      t->outputs_.resize(buffer.outputs.size());
      for (std::size_t j = 0; j < buffer.outputs.size(); ++j) {
        const Tensor& out = buffer.outputs[j];
        Shape& shape = buffer.output_shape;  // reused: no allocation once warmed up
        shape.assign(out.shape().begin(), out.shape().end());
        shape[0] = t->rows_;
        t->outputs_[j].resize(out.dtype(), std::span<const std::int64_t>(shape));
        if (out.dtype() == DType::Bytes) {
          const auto per_row = out.strings().size() / static_cast<std::size_t>(rows);
          std::copy_n(out.strings().begin() + static_cast<std::ptrdiff_t>(per_row * t->row_),
                      per_row * static_cast<std::size_t>(t->rows_),
                      t->outputs_[j].strings().begin());
        } else {
          const auto per_row = out.bytes().size() / static_cast<std::size_t>(rows);
          // An empty output ([1, 0]) has no storage: memcpy from or to null is undefined even
          // for 0 bytes (found by fuzz/websocket_message_fuzzer).
          if (per_row > 0) {
            std::memcpy(t->outputs_[j].bytes().data(),
                        out.bytes().data() + per_row * static_cast<std::size_t>(t->row_),
                        per_row * static_cast<std::size_t>(t->rows_));
          }
        }
      }
    }
    t->started_ = started;
    t->finished_ = finished;
    if (metrics_) metrics_->queue_duration.observe(seconds(started - t->enqueued_));
  }

  std::lock_guard lock(mutex_);
  // Memory given back before any request hears of its answer; the tickets' state changes
  // under the lock (cancel() reads it there).
  trim_locked(buffer);
  for (BatchTicket* t : buffer.tickets) {
    t->state_ = BatchTicket::State::done;
    complete(*t, status);
  }
  free_locked(buffer);
  --in_flight_;
  maybe_flush_locked(/*yielded=*/true);  // what arrived meanwhile has waited: it goes now
  // Notified under the lock: a destructor waiting for it cannot run before this returns.
  if (in_flight_ == 0) no_batch_in_flight_.notify_all();
}

}  // namespace coinfer
