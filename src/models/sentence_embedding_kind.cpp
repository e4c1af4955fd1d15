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
//   precision = "int8"              # or "fp32" (the reference path)
#include <filesystem>

#include "coinfer/models/bert_encoder.hpp"
#include "coinfer/models/builtin_models.hpp"
#include "coinfer/tokenizers/wordpiece.hpp"

namespace coinfer {
namespace {

Status load_sentence_embedding(const ModelConfig& config, ModelOptions& options, LoadedModel& out) {
  const std::string prefix = "models." + config.name + ".";
  if (config.weights.empty()) {
    return Status::invalid(prefix +
                           "weights: required for kind 'sentence_embedding' (a "
                           "safetensors file)");
  }
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
  std::unique_ptr<BertEncoder> model;
  if (auto status = BertEncoder::load(config.weights, config.name, config.version, encoder, model);
      !status) {
    return Status(status.code(), prefix + "weights: " + status.message());
  }
  if (static_cast<std::size_t>(model->vocab_size()) != tokenizer->vocab_size()) {
    return Status::invalid(prefix + "vocab: " + std::to_string(tokenizer->vocab_size()) +
                           " tokens, but the weights have " + std::to_string(model->vocab_size()));
  }
  out.model = std::move(model);
  out.text = TextInput{std::move(tokenizer), "text", max_input_tokens, truncate};
  return {};
}

}  // namespace

const ModelKind sentence_embedding_kind{"sentence_embedding", load_sentence_embedding};

}  // namespace coinfer
