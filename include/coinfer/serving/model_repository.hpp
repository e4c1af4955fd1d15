#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"

namespace coinfer {

enum class ModelState { loading, ready, unavailable };
std::string_view to_string(ModelState state) noexcept;

// The models a server offers, by name and version. Filled at start-up, read concurrently
// afterwards (lookups take no lock; only state changes are atomic).
class ModelRepository {
 public:
  struct Entry {
    std::shared_ptr<Model> model;
    std::atomic<ModelState> state{ModelState::loading};
    const ModelMetadata& metadata() const noexcept { return model->metadata(); }
  };

  // Adds a model in state `ready`. Two models with the same name and version are an error.
  Status add(std::shared_ptr<Model> model);

  // `version` empty means the newest (highest) version of the model.
  // Errors name what was not found: "unknown model 'foo'", "model 'foo' has no version '7'".
  Status find(std::string_view name, std::string_view version, Entry*& out) const;

  const std::vector<std::unique_ptr<Entry>>& entries() const noexcept { return entries_; }
  // Ready when every model is ready.
  bool all_ready() const noexcept;

 private:
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace coinfer
