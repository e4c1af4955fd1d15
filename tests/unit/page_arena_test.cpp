// PageArena: a model's weights side by side on 2 MiB pages.
#include "coinfer/core/page_arena.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

using namespace coinfer;

namespace {

// What a piece of n bytes takes of its chunk: n and the redzone (ASan builds), to a line.
std::size_t taken(std::size_t n) {
  return (n + PageArena::redzone + PageArena::alignment - 1) / PageArena::alignment *
         PageArena::alignment;
}

// The VmFlags of the mapping that holds `p` (/proc/self/smaps), or "" where none is found.
std::string vm_flags(const void* p) {
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return {};
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  std::string flags;
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long begin = 0, end = 0;
    if (std::sscanf(line, "%llx-%llx ", &begin, &end) == 2) {
      inside = at >= begin && at < end;
    } else if (inside && std::strncmp(line, "VmFlags:", 8) == 0) {
      flags = line + 8;
      break;
    }
  }
  std::fclose(f);
  return flags;
}

}  // namespace

TEST_CASE("page arena hands out aligned zeroed pieces side by side, and large ones alone") {
  PageArena arena(4 * PageArena::huge_page);  // chunks of 8 MiB: pieces of 4 MiB or more alone
  CHECK(arena.mapped_bytes() == 0);
  const std::size_t sizes[] = {1, 100, 4096, 3u << 20, 5u << 20, 70, 1u << 20};
  std::vector<std::byte*> pieces;
  std::size_t asked = 0;
  for (std::size_t i = 0; i < std::size(sizes); ++i) {
    std::byte* p = arena.allocate(sizes[i]);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % PageArena::alignment == 0);
    for (std::size_t j = 0; j < sizes[i]; j += 509) CHECK(p[j] == std::byte{0});
    std::memset(p, static_cast<int>(i + 1), sizes[i]);
    pieces.push_back(p);
    asked += taken(sizes[i]);
#if defined(__SANITIZE_ADDRESS__)
    // The byte after a piece is poisoned: a read past a layer's weights is reported.
    CHECK(__asan_address_is_poisoned(p + sizes[i]));
    CHECK(!__asan_address_is_poisoned(p + sizes[i] - 1));
#endif
  }
  // No piece overwrote another.
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    CAPTURE(i);
    CHECK(pieces[i][0] == static_cast<std::byte>(i + 1));
    CHECK(pieces[i][sizes[i] - 1] == static_cast<std::byte>(i + 1));
  }
  CHECK(arena.allocated_bytes() == asked);
  // The small ones in order in the first chunk; the 5 MiB piece in a mapping of its own (6
  // MiB), from a 2 MiB boundary; the 3 MiB piece in the first chunk, the 1 MiB one after the
  // 70-byte one in it too: one 8 MiB chunk and the 6 MiB mapping.
  CHECK(pieces[1] == pieces[0] + taken(1));
  CHECK(pieces[2] == pieces[1] + taken(100));
  CHECK(reinterpret_cast<std::uintptr_t>(pieces[0]) % PageArena::huge_page == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(pieces[4]) % PageArena::huge_page == 0);
  CHECK(pieces[5] == pieces[3] + taken(3u << 20));
  CHECK(pieces[6] == pieces[5] + taken(70));
  CHECK(arena.mapped_bytes() == (8u << 20) + (6u << 20));
  // A piece larger than the room left (4 MiB less 4,416 bytes; less still with redzones), but
  // under half a chunk, opens a new chunk.
  std::byte* next = arena.allocate((4u << 20) - 256);
  CHECK(reinterpret_cast<std::uintptr_t>(next) % PageArena::huge_page == 0);
  CHECK(arena.mapped_bytes() == (16u << 20) + (6u << 20));
  // A size that would wrap when rounded up is refused as operator new refuses it.
  CHECK_THROWS_AS(arena.allocate(~std::size_t{0} - 8), std::bad_alloc);
  CHECK_THROWS_AS(arena.allocate(std::size_t{1} << 63), std::bad_alloc);
  CHECK(arena.huge_bytes() <= arena.mapped_bytes());
  CHECK(arena.huge_bytes() % PageArena::huge_page == 0);
}

TEST_CASE("page arena asks the kernel for huge pages on its chunks") {
  // MADV_HUGEPAGE sets the mapping's "hg" flag, which the kernel's "madvise" mode of
  // transparent huge pages (the usual default) requires before it backs memory with 2 MiB
  // pages. Whether it finds free 2 MiB pages is the machine's state, reported but not required.
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    MESSAGE("SKIPPED: this kernel has no transparent huge pages");
    return;
  }
  PageArena arena;
  std::byte* small = arena.allocate(4096);
  std::byte* large = arena.allocate(64u << 20);
  for (std::byte* p : {small, large}) {
    const std::string flags = vm_flags(p);
    CAPTURE(flags);
    CHECK(flags.find(" hg") != std::string::npos);
  }
  std::memset(large, 1, 64u << 20);
  MESSAGE("64 MiB touched: " << (arena.huge_bytes() >> 20) << " MiB of the arena on 2 MiB pages");
}
