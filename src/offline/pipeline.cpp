#include "coinfer/offline/pipeline.hpp"

#include "coinfer/generation/generator.hpp"
#include "coinfer/tokenizers/bpe.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <unordered_set>

namespace coinfer::offline {
namespace {

using Clock = std::chrono::steady_clock;
using ChunkPtr = std::unique_ptr<ChunkWork>;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A queue between two stages. It needs no bound of its own: the reader takes a ticket per
// chunk (max_chunks_in_flight) that the writer gives back, which bounds every queue at once.
class Channel {
 public:
  void push(ChunkPtr chunk) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;  // the job failed; the chunk is dropped
      queue_.push_back(std::move(chunk));
    }
    cv_.notify_one();
  }
  // Null once closed and drained.
  ChunkPtr pop() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return nullptr;
    ChunkPtr chunk = std::move(queue_.front());
    queue_.pop_front();
    return chunk;
  }
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<ChunkPtr> queue_;
  bool closed_ = false;
};

// Busy time of a stage, added to by its threads.
struct BusyClock {
  std::atomic<std::int64_t> ns{0};
  void add(Clock::time_point start) {
    ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }
  double seconds() const { return static_cast<double>(ns.load()) * 1e-9; }
};

class Job {
 public:
  Job(RowSource& source, const JobModel& model, ResultSink& sink, const JobOptions& options)
      : source_(source),
        model_(model),
        sink_(sink),
        options_(options),
        metadata_(model.generator ? generation_metadata(model.name) : model.model->metadata()) {}

  Status run(JobSummary& summary,
             const std::function<void(const JobProgress&, double)>& on_progress, double interval) {
    const Clock::time_point started = Clock::now();
    if (auto status = prepare(); !status.ok()) return status;
    std::vector<std::int64_t> done;
    const JobIdentity identity{options_.description, options_.chunk_rows, options_.shard, options_.shards};
    if (auto status = sink_.open(identity, metadata_, options_.resume, done, summary.earlier);
        !status.ok())
      return status;
    done_.insert(done.begin(), done.end());
    expected_rows();
    summary.started = true;

    std::thread reader([this] { read(); });
    std::vector<std::thread> workers;
    workers_left_ = options_.workers;
    for (int i = 0; i < options_.workers; ++i) workers.emplace_back([this] { preprocess_loop(); });
    std::thread computer([this] { compute_loop(); });
    std::thread writer([this, &summary] { write_loop(summary); });
    std::thread monitor;
    if (on_progress) {
      monitor = std::thread([&] {
        std::unique_lock lock(mutex_);
        while (!finished_) {
          cv_.wait_for(lock, std::chrono::duration<double>(interval), [&] { return finished_; });
          if (finished_) break;
          lock.unlock();
          on_progress(progress(), seconds_since(started));
          lock.lock();
        }
      });
    }
    reader.join();
    for (auto& w : workers) w.join();
    computer.join();
    writer.join();
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    cv_.notify_all();
    if (monitor.joinable()) monitor.join();
    if (on_progress) on_progress(progress(), seconds_since(started));

    summary.wall_s = seconds_since(started);
    summary.read = {"read", 1, read_busy_.seconds()};
    summary.preprocess = {"preprocess", options_.workers, preprocess_busy_.seconds()};
    summary.compute = {"compute", 1, compute_busy_.seconds()};
    summary.write = {"write", 1, write_busy_.seconds()};
    summary.compute_starved_s = compute_starved_.seconds();
    std::lock_guard lock(mutex_);
    if (!error_.ok()) return error_;
    const std::int64_t seen = summary.rows + summary.earlier.rows;
    const std::int64_t errors = summary.errors + summary.earlier.errors;
    if (seen > 0 && options_.max_error_rate < 1.0 &&
        static_cast<double>(errors) > options_.max_error_rate * static_cast<double>(seen))
      return error_rate_status(errors, seen, summary.first_error);
    return sink_.finish();
  }

 private:
  Status prepare() {
    const ModelMetadata& md = metadata_;
    decode_ = options_.decode;
    if (model_.generator) {
      decode_.kind = InputKind::text;
      return make_decoders();
    }
    if (md.inputs.size() != 1)
      return Status::invalid("model '" + md.name + "' takes " + std::to_string(md.inputs.size()) +
                             " inputs; coinfer-batch runs models with one input (numbers or text)");
    if (md.max_batch_size < 1)
      return Status::invalid("model '" + md.name + "' does not batch (max_batch_size 0)");
    batch_size_ = options_.batch_size > 0 ? std::min(options_.batch_size, md.max_batch_size) : md.max_batch_size;
    const TensorSpec& input = md.inputs[0];
    if (model_.text) {
      decode_.kind = InputKind::text;
      max_tokens_ = options_.max_batch_tokens > 0 && md.max_batch_tokens > 0
                        ? std::min(options_.max_batch_tokens, md.max_batch_tokens)
                        : md.max_batch_tokens;
      if (max_tokens_ <= 0) max_tokens_ = std::numeric_limits<std::int64_t>::max();
      if (model_.text->max_input_tokens > max_tokens_)
        return Status::invalid("max_input_tokens " + std::to_string(model_.text->max_input_tokens) +
                               " exceeds the batch's token budget " + std::to_string(max_tokens_));
    } else {
      if (input.dtype != DType::FP32 || input.shape.size() != 2 || input.shape[1] <= 0)
        return Status::invalid("model '" + md.name + "' input '" + input.name + "' is " +
                               std::string(to_string(input.dtype)) + " " + to_string(input.shape) +
                               "; coinfer-batch feeds FP32 [-1, width] inputs or text");
      decode_.kind = InputKind::numbers;
      decode_.width = input.shape[1];
    }
    for (const auto& output : md.outputs) {
      for (std::size_t i = 1; i < output.shape.size(); ++i)
        if (output.shape[i] < 0)
          return Status::invalid("model '" + md.name + "' output '" + output.name +
                                 "' has a variable shape " + to_string(output.shape));
    }
    return make_decoders();
  }

  Status make_decoders() {
    // One decoder per worker; checks the options against the source first.
    for (int i = 0; i < options_.workers; ++i) {
      std::unique_ptr<RowDecoder> decoder;
      if (auto status = make_decoder(source_, decode_, decoder); !status.ok()) return status;
      decoders_.push_back(std::move(decoder));
    }
    max_in_flight_ = options_.max_chunks_in_flight > 0
                         ? options_.max_chunks_in_flight
                         : static_cast<std::size_t>(2 * options_.workers + 4);
    return {};
  }

  bool mine(std::int64_t chunk) const noexcept { return chunk % options_.shards == options_.shard; }

  void expected_rows() {
    const std::int64_t total = source_.total_rows();
    if (total < 0) return;
    std::int64_t rows = 0;
    for (std::int64_t k = 0; k * options_.chunk_rows < total; ++k)
      if (mine(k) && !done_.count(k)) rows += std::min(options_.chunk_rows, total - k * options_.chunk_rows);
    rows_expected_ = rows;
  }

  JobProgress progress() const {
    JobProgress p;
    p.rows_done = rows_done_.load();
    p.rows_expected = rows_expected_;
    // The source's share read runs ahead of the rows written by the chunks in flight: scaled
    // by the share of the rows read so far that are written.
    const double read = source_.fraction_read();
    const std::int64_t emitted = rows_emitted_.load();
    p.fraction_read = read < 0 || emitted == 0 ? read : read * static_cast<double>(p.rows_done) / static_cast<double>(emitted);
    return p;
  }

  void fail(Status status) {
    {
      std::lock_guard lock(mutex_);
      if (error_.ok()) error_ = std::move(status);
      stop_ = true;
    }
    cv_.notify_all();
    prepared_.close();
    computed_.close();
    to_write_.close();
  }

  bool stopped() {
    std::lock_guard lock(mutex_);
    return stop_;
  }

  // ---- read: one thread, in input order -------------------------------------------------
  void read() {
    std::pmr::memory_resource* staging =
        model_.executor ? model_.executor->staging_memory() : std::pmr::new_delete_resource();
    std::int64_t emitted = 0;
    bool end = false;
    for (std::int64_t chunk = 0; !end; ++chunk) {
      if (!mine(chunk) || done_.count(chunk)) {
        const auto t0 = Clock::now();
        Status status = source_.skip(options_.chunk_rows, end);
        read_busy_.add(t0);
        if (!status.ok()) {
          fail(std::move(status));
          break;
        }
        continue;
      }
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return in_flight_ < max_in_flight_ || stop_; });
        if (stop_) break;
        ++in_flight_;
      }
      const auto t0 = Clock::now();
      auto work = std::make_unique<ChunkWork>(staging);
      work->chunk = chunk;
      work->first_row = chunk * options_.chunk_rows;
      work->emitted = emitted;
      work->ends.reserve(static_cast<std::size_t>(options_.chunk_rows));
      Status status;
      for (std::int64_t r = 0; r < options_.chunk_rows; ++r) {
        status = source_.next(work->bytes, end);
        if (!status.ok() || end) break;
        if (work->bytes.size() > std::numeric_limits<std::uint32_t>::max() / 2) {
          status = Status::invalid("rows " + std::to_string(work->first_row) + ".." +
                                   std::to_string(work->first_row + r) +
                                   ": over 2 GiB in one chunk (lower --chunk-rows)");
          break;
        }
        work->ends.push_back(static_cast<std::uint32_t>(work->bytes.size()));
      }
      work->rows = static_cast<std::int64_t>(work->ends.size());
      read_busy_.add(t0);
      if (!status.ok()) {
        fail(std::move(status));
        break;
      }
      if (work->rows == 0) {
        std::lock_guard lock(mutex_);
        --in_flight_;
        break;
      }
      ++emitted;
      rows_emitted_ += work->rows;
      prepared_.push(std::move(work));
    }
    prepared_.close();
  }

  // ---- preprocess: decode and tokenize, on `workers` threads ----------------------------
  void preprocess_loop() {
    std::unique_ptr<RowDecoder> decoder;
    {
      std::lock_guard lock(mutex_);
      decoder = std::move(decoders_.back());
      decoders_.pop_back();
    }
    std::vector<std::int32_t> tokens;
    std::vector<std::int64_t> lengths;
    while (ChunkPtr work = prepared_.pop()) {
      const auto t0 = Clock::now();
      take_input_buffer(work->input);
      if (model_.generator) preprocess_prompts(*work, *decoder);
      else if (decode_.kind == InputKind::numbers) preprocess_numbers(*work, *decoder);
      else preprocess_text(*work, *decoder, tokens, lengths);
      work->bytes = std::string();  // the records are no longer needed
      work->ends = {};
      preprocess_busy_.add(t0);
      computed_.push(std::move(work));
    }
    if (--workers_left_ == 0) computed_.close();
  }

  // Input buffers are reused from chunk to chunk (at most one per chunk in flight), so a run
  // allocates them once: on CUDA they are page-locked, and pinning memory is slow.
  void take_input_buffer(std::pmr::vector<std::byte>& out) {
    std::lock_guard lock(buffers_mutex_);
    if (buffers_.empty()) return;
    out = std::move(buffers_.back());
    buffers_.pop_back();
    out.clear();
  }
  void give_back_input_buffer(std::pmr::vector<std::byte>& buffer) {
    std::lock_guard lock(buffers_mutex_);
    buffers_.push_back(std::move(buffer));
    buffer = std::pmr::vector<std::byte>(buffers_.back().get_allocator());
  }

  void dead_letter(ChunkWork& w, std::int64_t index, const DecodedRow& row, std::string reason) {
    DeadLetter d{index, {}, std::move(reason)};
    append_id_json(d.id, row, index);
    w.dead.push_back(std::move(d));
  }

  void add_good(ChunkWork& w, std::int64_t index, const DecodedRow& row) {
    w.good_rows.push_back(index);
    append_id_json(w.ids, row, index);
    w.id_ends.push_back(static_cast<std::uint32_t>(w.ids.size()));
  }

  void preprocess_numbers(ChunkWork& w, RowDecoder& decoder) {
    const auto width = static_cast<std::size_t>(decode_.width);
    w.input.resize(static_cast<std::size_t>(w.rows) * width * sizeof(float));
    auto* values = reinterpret_cast<float*>(w.input.data());
    std::size_t good = 0;
    for (std::size_t r = 0; r < static_cast<std::size_t>(w.rows); ++r) {
      const std::int64_t index = w.first_row + static_cast<std::int64_t>(r);
      DecodedRow row;
      Status status = decoder.decode(w.record(r), {values + good * width, width}, row);
      if (!status.ok()) {
        dead_letter(w, index, row, status.message());
        continue;
      }
      add_good(w, index, row);
      ++good;
    }
    w.input.resize(good * width * sizeof(float));
    for (std::size_t b = 0; b < good; b += static_cast<std::size_t>(batch_size_))
      w.batches.push_back({static_cast<std::int32_t>(b),
                           static_cast<std::int32_t>(std::min(good, b + static_cast<std::size_t>(batch_size_))),
                           0, 0});
  }

  void preprocess_text(ChunkWork& w, RowDecoder& decoder, std::vector<std::int32_t>& tokens,
                       std::vector<std::int64_t>& lengths) {
    const TextInput& text = *model_.text;
    const auto max_tokens = static_cast<std::size_t>(text.max_input_tokens);
    tokens.clear();
    lengths.clear();
    for (std::size_t r = 0; r < static_cast<std::size_t>(w.rows); ++r) {
      const std::int64_t index = w.first_row + static_cast<std::int64_t>(r);
      DecodedRow row;
      Status status = decoder.decode(w.record(r), {}, row);
      if (status.ok() && row.text.empty()) status = Status::invalid("empty text");
      const std::size_t before = tokens.size();
      if (status.ok()) {
        status = text.tokenizer->encode(row.text, tokens, text.truncate ? max_tokens : max_tokens + 1);
        if (status.ok() && tokens.size() - before > max_tokens)
          status = Status::invalid("more than max_input_tokens " + std::to_string(max_tokens) +
                                   " tokens (set truncate = true in the model's config to cut)");
      }
      if (!status.ok()) {
        tokens.resize(before);
        dead_letter(w, index, row, status.message());
        continue;
      }
      add_good(w, index, row);
      lengths.push_back(static_cast<std::int64_t>(tokens.size() - before));
    }
    // Length bucketing: rows sorted by token count, so a batch holds similar lengths.
    const std::size_t good = lengths.size();
    std::vector<std::int64_t> starts(good + 1, 0);
    for (std::size_t i = 0; i < good; ++i) starts[i + 1] = starts[i] + lengths[i];
    w.order.resize(good);
    std::iota(w.order.begin(), w.order.end(), 0);
    std::stable_sort(w.order.begin(), w.order.end(),
                     [&](std::int32_t a, std::int32_t b) { return lengths[static_cast<std::size_t>(a)] < lengths[static_cast<std::size_t>(b)]; });
    w.input.resize(static_cast<std::size_t>(starts[good]) * sizeof(std::int32_t));
    auto* packed = reinterpret_cast<std::int32_t*>(w.input.data());
    std::int64_t at = 0;
    std::size_t i = 0;
    while (i < good) {
      ChunkWork::BatchSpan span{static_cast<std::int32_t>(i), 0, at, w.offsets.size()};
      std::int64_t batch_tokens = 0;
      w.offsets.push_back(0);
      while (i < good && static_cast<int>(i - static_cast<std::size_t>(span.begin)) < batch_size_) {
        const auto row = static_cast<std::size_t>(w.order[i]);
        if (batch_tokens + lengths[row] > max_tokens_ && i > static_cast<std::size_t>(span.begin)) break;
        std::memcpy(packed + at, tokens.data() + starts[row], static_cast<std::size_t>(lengths[row]) * 4);
        at += lengths[row];
        batch_tokens += lengths[row];
        w.offsets.push_back(batch_tokens);
        ++i;
      }
      span.end = static_cast<std::int32_t>(i);
      w.batches.push_back(span);
    }
  }

  // A language model's rows: the text as a prompt (or a user message in the chat template).
  void preprocess_prompts(ChunkWork& w, RowDecoder& decoder) {
    for (std::size_t r = 0; r < static_cast<std::size_t>(w.rows); ++r) {
      const std::int64_t index = w.first_row + static_cast<std::int64_t>(r);
      DecodedRow row;
      Status status = decoder.decode(w.record(r), {}, row);
      if (status.ok() && row.text.empty()) status = Status::invalid("empty text");
      GenerationCall call;
      if (status.ok()) status = prepare_row(*model_.generator, row.text, model_.generation, call);
      if (!status.ok()) {
        dead_letter(w, index, row, status.message());
        continue;
      }
      add_good(w, index, row);
      w.prompts.push_back(std::move(call));
    }
  }

  void compute_generation(ChunkWork& w) {
    std::vector<GeneratedText> results;
    generate_all(*model_.generator, w.prompts, model_.generation, results);
    const std::size_t good = w.good_rows.size();
    w.strings.assign(metadata_.outputs.size(), {});
    w.strings[0].resize(good);
    w.strings[1].resize(good);
    w.outputs.resize(metadata_.outputs.size());
    w.outputs[2].resize(DType::Int64, Shape{static_cast<std::int64_t>(good)});
    w.failed.assign(good, 0);
    for (std::size_t g = 0; g < good; ++g) {
      GeneratedText& r = results[g];
      if (!r.error.ok()) {
        w.failed[g] = 1;
        w.dead.push_back({w.good_rows[g], std::string(w.id(g)), "generation: " + r.error.message()});
        continue;
      }
      w.strings[0][g] = std::move(r.text);
      w.strings[1][g] = std::move(r.finish);
      w.outputs[2].values<std::int64_t>()[g] = r.completion_tokens;
    }
    w.prompts = {};
  }

  // ---- compute: chunks in turn, a model's batches on its executor or a language model's
  // prompts through its engine -------------------------------------------------------------
  void compute_loop() {
    if (!model_.generator) {
      // The lanes' state lives in the Job (it outlives every batch submitted to the
      // executor), and is only touched under lane_mutex_, the executor's notification included.
      const int lanes = std::max(1, model_.executor->concurrency());
      lane_outputs_.assign(static_cast<std::size_t>(lanes), std::vector<Tensor>(metadata_.outputs.size()));
      free_lanes_.resize(static_cast<std::size_t>(lanes));
      std::iota(free_lanes_.begin(), free_lanes_.end(), 0);
    }
    while (true) {
      const auto wait_start = Clock::now();
      ChunkPtr work = computed_.pop();
      compute_starved_.add(wait_start);
      if (!work) break;
      const auto t0 = Clock::now();
      if (model_.generator) {
        compute_generation(*work);
      } else {
        compute_batches(*work);
      }
      compute_busy_.add(t0);
      to_write_.push(std::move(work));
    }
    to_write_.close();
  }

  // A chunk's batches, up to the executor's concurrency at once; returns when all have run.
  void compute_batches(ChunkWork& w) {
    const ModelMetadata& md = metadata_;
    const std::size_t good = w.good_rows.size();
    w.outputs.resize(md.outputs.size());
    for (std::size_t o = 0; o < md.outputs.size(); ++o) {
      Shape shape = md.outputs[o].shape;
      shape[0] = static_cast<std::int64_t>(good);
      w.outputs[o].resize(md.outputs[o].dtype, std::move(shape));
    }
    w.failed.assign(good, 0);
    for (const auto& span : w.batches) {
      int lane;
      {
        std::unique_lock lock(lane_mutex_);
        lane_cv_.wait(lock, [&] { return !free_lanes_.empty(); });
        lane = free_lanes_.back();
        free_lanes_.pop_back();
        ++pending_;
      }
      model_.executor->submit([this, &w, lane, span] {
        run_batch(w, span, lane_outputs_[static_cast<std::size_t>(lane)]);
        std::lock_guard lock(lane_mutex_);
        free_lanes_.push_back(lane);
        --pending_;
        lane_cv_.notify_all();
      });
    }
    {
      std::unique_lock lock(lane_mutex_);
      lane_cv_.wait(lock, [&] { return pending_ == 0; });
    }
    give_back_input_buffer(w.input);
  }

  void run_batch(ChunkWork& w, const ChunkWork::BatchSpan& span, std::vector<Tensor>& outputs) {
    const int rows = span.end - span.begin;
    ConstTensorView view;
    std::span<const std::int64_t> offsets;
    if (decode_.kind == InputKind::numbers) {
      const auto width = decode_.width;
      view = {DType::FP32, {rows, width},
              w.input.data() + static_cast<std::size_t>(span.begin) * static_cast<std::size_t>(width) * sizeof(float)};
    } else {
      offsets = {w.offsets.data() + span.offsets_at, static_cast<std::size_t>(rows) + 1};
      view = {DType::Int32, {offsets.back()},
              w.input.data() + static_cast<std::size_t>(span.token_begin) * sizeof(std::int32_t)};
    }
    const ConstTensorView inputs[] = {view};
    const Batch batch{rows, inputs, offsets, {}};
    auto position = [&](int i) -> std::size_t {
      const int k = span.begin + i;
      return static_cast<std::size_t>(w.order.empty() ? k : w.order[static_cast<std::size_t>(k)]);
    };
    Status status;
    try {
      status = model_.model->forward(batch, outputs);
    } catch (const std::exception& e) {  // a model that throws fails its batch, not the job
      status = Status(Errc::internal, std::string("exception: ") + e.what());
    }
    if (status.ok()) {
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        const std::size_t row_bytes = outputs[o].bytes().size() / static_cast<std::size_t>(rows);
        if (row_bytes * w.good_rows.size() != w.outputs[o].bytes().size()) {
          status = Status(Errc::internal, "output '" + metadata_.outputs[o].name +
                                              "' has an unexpected size");
          break;
        }
        for (int i = 0; i < rows; ++i)
          std::memcpy(w.outputs[o].bytes().data() + position(i) * row_bytes,
                      outputs[o].bytes().data() + static_cast<std::size_t>(i) * row_bytes, row_bytes);
      }
    }
    if (status.ok()) return;
    std::lock_guard lock(dead_mutex_);
    for (int i = 0; i < rows; ++i) {
      const std::size_t g = position(i);
      w.failed[g] = 1;
      w.dead.push_back({w.good_rows[g], std::string(w.id(g)), "inference: " + status.message()});
    }
  }

  // ---- write: commit chunks in reading order ---------------------------------------------
  void write_loop(JobSummary& summary) {
    std::map<std::int64_t, ChunkPtr> waiting;
    std::int64_t next = 0;
    while (ChunkPtr work = to_write_.pop()) {
      waiting.emplace(work->emitted, std::move(work));
      while (!waiting.empty() && waiting.begin()->first == next) {
        ChunkPtr w = std::move(waiting.begin()->second);
        waiting.erase(waiting.begin());
        ++next;
        std::sort(w->dead.begin(), w->dead.end(),
                  [](const DeadLetter& a, const DeadLetter& b) { return a.row < b.row; });
        const auto t0 = Clock::now();
        Status status = sink_.commit(*w);
        write_busy_.add(t0);
        if (!status.ok()) {
          fail(std::move(status));
          return;
        }
        const std::int64_t results = w->results();
        summary.rows += w->rows;
        summary.results += results;
        summary.errors += w->rows - results;
        summary.chunks += 1;
        if (summary.first_error.empty() && !w->dead.empty())
          summary.first_error = "row " + std::to_string(w->dead.front().row) + ": " + w->dead.front().reason;
        rows_done_ += w->rows;
        w.reset();
        {
          std::lock_guard lock(mutex_);
          --in_flight_;
        }
        cv_.notify_all();
        const std::int64_t seen = summary.rows + summary.earlier.rows;
        const std::int64_t errors = summary.errors + summary.earlier.errors;
        if (seen >= 1000 && options_.max_error_rate < 1.0 &&
            static_cast<double>(errors) > options_.max_error_rate * static_cast<double>(seen)) {
          fail(error_rate_status(errors, seen, summary.first_error));
          return;
        }
      }
    }
  }

  Status error_rate_status(std::int64_t errors, std::int64_t seen, const std::string& first) const {
    char share[64];
    std::snprintf(share, sizeof share, "%.2f%%", 100.0 * static_cast<double>(errors) / static_cast<double>(seen));
    char limit[64];
    std::snprintf(limit, sizeof limit, "%g%%", 100.0 * options_.max_error_rate);
    return Status::invalid("aborting: " + std::to_string(errors) + " of " + std::to_string(seen) +
                           " rows failed (" + share + "), above --max-error-rate " + limit +
                           (first.empty() ? "" : "; first: " + first) +
                           " (the dead-letter file lists each; committed chunks are kept, "
                           "--resume continues)");
  }

  RowSource& source_;
  const JobModel& model_;
  ResultSink& sink_;
  const JobOptions& options_;
  const ModelMetadata metadata_;
  DecodeOptions decode_;
  int batch_size_ = 1;
  std::int64_t max_tokens_ = 0;
  std::size_t max_in_flight_ = 0;
  std::unordered_set<std::int64_t> done_;
  std::vector<std::unique_ptr<RowDecoder>> decoders_;

  Channel prepared_, computed_, to_write_;
  // The compute stage's executor lanes (see compute_loop).
  std::vector<std::vector<Tensor>> lane_outputs_;  // each lane's output tensors, reused
  std::mutex lane_mutex_;
  std::condition_variable lane_cv_;
  std::vector<int> free_lanes_;
  int pending_ = 0;
  std::mutex dead_mutex_;  // a chunk's dead letters, appended by concurrent lanes
  std::mutex buffers_mutex_;
  std::vector<std::pmr::vector<std::byte>> buffers_;  // input buffers of computed chunks
  std::atomic<int> workers_left_{0};

  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t in_flight_ = 0;
  bool stop_ = false;
  bool finished_ = false;
  Status error_;

  std::atomic<std::int64_t> rows_done_{0};
  std::atomic<std::int64_t> rows_emitted_{0};  // rows the reader handed on
  std::int64_t rows_expected_ = -1;
  BusyClock read_busy_, preprocess_busy_, compute_busy_, write_busy_, compute_starved_;
};

}  // namespace

ModelMetadata generation_metadata(const std::string& name) {
  ModelMetadata md;
  md.name = name;
  md.inputs = {{"text", DType::Bytes, {-1}}};
  md.outputs = {{"text", DType::Bytes, {-1}},
                {"finish_reason", DType::Bytes, {-1}},
                {"completion_tokens", DType::Int64, {-1}}};
  return md;
}

const StageTime& JobSummary::bound() const noexcept {
  const StageTime* stages[] = {&read, &preprocess, &compute, &write};
  const StageTime* best = stages[0];
  for (const StageTime* s : stages)
    if (s->utilization(wall_s) > best->utilization(wall_s)) best = s;
  return *best;
}

Status run_job(RowSource& source, const JobModel& model, ResultSink& sink, const JobOptions& options,
               JobSummary& summary,
               const std::function<void(const JobProgress&, double elapsed_s)>& on_progress,
               double progress_interval_s) {
  if (!model.generator && (!model.model || !model.executor))
    return Status::invalid("run_job: no model or executor");
  if (options.chunk_rows < 1) return Status::invalid("--chunk-rows must be at least 1");
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards)
    return Status::invalid("--shard: expected i/N with 0 <= i < N");
  if (options.workers < 1) return Status::invalid("--workers must be at least 1");
  Job job(source, model, sink, options);
  return job.run(summary, on_progress, progress_interval_s);
}

}  // namespace coinfer::offline
