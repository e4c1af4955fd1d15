#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <mutex>
#include <span>
#include <vector>

#include "coinfer/batching/batch_policy.hpp"
#include "coinfer/batching/staging_buffer.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/runtime/executor.hpp"

namespace coinfer {

class DynamicBatcher;
struct ModelMetrics;

// Memory for one Asio operation at a time, and the allocator that hands it out: what the
// batcher posts to complete a ticket takes its memory from the ticket instead of the heap.
// Asio frees an operation's memory before its handler runs, so the next one finds it free; a
// second operation while one holds it (or a larger one) gets the heap.
class HandlerMemory {
 public:
  HandlerMemory() = default;
  HandlerMemory(const HandlerMemory&) = delete;
  HandlerMemory& operator=(const HandlerMemory&) = delete;

  void* allocate(std::size_t bytes) {
    if (!in_use_ && bytes <= sizeof(storage_)) {
      in_use_ = true;
      return storage_;
    }
    return ::operator new(bytes);
  }
  void deallocate(void* p) noexcept {
    if (p == storage_) {
      in_use_ = false;
    } else {
      ::operator delete(p);
    }
  }

 private:
  // The completion's operation takes 144 bytes (Boost 1.81, x86-64); a request's coroutine
  // frame holds its ticket, and Asio recycles frames only up to 1,020 bytes.
  alignas(std::max_align_t) std::byte storage_[160];
  bool in_use_ = false;
};

template <class T>
class HandlerAllocator {
 public:
  using value_type = T;
  explicit HandlerAllocator(HandlerMemory& memory) noexcept : memory_(&memory) {}
  template <class U>
  HandlerAllocator(const HandlerAllocator<U>& other) noexcept : memory_(other.memory_) {}

  T* allocate(std::size_t n) { return static_cast<T*>(memory_->allocate(sizeof(T) * n)); }
  void deallocate(T* p, std::size_t) noexcept { memory_->deallocate(p); }
  template <class U>
  bool operator==(const HandlerAllocator<U>& other) const noexcept {
    return memory_ == other.memory_;
  }

 private:
  template <class>
  friend class HandlerAllocator;
  HandlerMemory* memory_;
};

// One request's place in a DynamicBatcher: its rows in a staging buffer, then its outputs.
// Lives in the awaiting coroutine's frame; the completion handler is stored here, so a queued
// request costs no allocation of its own (no channel, no promise).
class BatchTicket {
 public:
  using clock = std::chrono::steady_clock;

  // Takes output tensors that an earlier ticket on this thread gave back: a steady stream of
  // same-shaped requests reuses their storage instead of allocating it.
  BatchTicket();
  BatchTicket(const BatchTicket&) = delete;
  BatchTicket& operator=(const BatchTicket&) = delete;
  // Gives back rows that were reserved but never submitted, and keeps the output tensors for
  // the next ticket on this thread (up to a bound per thread).
  ~BatchTicket();

  // After reserve(): where to write input i, valid until submit: rows × row bytes for a dense
  // input, the rows' lengths summed × position bytes for a ragged one (rows back to back).
  std::span<std::byte> input(std::size_t i);
  // After a successful completion: one tensor per model output, holding this request's rows.
  // A caller may swap them out to encode them, and should swap them back for reuse.
  std::vector<Tensor>& outputs() noexcept { return outputs_; }
  int rows() const noexcept { return rows_; }
  clock::duration queue_time() const noexcept { return started_ - enqueued_; }
  clock::duration compute_time() const noexcept { return finished_ - started_; }

 private:
  friend class DynamicBatcher;
  enum class State { empty, reserved, queued, computing, done };

  DynamicBatcher* batcher_ = nullptr;
  StagingBuffer* buffer_ = nullptr;
  State state_ = State::empty;
  int row_ = 0;                             // first row in buffer_
  int rows_ = 0;                            // the request's batch dimension
  std::int64_t token_ = 0;                  // ragged models: first position in buffer_
  std::int64_t tokens_ = 0;                 // ragged models: the request's rows' lengths, summed
  const Parameters* parameters_ = nullptr;  // the request's, handed to the model per row
  std::size_t index_ = 0;                   // position in buffer_->tickets
  clock::time_point enqueued_, deadline_ = clock::time_point::max(), started_, finished_;
  boost::asio::any_completion_handler<void(Status)> handler_;
  boost::asio::any_io_executor handler_executor_;  // where handler_ runs; counts as work
  boost::asio::cancellation_slot caller_slot_;     // the caller's; cleared before handler_ runs
  HandlerMemory completion_memory_;                // for the post that completes the ticket
  std::vector<Tensor> outputs_;
};

// Per-request options, from the OIP parameters "priority" and "timeout" (µs).
struct SubmitOptions {
  int priority = 0;                      // 0: the policy's default
  std::chrono::microseconds timeout{0};  // 0: the policy's default; never longer than it
};

// Turns concurrent requests into batched forward passes.
//
// A request first reserves rows in a staging buffer (reserve), its decoder writes the input
// elements straight into them, then it awaits async_submit. A batch is formed when the
// executor can take one and (a) a buffer holds max_batch_size rows, (b) it holds a preferred
// batch size, or (c) its oldest request has waited max_queue_delay. A timer on the oldest
// request's delay and arrivals drive this; nothing polls. With max_queue_delay 0 (the default)
// (c) is "once the I/O threads have run what they had queued": an arrival at an idle executor
// posts one flush behind the handlers already queued (reads that completed, requests being
// decoded), so a request alone runs at once and a burst that arrived together runs together. While a batch computes, further
// requests fill other buffers (at least two), so batch N+1 fills while N computes.
// Completions are delivered on each request's own executor.
class DynamicBatcher {
 public:
  DynamicBatcher(boost::asio::any_io_executor io, Executor& executor, Model& model,
                 BatchPolicy policy, ModelMetrics* metrics = nullptr);
  // Waits for the batches already handed to the executor: they point into this batcher.
  ~DynamicBatcher();
  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  const BatchPolicy& policy() const noexcept { return policy_; }

  // What a free buffer keeps of an input with a variable row shape; more is given back.
  static constexpr std::size_t kept_variable_bytes = 1 << 20;

  // Reserves rows for a request whose inputs have these shapes (batch dimension first; all
  // inputs agree on it), at this priority. A ragged model's rows may have different lengths:
  // `lengths` gives one per row (empty: every row is as long as the ragged inputs' dimension
  // 1 says). `parameters`, when given, reach the model with each of the request's rows and
  // must outlive the ticket. 503 (unavailable) when the queue is full or no staging buffer is
  // free; 400 when the request alone exceeds max_batch_size, max_batch_tokens or
  // max_batch_bytes, or the priority is out of range.
  Status reserve(std::span<const Shape> input_shapes, const SubmitOptions& options,
                 BatchTicket& ticket, std::span<const std::int64_t> lengths = {},
                 const Parameters* parameters = nullptr);

  // Queues a reserved ticket. Completes with ok (outputs filled), deadline_exceeded (expired
  // in the queue, never computed), cancelled (the handler's cancellation slot fired while
  // queued), or the model's error.
  template <class CompletionToken>
  auto async_submit(BatchTicket& ticket, const SubmitOptions& options, CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void(Status)>(
        [this, &ticket, options](auto handler) {
          // Tracked: the caller's io_context keeps running while its request is queued.
          ticket.handler_executor_ = boost::asio::prefer(
              boost::asio::get_associated_executor(handler, strand_.get_inner_executor()),
              boost::asio::execution::outstanding_work.tracked);
          ticket.caller_slot_ = boost::asio::get_associated_cancellation_slot(handler);
          // Constructed, then swapped in: Boost 1.81's move assignment of
          // any_completion_handler wraps the source in itself and recurses.
          boost::asio::any_completion_handler<void(Status)> erased(std::move(handler));
          ticket.handler_.swap(erased);
          // The erased handler owns a cancellation state chained to the caller's slot; its
          // own slot is the one that hears a cancellation (e.g. the client disconnecting).
          // That state lives on in the caller's slot until cleared: complete() clears it.
          auto slot = boost::asio::get_associated_cancellation_slot(ticket.handler_);
          if (slot.is_connected()) {
            slot.assign([this, &ticket](boost::asio::cancellation_type) { cancel(ticket); });
          }
          enqueue(ticket, options);
        },
        token);
  }

  // Queued requests (not yet computing).
  std::size_t queue_depth() const;

 private:
  friend class BatchTicket;
  using clock = BatchTicket::clock;

  StagingBuffer* place(std::span<const Shape> input_shapes, int priority, int rows,
                       std::int64_t tokens, std::size_t bytes);
  bool fits_locked(StagingBuffer& buffer, std::span<const Shape> input_shapes, int rows,
                   std::int64_t tokens, std::size_t bytes);
  void free_locked(StagingBuffer& buffer);
  void trim_locked(StagingBuffer& buffer);
  void enqueue(BatchTicket& ticket, const SubmitOptions& options);
  void cancel(BatchTicket& ticket);
  void release(BatchTicket& ticket);  // reserved, never submitted

  // All below run with mutex_ held.
  void remove_locked(BatchTicket& ticket);
  void expire_locked(clock::time_point now);
  void refresh_times_locked(StagingBuffer& buffer);
  void unlist_pending_locked(StagingBuffer& buffer);
  // `yielded`: the I/O threads have run what they had queued since the last arrival (the
  // posted flush, or a batch just finished), so a partial batch may go without a delay.
  void maybe_flush_locked(bool yielded = false);
  StagingBuffer* pick_ready_locked(clock::time_point now, bool yielded,
                                   clock::time_point& next_wake, bool& wants_yield);
  void compact_locked(StagingBuffer& buffer);
  void arm_timer_locked(clock::time_point wake);
  void complete(BatchTicket& ticket, Status status);  // without the lock

  void run_batch(StagingBuffer& buffer);
  void on_timer();

  Executor& executor_;
  Model& model_;
  const BatchPolicy policy_;
  const bool ragged_;                    // the model has a ragged input
  const std::int64_t max_batch_tokens_;  // ragged models: positions per batch
  ModelMetrics* metrics_;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<StagingBuffer>> buffers_;
  // The buffers by state, so that an arrival looks only at those that hold requests: free
  // ones (a stack), and filling or sealed ones; computing ones are in neither. Capacity for
  // every buffer is reserved at construction.
  std::vector<StagingBuffer*> free_;
  std::vector<StagingBuffer*> pending_;
  std::size_t queued_ = 0;  // requests reserved or queued, not computing
  int in_flight_ = 0;       // batches computing
  std::condition_variable no_batch_in_flight_;
  clock::time_point armed_for_ = clock::time_point::max();
  bool flush_posted_ = false;  // a yielded maybe_flush is queued on the I/O executor

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  boost::asio::steady_timer timer_;  // touched only on strand_
};

}  // namespace coinfer
