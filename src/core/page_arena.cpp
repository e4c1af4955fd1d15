#include "coinfer/core/page_arena.hpp"

#include <sys/mman.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define COINFER_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define COINFER_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define COINFER_POISON(p, n) ((void)(p), (void)(n))
#define COINFER_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace coinfer {

namespace {

std::size_t round_up(std::size_t n, std::size_t to) noexcept {
  return (n + to - 1) / to * to;
}

}  // namespace

PageArena::PageArena(std::size_t chunk_bytes)
    : chunk_bytes_(round_up(chunk_bytes < huge_page ? huge_page : chunk_bytes, huge_page)) {}

PageArena::~PageArena() {
  for (const Chunk& c : chunks_) {
    COINFER_UNPOISON(c.base, c.size);  // whatever maps these addresses next starts clean
    ::munmap(c.base, c.size);
  }
}

// `size` (a multiple of 2 MiB) from a 2 MiB boundary: a mapping one huge page larger, trimmed
// at both ends. The kernel backs an aligned, advised range with huge pages at first touch.
std::byte* PageArena::map(std::size_t size) {
  void* raw =
      ::mmap(nullptr, size + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  auto* start = static_cast<std::byte*>(raw);
  const std::size_t skip =
      (huge_page - reinterpret_cast<std::uintptr_t>(start) % huge_page) % huge_page;
  if (skip != 0) ::munmap(start, skip);
  ::munmap(start + skip + size, huge_page - skip);  // skip < huge_page: a tail is always left
  std::byte* base = start + skip;
#ifdef MADV_HUGEPAGE
  (void)::madvise(base, size, MADV_HUGEPAGE);  // advice only: without it, 4 KiB pages
#endif
  try {
    chunks_.push_back({base, size});
  } catch (...) {
    ::munmap(base, size);
    throw;
  }
  COINFER_POISON(base, size);  // allocate() unpoisons each piece's own bytes
  return base;
}

std::byte* PageArena::allocate(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > (std::size_t{1} << 62)) throw std::bad_alloc();  // rounding up must not wrap
  const std::size_t need = round_up(bytes + redzone, alignment);
  std::byte* out = nullptr;
  if (need >= chunk_bytes_ / 2) {
    out = map(round_up(need, huge_page));
  } else {
    if (need > left_) {
      next_ = map(chunk_bytes_);
      left_ = chunk_bytes_;
    }
    out = next_;
    next_ += need;
    left_ -= need;
  }
  allocated_ += need;
  COINFER_UNPOISON(out, bytes);
  return out;
}

std::size_t PageArena::mapped_bytes() const noexcept {
  std::size_t total = 0;
  for (const Chunk& c : chunks_) total += c.size;
  return total;
}

std::size_t PageArena::allocated_bytes() const noexcept {
  return allocated_;
}

std::size_t PageArena::huge_bytes() const {
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return 0;
  std::size_t total = 0;
  bool ours = false;  // the mapping whose fields follow lies in a chunk
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    std::uintptr_t begin = 0, end = 0;
    unsigned long long kb = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &begin, &end) == 2) {
      ours = false;
      for (const Chunk& c : chunks_) {
        const auto base = reinterpret_cast<std::uintptr_t>(c.base);
        ours = ours || (begin >= base && end <= base + c.size);
      }
    } else if (ours && std::sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
      total += static_cast<std::size_t>(kb) << 10;
    }
  }
  std::fclose(f);
  return total;
}

}  // namespace coinfer
