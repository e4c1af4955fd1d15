#include "coinfer/models/cuda_bert_encoder.hpp"

#include <cstring>

#include "coinfer/ops/cuda/cuda_status.hpp"

namespace coinfer {

Status CudaBertEncoder::load(const std::filesystem::path& weights, std::string name,
                             std::string version, const BertEncoderOptions& options,
                             CudaExecutor& executor, std::unique_ptr<CudaBertEncoder>& out) {
  if (options.precision != Precision::int8) {
    return Status::invalid("models." + name + ".precision: " +
                           std::string(to_string(options.precision)) +
                           " is not served on a GPU (int8 only)");
  }
  BertEncoderOptions host_options = options;
  host_options.keep_fp32_weights = true;
  std::unique_ptr<BertEncoder> host;
  if (auto s = BertEncoder::load(weights, name, version, host_options, host); !s) return s;

  cuda::BertWeights w;
  w.vocab = host->vocab_size();
  w.hidden = host->hidden_size();
  w.heads = host->attention_shape().heads;
  w.max_length = host->max_length();
  w.word_embeddings = host->word_embeddings();
  w.position_embeddings = host->position_embeddings();
  w.embedding_norm = host->embedding_norm();
  const auto linear = [&](std::size_t index) {
    const Int8Linear& l = host->int8_linear(index);
    return cuda::BertLinear{l.fp32_weight(),  l.bias(),       l.out_features(),
                            l.in_features(),  l.activation(), l.fp32_input_channels()};
  };
  for (std::size_t i = 0; i < static_cast<std::size_t>(host->layer_count()); ++i) {
    w.layers.push_back({linear(4 * i), linear(4 * i + 1), linear(4 * i + 2), linear(4 * i + 3),
                        host->attention_norm(i), host->output_norm(i)});
  }

  if (auto s = executor.device().select(); !s) return s;
  std::unique_ptr<CudaBertEncoder> model(new CudaBertEncoder());
  const ModelMetadata& meta = host->metadata();
  if (auto s = cuda::Int8BertEncoder::create(w, meta.max_batch_size,
                                             static_cast<int>(meta.max_batch_tokens),
                                             model->encoder_);
      !s) {
    return Status(s.code(),
                  weights.string() + ": on " + executor.device().name() + ": " + s.message());
  }
  model->scratch_.resize(static_cast<std::size_t>(executor.scheduler().lanes()));
  for (auto& scratch : model->scratch_) {
    if (auto s = model->encoder_.create_scratch(scratch); !s) return s;
  }
  const auto rows = static_cast<std::size_t>(meta.max_batch_size);
  if (auto s = executor.scheduler().reserve_staging(
          model->encoder_.input_bytes(),
          sizeof(float) * rows * static_cast<std::size_t>(host->hidden_size()));
      !s) {
    return s;
  }
  model->executor_ = &executor;
  model->metadata_ = meta;
  model->metadata_.platform = "coinfer_bert_encoder_cuda";
  model->vocab_ = host->vocab_size();
  model->max_length_ = host->max_length();
  model->dense_offsets_.resize(rows + 1);
  out = std::move(model);
  return {};
}

Status CudaBertEncoder::forward(const Batch& batch, std::span<Tensor> outputs) {
  if (batch.inputs.size() != 1 || outputs.size() != 1) {
    return {Errc::internal, "CudaBertEncoder::forward: expected 1 input and 1 output"};
  }
  std::span<const std::int64_t> offsets;
  if (auto s = check_encoder_batch(batch, metadata_, vocab_, max_length_, dense_offsets_, offsets);
      !s) {
    return s;
  }
  const int rows = batch.rows;
  const std::int64_t output_shape[] = {rows, encoder_.hidden()};
  outputs[0].resize(DType::FP32, output_shape);
  if (rows == 0) return {};

  const auto tokens = static_cast<int>(offsets[static_cast<std::size_t>(rows)]);
  const std::size_t offsets_byte = encoder_.input_offsets_byte();
  const std::size_t input_bytes = offsets_byte + sizeof(std::int32_t) * (rows + 1);
  const std::size_t output_bytes = outputs[0].bytes().size();
  using Lane = CudaExecutor::Scheduler::Lane;
  Status status = executor_->scheduler().run(
      [&](Lane& lane) -> Status {
        cuda::Int8BertEncoder::Scratch& scratch = scratch_[static_cast<std::size_t>(lane.index)];
        // ids as they are (INT32), offsets narrowed to INT32 (tokens <= max_batch_tokens).
        std::memcpy(lane.input.data(), batch.inputs[0].data,
                    sizeof(std::int32_t) * static_cast<std::size_t>(tokens));
        auto* row_offsets = reinterpret_cast<std::int32_t*>(lane.input.data() + offsets_byte);
        for (int r = 0; r <= rows; ++r) {
          row_offsets[r] = static_cast<std::int32_t>(offsets[static_cast<std::size_t>(r)]);
        }
        Status s = cuda::cuda_status(cudaMemcpyAsync(scratch.input(), lane.input.data(),
                                                     input_bytes, cudaMemcpyHostToDevice,
                                                     lane.stream),
                                     "cudaMemcpyAsync (H2D input_ids)");
        if (s) s = encoder_.enqueue(scratch, rows, tokens, lane.stream);
        if (s) {
          s = cuda::cuda_status(cudaMemcpyAsync(lane.output.data(), scratch.embeddings(),
                                                output_bytes, cudaMemcpyDeviceToHost, lane.stream),
                                "cudaMemcpyAsync (D2H embedding)");
        }
        return s;
      },
      [&](Lane& lane) -> Status {
        std::memcpy(outputs[0].bytes().data(), lane.output.data(), output_bytes);
        return {};
      });
  if (!status) return Status(status.code(), "GPU batch failed: " + status.message());
  return {};
}

}  // namespace coinfer
