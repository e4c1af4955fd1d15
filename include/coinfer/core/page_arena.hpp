#pragma once

#include <cstddef>
#include <vector>

namespace coinfer {

// Memory for a model's large arrays that every step reads from end to end (LlamaModel's
// repacked weights), on 2 MiB pages where Linux's transparent huge pages allow it: the
// arena maps anonymous memory in 2 MiB-aligned chunks and advises MADV_HUGEPAGE, which the
// kernel's default "madvise" mode requires before it backs a range with huge pages. A decode
// step streams ~85-135 MB of weights; on 4 KiB pages that is a TLB miss every 4 KiB, on 2 MiB
// pages one every 2 MiB (docs/BENCHMARKS.md, "Weights on 2 MiB pages").
//
// allocate() hands out 64-byte-aligned pieces of a chunk in order (a bump allocator): pieces
// live until the arena does, and nothing is freed one by one, so one model's layers lie side
// by side and share their huge pages. A piece of half a chunk or more gets a mapping of its
// own. Memory is zero, and a page costs nothing until first touched (a 2 MiB page at a time
// where it is huge). Where the kernel gives no huge pages (THP "never", or none free) the same
// memory is on 4 KiB pages and works as before. Not thread-safe: a model allocates at load.
class PageArena {
 public:
  static constexpr std::size_t huge_page = std::size_t{2} << 20;
  static constexpr std::size_t alignment = 64;
  // Under AddressSanitizer the memory around and between pieces is poisoned, with a line of it
  // after each piece, so that a kernel reading past its layer's weights is reported as it is on
  // the heap; 0 in other builds (pieces side by side).
#if defined(__SANITIZE_ADDRESS__)
  static constexpr std::size_t redzone = 64;
#else
  static constexpr std::size_t redzone = 0;
#endif

  explicit PageArena(std::size_t chunk_bytes = std::size_t{32} << 20);
  ~PageArena();
  PageArena(const PageArena&) = delete;
  PageArena& operator=(const PageArena&) = delete;

  // `bytes` (> 0) of zeroed memory, 64-byte aligned, valid until the arena is destroyed.
  // Throws std::bad_alloc where the mapping fails, as operator new does.
  std::byte* allocate(std::size_t bytes);

  std::size_t mapped_bytes() const noexcept;     // address space taken, whole chunks
  std::size_t allocated_bytes() const noexcept;  // what allocate() handed out
  // Of the chunks' memory, what the kernel backs with huge pages now (/proc/self/smaps'
  // AnonHugePages; 0 where it cannot be read). For the load log and the tests.
  std::size_t huge_bytes() const;

 private:
  struct Chunk {
    std::byte* base;
    std::size_t size;
  };
  std::byte* map(std::size_t size);

  std::size_t chunk_bytes_;
  std::vector<Chunk> chunks_;
  std::byte* next_ = nullptr;  // free space of the newest shared chunk
  std::size_t left_ = 0;
  std::size_t allocated_ = 0;
};

}  // namespace coinfer
