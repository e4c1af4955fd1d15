// coinfer-batch's input parsers: .npy headers, JSONL rows through the JSON decoder, and CSV
// files through the CSV splitter and the fields decoder.
//
// Input: a first byte choosing the parser (0: .npy header, 1: a JSONL row, 2: a CSV file),
// then the bytes. A header that parses keeps its promise (the array's bytes lie inside the
// file); every row decodes or is refused with a reason, never more numbers than asked for.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "coinfer/offline/npy.hpp"
#include "coinfer/offline/sources.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using namespace coinfer::offline;
using coinfer::fuzz::check;

namespace {

std::filesystem::path temp_file(const char* name) {
  return std::filesystem::temp_directory_path() /
         ("coinfer_batch_fuzz_" + std::to_string(::getpid()) + "_" + name);
}

std::unique_ptr<RowDecoder> json_decoder(InputKind kind) {
  static const auto path = [] {
    const auto p = temp_file("empty.jsonl");
    std::ofstream(p).flush();
    return p;
  }();
  std::unique_ptr<RowSource> source;
  check(open_jsonl(path, source).ok(), "an empty JSONL file opens");
  DecodeOptions options;
  options.kind = kind;
  options.width = 4;
  options.field = "x";
  options.id_field = "id";
  std::unique_ptr<RowDecoder> decoder;
  check(make_decoder(*source, options, decoder).ok(), "the JSON decoder is made");
  return decoder;
}

void decode_checked(RowDecoder& decoder, std::string_view record, InputKind kind) {
  float numbers[5] = {0, 0, 0, 0, 12345.0f};  // the fifth must never be written
  DecodedRow row;
  const Status status =
      decoder.decode(record, kind == InputKind::numbers ? std::span<float>(numbers, 4) : std::span<float>(), row);
  check(numbers[4] == 12345.0f, "no more numbers written than the row's width");
  if (!status.ok()) {
    check(!status.message().empty(), "a refused row has a reason");
    return;
  }
  std::string id;
  append_id_json(id, row, 7);
  check(!id.empty(), "every row has an id");
  if (kind == InputKind::text) check(row.text.size() <= record.size() * 6 + 16, "text comes from the row");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      NpyHeader header;
      if (!parse_npy_header(bytes, bytes.size(), header).ok()) return 0;
      check(header.data_offset <= bytes.size(), "the data starts inside the file");
      check(!header.shape.empty() && header.shape[0] >= 0, "a header has a row count");
      const unsigned __int128 total = static_cast<unsigned __int128>(header.row_bytes()) *
                                      static_cast<std::uint64_t>(header.shape[0]);
      check(header.data_offset + total <= bytes.size(), "the array's bytes lie inside the file");
      return 0;
    }
    case 1: {
      static auto numbers = json_decoder(InputKind::numbers);
      static auto text = json_decoder(InputKind::text);
      decode_checked(*numbers, bytes, InputKind::numbers);
      decode_checked(*text, bytes, InputKind::text);
      return 0;
    }
    default: {
      static const auto path = temp_file("input.csv");
      std::ofstream(path, std::ios::binary | std::ios::trunc)
          .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      std::unique_ptr<RowSource> source;
      if (!open_csv(path, source).ok()) return 0;
      const auto columns = source->columns();
      check(!columns.empty(), "a CSV header names at least one column");
      DecodeOptions options;
      options.columns = {columns[0]};
      options.width = 4;
      std::unique_ptr<RowDecoder> as_numbers, as_text;
      check(make_decoder(*source, options, as_numbers).ok(), "a column holding an array is accepted");
      options.kind = InputKind::text;
      check(make_decoder(*source, options, as_text).ok(), "a text column is accepted");
      for (int rows = 0; rows < 10000; ++rows) {
        std::string record;
        bool end = false;
        check(source->next(record, end).ok(), "reading a file does not fail");
        if (end) break;
        decode_checked(*as_numbers, record, InputKind::numbers);
        decode_checked(*as_text, record, InputKind::text);
      }
      return 0;
    }
  }
}
