#include "coinfer/models/builtin_models.hpp"

#include <charconv>

#include "coinfer/models/identity_model.hpp"
#include "coinfer/models/mlp.hpp"

#ifdef COINFER_HAVE_CUDA
#include "coinfer/models/cuda_mlp.hpp"
#include "coinfer/runtime/cuda_executor.hpp"
#endif

namespace coinfer {
namespace {

// "cuda" -> 0, "cuda:N" -> N; false for anything else.
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

Status make_cuda_model(const ModelConfig& config, int device_index, std::shared_ptr<Model>& out,
                       std::unique_ptr<Executor>& device_executor) {
  const std::string key = "models." + config.name + ".device: ";
  if (config.kind != "mlp") {
    return Status::invalid(key + config.device + " is supported for kind 'mlp' only");
  }
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
  out = std::move(mlp);
  device_executor = std::move(executor);
  return {};
#else
  (void)device_index;
  (void)out;
  (void)device_executor;
  return {Errc::unavailable, key + config.device + " requested but this build has no CUDA"};
#endif
}

}  // namespace

Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out,
                          std::unique_ptr<Executor>& device_executor) {
  device_executor.reset();
  if (config.device != "cpu") {
    int index = 0;
    if (!parse_cuda_device(config.device, index)) {
      return Status::invalid("models." + config.name + ".device: unknown device '" + config.device +
                             "' (known: cpu, cuda, cuda:N)");
    }
    if (config.kind == "mlp" && config.weights.empty()) {
      return Status::invalid("models." + config.name +
                             ".weights: required for kind 'mlp' (a safetensors file)");
    }
    return make_cuda_model(config, index, out, device_executor);
  }
  if (config.kind == "identity") {
    out = std::make_shared<IdentityModel>(config.name, config.version, config.max_batch_size);
    return {};
  }
  if (config.kind == "mlp") {
    if (config.weights.empty()) {
      return Status::invalid("models." + config.name +
                             ".weights: required for kind 'mlp' (a safetensors file)");
    }
    std::unique_ptr<Mlp> mlp;
    if (auto status =
            Mlp::load(config.weights, config.name, config.version, config.max_batch_size, mlp);
        !status) {
      return Status(status.code(), "models." + config.name + ".weights: " + status.message());
    }
    out = std::move(mlp);
    return {};
  }
  return Status::invalid("models." + config.name + ".kind: unknown model kind '" + config.kind +
                         "' (known: identity, mlp)");
}

Status make_builtin_model(const ModelConfig& config, std::shared_ptr<Model>& out) {
  if (config.device != "cpu") {
    // Checked first so that a build or machine without CUDA says so.
    std::unique_ptr<Executor> executor;
    Status s = make_builtin_model(config, out, executor);
    if (!s) return s;
    out.reset();
    return Status::invalid("models." + config.name + ".device: " + config.device +
                           " needs its own executor; this service runs models on the CPU only");
  }
  std::unique_ptr<Executor> none;
  return make_builtin_model(config, out, none);
}

}  // namespace coinfer
