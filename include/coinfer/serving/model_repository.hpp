#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/access.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/serving/endpoint.hpp"
#include "coinfer/serving/generation_endpoint.hpp"

namespace coinfer {

class CacheStage;

// The endpoints a server offers, by model name and version. Filled at start-up, read
// concurrently afterwards without a lock (only endpoint state changes, atomically).
class ModelRepository {
 public:
  // Two endpoints with the same model name and version are an error.
  Status add(std::unique_ptr<Endpoint> endpoint);

  // `version` empty means the newest (highest) version of the model.
  // Errors name what was not found: "unknown model 'foo'", "model 'foo' has no version '7'";
  // a model `tenant`'s key may not use is Errc::forbidden (403), whether it exists or not.
  // `tenant` is the request's (null when auth is off).
  Status find(std::string_view name, std::string_view version, const Tenant* tenant,
              Endpoint*& out) const;
  // Whether listings show `endpoint` to `tenant` (all of them when null).
  static bool visible(const Endpoint& endpoint, const Tenant* tenant) noexcept;

  const std::vector<std::unique_ptr<Endpoint>>& endpoints() const noexcept { return endpoints_; }

  // Language models: served by a generation engine (continuous batching) behind a
  // GenerationEndpoint rather than an Endpoint. Names share one namespace with the endpoints'.
  Status add(std::string name, std::unique_ptr<generation::Generator> generator,
             CacheMode cache = CacheMode::off, std::string version = "1");
  // The language model named `name`, or null.
  GenerationEndpoint* language_model(std::string_view name) const noexcept;
  // Errors as find()'s; invalid_argument when `name` is an endpoint that does not generate.
  Status find_generation(std::string_view name, const Tenant* tenant,
                         GenerationEndpoint*& out) const;
  const std::vector<std::unique_ptr<GenerationEndpoint>>& language_models() const noexcept {
    return language_models_;
  }
  ModelRepository();
  ~ModelRepository();
  // Ready when every model is ready.
  bool all_ready() const noexcept;

  // The response cache stage (null when no model caches), handed to the language models too.
  void set_cache(CacheStage* stage) noexcept;
  CacheStage* cache() const noexcept { return cache_; }

 private:
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::vector<std::unique_ptr<GenerationEndpoint>> language_models_;
  CacheStage* cache_ = nullptr;
};

}  // namespace coinfer
