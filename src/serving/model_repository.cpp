#include "coinfer/serving/model_repository.hpp"

#include <charconv>

#include "coinfer/generation/generator.hpp"

namespace coinfer {
namespace {

// Versions compare numerically when both are numbers ("10" > "9"), else as text.
bool version_less(std::string_view a, std::string_view b) {
  long long x = 0, y = 0;
  const bool a_num = std::from_chars(a.data(), a.data() + a.size(), x).ec == std::errc{};
  const bool b_num = std::from_chars(b.data(), b.data() + b.size(), y).ec == std::errc{};
  return a_num && b_num ? x < y : a < b;
}

}  // namespace

ModelRepository::ModelRepository() = default;
ModelRepository::~ModelRepository() = default;

Status ModelRepository::add(std::string name, std::unique_ptr<generation::Generator> generator,
                            CacheMode cache, std::string version) {
  for (const auto& e : endpoints_) {
    if (e->metadata().name == name)
      return Status::invalid("model '" + name + "' is already in the repository");
  }
  for (const auto& g : language_models_) {
    if (g->name() == name)
      return Status::invalid("model '" + name + "' is already in the repository");
  }
  language_models_.push_back(std::make_unique<GenerationEndpoint>(
      std::move(name), std::move(version), std::move(generator), cache));
  language_models_.back()->set_cache(cache_);
  return {};
}

GenerationEndpoint* ModelRepository::language_model(std::string_view name) const noexcept {
  for (const auto& g : language_models_) {
    if (g->name() == name) return g.get();
  }
  return nullptr;
}

void ModelRepository::set_cache(CacheStage* stage) noexcept {
  cache_ = stage;
  for (const auto& g : language_models_) g->set_cache(stage);
}

Status ModelRepository::find_generation(std::string_view name, const Tenant* tenant,
                                        GenerationEndpoint*& out) const {
  out = nullptr;
  if (tenant && !tenant->may_use(name)) return tenant->forbidden(name);
  for (const auto& g : language_models_) {
    if (g->name() == name) {
      out = g.get();
      return {};
    }
  }
  for (const auto& e : endpoints_) {
    if (e->metadata().name == name) {
      return Status::invalid("model: '" + std::string(name) +
                             "' does not generate text (it is not a language model)");
    }
  }
  return Status::not_found("unknown model '" + std::string(name) + "'");
}

Status ModelRepository::add(std::unique_ptr<Endpoint> endpoint) {
  const auto& meta = endpoint->metadata();
  for (const auto& g : language_models_) {
    if (g->name() == meta.name)
      return Status::invalid("model '" + meta.name + "' is already in the repository");
  }
  for (const auto& e : endpoints_) {
    if (e->metadata().name == meta.name && e->metadata().version == meta.version) {
      return Status::invalid("model '" + meta.name + "' version '" + meta.version +
                             "' is already in the repository");
    }
  }
  endpoints_.push_back(std::move(endpoint));
  return {};
}

bool ModelRepository::visible(const Endpoint& endpoint, const Tenant* tenant) noexcept {
  return !tenant || tenant->may_use(endpoint.metadata().name);
}

Status ModelRepository::find(std::string_view name, std::string_view version, const Tenant* tenant,
                             Endpoint*& out) const {
  out = nullptr;
  if (tenant && !tenant->may_use(name)) return tenant->forbidden(name);
  bool known = false;
  for (const auto& e : endpoints_) {
    if (e->metadata().name != name) continue;
    known = true;
    if (!version.empty()) {
      if (e->metadata().version == version) {
        out = e.get();
        return {};
      }
    } else if (!out || version_less(out->metadata().version, e->metadata().version)) {
      out = e.get();
    }
  }
  if (out) return {};
  if (!known) return Status::not_found("unknown model '" + std::string(name) + "'");
  return Status::not_found("model '" + std::string(name) + "' has no version '" +
                           std::string(version) + "'");
}

bool ModelRepository::all_ready() const noexcept {
  for (const auto& e : endpoints_) {
    if (e->state() != ModelState::ready) return false;
  }
  return true;
}

}  // namespace coinfer
