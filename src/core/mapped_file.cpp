#include "coinfer/core/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace coinfer {

MappedFile::~MappedFile() {
  if (address_) ::munmap(address_, size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : address_(std::exchange(other.address_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (address_) ::munmap(address_, size_);
    address_ = std::exchange(other.address_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release_resident_pages() const noexcept {
  // A read-only private mapping: nothing is written back, the pages are simply unmapped here.
  if (address_ != nullptr) (void)::madvise(address_, size_, MADV_DONTNEED);
}

Status MappedFile::open(const std::filesystem::path& path, MappedFile& out) {
  const std::string origin = path.string();
  const int fd = ::open(origin.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::not_found(origin + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return Status::invalid(origin + ": empty, unreadable or not a regular file");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int mmap_errno = errno;
  ::close(fd);
  if (address == MAP_FAILED) {
    return Status::invalid(origin + ": mmap failed: " + std::strerror(mmap_errno));
  }
  MappedFile file;
  file.address_ = address;
  file.size_ = size;
  out = std::move(file);
  return {};
}

}  // namespace coinfer
