#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

#include "coinfer/core/status.hpp"

namespace coinfer {

// A file mapped read-only into memory (mmap, MAP_PRIVATE): weights are paged in from the page
// cache as they are read, never copied whole into the heap first. Unmapped on destruction;
// movable, not copyable.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  // not_found when the file cannot be opened; invalid_argument when it is empty or cannot be
  // mapped. Errors name the path.
  static Status open(const std::filesystem::path& path, MappedFile& out);

  std::span<const std::byte> bytes() const noexcept {
    return {static_cast<const std::byte*>(address_), size_};
  }

  // Drops the mapping's resident pages from this process (madvise MADV_DONTNEED): the data
  // stays mapped and readable, and a page read later comes back from the page cache (or the
  // file). For a file whose weights were copied out at load and only a little of which is
  // read after.
  void release_resident_pages() const noexcept;

 private:
  void* address_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace coinfer
