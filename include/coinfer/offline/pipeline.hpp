#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "coinfer/core/status.hpp"
#include "coinfer/models/model.hpp"
#include "coinfer/models/text_input.hpp"
#include "coinfer/offline/generation_stage.hpp"
#include "coinfer/offline/sinks.hpp"
#include "coinfer/offline/sources.hpp"
#include "coinfer/runtime/executor.hpp"

namespace coinfer::offline {

// The model a job runs and where: the same Model, Executor and text front as the server's,
// or a language model's engine.
struct JobModel {
  std::shared_ptr<Model> model;
  Executor* executor = nullptr;   // a CpuExecutor, or the model's own CudaExecutor
  std::optional<TextInput> text;  // set for models that take text
  // A language model instead (model null): each row's text is a prompt, its result the
  // greedy completion (outputs text, finish_reason, completion_tokens).
  GenerationEndpoint* generator = nullptr;
  GenerationOptions generation;
  std::string name;  // the language model's, for messages
};

// The outputs a language model's rows get.
ModelMetadata generation_metadata(const std::string& name);

struct JobOptions {
  DecodeOptions decode;      // kind and width are filled from the model by run_job
  std::int64_t chunk_rows = 8192;
  int shard = 0, shards = 1;  // this process handles chunks k with k % shards == shard
  int workers = 2;            // preprocess threads (decode, tokenize)
  int batch_size = 0;         // rows per forward; 0: the model's max_batch_size
  std::int64_t max_batch_tokens = 0;  // text: tokens per forward; 0: the model's
  std::size_t max_chunks_in_flight = 0;  // read, not yet written; 0: 2 * workers + 4
  // Abort when more than this share of the rows seen failed (checked from 1,000 rows on, and
  // at the end). 1: never.
  double max_error_rate = 1.0;
  bool resume = false;
  std::string description;  // the job's identity for resume (see JobIdentity)
};

// Where the time went, per stage: busy seconds (summed over a stage's threads) and the
// stage's utilization (busy / (threads * wall)); the busiest stage bounds the run.
struct StageTime {
  const char* name = "";
  int threads = 1;
  double busy_s = 0;
  double utilization(double wall_s) const noexcept {
    return wall_s > 0 ? busy_s / (threads * wall_s) : 0;
  }
};

// Counters the progress display reads while the job runs (updated by the writer).
struct JobProgress {
  std::int64_t rows_done = 0;       // rows this run committed
  std::int64_t rows_expected = -1;  // rows this run will handle, when known
  double fraction_read = -1;        // of the input done, from the source's bytes, when rows are not known
};

struct JobSummary {
  bool started = false;  // false: the options were refused before any row was read
  std::int64_t rows = 0, results = 0, errors = 0, chunks = 0;  // this run
  CommittedTotals earlier;  // committed by earlier runs (resume)
  double wall_s = 0;
  StageTime read{"read"}, preprocess{"preprocess"}, compute{"compute"}, write{"write"};
  double compute_starved_s = 0;  // compute waiting for prepared chunks
  std::string first_error;       // a sample dead letter reason
  const StageTime& bound() const noexcept;
};

// Runs a job: reader -> `workers` preprocess threads -> batches on the executor -> ordered
// writer, joined by queues and bounded by max_chunks_in_flight chunks, so memory does not
// grow with the input. While one chunk computes, the next ones are read and preprocessed
// (and, on a CUDA executor with two lanes, a batch's copy overlaps the previous batch).
// `on_progress` is called from a monitor thread about every `progress_interval_s`.
Status run_job(RowSource& source, const JobModel& model, ResultSink& sink, const JobOptions& options,
               JobSummary& summary,
               const std::function<void(const JobProgress&, double elapsed_s)>& on_progress = {},
               double progress_interval_s = 1.0);

}  // namespace coinfer::offline
