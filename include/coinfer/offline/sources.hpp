#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/core/status.hpp"
#include "coinfer/offline/npy.hpp"

namespace coinfer::offline {

// How a source hands over a record (one input row, undecoded):
//   json_line  one JSON document (a JSONL line without its '\n')
//   fields     already split fields (CSV, a database row): see append_field / FieldReader
//   npy_row    one row's bytes of an .npy array (NpySource::header says their dtype)
enum class RecordFormat { json_line, fields, npy_row };

// Input rows, read in order by one thread. A row's index (0, 1, ...) is its position in the
// input; it names the row in outputs, dead letters and the resume manifest, so a source must
// give the same records in the same order every time it is read.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual RecordFormat format() const noexcept = 0;
  // The column names of a `fields` source (a CSV header, a query's result columns).
  virtual std::span<const std::string> columns() const noexcept { return {}; }
  // Appends the next row's record to `out`, or sets `end` when there is none. An error is the
  // input failing (I/O, a broken connection), not a malformed row: a malformed row is a record
  // its decoder refuses, so the run goes on.
  virtual Status next(std::string& out, bool& end) = 0;
  // Skips up to n rows (completed chunks, other shards' rows); `end` when the input ran out.
  virtual Status skip(std::int64_t n, bool& end);
  // Rows in the whole input when known cheaply (.npy), else -1.
  virtual std::int64_t total_rows() const noexcept { return -1; }
  // Share of the input consumed, 0..1, when known (files by bytes), else -1.
  virtual double fraction_read() const noexcept { return -1; }
  // The .npy header of an .npy source (the first part's for a concatenated one), else null.
  virtual const NpyHeader* npy_header() const noexcept { return nullptr; }
};

// Random-access bytes that a source parses: a local file, or an object in an S3 store.
class ByteInput {
 public:
  virtual ~ByteInput() = default;
  virtual const std::string& name() const noexcept = 0;  // the path or URL, for messages
  virtual std::uint64_t size() const noexcept = 0;
  // Up to out.size() bytes from `offset` (fewer only at the end); `got` says how many.
  virtual Status read(std::uint64_t offset, std::span<char> out, std::size_t& got) = 0;
};
Status open_file_input(const std::filesystem::path& path, std::unique_ptr<ByteInput>& out);

// The `fields` record encoding: a u32 field count, then per field a u32 length and its bytes
// (host order; records never leave the process). A record that could not be split (a CSV
// line with an unterminated quote) is a count of kBadRecord followed by the reason.
inline constexpr std::uint32_t kBadRecord = 0xffffffffu;
void begin_fields(std::string& record);
void append_field(std::string& record, std::size_t record_start, std::string_view field);
void append_bad_record(std::string& record, std::string_view reason);
// A JSONL line that could not be kept (longer than kMaxRecordBytes): '\0' and the reason.
void append_bad_line(std::string& record, std::string_view reason);

// The longest record a file source keeps (a JSONL line, a CSV record): a longer one is read
// past and handed on as a bad record, so one runaway line cannot take the memory.
inline constexpr std::size_t kMaxRecordBytes = 64u << 20;

// JSON Lines: one row per line ('\n', an optional '\r' dropped). A blank line is a row (which
// its decoder refuses), except a final '\n' at the end of the file.
Status open_jsonl(const std::filesystem::path& path, std::unique_ptr<RowSource>& out);
// CSV (RFC 4180: ',' separated, '"' quoted with "" for a quote, quoted fields may hold
// newlines); the first record is the header naming the columns.
Status open_csv(const std::filesystem::path& path, std::unique_ptr<RowSource>& out);
// A NumPy .npy array ('<f4', '<f8', '<i4', '<i8', C order); row r is the array's [r, ...].
// Read with pread, never mapped whole, so memory stays flat whatever the file's size.
Status open_npy(const std::filesystem::path& path, std::unique_ptr<RowSource>& out);
// The same over any input.
Status open_jsonl(std::unique_ptr<ByteInput> input, std::unique_ptr<RowSource>& out);
Status open_csv(std::unique_ptr<ByteInput> input, std::unique_ptr<RowSource>& out);
Status open_npy(std::unique_ptr<ByteInput> input, std::unique_ptr<RowSource>& out);

// Several inputs read one after another as one (the objects under an S3 prefix): row indexes
// continue from one to the next. A part is opened when the one before it ends, so one is
// open at a time (the first at once). Every CSV part has its own header naming the same
// columns; .npy parts hold the same dtype and row shape.
struct InputPart {
  std::string name;
  std::uint64_t size = 0;  // bytes, for the progress display
  std::function<Status(std::unique_ptr<RowSource>&)> open;
};
Status open_concatenated(std::vector<InputPart> parts, std::unique_ptr<RowSource>& out);

// What the model takes from a row: `width` numbers (an FP32 [-1, width] input) or one text.
enum class InputKind { numbers, text };

struct DecodeOptions {
  InputKind kind = InputKind::numbers;
  std::int64_t width = 0;  // numbers per row (numbers)
  // JSONL: the field holding the numbers (an array, nested arrays flattened) or the text.
  std::string field;
  // fields sources: the columns holding the numbers, one number each, or a single column
  // holding them all as an array ("[1, 2]" or PostgreSQL's "{1,2}"), or the text's column.
  // Empty for numbers: every column but the id column.
  std::vector<std::string> columns;
  // The field or column holding the row's id; empty: the row's index is its id.
  std::string id_field;
};

struct DecodedRow {
  std::string_view id;      // empty: the row's index is its id
  bool id_is_json = false;  // `id` is a JSON token (number or string), else plain text
  std::string_view text;    // InputKind::text; valid until the next decode
};

// Turns records into model input. One per worker thread (it keeps parser state).
class RowDecoder {
 public:
  virtual ~RowDecoder() = default;
  // numbers: writes exactly `numbers.size()` values; text: sets row.text. Errors name what
  // is wrong with the row ("field 'pixels': 63 numbers, the model takes 64").
  virtual Status decode(std::string_view record, std::span<float> numbers, DecodedRow& row) = 0;
};

// Checks the options against the source (a named column exists, an .npy row has `width`
// values) and builds a decoder; errors name the option.
Status make_decoder(const RowSource& source, const DecodeOptions& options,
                    std::unique_ptr<RowDecoder>& out);

// The JSON form of a row's id: JSON ids verbatim, an integer-looking text as a number, any
// other text as a string; `index` when there is no id.
void append_id_json(std::string& out, const DecodedRow& row, std::int64_t index);

}  // namespace coinfer::offline
