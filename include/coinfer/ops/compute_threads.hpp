#pragma once

namespace coinfer {

// Sets how many threads oneDNN uses for ops run from the calling thread. oneDNN here uses
// the OpenMP runtime, whose thread count is per calling thread: an executor calls this once
// from each compute thread it owns. n < 1 is treated as 1. A no-op when oneDNN was built
// with another threading runtime.
void set_compute_threads(int n) noexcept;

}  // namespace coinfer
