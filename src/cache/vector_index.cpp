#include "coinfer/cache/vector_index.hpp"

#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/IDSelector.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

// OpenMP's runtime API (C linkage; libgomp, which FAISS links), declared here rather than
// through <omp.h> so that a compiler without an OpenMP installation of its own (the fuzz
// build's clang) compiles this file too.
extern "C" void omp_set_num_threads(int);

namespace coinfer::cache {
namespace {

// FAISS runs on the calling thread only: concurrent lookups run on the server's threads, each
// on one core; an insert holds the write lock and must not fan out; a rebuild's k-means must
// not take the serving cores. OpenMP's thread count is per calling thread, so it is set on
// each thread that reaches FAISS, before each call that may open a parallel region.
void one_openmp_thread() {
  thread_local bool set = false;
  if (!set) {
    omp_set_num_threads(1);
    set = true;
  }
}

std::size_t nlist_for(std::size_t n) {
  // ~4 sqrt(n) lists (FAISS's guideline), with at least 39 training vectors per list.
  const auto by_sqrt = static_cast<std::size_t>(4.0 * std::sqrt(static_cast<double>(n)));
  return std::max<std::size_t>(1, std::min(by_sqrt, n / 39));
}

}  // namespace

bool parse_index_kind(std::string_view text, IndexOptions::Kind& out) noexcept {
  if (text == "auto") {
    out = IndexOptions::Kind::automatic;
  } else if (text == "flat") {
    out = IndexOptions::Kind::flat;
  } else if (text == "ivf") {
    out = IndexOptions::Kind::ivf;
  } else {
    return false;
  }
  return true;
}

std::string_view to_string(IndexOptions::Kind kind) noexcept {
  switch (kind) {
    case IndexOptions::Kind::automatic:
      return "auto";
    case IndexOptions::Kind::flat:
      return "flat";
    case IndexOptions::Kind::ivf:
      return "ivf";
  }
  return "auto";
}

VectorIndex::VectorIndex(int dimension, IndexOptions options)
    : dimension_(dimension),
      options_(options),
      flat_(std::make_unique<faiss::IndexFlatIP>(dimension)) {}

VectorIndex::~VectorIndex() = default;
VectorIndex::VectorIndex(VectorIndex&&) noexcept = default;
VectorIndex& VectorIndex::operator=(VectorIndex&&) noexcept = default;

std::size_t VectorIndex::nlist() const noexcept {
  return ivf_ ? ivf_->nlist : 0;
}

void VectorIndex::add(std::uint64_t id, std::span<const float> vector) {
  assert(id != 0 && vector.size() == static_cast<std::size_t>(dimension_));
  if (ivf_) {
    one_openmp_thread();  // IndexIVF::add runs an OpenMP team over the lists otherwise
    const auto label = static_cast<faiss::Index::idx_t>(id);
    ivf_->add_with_ids(1, vector.data(), &label);
    ++size_;
    return;
  }
  if (slot_of_.count(id)) return;
  std::size_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    std::memcpy(flat_->codes.data() + slot * flat_->code_size, vector.data(), flat_->code_size);
    slot_ids_[slot] = id;
  } else {
    slot = slot_ids_.size();
    flat_->add(1, vector.data());
    slot_ids_.push_back(id);
  }
  slot_of_.emplace(id, slot);
  ++size_;
}

void VectorIndex::remove(std::span<const std::uint64_t> ids) {
  if (ids.empty()) return;
  if (ivf_) {
    one_openmp_thread();
    std::vector<faiss::Index::idx_t> labels(ids.begin(), ids.end());
    // A hash-table direct map removes only through an IDSelectorArray (the ids listed).
    const faiss::IDSelectorArray selector(labels.size(), labels.data());
    size_ -= ivf_->remove_ids(selector);
    return;
  }
  for (std::uint64_t id : ids) {
    const auto it = slot_of_.find(id);
    if (it == slot_of_.end()) continue;
    const std::size_t slot = it->second;
    std::memset(flat_->codes.data() + slot * flat_->code_size, 0, flat_->code_size);
    slot_ids_[slot] = 0;
    free_slots_.push_back(slot);
    slot_of_.erase(it);
    --size_;
  }
}

std::size_t VectorIndex::search(std::span<const float> query, std::size_t k, float* similarities,
                                std::uint64_t* ids) const {
  assert(query.size() == static_cast<std::size_t>(dimension_));
  if (size_ == 0 || k == 0) return 0;
  one_openmp_thread();
  if (!ivf_) return flat_search(query.data(), k, similarities, ids);
  std::vector<faiss::Index::idx_t> labels(k);
  std::vector<float> scores(k);
  faiss::SearchParametersIVF params;
  params.nprobe = std::min(options_.nprobe, ivf_->nlist);
  ivf_->search(1, query.data(), static_cast<faiss::Index::idx_t>(k), scores.data(), labels.data(),
               &params);
  std::size_t found = 0;
  for (std::size_t i = 0; i < k; ++i) {
    if (labels[i] < 0) break;
    similarities[found] = scores[i];
    ids[found] = static_cast<std::uint64_t>(labels[i]);
    ++found;
  }
  return found;
}

std::size_t VectorIndex::flat_search(const float* query, std::size_t k, float* sims,
                                     std::uint64_t* ids) const {
  // Free slots are zero rows: ask for enough rows that k live ones fit, then skip the free.
  const std::size_t want = std::min(k + free_slots_.size(), slot_ids_.size());
  std::vector<faiss::Index::idx_t> labels(want);
  std::vector<float> scores(want);
  flat_->search(1, query, static_cast<faiss::Index::idx_t>(want), scores.data(), labels.data());
  std::size_t found = 0;
  for (std::size_t i = 0; i < want && found < k; ++i) {
    if (labels[i] < 0) break;
    const std::uint64_t id = slot_ids_[static_cast<std::size_t>(labels[i])];
    if (id == 0) continue;
    sims[found] = scores[i];
    ids[found] = id;
    ++found;
  }
  return found;
}

bool VectorIndex::wants_rebuild() const noexcept {
  if (options_.kind == IndexOptions::Kind::flat) return false;
  if (ivf_) return size_ >= 4 * trained_size_;
  // A flat index with many free slots is compacted too (rebuilding it flat).
  return size_ >= options_.ivf_min_entries ||
         (free_slots_.size() > 1024 && free_slots_.size() > size_);
}

void VectorIndex::export_vectors(std::vector<std::uint64_t>& ids,
                                 std::vector<float>& vectors) const {
  const auto d = static_cast<std::size_t>(dimension_);
  ids.reserve(ids.size() + size_);
  vectors.reserve(vectors.size() + size_ * d);
  if (ivf_) {
    // Each inverted list holds its ids and vectors contiguously.
    for (std::size_t list = 0; list < ivf_->nlist; ++list) {
      const std::size_t n = ivf_->invlists->list_size(list);
      if (n == 0) continue;
      const faiss::Index::idx_t* list_ids = ivf_->invlists->get_ids(list);
      const auto* codes = reinterpret_cast<const float*>(ivf_->invlists->get_codes(list));
      for (std::size_t i = 0; i < n; ++i) ids.push_back(static_cast<std::uint64_t>(list_ids[i]));
      vectors.insert(vectors.end(), codes, codes + n * d);
      ivf_->invlists->release_codes(list, reinterpret_cast<const std::uint8_t*>(codes));
      ivf_->invlists->release_ids(list, list_ids);
    }
    return;
  }
  const auto* rows = reinterpret_cast<const float*>(flat_->codes.data());
  for (std::size_t slot = 0; slot < slot_ids_.size(); ++slot) {
    if (slot_ids_[slot] == 0) continue;
    ids.push_back(slot_ids_[slot]);
    vectors.insert(vectors.end(), rows + slot * d, rows + (slot + 1) * d);
  }
}

VectorIndex VectorIndex::build(int dimension, IndexOptions options,
                               std::span<const std::uint64_t> ids, std::span<const float> vectors) {
  VectorIndex index(dimension, options);
  const std::size_t n = ids.size();
  if (options.kind == IndexOptions::Kind::flat || n < options.ivf_min_entries) {
    for (std::size_t i = 0; i < n; ++i) {
      index.add(ids[i], vectors.subspan(i * static_cast<std::size_t>(dimension),
                                        static_cast<std::size_t>(dimension)));
    }
    return index;
  }
  one_openmp_thread();
  index.flat_.reset();
  auto* quantizer = new faiss::IndexFlatIP(dimension);  // owned by the IVF (own_fields)
  index.ivf_ = std::make_unique<faiss::IndexIVFFlat>(quantizer, dimension, nlist_for(n),
                                                     faiss::METRIC_INNER_PRODUCT);
  index.ivf_->own_fields = true;
  index.ivf_->cp.seed = 1234;  // reproducible centroids
  index.ivf_->train(static_cast<faiss::Index::idx_t>(n), vectors.data());
  index.ivf_->set_direct_map_type(faiss::DirectMap::Hashtable);
  std::vector<faiss::Index::idx_t> labels(ids.begin(), ids.end());
  index.ivf_->add_with_ids(static_cast<faiss::Index::idx_t>(n), vectors.data(), labels.data());
  index.size_ = n;
  index.trained_size_ = n;
  return index;
}

}  // namespace coinfer::cache
