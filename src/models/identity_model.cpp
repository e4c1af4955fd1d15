#include "coinfer/models/identity_model.hpp"

#include <algorithm>
#include <numeric>

namespace coinfer {

IdentityModel::IdentityModel(std::string name, std::string version, int max_batch_size) {
  metadata_.name = std::move(name);
  metadata_.version = std::move(version);
  metadata_.platform = "coinfer_identity";
  metadata_.max_batch_size = max_batch_size;
  metadata_.inputs = {{"INPUT0", DType::FP32, {-1, -1}}};
  metadata_.outputs = {{"OUTPUT0", DType::FP32, {-1, -1}}, {"OUTPUT1", DType::FP32, {-1}}};
}

Status IdentityModel::forward(const Batch& batch, std::span<Tensor> outputs) {
  const ConstTensorView& in = batch.inputs[0];
  const auto rows = in.shape[0];
  const auto cols = in.shape[1];
  outputs[0].resize(DType::FP32, std::span<const std::int64_t>(in.shape));
  outputs[1].resize(DType::FP32, std::span<const std::int64_t>(&rows, 1));
  const auto x = in.values<float>();
  std::ranges::copy(x, outputs[0].values<float>().begin());
  auto sums = outputs[1].values<float>();
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = x.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols));
    sums[static_cast<std::size_t>(r)] = std::accumulate(row.begin(), row.end(), 0.0f);
  }
  return {};
}

}  // namespace coinfer
