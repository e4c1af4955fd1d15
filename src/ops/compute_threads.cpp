#include "coinfer/ops/compute_threads.hpp"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl_config.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// libgomp forks and joins a team where ThreadSanitizer cannot see (it is not instrumented):
// the job's hand-over is announced to it instead, so a TSan build checks the loops' bodies on
// a real team rather than reporting every access as a race with the calling thread.
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#define COINFER_TSAN_ACQUIRE(address) __tsan_acquire(address)
#define COINFER_TSAN_RELEASE(address) __tsan_release(address)
#else
#define COINFER_TSAN_ACQUIRE(address) static_cast<void>(address)
#define COINFER_TSAN_RELEASE(address) static_cast<void>(address)
#endif

namespace coinfer {
namespace {

// libdnnl links the OpenMP runtime, so its entry points are in the process; looking them up
// at run time spares every consumer of coinfer a link-time OpenMP dependency (ld refuses
// symbols of indirect DSO dependencies) and -fopenmp on our own code. GOMP_parallel is what
// GCC compiles `#pragma omp parallel` to (libgomp's ABI since GCC 4.9; LLVM's and Intel's
// runtimes export it too).
struct OpenMp {
  void (*set_num_threads)(int) = nullptr;
  int (*get_max_threads)() = nullptr;
  int (*get_thread_num)() = nullptr;
  void (*parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) = nullptr;

  OpenMp() {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
    set_num_threads = reinterpret_cast<decltype(set_num_threads)>(
        dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    get_max_threads = reinterpret_cast<decltype(get_max_threads)>(
        dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    get_thread_num = reinterpret_cast<decltype(get_thread_num)>(
        dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    parallel = reinterpret_cast<decltype(parallel)>(dlsym(RTLD_DEFAULT, "GOMP_parallel"));
    if (!get_max_threads || !get_thread_num) parallel = nullptr;
#endif
  }
};

const OpenMp& openmp() noexcept {
  static const OpenMp runtime;
  return runtime;
}

// One parallel_for: the team's threads take chunks from `next` until none is left.
struct Job {
  std::int64_t n;
  std::int64_t grain;
  detail::ChunkFn fn;
  void* body;
  std::atomic<std::int64_t> next{0};
};

void run_chunks(void* data) {
  Job& job = *static_cast<Job*>(data);
  COINFER_TSAN_ACQUIRE(&job);  // the fork: what the caller wrote before is visible
  const int thread = openmp().get_thread_num();
  for (;;) {
    const std::int64_t begin = job.next.fetch_add(job.grain, std::memory_order_relaxed);
    if (begin >= job.n) break;
    job.fn(job.body, thread, begin, std::min(begin + job.grain, job.n));
  }
  COINFER_TSAN_RELEASE(&job.next);  // the join: what this thread wrote is visible after
}

}  // namespace

void set_compute_threads(int n) noexcept {
  if (openmp().set_num_threads) openmp().set_num_threads(std::max(n, 1));
}

void ensure_compute_wait_policy(char** argv, ComputeWait wait) noexcept {
  if (!openmp().parallel || std::getenv("OMP_WAIT_POLICY") != nullptr ||
      std::getenv("GOMP_SPINCOUNT") != nullptr) {
    return;
  }
  const bool spin = wait == ComputeWait::short_spin;
  if (setenv("OMP_WAIT_POLICY", spin ? "active" : "passive", 1) != 0 ||
      (spin && setenv("GOMP_SPINCOUNT", "2000", 1) != 0)) {
    return;
  }
  execv("/proc/self/exe", argv);
  // Still here: the process runs on with the runtime's default policy.
  const int error = errno;
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("GOMP_SPINCOUNT");
  std::fprintf(stderr, "coinfer: could not re-run with the compute wait policy set: %s\n",
               std::strerror(error));
}

int compute_team_size() noexcept {
  return openmp().parallel ? std::max(openmp().get_max_threads(), 1) : 1;
}

void detail::parallel_for(std::int64_t n, std::int64_t grain, int max_threads, ChunkFn fn,
                          void* body) noexcept {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t chunks = (n + grain - 1) / grain;
  std::int64_t threads = compute_team_size();
  if (max_threads > 0) threads = std::min<std::int64_t>(threads, max_threads);
  threads = std::min(threads, chunks);
  if (threads <= 1) {
    fn(body, 0, 0, n);
    return;
  }
  Job job{n, grain, fn, body};
  COINFER_TSAN_RELEASE(&job);
  openmp().parallel(&run_chunks, &job, static_cast<unsigned>(threads), 0);
  COINFER_TSAN_ACQUIRE(&job.next);
}

}  // namespace coinfer
