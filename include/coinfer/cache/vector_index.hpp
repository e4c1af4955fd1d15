#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace faiss {
struct IndexFlatIP;
struct IndexIVFFlat;
}  // namespace faiss

namespace coinfer::cache {

// How a VectorIndex searches. "auto" starts exact (flat) and becomes an inverted file (IVF)
// once it holds `ivf_min_entries` vectors, retrained each time it grows 4x past its last
// training; "flat" stays exact; "ivf" is auto with the same threshold (an IVF needs vectors
// to train on before it exists).
struct IndexOptions {
  enum class Kind { automatic, flat, ivf };
  Kind kind = Kind::automatic;
  std::size_t ivf_min_entries = 4096;
  std::size_t nprobe = 8;  // inverted lists scanned per query
};
bool parse_index_kind(std::string_view text, IndexOptions::Kind& out) noexcept;
std::string_view to_string(IndexOptions::Kind kind) noexcept;

// Unit-length vectors by id, searched by inner product (= cosine). Not thread-safe: the owner
// serializes writers against readers (search() is const and may run concurrently with other
// searches).
//
// Layouts. Flat: faiss::IndexFlatIP over slots, row s = dimension floats; a removed vector's
// row is zeroed (inner product 0: never above a threshold) and its slot reused by the next
// add, so add and remove are O(dimension) and no stale vector can match. IVF:
// faiss::IndexIVFFlat with a hash-table direct map (ids are the cache's entry ids), so add is
// one assignment to the nearest of `nlist` centroids and remove is O(1) per id.
class VectorIndex {
 public:
  VectorIndex(int dimension, IndexOptions options);
  ~VectorIndex();
  VectorIndex(VectorIndex&&) noexcept;
  VectorIndex& operator=(VectorIndex&&) noexcept;

  int dimension() const noexcept { return dimension_; }
  std::size_t size() const noexcept { return size_; }
  bool is_ivf() const noexcept { return ivf_ != nullptr; }
  std::size_t nlist() const noexcept;

  void add(std::uint64_t id, std::span<const float> vector);
  // Ids not in the index are ignored.
  void remove(std::span<const std::uint64_t> ids);
  // The k nearest (highest inner product first) into `similarities` and `ids`; returns how
  // many were found (fewer than k when the index is smaller, or an IVF's probed lists are).
  std::size_t search(std::span<const float> query, std::size_t k, float* similarities,
                     std::uint64_t* ids) const;

  // Whether rebuilt() would change the index's structure (flat past the IVF threshold, or an
  // IVF grown 4x past its training).
  bool wants_rebuild() const noexcept;
  // Every id and its vector (rows of `dimension` floats), for a rebuild or a snapshot.
  void export_vectors(std::vector<std::uint64_t>& ids, std::vector<float>& vectors) const;
  // A new index of the same vectors: an IVF trained on them (nlist ~ 4 sqrt(n)) when there
  // are enough, else flat. Slow (k-means): run it outside any lock the lookups need.
  static VectorIndex build(int dimension, IndexOptions options, std::span<const std::uint64_t> ids,
                           std::span<const float> vectors);

 private:
  std::size_t flat_search(const float* query, std::size_t k, float* sims, std::uint64_t* ids) const;

  int dimension_;
  IndexOptions options_;
  std::size_t size_ = 0;
  std::size_t trained_size_ = 0;  // IVF: vectors it was trained on
  // Flat
  std::unique_ptr<faiss::IndexFlatIP> flat_;
  std::vector<std::uint64_t> slot_ids_;  // by slot; 0 = free
  std::vector<std::size_t> free_slots_;
  std::unordered_map<std::uint64_t, std::size_t> slot_of_;
  // IVF
  std::unique_ptr<faiss::IndexIVFFlat> ivf_;
};

}  // namespace coinfer::cache
