#include "coinfer/models/mlp.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "coinfer/models/safetensors.hpp"
#include "coinfer/ops/reference.hpp"
#include "coinfer/ops/softmax.hpp"

namespace coinfer {
namespace {

// Copies an FP32 tensor out of the file (whose data may be unaligned for float).
std::vector<float> to_floats(const SafetensorsTensor& t) {
  std::vector<float> v(t.data.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

}  // namespace

Status Mlp::load(const std::filesystem::path& file, std::string name, std::string version,
                 int max_batch_size, std::unique_ptr<Mlp>& out, bool keep_fp32_reference) {
  if (max_batch_size < 1) {
    return Status::invalid("models." + name + ".max_batch_size: must be >= 1 for an mlp");
  }
  SafetensorsFile weights;
  if (auto status = SafetensorsFile::open(file, weights); !status) return status;
  const std::string origin = file.string();

  // fc{i}.weight / fc{i}.bias pairs, validated before any layer is built.
  struct LayerTensors {
    std::string prefix;
    const SafetensorsTensor* weight;
    const SafetensorsTensor* bias;
  };
  std::vector<LayerTensors> found;
  for (int i = 0;; ++i) {
    std::string prefix = "fc" + std::to_string(i);
    const SafetensorsTensor* w = weights.tensor(prefix + ".weight");
    if (w == nullptr) break;
    const SafetensorsTensor* b = weights.tensor(prefix + ".bias");
    if (w->dtype != SafetensorsDType::F32 || w->shape.size() != 2 || w->shape[0] < 1 ||
        w->shape[1] < 1 || w->shape[0] > std::numeric_limits<int>::max() ||
        w->shape[1] > std::numeric_limits<int>::max()) {
      return Status::invalid(origin + ": " + prefix + ".weight must be F32 [out, in], got " +
                             std::string(to_string(w->dtype)) + " " + to_string(w->shape));
    }
    const std::int64_t n = w->shape[0];
    const std::int64_t k = w->shape[1];
    if (b == nullptr || b->dtype != SafetensorsDType::F32 || b->shape != Shape{n}) {
      return Status::invalid(
          origin + ": " + prefix + ".bias must be F32 [" + std::to_string(n) + "], " +
          (b == nullptr ? std::string("missing")
                        : "got " + std::string(to_string(b->dtype)) + " " + to_string(b->shape)));
    }
    if (!found.empty() && found.back().weight->shape[0] != k) {
      return Status::invalid(origin + ": " + prefix + ".weight takes " + std::to_string(k) +
                             " inputs, but " + found.back().prefix + " gives " +
                             std::to_string(found.back().weight->shape[0]));
    }
    found.push_back({std::move(prefix), w, b});
  }
  if (found.empty()) return Status::invalid(origin + ": no fc0.weight tensor");

  std::unique_ptr<Mlp> mlp(new Mlp());
  mlp->layers_.resize(found.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto& [prefix, w, b] = found[i];
    const Activation activation = i + 1 < found.size() ? Activation::relu : Activation::none;
    if (auto status =
            Int8Linear::create(to_floats(*w), to_floats(*b), static_cast<int>(w->shape[0]),
                               static_cast<int>(w->shape[1]), activation, max_batch_size,
                               mlp->layers_[i], keep_fp32_reference);
        !status) {
      return Status(status.code(), origin + ": " + prefix + ": " + status.message());
    }
  }

  for (std::size_t i = 0; i + 1 < mlp->layers_.size(); ++i) {
    mlp->max_width_ = std::max(mlp->max_width_, mlp->layers_[i].out_features());
  }
  mlp->hidden_.resize(2 * static_cast<std::size_t>(max_batch_size) *
                      static_cast<std::size_t>(mlp->max_width_));

  ModelMetadata& md = mlp->metadata_;
  md.name = std::move(name);
  md.version = std::move(version);
  md.platform = "coinfer_mlp";
  md.max_batch_size = max_batch_size;
  md.inputs = {{"INPUT0", DType::FP32, {-1, mlp->in_features()}}};
  md.outputs = {{"probabilities", DType::FP32, {-1, mlp->classes()}},
                {"label", DType::Int64, {-1}}};
  out = std::move(mlp);
  return {};
}

Status Mlp::check_input(const ConstTensorView& x) const {
  if (x.dtype != DType::FP32 || x.shape.size() != 2 || x.shape[1] != in_features()) {
    return Status::invalid("INPUT0: expected FP32 [-1, " + std::to_string(in_features()) +
                           "], got " + std::string(to_string(x.dtype)) + " " + to_string(x.shape));
  }
  if (x.shape[0] > metadata_.max_batch_size) {
    return Status::invalid("INPUT0: batch of " + std::to_string(x.shape[0]) +
                           " exceeds max_batch_size " + std::to_string(metadata_.max_batch_size));
  }
  return {};
}

Status Mlp::forward(const Batch& batch, std::span<Tensor> outputs) {
  if (batch.inputs.size() != 1 || outputs.size() != 2) {
    return {Errc::internal, "Mlp::forward: expected 1 input and 2 outputs"};
  }
  const ConstTensorView& x = batch.inputs[0];
  if (auto status = check_input(x); !status) return status;
  const auto m = static_cast<int>(x.shape[0]);
  const std::int64_t probabilities_shape[] = {m, classes()};
  outputs[0].resize(DType::FP32, probabilities_shape);
  outputs[1].resize(DType::Int64, std::span<const std::int64_t>(probabilities_shape, 1));
  if (m == 0) return {};

  float* probabilities = outputs[0].values<float>().data();
  const std::size_t half = hidden_.size() / 2;
  const float* in = x.values<float>().data();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const bool last = i + 1 == layers_.size();
    float* out = last ? probabilities : hidden_.data() + (i % 2) * half;
    if (auto status = layers_[i].forward(in, m, out); !status) return status;
    in = out;
  }
  softmax_rows(probabilities, m, classes());
  argmax_rows(probabilities, m, classes(), outputs[1].values<std::int64_t>().data());
  return {};
}

Status Mlp::forward_reference(ConstTensorView x, Tensor& probabilities, Tensor& label) const {
  if (layers_.front().fp32_weight().empty()) {
    return {Errc::internal, "Mlp::forward_reference: loaded without keep_fp32_reference"};
  }
  if (x.dtype != DType::FP32 || x.shape.size() != 2 || x.shape[1] != in_features()) {
    return Status::invalid("INPUT0: expected FP32 [-1, " + std::to_string(in_features()) +
                           "], got " + std::string(to_string(x.dtype)) + " " + to_string(x.shape));
  }
  const auto m = static_cast<int>(x.shape[0]);
  std::vector<float> in(x.values<float>().begin(), x.values<float>().end());  // FP32 [m, k]
  std::vector<float> out;                                                     // FP32 [m, n]
  for (const Int8Linear& layer : layers_) {
    out.resize(static_cast<std::size_t>(m) * static_cast<std::size_t>(layer.out_features()));
    linear_fp32_reference(in.data(), m, layer.in_features(), layer.fp32_weight().data(),
                          layer.out_features(), layer.bias().data(), layer.activation(),
                          out.data());
    std::swap(in, out);
  }
  probabilities.resize(DType::FP32, {m, classes()});
  label.resize(DType::Int64, {m});
  std::copy(in.begin(), in.end(), probabilities.values<float>().begin());
  softmax_reference(probabilities.values<float>().data(), m, classes());
  argmax_rows(probabilities.values<float>().data(), m, classes(),
              label.values<std::int64_t>().data());
  return {};
}

}  // namespace coinfer
