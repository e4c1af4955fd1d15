#include "coinfer/generation/llm_kind.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "coinfer/generation/engine.hpp"
#include "coinfer/generation/generator_kind.hpp"
#include "coinfer/generation/llama_cpu_runner.hpp"
#include "coinfer/models/llama.hpp"
#include "coinfer/models/model_kind.hpp"
#include "coinfer/tokenizers/bpe.hpp"

#ifdef COINFER_HAVE_CUDA
#include "coinfer/generation/cuda_llama_runner.hpp"
#endif

namespace coinfer::generation {

Status make_generator(const ModelConfig& config, int compute_threads,
                      std::unique_ptr<Engine>& out) {
  out.reset();
  const std::string where = "models." + config.name;
  // device = "cuda[:N]": CudaLlamaRunner (INT8, the KV cache sized from free device memory
  // unless kv_cache_mib says otherwise, decode steps from CUDA graphs).
  int cuda_device = -1;
  if (config.device != "cpu") {
    if (!parse_cuda_device(config.device, cuda_device)) {
      return Status::invalid(where + ".device: unknown device '" + config.device +
                             "' (known: cpu, cuda, cuda:N)");
    }
#ifndef COINFER_HAVE_CUDA
    return {Errc::unavailable,
            where + ".device: " + config.device + " requested but this build has no CUDA"};
#endif
  }
  const bool on_cuda = cuda_device >= 0;
  ModelOptions options(config);
  std::string precision = "auto";
  std::string activations;  // int8 and int4 on the CPU: "int8" (the default) or "int16"
  // On a GPU as vLLM's defaults: 256 sequences, 2,048 tokens a step, the cache from memory.
  std::int64_t kv_cache_mib = on_cuda ? 0 : 512, block_size = 16,
               max_num_seqs = on_cuda ? 256 : 64, max_step_tokens = on_cuda ? 2048 : 256,
               max_model_len = 8192;
  double gpu_memory_utilization = 0.9;
  bool enforce_eager = false;
  bool chunked_prefill = true, prefix_caching = true, static_batching = false, optional = false;
  const SpeculativeConfig spec_defaults;
  std::int64_t num_speculative_tokens = spec_defaults.num_tokens,
               prompt_lookup_min = spec_defaults.lookup_min,
               prompt_lookup_max = spec_defaults.lookup_max,
               speculative_max_running = spec_defaults.max_running;
  options.string("precision", precision);
  options.string("activations", activations);
  if (on_cuda) {  // the device's own keys; unknown keys on the CPU
    options.number("gpu_memory_utilization", gpu_memory_utilization, 0.05, 1.0);
    options.boolean("enforce_eager", enforce_eager);
  }
  options.integer("kv_cache_mib", kv_cache_mib, on_cuda ? 0 : 1, 1 << 20);
  options.integer("block_size", block_size, 1, 256);
  options.integer("max_num_seqs", max_num_seqs, 1, 4096);
  options.integer("max_step_tokens", max_step_tokens, 1, 1 << 16);
  options.integer("max_model_len", max_model_len, 2, 1 << 20);
  options.boolean("chunked_prefill", chunked_prefill);
  options.boolean("prefix_caching", prefix_caching);
  options.boolean("static_batching", static_batching);
  options.boolean("optional", optional);
  options.integer("num_speculative_tokens", num_speculative_tokens, 0, 16);
  options.integer("prompt_lookup_min", prompt_lookup_min, 1, 64);
  options.integer("prompt_lookup_max", prompt_lookup_max, 1, 64);
  options.integer("speculative_max_running", speculative_max_running, 1, 4096);
  if (auto s = options.finish(); !s.ok()) return s;
  if (prompt_lookup_min > prompt_lookup_max) {
    return Status::invalid(where + ".prompt_lookup_min: must not exceed prompt_lookup_max (" +
                           std::to_string(prompt_lookup_max) + ")");
  }
  if (precision != "auto" && precision != "int8" && precision != "int4" && precision != "fp32") {
    return Status::invalid(where + ".precision: expected \"auto\", \"int8\", \"int4\" or \"fp32\", got \"" +
                           precision + "\"");
  }
  if (on_cuda && precision != "auto" && precision != "int8") {
    return Status::invalid(where + ".precision: \"" + precision +
                           "\" runs on the CPU only; on CUDA the model is INT8 (\"auto\" or "
                           "\"int8\")");
  }
  if (!activations.empty()) {
    if (activations != "int8" && activations != "int16") {
      return Status::invalid(where + ".activations: expected \"int8\" or \"int16\", got \"" + activations + "\"");
    }
    if (on_cuda && activations == "int16") {
      return Status::invalid(where + ".activations: \"int16\" runs on the CPU only; on CUDA the activations are INT8");
    }
    if (precision == "fp32" && activations == "int16") {  // "int8", the default, is harmless
      return Status::invalid(where + ".activations: applies to \"int8\" and \"int4\" weights; \"fp32\" "
                             "multiplies FP32 activations");
    }
  }
  if (on_cuda) precision = "int8";
  std::string precision_note;
  if (config.weights.empty()) return Status::invalid(where + ".weights: missing (a GGUF file)");
  const std::filesystem::path path = config.weights;  // the config loader resolved it
  if (optional && !std::filesystem::exists(path)) {
    spdlog::warn("{}: {} is not installed; the model is not served", where, path.string());
    return {};
  }
  GgufFile file;
  if (auto s = GgufFile::open(path, file); !s.ok())
    return Status::invalid(where + ".weights: " + s.message());
  BpeVocabulary vocabulary;
  if (auto s = load_bpe_vocabulary(file, vocabulary); !s.ok())
    return Status::invalid(where + ": " + s.message());
  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer;
  if (auto s = ByteLevelBpeTokenizer::create(std::move(vocabulary), tokenizer); !s.ok()) {
    return Status::invalid(where + ": tokenizer: " + s.message());
  }
  // Chat requests are rendered as ChatML; a model whose template is something else is refused
  // rather than prompted in a format it was not trained on.
  std::string chat_template;
  (void)file.get("tokenizer.chat_template", chat_template);
  std::string system_prompt;
  if (!chat_template.empty()) {
    if (chat_template.find("<|im_start|>") == std::string::npos) {
      return Status::invalid(
          where + ": the model's chat template is not ChatML (the only format supported)");
    }
    // The default system message, as the template writes it: a newline after the role, in
    // the template's text either as the character or as Jinja's escape "\\n".
    const std::string marker = "<|im_start|>system";
    if (auto at = chat_template.find(marker); at != std::string::npos) {
      auto begin = at + marker.size();
      if (chat_template.compare(begin, 1, "\n") == 0) {
        begin += 1;
      } else if (chat_template.compare(begin, 2, "\\n") == 0) {
        begin += 2;
      }
      if (auto end = chat_template.find("<|im_end|>", begin); end != std::string::npos) {
        system_prompt = chat_template.substr(begin, end - begin);
      }
    }
  }
  DecoderSpec shape;
  if (auto s = DecoderSpec::from_gguf(file, shape); !s.ok())
    return Status::invalid(where + ": " + s.message());
  EngineConfig engine;
  engine.scheduler.max_num_seqs = static_cast<std::int32_t>(max_num_seqs);
  engine.scheduler.max_step_tokens = static_cast<std::int32_t>(max_step_tokens);
  engine.scheduler.max_model_len = static_cast<std::int32_t>(max_model_len);
  engine.scheduler.chunked_prefill = chunked_prefill;
  engine.scheduler.priority_scheduling = config.priority_levels > 1;
  engine.scheduler.static_batching = static_batching;
  engine.scheduler.speculative = {static_cast<std::int32_t>(num_speculative_tokens),
                                  static_cast<std::int32_t>(prompt_lookup_min),
                                  static_cast<std::int32_t>(prompt_lookup_max),
                                  static_cast<std::int32_t>(speculative_max_running)};
  engine.max_waiting =
      static_cast<std::int32_t>(std::min<std::size_t>(config.max_queue_size, 1 << 20));
  engine.prefix_caching = prefix_caching;
  engine.default_system_prompt = system_prompt;
  auto shared_tokenizer = std::shared_ptr<const ByteLevelBpeTokenizer>(std::move(tokenizer));
  const std::size_t block_bytes =
      LlamaModel::kv_block_bytes(shape, static_cast<int>(block_size));

#ifdef COINFER_HAVE_CUDA
  if (on_cuda) {
    CudaLlamaOptions device;
    device.device = cuda_device;
    device.model.kv_blocks = kv_cache_mib == 0
                                 ? 0
                                 : static_cast<int>(std::max<std::size_t>(
                                       1, (static_cast<std::size_t>(kv_cache_mib) << 20) / block_bytes));
    device.model.memory_fraction = gpu_memory_utilization;
    device.model.block_size = static_cast<int>(block_size);
    device.model.max_step_tokens = static_cast<int>(max_step_tokens);
    device.model.max_rows = static_cast<int>(max_num_seqs);
    device.graphs = !enforce_eager;
    std::unique_ptr<CudaLlamaRunner> runner;
    if (auto s = CudaLlamaRunner::load(file, device, runner); !s.ok())
      return Status(s.code(), where + ": " + config.device + ": " + s.message());
    const cuda::Int8Llama& m = runner->model();
    spdlog::info(
        "{}: {} {} layers, hidden {}, {} heads ({} KV), vocab {} on {}: INT8 weights {} MiB, {} "
        "KV blocks of {} tokens ({} MiB{}), {}",
        where, shape.architecture, shape.layers, shape.hidden, shape.heads, shape.kv_heads,
        shape.vocab, config.device, m.weight_bytes() >> 20, m.kv_blocks(), block_size,
        m.kv_bytes() >> 20,
        kv_cache_mib == 0 ? ", from gpu_memory_utilization " + std::to_string(gpu_memory_utilization)
                          : std::string(),
        enforce_eager ? "eager steps" : "decode steps from CUDA graphs");
    out = std::make_unique<Engine>(std::move(runner), std::move(shared_tokenizer),
                                   std::move(engine));
    return {};
  }
#endif
  LlamaOptions model_options;
  // "auto": the file's own weights as they are (Q4_0/Q4_1 layers: int4, else int8 in Q8_0
  // blocks), as llama.cpp runs a GGUF's quantization; both are as fast as each other's bytes
  // allow on every CPU (docs/LLM.md, "Precision").
  if (precision == "auto") {
    model_options.precision = file_precision(file);
    precision = model_options.precision == LlamaPrecision::int4 ? "int4" : "int8";
    precision_note = " (auto: the file's " + std::string(precision == "int4" ? "4-bit" : "8-bit or wider") + " weights)";
  } else {
    model_options.precision = precision == "fp32"   ? LlamaPrecision::fp32
                              : precision == "int4" ? LlamaPrecision::int4
                                                    : LlamaPrecision::int8;
  }
  model_options.activations = activations == "int16" ? BlockActivations::int16 : BlockActivations::int8;
  if (model_options.precision != LlamaPrecision::fp32) {
    precision_note += std::string(", ") + to_string(model_options.activations) + " activations";
  }
  model_options.block_size = static_cast<int>(block_size);
  model_options.max_step_tokens = static_cast<int>(max_step_tokens);
  model_options.kv_blocks = static_cast<int>(
      std::max<std::size_t>(1, (static_cast<std::size_t>(kv_cache_mib) << 20) / block_bytes));
  std::unique_ptr<LlamaModel> model;
  if (auto s = LlamaModel::load(std::move(file), model_options, model); !s.ok()) {
    return Status::invalid(where + ": " + s.message());
  }
  // Weights on 2 MiB pages where the kernel's transparent huge pages allow (PageArena): where
  // it gives none, the log says so (THP "never", or no free 2 MiB pages).
  const LlamaModel::WeightMemory memory = model->weight_memory();
  if (memory.bytes > 0) {
    precision_note += ", weights " + std::to_string(memory.bytes >> 20) + " MiB (" +
                      std::to_string(memory.huge >> 20) + " MiB on 2 MiB pages)";
  }
  spdlog::info(
      "{}: {} {} layers, hidden {}, {} heads ({} KV), vocab {}, RoPE {} theta {}{}{}, {} KV "
      "blocks of {} tokens ({} MiB), {}{}",
      where, shape.architecture, shape.layers, shape.hidden, shape.heads, shape.kv_heads,
      shape.vocab, shape.rope == DecoderSpec::Rope::neox ? "neox" : "normal", shape.rope_theta,
      shape.attention_bias ? ", QKV biases" : "", shape.tied_output ? ", tied head" : "",
      model_options.kv_blocks, block_size, model_options.kv_blocks * block_bytes >> 20, precision, precision_note);
  out = std::make_unique<Engine>(
      std::make_unique<LlamaCpuRunner>(std::move(model), compute_threads),
      std::move(shared_tokenizer), std::move(engine));
  return {};
}

std::span<const GeneratorKind> generator_kinds() noexcept {
  static const GeneratorKind kinds[] = {
      {"llm",
       [](const ModelConfig& config, int compute_threads, std::unique_ptr<Generator>& out) {
         std::unique_ptr<Engine> engine;
         Status status = make_generator(config, compute_threads, engine);
         out = std::move(engine);
         return status;
       }},
  };
  return kinds;
}

}  // namespace coinfer::generation
