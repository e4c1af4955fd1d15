#include "coinfer/models/safetensors.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace coinfer;

namespace {

// The bytes of a safetensors file: 8-byte little-endian header length, header, data.
std::vector<std::byte> file_bytes(const std::string& header, const std::vector<std::byte>& data,
                                  std::uint64_t header_length) {
  std::vector<std::byte> out(8);
  for (int i = 0; i < 8; ++i) out[i] = std::byte((header_length >> (8 * i)) & 0xff);
  for (char c : header) out.push_back(std::byte(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}
std::vector<std::byte> file_bytes(const std::string& header, const std::vector<std::byte>& data) {
  return file_bytes(header, data, header.size());
}

std::vector<std::byte> floats(std::initializer_list<float> values) {
  std::vector<std::byte> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

// A temporary directory removed at the end of the test.
struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("coinfer_safetensors_test_" + std::to_string(getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path write(const std::string& name, const std::vector<std::byte>& bytes) {
    const auto file = path / name;
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return file;
  }
};

const std::string kValidHeader = R"({"__metadata__":{"accuracy":"0.97"},)"
                                 R"("b":{"dtype":"I64","shape":[1],"data_offsets":[24,32]},)"
                                 R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})";

std::vector<std::byte> valid_data() {
  auto data = floats({1, 2, 3, 4, 5, 6});  // "a": F32 [2, 3], bytes [0, 24)
  data.resize(32);                         // "b": I64 [1], bytes [24, 32)
  const std::int64_t seven = 7;
  std::memcpy(data.data() + 24, &seven, sizeof seven);
  return data;
}

Status parse(const std::vector<std::byte>& bytes, SafetensorsFile& out) {
  return SafetensorsFile::parse(bytes, "test.safetensors", out);
}

}  // namespace

TEST_CASE("a well-formed file opens and exposes its tensors and metadata") {
  TempDir dir;
  const auto path = dir.write("ok.safetensors", file_bytes(kValidHeader, valid_data()));
  SafetensorsFile file;
  REQUIRE(SafetensorsFile::open(path, file).ok());
  const auto names = file.names();
  REQUIRE(names.size() == 2);
  CHECK(names[0] == "a");  // in data order
  CHECK(names[1] == "b");
  const SafetensorsTensor* a = file.tensor("a");
  REQUIRE(a != nullptr);
  CHECK(a->dtype == SafetensorsDType::F32);
  CHECK(a->shape == Shape{2, 3});
  REQUIRE(a->data.size() == 24);
  float v[6];
  std::memcpy(v, a->data.data(), 24);
  CHECK(v[5] == 6.0f);
  const SafetensorsTensor* b = file.tensor("b");
  REQUIRE(b != nullptr);
  CHECK(b->dtype == SafetensorsDType::I64);
  CHECK(to_dtype(b->dtype) == DType::Int64);
  std::int64_t seven = 0;
  std::memcpy(&seven, b->data.data(), 8);
  CHECK(seven == 7);
  CHECK(file.tensor("c") == nullptr);
  CHECK(file.metadata().at("accuracy") == "0.97");
}

namespace {
// Whether `address` lies in a mapping of `file` in this process (/proc/self/maps).
bool mapped_from(const void* address, const std::filesystem::path& file) {
  std::ifstream maps("/proc/self/maps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  for (std::string line; std::getline(maps, line);) {
    if (line.find(std::filesystem::canonical(file).string()) == std::string::npos) continue;
    std::uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%zx-%zx", &begin, &end) == 2 && at >= begin && at < end) {
      return true;
    }
  }
  return false;
}
}  // namespace

TEST_CASE("tensors are read in place from the mapped file, or from an aligned copy") {
  TempDir dir;
  // 8 + header bytes a multiple of 16: the data section is used where the file is mapped.
  std::string aligned_header = kValidHeader;
  while ((8 + aligned_header.size()) % 16 != 0) aligned_header += ' ';
  // One byte off: floats at odd addresses would be misaligned, so the data is copied.
  const std::string unaligned_header = aligned_header + std::string(15, ' ');
  for (const auto& [name, header, in_place] :
       {std::tuple{"aligned", aligned_header, true}, std::tuple{"unaligned", unaligned_header, false}}) {
    CAPTURE(name);
    const auto path = dir.write(std::string(name) + ".safetensors", file_bytes(header, valid_data()));
    SafetensorsFile file;
    REQUIRE(SafetensorsFile::open(path, file).ok());
    SafetensorsFile moved = std::move(file);  // tensors stay valid when the file object moves
    const SafetensorsTensor* a = moved.tensor("a");
    REQUIRE(a != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(a->data.data()) % alignof(float) == 0);
    CHECK(mapped_from(a->data.data(), path) == in_place);
    float v[6];
    std::memcpy(v, a->data.data(), 24);
    CHECK(v[0] == 1.0f);
    CHECK(v[5] == 6.0f);
  }
}

TEST_CASE("a file shorter than 8 bytes is rejected") {
  TempDir dir;
  SafetensorsFile file;
  const auto status = SafetensorsFile::open(dir.write("short", {std::byte{1}, std::byte{2}}), file);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message().find("shorter than the 8-byte header length") != std::string::npos);
}

TEST_CASE("a header length beyond the file or over the cap is rejected") {
  SafetensorsFile file;
  const auto beyond = parse(file_bytes(kValidHeader, valid_data(), 1000), file);
  CHECK(beyond.code() == Errc::invalid_argument);
  CHECK(beyond.message().find("header length 1000 at offset 0 exceeds the file") !=
        std::string::npos);
  const auto huge = parse(file_bytes("{}", {}, ~std::uint64_t{0}), file);
  CHECK(huge.message().find("cap") != std::string::npos);
}

TEST_CASE("a header that is not a JSON object is rejected") {
  SafetensorsFile file;
  CHECK(parse(file_bytes("{\"a\":", {}), file).message().find("not JSON") != std::string::npos);
  CHECK(parse(file_bytes("[1,2]", {}), file).message().find("not a JSON object") !=
        std::string::npos);
  CHECK(parse(file_bytes(R"({"a":3})", {}), file).message().find("tensor 'a'") !=
        std::string::npos);
}

TEST_CASE("data offsets beyond the data section are rejected naming the tensor and offset") {
  SafetensorsFile file;
  const std::string header = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})";
  const auto status = parse(file_bytes(header, floats({1, 2, 3, 4})), file);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message().find("tensor 'w'") != std::string::npos);
  CHECK(status.message().find("data_offsets [8, 24]") != std::string::npos);
  CHECK(status.message().find("beyond the data section of 16 bytes") != std::string::npos);
}

TEST_CASE("overlapping tensors are rejected naming both") {
  SafetensorsFile file;
  const std::string header = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  const auto status = parse(file_bytes(header, floats({1, 2, 3})), file);
  CHECK(status.message().find("tensor 'y'") != std::string::npos);
  CHECK(status.message().find("overlaps tensor 'x'") != std::string::npos);
}

TEST_CASE("a byte size that does not match shape times dtype size is rejected") {
  SafetensorsFile file;
  const std::string header = R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
  const auto status = parse(file_bytes(header, floats({1, 2})), file);
  CHECK(
      status.message().find("tensor 'w': data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12") !=
      std::string::npos);
}

TEST_CASE("an unknown dtype is rejected naming it") {
  SafetensorsFile file;
  const std::string header = R"({"w":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}})";
  CHECK(parse(file_bytes(header, floats({1})), file).message().find("unknown dtype 'F31'") !=
        std::string::npos);
}

TEST_CASE("malformed entries are rejected: negative dims, bad offsets, duplicates") {
  SafetensorsFile file;
  CHECK_FALSE(parse(
      file_bytes(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", floats({1})), file));
  CHECK_FALSE(parse(
      file_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", floats({1})), file));
  CHECK_FALSE(parse(
      file_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", floats({1})), file));
  CHECK_FALSE(parse(file_bytes(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],)"
                               R"("data_offsets":[0,4]}})",
                               floats({1})),
                    file));
  const auto dup = parse(file_bytes(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                                    R"("w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                    floats({1})),
                         file);
  CHECK(dup.message().find("appears twice") != std::string::npos);
}

TEST_CASE("element counts past int64 are refused, and an empty tensor counts 0 whatever its dims") {
  SafetensorsFile file;
  // 2^32 * 2^31: fits uint64, not int64.
  const auto big = parse(file_bytes(R"({"w":{"dtype":"U8","shape":[4294967296,2147483648],)"
                                    R"("data_offsets":[0,0]}})",
                                    {}),
                         file);
  CHECK(big.message().find("element count overflows") != std::string::npos);
  // The dims before the 0 multiply past int64 (found by fuzz/safetensors_fuzzer: the count
  // overflowed in element_count before it reached the 0).
  REQUIRE(parse(file_bytes(R"({"w":{"dtype":"BF16","shape":[3047427674210304,4444,0],)"
                           R"("data_offsets":[0,0]}})",
                           {}),
                file)
              .ok());
  CHECK(element_count(file.tensor("w")->shape) == 0);
  CHECK(element_count(Shape{3037000500, 3037000500}) == -1);  // past int64: no overflow, -1
  CHECK(element_count(Shape{}) == 1);
}

TEST_CASE("a missing file is reported as not found") {
  SafetensorsFile file;
  CHECK(SafetensorsFile::open("/nonexistent/model.safetensors", file).code() == Errc::not_found);
}

TEST_CASE("truncated and corrupted files fail cleanly and never crash") {
  const auto good = file_bytes(kValidHeader, valid_data());
  SafetensorsFile file;
  for (std::size_t size = 0; size < good.size(); ++size) {
    const std::vector<std::byte> truncated(good.begin(), good.begin() + std::ptrdiff_t(size));
    CHECK_FALSE(parse(truncated, file));
  }
  std::mt19937 rng(1);
  for (int trial = 0; trial < 2000; ++trial) {
    auto corrupted = good;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) corrupted[rng() % corrupted.size()] = std::byte(rng() & 0xff);
    SafetensorsFile out;
    if (parse(corrupted, out)) {  // some corruptions leave a valid file: it must be consistent
      for (auto name : out.names()) CHECK(out.tensor(name) != nullptr);
    }
  }
}
