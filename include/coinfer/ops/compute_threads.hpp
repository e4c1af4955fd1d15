#pragma once

#include <cstdint>
#include <type_traits>

namespace coinfer {

// Sets how many threads oneDNN uses for ops run from the calling thread. oneDNN here uses
// the OpenMP runtime, whose thread count is per calling thread: an executor calls this once
// from each compute thread it owns. n < 1 is treated as 1. A no-op when oneDNN was built
// with another threading runtime.
void set_compute_threads(int n) noexcept;

// Threads in the calling thread's compute team: the OpenMP team oneDNN's GEMMs run on, as
// set_compute_threads sized it; 1 when there is none.
int compute_team_size() noexcept;

// How the compute team's idle threads wait for the next parallel region.
enum class ComputeWait {
  // Sleep at once (OMP_WAIT_POLICY=passive). A spinning team thread that reached a barrier
  // holds its core while the thread it waits for cannot get one, so a team sharing cores with
  // anything else (the server's own I/O threads, a load generator, another process) falls to a
  // tenth of its throughput; sleeping costs nothing measurable on idle cores. For services
  // whose requests are short and whose I/O thread has much to do (embeddings, classifiers).
  passive,
  // Spin briefly, then sleep (OMP_WAIT_POLICY=active with GOMP_SPINCOUNT=2000: libgomp spins
  // at most that many rounds, and at most 1000 when the process has more OpenMP threads than
  // cores). A language model's decode step is a few hundred short parallel regions back to
  // back; waking a sleeping thread for each cost 20-30% of one stream's tokens per second
  // (docs/BENCHMARKS.md).
  short_spin,
};

// Sets the compute team's wait policy (above) unless the environment already chose one
// (OMP_WAIT_POLICY or GOMP_SPINCOUNT set). libgomp reads the variables once, when it is
// loaded, before main runs, so the only way to set them from inside a program is to set them
// and run the program again: this replaces the process with argv[0]'s executable
// (/proc/self/exe, same pid, same arguments) and returns only when no re-exec is needed or it
// failed. Call it first thing in main, before any thread starts. A no-op when oneDNN does not
// use OpenMP.
void ensure_compute_wait_policy(char** argv, ComputeWait wait) noexcept;

namespace detail {
using ChunkFn = void (*)(void* body, int thread, std::int64_t begin, std::int64_t end);
void parallel_for(std::int64_t n, std::int64_t grain, int max_threads, ChunkFn fn,
                  void* body) noexcept;
}  // namespace detail

// Runs body(thread, begin, end) over [0, n) in chunks of at most `grain` indices, which the
// threads of the calling thread's compute team take in turn (at most max_threads of them when
// max_threads > 0); `thread` is the taker's index, below the threads used, for per-thread
// scratch. Returns when every chunk has run. One call on the calling thread (thread 0) when
// the team has one thread or n fits one chunk. The team is oneDNN's own, so the elementwise
// loops and the GEMMs between them never compete for cores. `body` must not throw.
template <class Body>
void parallel_for(std::int64_t n, std::int64_t grain, int max_threads, Body&& body) noexcept {
  using B = std::remove_reference_t<Body>;
  detail::parallel_for(
      n, grain, max_threads,
      [](void* b, int thread, std::int64_t begin, std::int64_t end) {
        (*static_cast<B*>(b))(thread, begin, end);
      },
      const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace coinfer
