// Kind "sentence_embedding": a BERT encoder (all-MiniLM-L6-v2 and its family) behind a
// WordPiece tokenizer. Text in, one L2-normalized mean-pooled vector per text out.
//
//   [models.minilm]
//   kind = "sentence_embedding"
//   weights = "model.safetensors"   # F32 BertModel weights
//   vocab = "vocab.txt"             # default: vocab.txt next to the weights
//   max_batch_tokens = 8192         # token budget of one batch (rows packed, no padding)
//   max_input_tokens = 256          # per text, [CLS] and [SEP] included (at most 512)
//   truncate = false                # cut longer texts instead of refusing them (400)
//   precision = "int8"              # or "fp32" (the reference path; CPU only)
//   device = "cuda:0"               # optional: the INT8 encoder on a GPU (CudaBertEncoder)
//
// Kind "cross_encoder": the same encoder with a pair classifier's adapter
// (BertEncoderOptions::adapter): two texts in a row ("text", "text_pair"), tokenized as
// [CLS] a [SEP] b [SEP] (the longer one cut first when `truncate` allows), one score in 0..1
// out per pair. The response cache's verifier (docs/CACHE.md) is one. CPU only.
//
//   [models.cache-verifier]
//   kind = "cross_encoder"
//   weights = "model.safetensors"   # the base BertModel
//   adapter = "adapter.safetensors" # low-rank updates, layer norms and the classifier
//   (vocab, max_batch_tokens, max_input_tokens, truncate, precision: as above)
#include <filesystem>

#include "coinfer/models/bert_encoder.hpp"
#include "coinfer/models/builtin_models.hpp"
#include "coinfer/tokenizers/wordpiece.hpp"

#ifdef COINFER_HAVE_CUDA
#include "coinfer/models/cuda_bert_encoder.hpp"
#include "coinfer/runtime/cuda_executor.hpp"
#endif

namespace coinfer {
namespace {

// device = "cuda[:N]": a CudaExecutor of the model's own and the encoder on it (INT8 only).
Status load_on_cuda(const ModelConfig& config, const BertEncoderOptions& encoder,
                    LoadedModel& out, int& vocab_size) {
  const std::string key = "models." + config.name + ".";
#ifdef COINFER_HAVE_CUDA
  int index = 0;
  parse_cuda_device(config.device, index);  // checked by make_model
  std::unique_ptr<CudaExecutor> executor;
  if (auto s = CudaExecutor::create(index, config.cuda_streams, executor); !s) {
    return Status(s.code(), key + "device: " + config.device + " requested but " + s.message());
  }
  std::unique_ptr<CudaBertEncoder> model;
  if (auto s = CudaBertEncoder::load(config.weights, config.name, config.version, encoder,
                                     *executor, model);
      !s) {
    return Status(s.code(), key + "weights: " + s.message());
  }
  vocab_size = model->vocab_size();
  out.model = std::move(model);
  out.device_executor = std::move(executor);
  return {};
#else
  (void)encoder;
  (void)out;
  (void)vocab_size;
  return {Errc::unavailable,
          key + "device: " + config.device + " requested but this build has no CUDA"};
#endif
}

Status load_bert(const ModelConfig& config, ModelOptions& options, bool pairs,
                 LoadedModel& out) {
  const std::string prefix = "models." + config.name + ".";
  const char* kind = pairs ? "cross_encoder" : "sentence_embedding";
  if (config.weights.empty()) {
    return Status::invalid(prefix + "weights: required for kind '" + kind +
                           "' (a safetensors file)");
  }
  std::string adapter;
  if (pairs) options.path("adapter", adapter);
  std::string vocab = (std::filesystem::path(config.weights).parent_path() / "vocab.txt").string();
  std::int64_t max_batch_tokens = 8192;
  std::int64_t max_input_tokens = 256;
  bool truncate = false;
  std::string precision = "int8";
  options.path("vocab", vocab);
  options.integer("max_batch_tokens", max_batch_tokens, 1, 1 << 20);
  options.integer("max_input_tokens", max_input_tokens, 2, 512);
  options.boolean("truncate", truncate);
  options.string("precision", precision);
  if (auto status = options.finish(); !status) return status;
  if (pairs && adapter.empty()) {
    return Status::invalid(prefix +
                           "adapter: required for kind 'cross_encoder' (a safetensors file)");
  }
  if (precision != "int8" && precision != "fp32") {
    return Status::invalid(prefix + "precision: unknown precision '" + precision +
                           "' (known: int8, fp32)");
  }
  if (max_batch_tokens < max_input_tokens) {
    return Status::invalid(prefix + "max_batch_tokens: " + std::to_string(max_batch_tokens) +
                           " is less than max_input_tokens " + std::to_string(max_input_tokens) +
                           " (one text must fit in a batch)");
  }

  auto tokenizer = std::make_shared<WordPieceTokenizer>();
  if (auto status = WordPieceTokenizer::load(vocab, *tokenizer); !status) {
    return Status(status.code(), prefix + "vocab: " + status.message());
  }
  BertEncoderOptions encoder;
  encoder.max_batch_size = config.max_batch_size;
  encoder.max_batch_tokens = max_batch_tokens;
  encoder.max_length = static_cast<int>(max_input_tokens);
  encoder.precision = precision == "fp32" ? Precision::fp32 : Precision::int8;
  encoder.adapter = adapter;
  int vocab_size = 0;
  if (pairs && config.device != "cpu") {
    return Status::invalid(prefix + "device: kind 'cross_encoder' runs on the CPU only");
  }
  if (config.device != "cpu") {
    if (auto status = load_on_cuda(config, encoder, out, vocab_size); !status) return status;
  } else {
    std::unique_ptr<BertEncoder> model;
    if (auto status =
            BertEncoder::load(config.weights, config.name, config.version, encoder, model);
        !status) {
      return Status(status.code(), prefix + "weights: " + status.message());
    }
    vocab_size = model->vocab_size();
    out.model = std::move(model);
  }
  if (static_cast<std::size_t>(vocab_size) != tokenizer->vocab_size()) {
    out = LoadedModel{};
    return Status::invalid(prefix + "vocab: " + std::to_string(tokenizer->vocab_size()) +
                           " tokens, but the weights have " + std::to_string(vocab_size));
  }
  out.text = TextInput{std::move(tokenizer), "text", max_input_tokens, truncate,
                       pairs ? "text_pair" : ""};
  return {};
}

Status load_sentence_embedding(const ModelConfig& config, ModelOptions& options, LoadedModel& out) {
  return load_bert(config, options, false, out);
}

Status load_cross_encoder(const ModelConfig& config, ModelOptions& options, LoadedModel& out) {
  return load_bert(config, options, true, out);
}

}  // namespace

const ModelKind sentence_embedding_kind{"sentence_embedding", load_sentence_embedding,
                                        /*serves_cuda=*/true};
const ModelKind cross_encoder_kind{"cross_encoder", load_cross_encoder};

}  // namespace coinfer
