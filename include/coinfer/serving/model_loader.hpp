#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <vector>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/models/model_kind.hpp"

namespace coinfer::generation {
class Generator;
}  // namespace coinfer::generation

namespace coinfer {

class Executor;
class ModelRepository;

// What one [models.NAME] section loads into through its kind: a generator for the kinds a
// generation engine serves (generation/generator_kind.hpp: "llm"), or a model for an Endpoint
// (models/model_kind.hpp: "identity", "mlp", "sentence-embedding"). Neither, with ok: the
// section is `optional` and its weights are not installed.
struct LoadedServable {
  std::unique_ptr<generation::Generator> generator;
  LoadedModel model;

  bool empty() const noexcept { return !generator && !model.model; }
};

// The one way a section becomes something servable. An unknown kind names every known one.
Status load_servable(const ModelConfig& config, int compute_threads, LoadedServable& out);

// Every model of `config` into `repository`: generators as they are, the other models as
// Endpoints that batch on `io` and run on `cpu` or on a device executor of their own (appended
// to `device_executors`: the caller destroys those, and `cpu`, before the repository, as they
// join the threads that run the endpoints' batches). Errors name the section; a model not
// installed is skipped with a warning where the section allows it (`optional`).
Status load_models(const Config& config, boost::asio::any_io_executor io, Executor& cpu,
                   ModelRepository& repository,
                   std::vector<std::unique_ptr<Executor>>& device_executors);

}  // namespace coinfer
