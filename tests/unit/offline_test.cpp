// coinfer-batch's parts: the .npy reader and writer, the JSONL / CSV / .npy sources and their
// decoders, the file sink's commits and recovery, and the pipeline (ordering, shards, resume)
// with the real digits MLP. End-to-end runs of the CLI (kill -9, PostgreSQL) are in tests/batch.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "coinfer/models/mlp.hpp"
#include "coinfer/offline/npy.hpp"
#include "coinfer/offline/pipeline.hpp"
#include "coinfer/offline/sinks.hpp"
#include "coinfer/offline/sources.hpp"
#include "coinfer/runtime/cpu_executor.hpp"

using namespace coinfer;
using namespace coinfer::offline;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("coinfer_offline_test_" + std::to_string(getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return path / name;
  }
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> all_records(RowSource& source) {
  std::vector<std::string> out;
  while (true) {
    std::string record;
    bool end = false;
    REQUIRE(source.next(record, end).ok());
    if (end) return out;
    out.push_back(record);
  }
}

std::vector<std::string> fields_of(const std::string& record) {
  std::uint32_t count;
  std::memcpy(&count, record.data(), 4);
  std::vector<std::string> out;
  std::size_t at = 4;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t n;
    std::memcpy(&n, record.data() + at, 4);
    out.push_back(record.substr(at + 4, n));
    at += 4 + n;
  }
  return out;
}

fs::path digits_weights() { return fs::path(COINFER_SOURCE_DIR) / "assets/digits_mlp/model.safetensors"; }

}  // namespace

TEST_CASE("npy: arrays written are read back, header and rows") {
  TempDir dir;
  std::vector<float> values(3 * 4);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  REQUIRE(write_npy(dir.path / "a.npy", DType::FP32, {3, 4}, std::as_bytes(std::span(values))).ok());
  const std::string bytes = read_file(dir.path / "a.npy");
  CHECK(bytes.substr(0, 6) == "\x93NUMPY");
  CHECK(bytes.find("'shape': (3, 4)") != std::string::npos);
  NpyHeader header;
  REQUIRE(parse_npy_header(bytes, bytes.size(), header).ok());
  CHECK(header.dtype == DType::FP32);
  CHECK(header.shape == Shape{3, 4});
  CHECK(header.data_offset % 64 == 0);
  CHECK(bytes.size() == header.data_offset + 48);

  std::unique_ptr<RowSource> source;
  REQUIRE(open_npy(dir.path / "a.npy", source).ok());
  CHECK(source->total_rows() == 3);
  const auto rows = all_records(*source);
  REQUIRE(rows.size() == 3);
  float row2[4];
  std::memcpy(row2, rows[2].data(), 16);
  CHECK(row2[3] == 5.5f);

  // A vector (1-d) is written as numpy does: (n,)
  std::vector<std::int64_t> ids = {7, 8};
  REQUIRE(write_npy(dir.path / "b.npy", DType::Int64, {2}, std::as_bytes(std::span(ids))).ok());
  CHECK(read_file(dir.path / "b.npy").find("'shape': (2,)") != std::string::npos);
}

TEST_CASE("npy: malformed files are refused, naming the offset") {
  auto status_of = [](const std::string& bytes) {
    NpyHeader header;
    return parse_npy_header(bytes, bytes.size(), header);
  };
  auto with_dict = [](const std::string& dict, std::size_t data_bytes) {
    std::string out = std::string("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(dict.size() & 0xff);
    out += static_cast<char>(dict.size() >> 8);
    return out + dict + std::string(data_bytes, '\0');
  };
  CHECK(status_of("hello world!").message().find("offset 0: not an .npy file") != std::string::npos);
  CHECK(status_of(std::string("\x93NUMPY\x09\x00\x10\x00", 10) + std::string(16, ' '))
            .message()
            .find("offset 6: format version 9") != std::string::npos);
  const auto big_endian = status_of(with_dict("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8));
  CHECK(big_endian.message().find("offset 20: 'descr' '>f4' is not supported") != std::string::npos);
  CHECK(status_of(with_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", 8))
            .message()
            .find("C order only") != std::string::npos);
  CHECK(status_of(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2), }\n", 8))
            .message()
            .find("the file ends before the array's 32 bytes") != std::string::npos);
  CHECK(status_of(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }\n", 8))
            .message()
            .find("expected a non-negative integer in 'shape'") != std::string::npos);
  CHECK(status_of(with_dict("{'descr': '<f4', 'shape': (2,), }\n", 8)).message().find("no 'fortran_order'") !=
        std::string::npos);
  CHECK(status_of(std::string("\x93NUMPY\x01\x00\xff\xff", 10)).message().find("truncated header") !=
        std::string::npos);
  CHECK(status_of(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8)).ok());
}

TEST_CASE("jsonl source: lines, CRLF, blank lines, a last line without newline, skips") {
  TempDir dir;
  const auto path = dir.write("a.jsonl", "one\r\ntwo\n\nfour\nfive");
  std::unique_ptr<RowSource> source;
  REQUIRE(open_jsonl(path, source).ok());
  CHECK(all_records(*source) == std::vector<std::string>{"one", "two", "", "four", "five"});

  REQUIRE(open_jsonl(path, source).ok());
  bool end = false;
  REQUIRE(source->skip(3, end).ok());
  CHECK_FALSE(end);
  CHECK(all_records(*source) == std::vector<std::string>{"four", "five"});
  REQUIRE(open_jsonl(path, source).ok());
  REQUIRE(source->skip(5, end).ok());
  CHECK_FALSE(end);  // exactly the last row skipped
  REQUIRE(open_jsonl(path, source).ok());
  REQUIRE(source->skip(6, end).ok());
  CHECK(end);

  // A line starting with NUL is handed on as a bad line with a reason (a leading NUL marks one).
  REQUIRE(open_jsonl(dir.write("n.jsonl", std::string("\0{}\nok\n", 6)), source).ok());
  const auto rows = all_records(*source);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == std::string("\0a line starting with a NUL byte (not JSON)", 43));

  // A file ending with '\n' has no empty last row.
  REQUIRE(open_jsonl(dir.write("b.jsonl", "x\ny\n"), source).ok());
  CHECK(all_records(*source).size() == 2);
}

TEST_CASE("csv source: header, quotes, separators and newlines inside quotes, an unterminated quote") {
  TempDir dir;
  const auto path = dir.write("a.csv", "id,text,n\r\n1,\"a, b\",3\n2,\"say \"\"hi\"\"\nthere\",4\n3,plain,\n4,\"open");
  std::unique_ptr<RowSource> source;
  REQUIRE(open_csv(path, source).ok());
  CHECK(std::vector<std::string>(source->columns().begin(), source->columns().end()) ==
        std::vector<std::string>{"id", "text", "n"});
  const auto rows = all_records(*source);
  REQUIRE(rows.size() == 4);
  CHECK(fields_of(rows[0]) == std::vector<std::string>{"1", "a, b", "3"});
  CHECK(fields_of(rows[1]) == std::vector<std::string>{"2", "say \"hi\"\nthere", "4"});
  CHECK(fields_of(rows[2]) == std::vector<std::string>{"3", "plain", ""});

  DecodeOptions options;
  options.kind = InputKind::text;
  options.columns = {"text"};
  options.id_field = "id";
  std::unique_ptr<RowDecoder> decoder;
  REQUIRE(make_decoder(*source, options, decoder).ok());
  DecodedRow row;
  REQUIRE(decoder->decode(rows[1], {}, row).ok());
  CHECK(row.text == "say \"hi\"\nthere");
  CHECK(row.id == "2");
  std::string id;
  append_id_json(id, row, 1);
  CHECK(id == "2");
  const Status bad = decoder->decode(rows[3], {}, row);
  CHECK(bad.message().find("unterminated quoted field") != std::string::npos);

  options.columns = {"nope"};
  const Status unknown = make_decoder(*source, options, decoder);
  CHECK(unknown.message() == "--columns: no column 'nope' (columns: id, text, n)");
}

TEST_CASE("sources: a runaway record is one bad row and reading resumes after it, a BOM is dropped") {
  TempDir dir;
  // A CSV quote that never closes, over kMaxRecordBytes, then good rows on later lines.
  std::string csv = "\xEF\xBB\xBFid,v\n1,\"" + std::string(kMaxRecordBytes + 10, 'x') + "\n2,b\n3,c\n";
  std::unique_ptr<RowSource> source;
  REQUIRE(open_csv(dir.write("a.csv", csv), source).ok());
  CHECK(source->columns()[0] == "id");
  auto rows = all_records(*source);
  REQUIRE(rows.size() == 3);
  std::uint32_t count;
  std::memcpy(&count, rows[0].data(), 4);
  CHECK(count == kBadRecord);
  CHECK(rows[0].find("longer than 64 MiB") != std::string::npos);
  CHECK(fields_of(rows[1]) == std::vector<std::string>{"2", "b"});
  csv.clear();

  std::string jsonl = "{\"x\": \"" + std::string(kMaxRecordBytes, 'y') + "\"}\n{\"x\": \"ok\"}\n";
  REQUIRE(open_jsonl(dir.write("b.jsonl", jsonl), source).ok());
  rows = all_records(*source);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].size() < 100);
  CHECK(rows[1] == "{\"x\": \"ok\"}");
  DecodeOptions options;
  options.kind = InputKind::text;
  options.field = "x";
  std::unique_ptr<RowDecoder> decoder;
  REQUIRE(make_decoder(*source, options, decoder).ok());
  DecodedRow row;
  CHECK(decoder->decode(rows[0], {}, row).message() == "a line longer than 64 MiB");
  REQUIRE(decoder->decode(rows[1], {}, row).ok());
  CHECK(row.text == "ok");
}

TEST_CASE("decoders: JSON numbers (nested arrays flattened), text, ids, fields holding an array") {
  TempDir dir;
  std::unique_ptr<RowSource> source;
  REQUIRE(open_jsonl(dir.write("a.jsonl", ""), source).ok());
  DecodeOptions options;
  options.width = 4;
  options.field = "x";
  options.id_field = "key";
  std::unique_ptr<RowDecoder> decoder;
  REQUIRE(make_decoder(*source, options, decoder).ok());
  float values[4];
  DecodedRow row;
  REQUIRE(decoder->decode(R"({"x": [[1, 2], [3.5, -4]], "key": "a\"b"})", values, row).ok());
  CHECK(values[2] == 3.5f);
  CHECK(values[3] == -4.0f);
  std::string id;
  append_id_json(id, row, 0);
  CHECK(id == R"("a\"b")");
  CHECK(decoder->decode(R"({"x": [1, 2, 3], "key": 1})", values, row).message() ==
        "field 'x': 3 numbers, the model takes 4");
  CHECK(decoder->decode(R"({"x": [1, 2, "3", 4], "key": 1})", values, row).message() ==
        "field 'x'[2]: expected a number");
  CHECK(decoder->decode(R"({"x": [1, 2, 3, 4]})", values, row).message() == "no field 'key' (the id)");
  CHECK(decoder->decode(R"({"x": [1, 2, 3, 4], "key": [1]})", values, row).message().find("expected a string or a number") !=
        std::string::npos);
  CHECK(decoder->decode("  ", values, row).message() == "empty line");
  // Ids are checked, not copied blindly: the output must stay valid JSON.
  CHECK(decoder->decode(R"({"x": [1, 2, 3, 4], "key": 12abc})", values, row).message().find("not a valid number") !=
        std::string::npos);
  REQUIRE(decoder->decode(R"({"x": [1, 2, 3, 4], "key": "a\u0041\tb"})", values, row).ok());
  id.clear();
  append_id_json(id, row, 0);
  CHECK(id == R"("aA\tb")");
  // A raw control character in a string is invalid JSON, refused with simdjson's reason.
  CHECK(decoder->decode("{\"x\": [1, 2, 3, 4], \"key\": \"a\tb\"}", values, row).message().find(
            "invalid JSON: Within strings, some characters must be escaped") == 0);
  CHECK(decoder->decode(R"({"x": [1, 2, 1e300, 4], "key": 1})", values, row).message() ==
        "field 'x'[2]: out of FP32's range");
  CHECK(decoder->decode(R"({"x": [1, 2)", values, row).message().find("invalid JSON") == 0);
  CHECK(decoder->decode("[1, 2]", values, row).message() == "expected a JSON object, one per line");

  // A CSV column holding the whole row as an array ("[...]" or PostgreSQL's "{...}").
  REQUIRE(open_csv(dir.write("b.csv", "id,v\n7,\"{1,2,3,4}\"\n8,\"[1, 2]\"\n9,\"{1,2,x,4}\"\n"), source).ok());
  options.field.clear();
  options.columns = {"v"};
  options.id_field = "id";
  REQUIRE(make_decoder(*source, options, decoder).ok());
  const auto rows = all_records(*source);
  REQUIRE(decoder->decode(rows[0], values, row).ok());
  CHECK(values[3] == 4.0f);
  CHECK(decoder->decode(rows[1], values, row).message() == "column 'v': 2 numbers, the model takes 4");
  CHECK(decoder->decode(rows[2], values, row).message() == "column 'v'[2]: 'x' is not a number");
}

TEST_CASE("file sink: a crash between a chunk's files and its manifest leaves nothing behind") {
  TempDir dir;
  const fs::path out = dir.path / "out";
  ModelMetadata model;
  model.outputs = {{"y", DType::FP32, {-1}}};
  const JobIdentity job{"job a", 10, 0, 1};
  auto chunk_of = [](std::int64_t k, bool with_dead) {
    ChunkWork c(std::pmr::new_delete_resource());
    c.chunk = k;
    c.first_row = k * 10;
    c.rows = 2;
    c.good_rows = {k * 10};
    c.ids = std::to_string(k * 10);
    c.id_ends = {static_cast<std::uint32_t>(c.ids.size())};
    c.outputs.emplace_back(DType::FP32, Shape{1});
    c.outputs[0].values<float>()[0] = 0.25f;
    if (with_dead) c.dead.push_back({k * 10 + 1, std::to_string(k * 10 + 1), "bad"});
    return c;
  };
  std::uint64_t dead_bytes = 0;
  {
    std::unique_ptr<ResultSink> sink;
    REQUIRE(open_file_sink(out, FileFormat::jsonl, sink).ok());
    std::vector<std::int64_t> done;
    CommittedTotals totals;
    REQUIRE(sink->open(job, model, false, done, totals).ok());
    CHECK(done.empty());
    REQUIRE(sink->commit(chunk_of(0, true)).ok());
    dead_bytes = fs::file_size(out / "dead-letter.jsonl");
  }
  CHECK(read_file(out / "part-00000000.jsonl") == "{\"id\":0,\"y\":0.25}\n");
  CHECK(read_file(out / "dead-letter.jsonl") == "{\"row\":1,\"id\":1,\"error\":\"bad\"}\n");
  // What a crash in chunk 1's commit leaves: its part file, its dead letters, a temp file.
  dir.write("out/part-00000001.jsonl", "{\"id\":10}\n");
  dir.write("out/part-00000002.jsonl.tmp", "{\"id\":20");
  std::ofstream(out / "dead-letter.jsonl", std::ios::app) << "{\"row\":11}\n";

  std::unique_ptr<ResultSink> sink;
  REQUIRE(open_file_sink(out, FileFormat::jsonl, sink).ok());
  std::vector<std::int64_t> done;
  CommittedTotals totals;
  const Status again = sink->open(job, model, false, done, totals);
  CHECK(again.message().find("pass --resume") != std::string::npos);
  const Status other = sink->open({"job b", 10, 0, 1}, model, true, done, totals);
  CHECK(other.message().find("is another job") != std::string::npos);
  done.clear();
  REQUIRE(sink->open(job, model, true, done, totals).ok());
  CHECK(done == std::vector<std::int64_t>{0});
  CHECK(totals.rows == 2);
  CHECK(totals.errors == 1);
  CHECK_FALSE(fs::exists(out / "part-00000001.jsonl"));
  CHECK_FALSE(fs::exists(out / "part-00000002.jsonl.tmp"));
  CHECK(fs::file_size(out / "dead-letter.jsonl") == dead_bytes);
  // One writer per shard, one sharding per directory.
  {
    std::unique_ptr<ResultSink> second;
    REQUIRE(open_file_sink(out, FileFormat::jsonl, second).ok());
    std::vector<std::int64_t> d;
    CommittedTotals t;
    CHECK(second->open(job, model, true, d, t).message().find("another coinfer-batch is writing") !=
          std::string::npos);
    std::unique_ptr<ResultSink> sharded;
    REQUIRE(open_file_sink(out, FileFormat::jsonl, sharded).ok());
    CHECK(sharded->open({"job a", 10, 1, 3}, model, true, d, t).message().find(
              "a job split into 1 shard; this run is split into 3") != std::string::npos);
  }
  REQUIRE(sink->commit(chunk_of(1, false)).ok());
  REQUIRE(sink->finish().ok());
  const std::string manifest = read_file(out / "manifest.json");
  CHECK(manifest.find("\"completed_rows\": [[0, 4]]") == std::string::npos);  // rows 0-1, 10-11
  CHECK(manifest.find("\"completed_rows\": [[0, 2], [10, 12]]") != std::string::npos);
  CHECK(manifest.find("\"complete\": true") != std::string::npos);
}

TEST_CASE("pipeline: the digits MLP over JSONL, rows in order, a shard's chunks only, resume") {
  TempDir dir;
  std::string lines;
  for (int i = 0; i < 53; ++i) {
    lines += i == 20 ? "{\"p\": [1]}\n" : "{\"p\": [";
    if (i == 20) continue;
    for (int k = 0; k < 64; ++k) lines += (k ? "," : "") + std::to_string((i + k) % 17);
    lines += "]}\n";
  }
  const auto input = dir.write("in.jsonl", lines);
  std::unique_ptr<Mlp> mlp;
  REQUIRE(Mlp::load(digits_weights(), "digits", "1", 5, mlp).ok());
  std::shared_ptr<Model> model(std::move(mlp));
  CpuExecutor executor(1);
  JobModel job_model;
  job_model.model = model;
  job_model.executor = &executor;

  JobProgress last_progress;
  auto run = [&](const fs::path& out, int shard, int shards, bool resume, JobSummary& summary) {
    std::unique_ptr<RowSource> source;
    REQUIRE(open_jsonl(input, source).ok());
    std::unique_ptr<ResultSink> sink;
    REQUIRE(open_file_sink(out, FileFormat::jsonl, sink).ok());
    JobOptions options;
    options.decode.field = "p";
    options.chunk_rows = 7;
    options.shard = shard;
    options.shards = shards;
    options.workers = 3;
    options.resume = resume;
    options.description = "test";
    return run_job(*source, job_model, *sink, options, summary,
                   [&](const JobProgress& p, double) { last_progress = p; }, 0.001);
  };

  JobSummary all;
  REQUIRE(run(dir.path / "all", 0, 1, false, all).ok());
  // The last progress report (made after the writer's last commit): every row written, the
  // whole input done.
  CHECK(last_progress.rows_done == 53);
  CHECK(last_progress.rows_expected == -1);
  CHECK(last_progress.fraction_read == doctest::Approx(1.0));
  CHECK(all.rows == 53);
  CHECK(all.errors == 1);
  CHECK(all.chunks == 8);
  std::string expected_ids;
  for (std::int64_t k = 0; k < 8; ++k) {
    const std::string part = read_file(dir.path / "all" / ("part-0000000" + std::to_string(k) + ".jsonl"));
    std::istringstream in(part);
    std::string line;
    std::int64_t previous = -1;
    while (std::getline(in, line)) {
      const auto id = std::stoll(line.substr(6));
      CHECK(id > previous);
      CHECK(id / 7 == k);
      previous = id;
    }
  }
  CHECK(read_file(dir.path / "all" / "dead-letter.jsonl").find("\"row\":20") != std::string::npos);

  // Shard 1 of 3 writes chunks 1, 4, 7 only; a resumed finished job does nothing.
  JobSummary shard;
  REQUIRE(run(dir.path / "shard", 1, 3, false, shard).ok());
  CHECK(shard.chunks == 3);
  CHECK(shard.rows == 7 + 7 + 4);
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path / "shard")) names.insert(e.path().filename().string());
  CHECK(names == std::set<std::string>{"part-00000001.jsonl", "part-00000004.jsonl", "part-00000007.jsonl",
                                       "manifest.shard-1-of-3.json", "manifest.shard-1-of-3.json.lock",
                                       "dead-letter.shard-1-of-3.jsonl"});
  JobSummary resumed;
  REQUIRE(run(dir.path / "shard", 1, 3, true, resumed).ok());
  CHECK(resumed.rows == 0);
  CHECK(resumed.earlier.rows == 18);
}
