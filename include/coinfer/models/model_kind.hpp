#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/models/text_input.hpp"
#include "coinfer/runtime/executor.hpp"

namespace coinfer {

// What a kind's loader builds from a [models.NAME] section.
struct LoadedModel {
  std::shared_ptr<Model> model;
  // Set when the model must run on an executor of its own (a CudaExecutor for device
  // "cuda:N"): the caller owns it, hands it to the model's endpoint and destroys it before
  // the endpoint (it joins the threads that run the endpoint's batches). Null: the caller's
  // CpuExecutor runs the model.
  std::unique_ptr<Executor> device_executor;
  // Set for models that take token ids: how the endpoint turns text into them.
  std::optional<TextInput> text;
};

// A kind's own settings: the keys of [models.NAME] that the common fields do not cover
// (ModelConfig::options). The loader reads each key it knows; finish() rejects the rest by
// name ("models.m.colour: unknown key for kind 'mlp'"). Errors name the full key.
class ModelOptions {
 public:
  explicit ModelOptions(const ModelConfig& config) : config_(config) {}

  void integer(std::string_view key, std::int64_t& field, std::int64_t min, std::int64_t max);
  void boolean(std::string_view key, bool& field);
  // A number: a TOML float or integer, within min..max.
  void number(std::string_view key, double& field, double min, double max);
  void string(std::string_view key, std::string& field);
  // A file path; relative paths are relative to the config file's directory.
  void path(std::string_view key, std::string& field);
  Status finish();

 private:
  const ParameterValue* take(std::string_view key);
  void fail(std::string_view key, const std::string& message);

  const ModelConfig& config_;
  std::set<std::string, std::less<>> seen_;
  Status status_;
};

// One model kind: its `kind` name and how to build it from a config section.
struct ModelKind {
  std::string_view name;
  Status (*load)(const ModelConfig& config, ModelOptions& options, LoadedModel& out);
  // The kind serves device = "cuda[:N]" (its loader makes the CudaExecutor); others are
  // refused by make_model with a message naming the kinds that do.
  bool serves_cuda = false;
};

// "cuda" -> 0, "cuda:N" -> N; false for anything else.
bool parse_cuda_device(const std::string& device, int& index);

}  // namespace coinfer
