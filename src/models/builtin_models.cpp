#include "coinfer/models/builtin_models.hpp"

#include <charconv>

#include "coinfer/models/identity_model.hpp"
#include "coinfer/models/mlp.hpp"

#ifdef COINFER_HAVE_CUDA
#include "coinfer/models/cuda_mlp.hpp"
#include "coinfer/runtime/cuda_executor.hpp"
#endif

namespace coinfer {

bool parse_cuda_device(const std::string& device, int& index) {
  if (device == "cuda") {
    index = 0;
    return true;
  }
  if (!device.starts_with("cuda:") || device.size() == 5) return false;
  const char* first = device.data() + 5;
  const char* last = device.data() + device.size();
  auto [end, ec] = std::from_chars(first, last, index);
  return ec == std::errc() && end == last && index >= 0;
}

namespace {

Status make_cuda_mlp(const ModelConfig& config, int device_index, LoadedModel& out) {
  const std::string key = "models." + config.name + ".device: ";
#ifdef COINFER_HAVE_CUDA
  std::unique_ptr<CudaExecutor> executor;
  if (auto s = CudaExecutor::create(device_index, config.cuda_streams, executor); !s) {
    return Status(s.code(), key + config.device + " requested but " + s.message());
  }
  std::unique_ptr<CudaMlp> mlp;
  if (auto s = CudaMlp::load(config.weights, config.name, config.version, config.max_batch_size,
                             *executor, mlp);
      !s) {
    return Status(s.code(), "models." + config.name + ".weights: " + s.message());
  }
  out.model = std::move(mlp);
  out.device_executor = std::move(executor);
  return {};
#else
  (void)device_index;
  (void)out;
  return {Errc::unavailable, key + config.device + " requested but this build has no CUDA"};
#endif
}

Status load_identity(const ModelConfig& config, ModelOptions&, LoadedModel& out) {
  out.model = std::make_shared<IdentityModel>(config.name, config.version, config.max_batch_size);
  return {};
}

Status load_mlp(const ModelConfig& config, ModelOptions&, LoadedModel& out) {
  if (config.weights.empty()) {
    return Status::invalid("models." + config.name +
                           ".weights: required for kind 'mlp' (a safetensors file)");
  }
  if (config.device != "cpu") {
    int index = 0;
    parse_cuda_device(config.device, index);  // checked by make_model
    return make_cuda_mlp(config, index, out);
  }
  std::unique_ptr<Mlp> mlp;
  if (auto status =
          Mlp::load(config.weights, config.name, config.version, config.max_batch_size, mlp);
      !status) {
    return Status(status.code(), "models." + config.name + ".weights: " + status.message());
  }
  out.model = std::move(mlp);
  return {};
}

}  // namespace

const ModelKind identity_kind{"identity", load_identity};
const ModelKind mlp_kind{"mlp", load_mlp, /*serves_cuda=*/true};

std::span<const ModelKind* const> builtin_model_kinds() noexcept {
  static const ModelKind* const kinds[] = {&identity_kind, &mlp_kind, &sentence_embedding_kind,
                                           &cross_encoder_kind};
  return kinds;
}

Status make_model(const ModelConfig& config, LoadedModel& out,
                  std::span<const ModelKind* const> kinds) {
  out = LoadedModel{};
  const ModelKind* kind = nullptr;
  std::string known;
  for (const ModelKind* k : kinds) {
    if (k->name == config.kind) kind = k;
    known += (known.empty() ? "" : ", ") + std::string(k->name);
  }
  if (config.device != "cpu") {
    int index = 0;
    if (!parse_cuda_device(config.device, index)) {
      return Status::invalid("models." + config.name + ".device: unknown device '" + config.device +
                             "' (known: cpu, cuda, cuda:N)");
    }
    if (kind && !kind->serves_cuda) {
      std::string serving;
      for (const ModelKind* k : kinds) {
        if (k->serves_cuda) serving += (serving.empty() ? "'" : ", '") + std::string(k->name) + "'";
      }
      return Status::invalid("models." + config.name + ".device: " + config.device +
                             " is supported for kind " + serving + " only");
    }
  }
  if (!kind) {
    return Status::invalid("models." + config.name + ".kind: unknown model kind '" + config.kind +
                           "' (known: " + known + ")");
  }
  ModelOptions options(config);
  Status status = kind->load(config, options, out);
  if (status.ok()) status = options.finish();
  if (!status.ok()) out = LoadedModel{};
  return status;
}

Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out) {
  LoadedModel loaded;
  Status s = make_model(config, loaded);
  if (!s) return s;  // a device the build or machine lacks says so first
  if (loaded.device_executor) {
    return Status::invalid("models." + config.name + ".device: " + config.device +
                           " needs its own executor; this service runs models on the CPU only");
  }
  out = std::move(loaded.model);
  return {};
}

}  // namespace coinfer
