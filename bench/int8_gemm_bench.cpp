// INT8 GEMM benchmark at the digits MLP's shapes: how fast is oneDNN's u8 x s8 -> s32 GEMM
// alone, how much of that Int8Linear::forward keeps (quantize + GEMM + epilogue), and how
// close the whole Mlp::forward gets to the sum of its GEMMs ("the GEMM limit"); the FP32
// reference forward for comparison; and one big 1024^3 INT8 GEMM as this machine's ceiling.
//
//   coinfer-int8-gemm-bench [MODEL] [--threads N] [--reps R] [--min-ms T] [--split FILE]
//
// MODEL defaults to assets/digits_mlp/model.safetensors (relative to the working directory);
// the held-out split (for Mlp inputs and an accuracy check) to test_split.safetensors next to
// it. --threads sets oneDNN's compute threads (default 1, as coinfer-serve's compute thread);
// pin the process yourself for stable figures (taskset -c 0 ...).
//
// Method: every measured operation is warmed up, then timed in R repetitions (default 7) of
// enough back-to-back calls to last at least T ms (default 40); the figure is the median
// repetition's time per call. Each measurement also records its CPU share (process CPU time /
// wall time / threads): below 0.9 somewhere, the summary says the run was noisy. Output (stdout): one JSON line per measurement, a summary JSON
// line, then markdown tables. Nothing is asserted about speed.
//
// (a) "gemm": a oneDNN matmul created for the exact shape [M, K] x [K, N] (weights in the
//     layout oneDNN prefers, user-mode scratchpad, executed through the C API like
//     Int8Linear): the best oneDNN does at that shape. "gemm_rt": the same with a run-time
//     M (DNNL_RUNTIME_DIM_VAL), which is how Int8Linear creates its primitive once for every
//     batch size. TOPS = 2 M N K / time.
// (b) "quantize_u8": quantize_activations_per_row_u8 alone on [M, K] (Int8Linear's first step).
//     "int8_linear": Int8Linear::forward with the model's weights (quantize the FP32 rows,
//     GEMM, fused dequant + bias + ReLU epilogue).
// (c) "mlp": Mlp::forward (3 x Int8Linear, softmax, argmax) on held-out digits, in rows/s;
//     gemm_limit_fraction = (sum of the three layers' "gemm" times) / (Mlp time).
// (d) "fp32_reference": Mlp::forward_reference, the plain FP32 loops tests compare against.

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "coinfer/core/tensor.hpp"
#include "coinfer/models/mlp.hpp"
#include "coinfer/models/safetensors.hpp"
#include "coinfer/ops/compute_threads.hpp"
#include "coinfer/ops/int8_linear.hpp"
#include "coinfer/ops/quantize.hpp"
#include "onednn_gemm.hpp"

using namespace coinfer;
using coinfer::bench::OneDnnGemm;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::filesystem::path model = "assets/digits_mlp/model.safetensors";
  std::filesystem::path split;  // default: next to the model
  int threads = 1;
  int reps = 7;
  double min_ms = 40.0;
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "coinfer-int8-gemm-bench: error: %s\n", message.c_str());
  std::exit(1);
}

void usage() {
  std::fprintf(stderr,
               "usage: coinfer-int8-gemm-bench [MODEL] [--threads N] [--reps R] [--min-ms T] "
               "[--split FILE]\n"
               "  MODEL     digits MLP safetensors (default assets/digits_mlp/model.safetensors)\n"
               "  --threads oneDNN compute threads (default 1)\n"
               "  --reps    timed repetitions; the median is reported (default 7)\n"
               "  --min-ms  minimum length of one repetition in ms (default 40)\n"
               "  --split   held-out split (default test_split.safetensors next to MODEL)\n");
}

Options parse_args(int argc, char** argv) {
  Options o;
  bool have_model = false;
  auto number = [&](int& i, std::string_view flag) -> double {
    if (i + 1 >= argc) die(std::string(flag) + ": missing value");
    char* end = nullptr;
    const double v = std::strtod(argv[++i], &end);
    if (end == argv[i] || *end != '\0') die(std::string(flag) + ": not a number: " + argv[i]);
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      usage();
      std::exit(0);
    } else if (a == "--threads") {
      o.threads = static_cast<int>(number(i, a));
      if (o.threads < 1) die("--threads: must be >= 1");
    } else if (a == "--reps") {
      o.reps = static_cast<int>(number(i, a));
      if (o.reps < 1) die("--reps: must be >= 1");
    } else if (a == "--min-ms") {
      o.min_ms = number(i, a);
      if (!(o.min_ms > 0)) die("--min-ms: must be > 0");
    } else if (a == "--split") {
      if (i + 1 >= argc) die("--split: missing value");
      o.split = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      usage();
      die("unknown option " + std::string(a));
    } else if (!have_model) {
      o.model = a;
      have_model = true;
    } else {
      usage();
      die("unexpected argument " + std::string(a));
    }
  }
  if (o.split.empty()) o.split = o.model.parent_path() / "test_split.safetensors";
  return o;
}

// This process's CPU time (all threads), in seconds.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Interference check: the CPU time this process got during the timed repetitions, divided by
// wall time x compute threads. Pinned to a core and alone there, it is ~1.0; other processes
// sharing the core (this machine is shared) push it down. The lowest over the run is reported.
double g_last_cpu_share = 1.0;
double g_min_cpu_share = 1.0;

// Median time per call, in seconds: warm up, pick a call count that makes one repetition
// last at least min_ms, then time `reps` repetitions.
double time_per_call(const Options& o, const std::function<void()>& fn) {
  for (int i = 0; i < 3; ++i) fn();
  // Calibrate: double the count until a batch of calls takes >= min_ms / 4.
  std::int64_t calls = 1;
  for (;;) {
    const auto t0 = Clock::now();
    for (std::int64_t i = 0; i < calls; ++i) fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s * 1e3 >= o.min_ms / 4 || calls >= (std::int64_t{1} << 30)) {
      calls = std::max<std::int64_t>(1, static_cast<std::int64_t>(calls * (o.min_ms / 1e3) /
                                                                  std::max(s, 1e-9)));
      break;
    }
    calls *= 2;
  }
  for (std::int64_t i = 0; i < calls; ++i) fn();  // warm-up: one repetition's worth
  std::vector<double> per_call;
  const double cpu0 = process_cpu_seconds();
  const auto wall0 = Clock::now();
  for (int r = 0; r < o.reps; ++r) {
    const auto t0 = Clock::now();
    for (std::int64_t i = 0; i < calls; ++i) fn();
    per_call.push_back(std::chrono::duration<double>(Clock::now() - t0).count() /
                       static_cast<double>(calls));
  }
  const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();
  g_last_cpu_share = (process_cpu_seconds() - cpu0) / (wall * o.threads);
  g_min_cpu_share = std::min(g_min_cpu_share, g_last_cpu_share);
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

double tops(std::int64_t m, std::int64_t n, std::int64_t k, double seconds) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) /
         seconds / 1e12;
}

// JSON string escaping for the few strings we print (impl names, paths).
std::string json_str(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void check(const Status& s, const std::string& what) {
  if (!s) die(what + ": " + s.message());
}

void run_or_die(OneDnnGemm& gemm) {
  if (!gemm.run()) die("oneDNN matmul execute failed");
}

std::vector<float> floats_of(const SafetensorsTensor& t) {
  std::vector<float> v(t.data.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

struct Layer {
  std::string name;  // fc0, fc1, fc2
  int n = 0, k = 0;
  Activation activation = Activation::none;
  std::vector<float> weight, bias;
};

// Per (layer, M) figures, seconds per call.
struct LayerResult {
  double gemm = 0, gemm_rt = 0, quantize = 0, linear = 0;
  double cpu_share[4] = {1, 1, 1, 1};  // per measurement, same order
};

std::string date_now() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_args(argc, argv);
  set_compute_threads(opt.threads);

  constexpr int batch_sizes[] = {1, 8, 32, 64, 256};
  constexpr int max_m = 256;

  // --- the model's layers, from its weights file ------------------------------------------
  SafetensorsFile file;
  check(SafetensorsFile::open(opt.model, file), "loading " + opt.model.string());
  std::vector<Layer> layers;
  for (int i = 0;; ++i) {
    const std::string prefix = "fc" + std::to_string(i);
    const SafetensorsTensor* w = file.tensor(prefix + ".weight");
    const SafetensorsTensor* b = file.tensor(prefix + ".bias");
    if (w == nullptr) break;
    if (b == nullptr || w->dtype != SafetensorsDType::F32 || w->shape.size() != 2) {
      die(opt.model.string() + ": " + prefix + ": expected F32 weight [out, in] and bias");
    }
    layers.push_back({prefix, static_cast<int>(w->shape[0]), static_cast<int>(w->shape[1]),
                      Activation::relu, floats_of(*w), floats_of(*b)});
  }
  if (layers.empty()) die(opt.model.string() + ": no fc0.weight");
  layers.back().activation = Activation::none;

  std::unique_ptr<Mlp> mlp;
  check(Mlp::load(opt.model, "digits", "1", max_m, mlp, /*keep_fp32_reference=*/true),
        "Mlp::load");

  // --- held-out digits: inputs for the Mlp, and an accuracy check -------------------------
  SafetensorsFile split_file;
  check(SafetensorsFile::open(opt.split, split_file), "loading " + opt.split.string());
  const SafetensorsTensor* sx = split_file.tensor("x");
  const SafetensorsTensor* sy = split_file.tensor("y");
  if (sx == nullptr || sy == nullptr || sx->dtype != SafetensorsDType::F32 ||
      sx->shape.size() != 2 || sx->shape[1] != mlp->in_features() ||
      sy->dtype != SafetensorsDType::I64) {
    die(opt.split.string() + ": expected x F32 [n, " + std::to_string(mlp->in_features()) +
        "] and y I64 [n]");
  }
  const auto split_rows = static_cast<int>(sx->shape[0]);
  const int in_features = mlp->in_features();
  std::vector<float> split_x = floats_of(*sx);
  std::vector<std::int64_t> split_y(static_cast<std::size_t>(split_rows));
  std::memcpy(split_y.data(), sy->data.data(), split_y.size() * sizeof(std::int64_t));

  int correct = 0, agree = 0;
  {
    std::vector<Tensor> outputs(2);
    Tensor ref_p, ref_l;
    for (int begin = 0; begin < split_rows; begin += max_m) {
      const int rows = std::min(max_m, split_rows - begin);
      const ConstTensorView x{DType::FP32, {rows, in_features},
                              reinterpret_cast<const std::byte*>(
                                  split_x.data() + static_cast<std::size_t>(begin) * in_features)};
      check(mlp->forward(Batch::dense({&x, 1}), outputs), "Mlp::forward");
      check(mlp->forward_reference(x, ref_p, ref_l), "Mlp::forward_reference");
      const auto labels = outputs[1].values<std::int64_t>();
      const auto ref_labels = ref_l.values<std::int64_t>();
      for (int r = 0; r < rows; ++r) {
        correct += labels[static_cast<std::size_t>(r)] == split_y[static_cast<std::size_t>(begin + r)];
        agree += labels[static_cast<std::size_t>(r)] == ref_labels[static_cast<std::size_t>(r)];
      }
    }
  }

  // Mlp inputs: M rows cycled from the held-out split.
  std::vector<float> mlp_x(static_cast<std::size_t>(max_m) * in_features);
  for (int r = 0; r < max_m; ++r) {
    std::memcpy(mlp_x.data() + static_cast<std::size_t>(r) * in_features,
                split_x.data() + static_cast<std::size_t>(r % split_rows) * in_features,
                sizeof(float) * static_cast<std::size_t>(in_features));
  }

  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  std::mt19937 rng(12345);
  const std::string date = date_now();
  const unsigned cores = std::thread::hardware_concurrency();
  const dnnl_version_t* v = dnnl_version();
  char dnnl_ver[64];
  std::snprintf(dnnl_ver, sizeof dnnl_ver, "%d.%d.%d", v->major, v->minor, v->patch);

  std::printf(
      "{\"bench\":\"int8_gemm_config\",\"date\":%s,\"model\":%s,\"threads\":%d,\"reps\":%d,"
      "\"min_ms\":%.1f,\"cores\":%u,\"onednn\":\"%s\",\"split_rows\":%d,\"int8_accuracy\":%.4f,"
      "\"int8_fp32_label_agreement\":%.4f}\n",
      json_str(date).c_str(), json_str(opt.model.string()).c_str(), opt.threads, opt.reps,
      opt.min_ms, cores, dnnl_ver, split_rows, static_cast<double>(correct) / split_rows,
      static_cast<double>(agree) / split_rows);
  std::fflush(stdout);

  // --- (a) + (b): per layer, per M ---------------------------------------------------------
  std::vector<std::vector<LayerResult>> per_layer(layers.size(),
                                                  std::vector<LayerResult>(std::size(batch_sizes)));
  std::vector<float> lin_x(static_cast<std::size_t>(max_m) * 256 * 4);
  std::vector<float> lin_y(lin_x.size());
  std::vector<std::uint8_t> q_u8(lin_x.size());
  std::vector<float> q_scales(max_m);
  {
    std::uniform_real_distribution<float> u(0.0f, 4.0f);
    for (auto& val : lin_x) val = u(rng);
  }
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const Layer& L = layers[li];
    if (static_cast<std::size_t>(max_m) * static_cast<std::size_t>(std::max(L.n, L.k)) >
        lin_x.size()) {
      lin_x.resize(static_cast<std::size_t>(max_m) * std::max(L.n, L.k), 1.0f);
      lin_y.resize(lin_x.size());
      q_u8.resize(lin_x.size());
    }
    Int8Linear linear;
    check(Int8Linear::create(L.weight, L.bias, L.n, L.k, L.activation, max_m, linear),
          "Int8Linear::create " + L.name);
    for (std::size_t bi = 0; bi < std::size(batch_sizes); ++bi) {
      const int m = batch_sizes[bi];
      OneDnnGemm fixed(engine, m, L.n, L.k, /*runtime_m=*/false, rng);
      OneDnnGemm rt(engine, m, L.n, L.k, /*runtime_m=*/true, rng);
      LayerResult& r = per_layer[li][bi];
      r.gemm = time_per_call(opt, [&] { run_or_die(fixed); });
      r.cpu_share[0] = g_last_cpu_share;
      r.gemm_rt = time_per_call(opt, [&] { run_or_die(rt); });
      r.cpu_share[1] = g_last_cpu_share;
      r.quantize = time_per_call(opt, [&] {
        quantize_activations_per_row_u8(lin_x.data(), m, L.k, q_u8.data(), q_scales.data());
      });
      r.cpu_share[2] = g_last_cpu_share;
      r.linear = time_per_call(opt, [&] {
        if (!linear.forward(lin_x.data(), m, lin_y.data())) die("Int8Linear::forward failed");
      });
      r.cpu_share[3] = g_last_cpu_share;
      const auto line = [&](const char* variant, double s, double share,
                            const std::string& impl) {
        std::printf(
            "{\"bench\":\"int8_gemm\",\"variant\":\"%s\",\"layer\":\"%s\",\"m\":%d,\"n\":%d,"
            "\"k\":%d,\"us\":%.3f,\"tops\":%.5f,\"cpu_share\":%.3f%s%s}\n",
            variant, L.name.c_str(), m, L.n, L.k, s * 1e6, tops(m, L.n, L.k, s), share,
            impl.empty() ? "" : ",\"impl\":", impl.empty() ? "" : json_str(impl).c_str());
      };
      line("gemm", r.gemm, r.cpu_share[0], fixed.impl());
      line("gemm_rt", r.gemm_rt, r.cpu_share[1], rt.impl());
      line("quantize_u8", r.quantize, r.cpu_share[2], "");
      line("int8_linear", r.linear, r.cpu_share[3], "");
      std::fflush(stdout);
    }
  }

  // --- (c) + (d): the whole model, per M ---------------------------------------------------
  struct ModelResult {
    double mlp = 0, ref = 0, gemm_sum = 0, linear_sum = 0;
    double mlp_share = 1, ref_share = 1;
  };
  std::vector<ModelResult> per_m(std::size(batch_sizes));
  {
    std::vector<Tensor> outputs(2);
    Tensor ref_p, ref_l;
    for (std::size_t bi = 0; bi < std::size(batch_sizes); ++bi) {
      const int m = batch_sizes[bi];
      const ConstTensorView x{DType::FP32, {m, in_features},
                              reinterpret_cast<const std::byte*>(mlp_x.data())};
      ModelResult& r = per_m[bi];
      r.mlp = time_per_call(opt, [&] {
        if (!mlp->forward(Batch::dense({&x, 1}), outputs)) die("Mlp::forward failed");
      });
      r.mlp_share = g_last_cpu_share;
      r.ref = time_per_call(opt, [&] {
        if (!mlp->forward_reference(x, ref_p, ref_l)) die("Mlp::forward_reference failed");
      });
      r.ref_share = g_last_cpu_share;
      for (std::size_t li = 0; li < layers.size(); ++li) {
        r.gemm_sum += per_layer[li][bi].gemm;
        r.linear_sum += per_layer[li][bi].linear;
      }
      std::printf(
          "{\"bench\":\"int8_gemm\",\"variant\":\"mlp\",\"m\":%d,\"us\":%.3f,\"rows_per_s\":%.0f,"
          "\"gemm_limit_us\":%.3f,\"gemm_limit_fraction\":%.4f,\"int8_linear_sum_us\":%.3f,"
          "\"cpu_share\":%.3f}\n",
          m, r.mlp * 1e6, m / r.mlp, r.gemm_sum * 1e6, r.gemm_sum / r.mlp, r.linear_sum * 1e6,
          r.mlp_share);
      std::printf(
          "{\"bench\":\"int8_gemm\",\"variant\":\"fp32_reference\",\"m\":%d,\"us\":%.3f,"
          "\"rows_per_s\":%.0f,\"cpu_share\":%.3f}\n",
          m, r.ref * 1e6, m / r.ref, r.ref_share);
      std::fflush(stdout);
    }
  }

  // --- the machine's ceiling: a big square INT8 GEMM ---------------------------------------
  constexpr int big = 1024;
  OneDnnGemm ceiling(engine, big, big, big, /*runtime_m=*/false, rng);
  const double big_s = time_per_call(opt, [&] { run_or_die(ceiling); });
  const double big_tops = tops(big, big, big, big_s);
  std::printf(
      "{\"bench\":\"int8_gemm\",\"variant\":\"gemm_1024\",\"m\":%d,\"n\":%d,\"k\":%d,"
      "\"us\":%.3f,\"tops\":%.5f,\"cpu_share\":%.3f,\"impl\":%s}\n",
      big, big, big, big_s * 1e6, big_tops, g_last_cpu_share, json_str(ceiling.impl()).c_str());

  // --- summary -----------------------------------------------------------------------------
  const bool noisy = g_min_cpu_share < 0.9;
  std::printf("{\"bench\":\"int8_gemm_summary\",\"threads\":%d,\"ceiling_tops\":%.4f,"
              "\"min_cpu_share\":%.3f,\"noisy\":%s,\"mlp\":[",
              opt.threads, big_tops, g_min_cpu_share, noisy ? "true" : "false");
  for (std::size_t bi = 0; bi < std::size(batch_sizes); ++bi) {
    const ModelResult& r = per_m[bi];
    std::printf("%s{\"m\":%d,\"rows_per_s\":%.0f,\"gemm_limit_fraction\":%.4f,"
                "\"fp32_rows_per_s\":%.0f}",
                bi ? "," : "", batch_sizes[bi], batch_sizes[bi] / r.mlp, r.gemm_sum / r.mlp,
                batch_sizes[bi] / r.ref);
  }
  std::printf("]}\n\n");

  std::printf("Per layer (oneDNN %s, %d compute thread(s); times per call, median of %d):\n\n",
              dnnl_ver, opt.threads, opt.reps);
  std::printf(
      "| layer (N×K) | M | GEMM µs | GEMM TOPS | GEMM run-time M µs | quantize µs | "
      "Int8Linear µs | Int8Linear TOPS | GEMM / Int8Linear |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const Layer& L = layers[li];
    for (std::size_t bi = 0; bi < std::size(batch_sizes); ++bi) {
      const int m = batch_sizes[bi];
      const LayerResult& r = per_layer[li][bi];
      std::printf("| %s (%d×%d) | %d | %.2f | %.3f | %.2f | %.2f | %.2f | %.3f | %.0f%% |\n",
                  L.name.c_str(), L.n, L.k, m, r.gemm * 1e6, tops(m, L.n, L.k, r.gemm),
                  r.gemm_rt * 1e6, r.quantize * 1e6, r.linear * 1e6, tops(m, L.n, L.k, r.linear),
                  100 * r.gemm / r.linear);
    }
  }
  std::printf("\nWhole model (INT8 Mlp::forward vs the sum of its three GEMMs, and the FP32 "
              "reference):\n\n");
  std::printf(
      "| M | Mlp µs | Mlp rows/s | GEMM limit µs | %% of GEMM limit | Σ Int8Linear µs | "
      "FP32 ref rows/s | INT8 / FP32 |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t bi = 0; bi < std::size(batch_sizes); ++bi) {
    const int m = batch_sizes[bi];
    const ModelResult& r = per_m[bi];
    std::printf("| %d | %.2f | %.0f | %.2f | %.0f%% | %.2f | %.0f | %.1f× |\n", m, r.mlp * 1e6,
                m / r.mlp, r.gemm_sum * 1e6, 100 * r.gemm_sum / r.mlp, r.linear_sum * 1e6,
                m / r.ref, r.ref / r.mlp);
  }
  std::printf("\nCeiling: INT8 GEMM 1024×1024×1024: %.1f µs, %.3f TOPS (%s).\n", big_s * 1e6,
              big_tops, ceiling.impl().c_str());
  std::printf("Held-out accuracy (INT8 Mlp): %d/%d; INT8 vs FP32 reference labels agree on "
              "%d/%d.\n%s; %u cores; %d compute thread(s).\n",
              correct, split_rows, agree, split_rows, date.c_str(), cores, opt.threads);
  if (noisy) {
    std::printf("NOISY: during some measurement this process got only %.0f%% of its cores "
                "(other processes shared them); rerun on a quiet machine.\n",
                100 * g_min_cpu_share);
  } else {
    std::printf("Clean: this process had >= %.0f%% of its core(s) during every measurement.\n",
                100 * g_min_cpu_share);
  }
  return 0;
}
