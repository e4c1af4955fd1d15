#include "coinfer/serving/cache_stage.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/use_awaitable.hpp>
#include <cmath>

#include "coinfer/serving/endpoint.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace coinfer {
namespace asio = boost::asio;

namespace {

// One text for the embedding endpoint, as its own adapters would hand it over.
class TextDecoder final : public RequestDecoder {
 public:
  explicit TextDecoder(std::string_view text) : text_(text) {}
  Status decode(const ModelMetadata&, InferRequest& request, InputSink*) override {
    Tensor& input = request.inputs.emplace_back();
    input.resize(DType::Bytes, {1});
    input.strings() = {std::string(text_)};
    return {};
  }

 private:
  std::string_view text_;
};

// The verifier's rows: (each candidate's text, the request's text), the order of its training
// pairs (cached, then asked); cut longest first when over its length.
class PairDecoder final : public RequestDecoder {
 public:
  PairDecoder(std::string_view text, const std::vector<cache::CacheHit>& candidates)
      : text_(text), candidates_(candidates) {}
  Status decode(const ModelMetadata&, InferRequest& request, InputSink*) override {
    const auto rows = static_cast<std::int64_t>(candidates_.size());
    Tensor& cached = request.inputs.emplace_back();
    cached.resize(DType::Bytes, {rows});
    Tensor& asked = request.inputs.emplace_back();
    asked.resize(DType::Bytes, {rows});
    cached.strings().clear();
    asked.strings().clear();
    for (const auto& c : candidates_) {
      cached.strings().push_back(c.text);
      asked.strings().emplace_back(text_);
    }
    request.parameters.emplace_back("truncate", true);
    return {};
  }

 private:
  std::string_view text_;
  const std::vector<cache::CacheHit>& candidates_;
};

cache::CacheOptions cache_options(const CacheConfig& config, const Endpoint* embedder) {
  cache::CacheOptions options;
  options.max_entries = config.max_entries;
  options.max_bytes = config.max_bytes;
  options.ttl = std::chrono::seconds(config.ttl_s);
  options.similarity_threshold = static_cast<float>(config.similarity_threshold);
  options.guards = config.guards;
  options.target_error_rate = static_cast<float>(config.target_error_rate);
  (void)cache::parse_index_kind(config.index, options.index.kind);
  options.index.ivf_min_entries = config.ivf_min_entries;
  options.index.nprobe = config.nprobe;
  if (embedder) {
    const auto& metadata = embedder->metadata();
    options.dimension = static_cast<int>(metadata.outputs.at(0).shape.back());
    options.embedder = metadata.name + ":" + metadata.version;
  }
  return options;
}

}  // namespace

CacheStage::CacheStage(const CacheConfig& config, Endpoint* embedder, Endpoint* verifier)
    : embedder_(embedder),
      verifier_(verifier),
      verifier_threshold_(static_cast<float>(config.verifier_threshold)),
      verifier_candidates_(config.verifier_candidates),
      cache_(std::make_unique<cache::SemanticCache>(cache_options(config, embedder))) {
  for (const auto& space : config.namespaces) {
    cache::NamespaceSettings settings;
    settings.threshold = static_cast<float>(space.similarity_threshold);
    settings.target_error_rate = static_cast<float>(space.target_error_rate);
    (void)cache_->configure_namespace(space.name, settings);
  }
  if (!config.snapshot_file.empty()) {
    const Status status = cache_->load(config.snapshot_file);
    if (status.ok()) {
      spdlog::info("response cache: {} entries restored from {}", cache_->stats().entries,
                   config.snapshot_file);
    } else if (status.code() != Errc::not_found) {
      spdlog::warn("response cache: snapshot skipped: {}", status.message());
    }
  }
  maintenance_ = std::make_unique<cache::CacheMaintenance>(
      *cache_, config.snapshot_file, std::chrono::seconds(config.snapshot_interval_s));
}

CacheStage::~CacheStage() = default;

Status CacheStage::create(const Config& config, ModelRepository& repository,
                          std::unique_ptr<CacheStage>& out) {
  bool any = false, semantic = false;
  for (const auto& model : config.models) {
    any = any || model.cache != CacheMode::off;
    semantic = semantic || model.cache == CacheMode::semantic;
  }
  if (!any) return {};
  Endpoint* embedder = nullptr;
  if (semantic) {
    Endpoint* found = nullptr;
    const Status status = repository.find(config.cache.embedding_model, "", nullptr, found);
    if (!status.ok()) {
      spdlog::warn(
          "response cache: cache.embedding_model '{}' is not served: semantic lookups "
          "are off, exact lookups only",
          config.cache.embedding_model);
    } else if (!found->text() || found->metadata().outputs.empty() ||
               found->metadata().outputs[0].dtype != DType::FP32 ||
               found->metadata().outputs[0].shape.size() != 2 ||
               found->metadata().outputs[0].shape[1] < 1) {
      return Status::invalid("cache.embedding_model: '" + config.cache.embedding_model +
                             "' is not a text-embedding model (kind sentence_embedding)");
    } else {
      embedder = found;
    }
  }
  Endpoint* verifier = nullptr;
  if (embedder && !config.cache.verifier_model.empty()) {
    if (auto status = repository.find(config.cache.verifier_model, "", nullptr, verifier);
        !status.ok()) {
      return Status::invalid("cache.verifier_model: '" + config.cache.verifier_model +
                             "' is not served (a [models] entry of kind cross_encoder)");
    }
    if (!verifier->text() || verifier->text()->pair_input_name.empty()) {
      return Status::invalid("cache.verifier_model: '" + config.cache.verifier_model +
                             "' is not a cross-encoder (kind cross_encoder)");
    }
  }
  out = std::make_unique<CacheStage>(config.cache, embedder, verifier);
  repository.set_cache(out.get());
  // Endpoints (OIP infer) are looked up by their exact inputs (lookup_exact); language models
  // by their GenerationEndpoint, which set_cache() above gave the stage.
  for (const auto& model : config.models) {
    if (model.cache == CacheMode::off) continue;
    Endpoint* endpoint = nullptr;
    if (!repository.find(model.name, "", nullptr, endpoint).ok()) continue;  // a generator
    if (model.cache == CacheMode::semantic) {
      spdlog::warn(
          "response cache: model '{}' is looked up by exact inputs (semantic lookups "
          "are for language models' text)",
          model.name);
    }
    endpoint->set_cache(out.get());
  }
  return {};
}

asio::awaitable<bool> CacheStage::embed(std::string_view text, std::vector<float>& out) {
  TextDecoder decoder(text);
  InferRequest request;
  BatchTicket ticket;
  const Status status = co_await embedder_->infer(decoder, request, ticket);
  if (!status.ok()) co_return false;
  const auto values = ticket.outputs().at(0).values<float>();
  out.assign(values.begin(), values.end());
  double norm = 0;
  for (float v : out) norm += static_cast<double>(v) * v;
  if (!(norm > 0) || !std::isfinite(norm)) co_return false;
  const auto scale = static_cast<float>(1.0 / std::sqrt(norm));
  for (float& v : out) v *= scale;
  co_return true;
}

asio::awaitable<void> CacheStage::lookup(CacheMode mode, const cache::CacheKey& key,
                                         const CacheDirectives& directives, Lookup& out) {
  if (mode == CacheMode::off) co_return;
  if (directives.lookup && cache_->lookup_exact(key, out.entry)) {
    out.hit = true;
    co_return;
  }
  const bool by_meaning = mode == CacheMode::semantic && embedder_ && !key.text.empty();
  if (by_meaning && (directives.lookup || directives.store)) {
    const bool embedded = co_await embed(key.text, out.vector);
    if (!embedded) out.vector.clear();
    if (embedded && directives.lookup) {
      out.searched_vectors = true;
      if (verifier_ == nullptr) {
        out.hit = cache_->lookup(key, out.vector, out.entry, &out.nearest);
      } else {
        std::vector<cache::CacheHit> candidates;
        if (cache_->candidates(key, out.vector, candidates, verifier_candidates_, &out.nearest) >
            0) {
          out.hit = co_await verify(key.text, candidates, out);
        }
      }
    }
  }
  if (directives.lookup && !out.hit) cache_->metrics().misses.add();
}

asio::awaitable<bool> CacheStage::verify(std::string_view text,
                                         std::vector<cache::CacheHit>& candidates, Lookup& out) {
  PairDecoder decoder(text, candidates);
  InferRequest request;
  BatchTicket ticket;
  const Status status = co_await verifier_->infer(decoder, request, ticket);
  if (!status.ok()) {
    spdlog::warn("response cache: verifier '{}' failed, no semantic hit: {}",
                 verifier_->metadata().name, status.message());
    co_return false;
  }
  const auto scores = ticket.outputs().at(0).values<float>();
  for (std::size_t i = 0; i < candidates.size() && i < scores.size(); ++i) {
    if (!(scores[i] >= verifier_threshold_)) {
      cache_->metrics().verifier_rejections.add();
      continue;
    }
    if (!cache_->accept(candidates[i])) continue;
    out.entry = std::move(candidates[i]);
    out.entry.text.clear();
    co_return true;
  }
  co_return false;
}

bool CacheStage::lookup_exact(const cache::CacheKey& key, const CacheDirectives& directives,
                              Lookup& out) {
  out.hit = directives.lookup && cache_->lookup_exact(key, out.entry);
  if (directives.lookup && !out.hit) cache_->metrics().misses.add();
  return out.hit;
}

CacheOutcome CacheStage::Lookup::outcome(std::uint64_t stored) const {
  CacheOutcome o;
  o.looked = true;
  o.hit = hit;
  o.semantic = hit && entry.kind == cache::HitKind::semantic;
  o.similarity = o.semantic ? entry.similarity : nearest;
  o.show_similarity = o.semantic || (!hit && searched_vectors);
  o.entry = hit ? entry.id : stored;
  return o;
}

std::uint64_t CacheStage::store(const cache::CacheKey& key, const CacheDirectives& directives,
                                const Lookup& lookup, std::string payload) {
  if (!directives.store) return 0;
  return cache_->insert(key, lookup.vector, std::move(payload));
}

}  // namespace coinfer
