#include "coinfer/ops/compute_threads.hpp"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl_config.h>

#include <algorithm>

namespace coinfer {

void set_compute_threads(int n) noexcept {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  // libdnnl links the OpenMP runtime, so omp_set_num_threads is in the process; looking it up
  // at run time spares every consumer of coinfer a link-time OpenMP dependency (ld refuses
  // symbols of indirect DSO dependencies) and -fopenmp on our own code.
  using SetNumThreads = void (*)(int);
  static const auto set_num_threads =
      reinterpret_cast<SetNumThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set_num_threads != nullptr) set_num_threads(std::max(n, 1));
#else
  (void)n;
#endif
}

}  // namespace coinfer
