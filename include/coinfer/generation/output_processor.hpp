#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "coinfer/generation/sequence.hpp"

namespace coinfer {
class ByteLevelBpeTokenizer;
}  // namespace coinfer

namespace coinfer::generation {

// Turns sampled tokens into what the requester sees (vLLM's output processor): incremental
// detokenization that holds back a partial UTF-8 character and any suffix that could begin a
// stop string; stop strings (searched across updates; the text ends before the match), stop
// token ids and the end-of-sequence tokens (after min_tokens); the length limits; logprobs;
// the final update with its finish reason and usage; and the per-token and per-request
// metrics. Never sees a device or a block. Engine thread only.
class OutputProcessor {
 public:
  // `max_model_len` ends a sequence with `length` when prompt + output reach it.
  OutputProcessor(const ByteLevelBpeTokenizer& tokenizer, std::int32_t max_model_len,
                  GenerationMetrics& metrics);

  // Appends a sampled token to `seq`: its text and logprobs join the pending update, and a stop
  // condition or a length limit finishes the sequence.
  void append(Sequence& seq, const SampleResult& sample);

  // Finishes `seq`: held text that is complete by now, the finish reason, the error (reason
  // error or timeout) and usage go into the pending update, which becomes the final one; the
  // request's metrics are recorded. Sets seq.finish.
  void finish(Sequence& seq, FinishReason reason, Status error = {});

  // Pushes the pending update to the requester, if it has anything: the engine calls it once
  // a step's decisions are done (a finished sequence's blocks freed), so that what a requester
  // sees is settled.
  void flush(Sequence& seq);

 private:
  void release_text(Sequence& seq);

  const ByteLevelBpeTokenizer& tokenizer_;
  std::int32_t max_model_len_;
  GenerationMetrics& metrics_;
  // The ids that end a generation unless ignore_eos: the vocabulary's end-of-sequence token and
  // the other end markers it has ("<|endoftext|>", "<|im_end|>", "<|eot_id|>", ...).
  std::vector<std::int32_t> end_ids_;
};

}  // namespace coinfer::generation
