#include "coinfer/offline/sources.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <charconv>
#include <cstring>
#include <optional>
#include <simdjson.h>
#include <sys/stat.h>

#include "coinfer/core/json_writer.hpp"

namespace coinfer::offline {
namespace {

Status io_error(const std::filesystem::path& path, const char* what) {
  return Status::invalid(std::string(what) + " " + path.string() + ": " + std::strerror(errno));
}

// A local file, read with pread (the kernel is told it is read front to back).
class FileInput final : public ByteInput {
 public:
  FileInput() = default;
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;
  ~FileInput() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Status open(const std::filesystem::path& path) {
    name_ = path.string();
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return io_error(path, "cannot open");
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return io_error(path, "cannot stat");
    size_ = static_cast<std::uint64_t>(st.st_size);
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    return {};
  }
  const std::string& name() const noexcept override { return name_; }
  std::uint64_t size() const noexcept override { return size_; }
  Status read(std::uint64_t offset, std::span<char> out, std::size_t& got) override {
    got = 0;
    while (got < out.size()) {
      const ssize_t n = ::pread(fd_, out.data() + got, out.size() - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return io_error(name_, "cannot read");
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    return {};
  }

 private:
  std::string name_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// Sequential reads of an input in large blocks.
class FileReader {
 public:
  explicit FileReader(std::unique_ptr<ByteInput> input) : input_(std::move(input)) {
    buffer_.resize(1 << 20);
  }
  const ByteInput& input() const noexcept { return *input_; }
  // The unread bytes in the buffer, refilled when empty; empty at the end of the input.
  Status fill(std::string_view& out) {
    if (begin_ == end_) {
      std::size_t n = 0;
      if (auto status = input_->read(offset_, buffer_, n); !status.ok()) return status;
      offset_ += n;
      begin_ = 0;
      end_ = n;
    }
    out = {buffer_.data() + begin_, end_ - begin_};
    return {};
  }
  void consume(std::size_t n) {
    begin_ += n;
    consumed_.store(consumed_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  // Read by the progress display's thread.
  double fraction() const noexcept {
    return input_->size() == 0 ? 1.0
                               : static_cast<double>(consumed_.load(std::memory_order_relaxed)) /
                                     static_cast<double>(input_->size());
  }

 private:
  std::unique_ptr<ByteInput> input_;
  std::uint64_t offset_ = 0;
  std::atomic<std::uint64_t> consumed_{0};
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
};

class JsonlSource final : public RowSource {
 public:
  explicit JsonlSource(std::unique_ptr<ByteInput> input) : file_(std::move(input)) {}
  RecordFormat format() const noexcept override { return RecordFormat::json_line; }
  double fraction_read() const noexcept override { return file_.fraction(); }

  Status next(std::string& out, bool& end) override {
    const std::size_t start = out.size();
    bool any = false, too_long = false;
    while (true) {
      std::string_view block;
      if (auto status = file_.fill(block); !status.ok()) return status;
      if (block.empty()) break;  // end of file
      any = true;
      const auto* nl = static_cast<const char*>(std::memchr(block.data(), '\n', block.size()));
      const std::size_t n = nl ? static_cast<std::size_t>(nl - block.data()) : block.size();
      // A line past the limit is read through (to stay in step) but not kept.
      if (!too_long && out.size() - start + n > kMaxRecordBytes) {
        too_long = true;
        out.resize(start);
        append_bad_line(out, "a line longer than " + std::to_string(kMaxRecordBytes >> 20) + " MiB");
      }
      if (!too_long) out.append(block.data(), n);
      file_.consume(nl ? n + 1 : n);
      if (nl) break;
    }
    end = !any;  // a last line without '\n' is a row; nothing left is the end
    if (!end && !too_long && out.size() > start && out.back() == '\r') out.pop_back();
    // A leading NUL marks a bad line (append_bad_line): a line of the file that starts with
    // one (not JSON anyway) becomes such a line, with its own reason.
    if (!too_long && out.size() > start && out[start] == '\0') {
      out.resize(start);
      append_bad_line(out, "a line starting with a NUL byte (not JSON)");
    }
    return {};
  }

  Status skip(std::int64_t n, bool& end) override {
    end = false;
    bool in_line = false;  // the last block ended inside a line
    while (n > 0) {
      std::string_view block;
      if (auto status = file_.fill(block); !status.ok()) return status;
      if (block.empty()) {
        if (in_line) --n;  // the file's last line, without '\n', is a row
        end = n > 0;
        return {};
      }
      const char* p = block.data();
      const char* last = p + block.size();
      while (n > 0 && p < last) {
        const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(last - p)));
        if (!nl) {
          in_line = true;
          p = last;
          break;
        }
        p = nl + 1;
        in_line = false;
        --n;
      }
      file_.consume(static_cast<std::size_t>(p - block.data()));
    }
    return {};
  }

 private:
  FileReader file_;
};

class CsvSource final : public RowSource {
 public:
  explicit CsvSource(std::unique_ptr<ByteInput> input) : file_(std::move(input)) {}
  Status open() {
    std::string header;
    bool end = false;
    if (auto status = next(header, end); !status.ok()) return status;
    if (end) return Status::invalid("csv: " + file_.input().name() + " is empty (no header)");
    std::uint32_t count;
    std::memcpy(&count, header.data(), 4);
    if (count == kBadRecord) return Status::invalid("csv: header: " + header.substr(4));
    if (count > 0 && header.compare(8, 3, "\xEF\xBB\xBF") == 0) {  // a UTF-8 byte order mark
      std::uint32_t n;
      std::memcpy(&n, header.data() + 4, 4);
      n -= 3;
      header.erase(8, 3);
      std::memcpy(header.data() + 4, &n, 4);
    }
    std::size_t at = 4;
    for (std::uint32_t i = 0; i < count; ++i) {
      std::uint32_t n;
      std::memcpy(&n, header.data() + at, 4);
      columns_.emplace_back(header.substr(at + 4, n));
      at += 4 + n;
    }
    return {};
  }
  RecordFormat format() const noexcept override { return RecordFormat::fields; }
  std::span<const std::string> columns() const noexcept override { return columns_; }
  double fraction_read() const noexcept override { return file_.fraction(); }

  // Splits one record into fields, a byte at a time (quotes may hold separators and newlines).
  Status next(std::string& out, bool& end) override {
    const std::size_t start = out.size();
    begin_fields(out);
    field_.clear();
    bool quoted = false, after_quote = false, any = false, field_started = false;
    while (true) {
      std::string_view block;
      if (auto status = file_.fill(block); !status.ok()) return status;
      if (block.empty()) break;
      any = true;
      std::size_t i = 0;
      for (; i < block.size(); ++i) {
        if (out.size() - start + field_.size() > kMaxRecordBytes) {
          // Past the limit (a huge field, or a quote that never closes): the record is bad and
          // reading starts again after the next newline, quotes or not.
          file_.consume(i);
          if (auto status = skip_line(); !status.ok()) return status;
          out.resize(start);
          append_bad_record(out, "a record longer than " + std::to_string(kMaxRecordBytes >> 20) +
                                     " MiB (a quote that never closes?)");
          end = false;
          return {};
        }
        const char c = block[i];
        if (quoted) {
          if (c == '"') {
            quoted = false;
            after_quote = true;
          } else {
            field_ += c;
          }
          continue;
        }
        if (c == '"') {
          if (after_quote) {  // "" inside a quoted field
            field_ += '"';
            quoted = true;
            after_quote = false;
          } else if (!field_started) {
            quoted = true;
            field_started = true;
          } else {
            field_ += c;  // a quote inside an unquoted field: kept, as most readers do
          }
          continue;
        }
        after_quote = false;
        if (c == ',') {
          append_field(out, start, field_);
          field_.clear();
          field_started = false;
        } else if (c == '\n') {
          if (!field_.empty() && field_.back() == '\r') field_.pop_back();
          append_field(out, start, field_);
          file_.consume(i + 1);
          end = false;
          return {};
        } else {
          field_ += c;
          field_started = true;
        }
      }
      file_.consume(i);
    }
    if (!any) {
      out.resize(start);
      end = true;
      return {};
    }
    end = false;
    if (quoted) {
      out.resize(start);
      append_bad_record(out, "unterminated quoted field at the end of the file");
      return {};
    }
    if (!field_.empty() && field_.back() == '\r') field_.pop_back();
    append_field(out, start, field_);
    return {};
  }

 private:
  FileReader file_;
  Status skip_line() {
    while (true) {
      std::string_view block;
      if (auto status = file_.fill(block); !status.ok()) return status;
      if (block.empty()) return {};
      const auto* nl = static_cast<const char*>(std::memchr(block.data(), '\n', block.size()));
      if (nl) {
        file_.consume(static_cast<std::size_t>(nl - block.data()) + 1);
        return {};
      }
      file_.consume(block.size());
    }
  }

  std::vector<std::string> columns_;
  std::string field_;
};

class NpySource final : public RowSource {
 public:
  explicit NpySource(std::unique_ptr<ByteInput> input) : file_(std::move(input)) {}
  Status open() {
    std::string start(std::min<std::uint64_t>(file_->size(), 1 << 20), '\0');
    std::size_t got = 0;
    if (auto status = file_->read(0, start, got); !status.ok()) return status;
    start.resize(got);
    if (auto status = parse_npy_header(start, file_->size(), header_); !status.ok())
      return Status::invalid(file_->name() + ": " + status.message());
    row_bytes_ = header_.row_bytes();
    return {};
  }
  RecordFormat format() const noexcept override { return RecordFormat::npy_row; }
  std::int64_t total_rows() const noexcept override { return header_.shape[0]; }
  double fraction_read() const noexcept override {
    return header_.shape[0] == 0 ? 1.0
                                 : static_cast<double>(progress_.load(std::memory_order_relaxed)) /
                                       static_cast<double>(header_.shape[0]);
  }
  const NpyHeader* npy_header() const noexcept override { return &header_; }

  Status next(std::string& out, bool& end) override {
    end = row_ >= header_.shape[0];
    if (end) return {};
    // Rows come from a block read ahead, so a row costs a copy, not a system call.
    if (row_ >= block_first_ + block_rows_) {
      const std::int64_t rows = std::min<std::int64_t>(
          header_.shape[0] - row_,
          std::max<std::int64_t>(1, static_cast<std::int64_t>((1u << 20) / std::max<std::uint64_t>(row_bytes_, 1))));
      block_.resize(static_cast<std::size_t>(rows) * row_bytes_);
      std::size_t done = 0;
      const std::uint64_t offset = header_.data_offset + static_cast<std::uint64_t>(row_) * row_bytes_;
      if (auto status = file_->read(offset, block_, done); !status.ok()) return status;
      if (done != block_.size())
        return Status::invalid(file_->name() + ": ends inside row " + std::to_string(row_) + " (truncated?)");
      block_first_ = row_;
      block_rows_ = rows;
    }
    out.append(block_.data() + static_cast<std::size_t>(row_ - block_first_) * row_bytes_, row_bytes_);
    ++row_;
    progress_.store(row_, std::memory_order_relaxed);
    return {};
  }
  Status skip(std::int64_t n, bool& end) override {
    row_ = std::min(header_.shape[0], row_ + n);
    progress_.store(row_, std::memory_order_relaxed);
    end = row_ >= header_.shape[0];
    return {};
  }

 private:
  std::unique_ptr<ByteInput> file_;
  NpyHeader header_;
  std::uint64_t row_bytes_ = 0;
  std::int64_t row_ = 0, block_first_ = 0, block_rows_ = 0;
  std::atomic<std::int64_t> progress_{0};  // row_, for the progress display's thread
  std::string block_;
};

// ---- decoders ------------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

Status parse_number(std::string_view text, float& out) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc::result_out_of_range)
    return Status::invalid("'" + std::string(text.substr(0, 40)) + "' is out of FP32's range");
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(out))
    return Status::invalid("'" + std::string(text.substr(0, 40)) + "' is not a number");
  return {};
}

class JsonDecoder final : public RowDecoder {
 public:
  explicit JsonDecoder(DecodeOptions options) : options_(std::move(options)) {}

  Status decode(std::string_view record, std::span<float> numbers, DecodedRow& row) override {
    if (!record.empty() && record.front() == '\0')
      return Status::invalid(record.size() > 1 ? std::string(record.substr(1)) : "not JSON");
    if (trim(record).empty()) return Status::invalid("empty line");
    padded_.assign(record);
    padded_.append(simdjson::SIMDJSON_PADDING, ' ');
    simdjson::ondemand::document doc;
    if (auto error = parser_.iterate(padded_.data(), record.size(), padded_.size()).get(doc))
      return Status::invalid(std::string("invalid JSON: ") + simdjson::error_message(error));
    simdjson::ondemand::object object;
    if (auto error = doc.get_object().get(object))
      return Status::invalid(error == simdjson::INCORRECT_TYPE
                                 ? "expected a JSON object, one per line"
                                 : std::string("invalid JSON: ") + simdjson::error_message(error));
    if (!options_.id_field.empty()) {
      simdjson::ondemand::value id;
      if (object.find_field_unordered(options_.id_field).get(id))
        return Status::invalid("no field '" + options_.id_field + "' (the id)");
      simdjson::ondemand::json_type type;
      if (id.type().get(type) ||
          (type != simdjson::ondemand::json_type::number && type != simdjson::ondemand::json_type::string))
        return Status::invalid("field '" + options_.id_field + "' (the id): expected a string or a number");
      // The id as JSON, checked (on-demand parsing validates only what is read): a number as
      // written, a string re-encoded.
      id_json_.assign(trim(id.raw_json_token()));
      if (type == simdjson::ondemand::json_type::number) {
        double d;
        if (id.get_double().get(d))
          return Status::invalid("field '" + options_.id_field + "' (the id): not a valid number");
      } else {
        std::string_view text;
        if (id.get_string().get(text))
          return Status::invalid("field '" + options_.id_field + "' (the id): not a valid string");
        id_json_.clear();
        json_append_string(id_json_, text);
      }
      row.id = id_json_;
      row.id_is_json = true;
    }
    simdjson::ondemand::value value;
    if (auto error = object.find_field_unordered(options_.field).get(value))
      return Status::invalid(error == simdjson::NO_SUCH_FIELD ? "no field '" + options_.field + "'"
                                                              : std::string("invalid JSON: ") +
                                                                    simdjson::error_message(error));
    if (options_.kind == InputKind::text) {
      if (value.get_string().get(row.text))
        return Status::invalid("field '" + options_.field + "': expected a string");
      return {};
    }
    std::size_t count = 0;
    if (auto status = flatten(value, numbers, count, 0); !status.ok()) return status;
    if (count != numbers.size())
      return Status::invalid("field '" + options_.field + "': " + std::to_string(count) +
                             " numbers, the model takes " + std::to_string(numbers.size()));
    return {};
  }

 private:
  Status flatten(simdjson::ondemand::value value, std::span<float> numbers, std::size_t& count,
                 int depth) {
    simdjson::ondemand::array array;
    if (value.get_array().get(array))
      return Status::invalid("field '" + options_.field + "': expected an array of numbers");
    if (depth > 8) return Status::invalid("field '" + options_.field + "': arrays nested too deep");
    for (auto element : array) {
      simdjson::ondemand::value v;
      if (auto error = element.get(v))
        return Status::invalid(std::string("invalid JSON: ") + simdjson::error_message(error));
      simdjson::ondemand::json_type type;
      if (auto error = v.type().get(type))
        return Status::invalid(std::string("invalid JSON: ") + simdjson::error_message(error));
      if (type == simdjson::ondemand::json_type::array) {
        if (auto status = flatten(v, numbers, count, depth + 1); !status.ok()) return status;
        continue;
      }
      double d;
      if (v.get_double().get(d))
        return Status::invalid("field '" + options_.field + "'[" + std::to_string(count) +
                               "]: expected a number");
      if (count < numbers.size()) {
        numbers[count] = static_cast<float>(d);
        if (!std::isfinite(numbers[count]))
          return Status::invalid("field '" + options_.field + "'[" + std::to_string(count) +
                                 "]: out of FP32's range");
      }
      ++count;
    }
    return {};
  }

  DecodeOptions options_;
  simdjson::ondemand::parser parser_;
  std::string padded_;
  std::string id_json_;
};

class FieldsDecoder final : public RowDecoder {
 public:
  FieldsDecoder(DecodeOptions options, std::vector<int> value_columns, int id_column,
                std::vector<std::string> names, std::size_t expected)
      : options_(std::move(options)),
        value_columns_(std::move(value_columns)),
        id_column_(id_column),
        names_(std::move(names)),
        expected_(expected) {}

  Status decode(std::string_view record, std::span<float> numbers, DecodedRow& row) override {
    std::uint32_t count;
    std::memcpy(&count, record.data(), 4);
    if (count == kBadRecord) return Status::invalid(std::string(record.substr(4)));
    fields_.clear();
    std::size_t at = 4;
    for (std::uint32_t i = 0; i < count; ++i) {
      std::uint32_t n;
      std::memcpy(&n, record.data() + at, 4);
      fields_.push_back(record.substr(at + 4, n));
      at += 4 + n;
    }
    if (fields_.size() != expected_)
      return Status::invalid(std::to_string(fields_.size()) + " fields, the header has " +
                             std::to_string(expected_));
    if (id_column_ >= 0) {
      row.id = fields_[static_cast<std::size_t>(id_column_)];
      row.id_is_json = false;
      if (row.id.empty()) return Status::invalid("column '" + options_.id_field + "' (the id) is empty");
    }
    if (options_.kind == InputKind::text) {
      row.text = fields_[static_cast<std::size_t>(value_columns_[0])];
      return {};
    }
    if (value_columns_.size() == 1 && numbers.size() != 1) {
      // One column holding the whole array: "[1, 2, 3]" or PostgreSQL's "{1,2,3}".
      std::string_view list = trim(fields_[static_cast<std::size_t>(value_columns_[0])]);
      const std::string& name = names_[static_cast<std::size_t>(value_columns_[0])];
      if (list.size() < 2 || !((list.front() == '[' && list.back() == ']') ||
                               (list.front() == '{' && list.back() == '}')))
        return Status::invalid("column '" + name + "': expected an array of " +
                               std::to_string(numbers.size()) + " numbers");
      list = list.substr(1, list.size() - 2);
      std::size_t n = 0;
      while (!trim(list).empty()) {
        const std::size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        if (n < numbers.size()) {
          if (auto status = parse_number(item, numbers[n]); !status.ok())
            return Status::invalid("column '" + name + "'[" + std::to_string(n) + "]: " + status.message());
        }
        ++n;
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
      if (n != numbers.size())
        return Status::invalid("column '" + name + "': " + std::to_string(n) +
                               " numbers, the model takes " + std::to_string(numbers.size()));
      return {};
    }
    for (std::size_t i = 0; i < value_columns_.size(); ++i) {
      const auto column = static_cast<std::size_t>(value_columns_[i]);
      if (auto status = parse_number(fields_[column], numbers[i]); !status.ok())
        return Status::invalid("column '" + names_[column] + "': " + status.message());
    }
    return {};
  }

 private:
  DecodeOptions options_;
  std::vector<int> value_columns_;
  int id_column_;
  std::vector<std::string> names_;
  std::size_t expected_;
  std::vector<std::string_view> fields_;
};

class NpyDecoder final : public RowDecoder {
 public:
  explicit NpyDecoder(DType dtype) : dtype_(dtype) {}
  Status decode(std::string_view record, std::span<float> numbers, DecodedRow&) override {
    const char* p = record.data();
    switch (dtype_) {
      case DType::FP32: std::memcpy(numbers.data(), p, numbers.size() * 4); break;
      case DType::FP64: convert<double>(p, numbers); break;
      case DType::Int32: convert<std::int32_t>(p, numbers); break;
      case DType::Int64: convert<std::int64_t>(p, numbers); break;
      default: return Status::invalid("npy: unsupported dtype");
    }
    for (float v : numbers)
      if (!std::isfinite(v)) return Status::invalid("a value is NaN or infinite");
    return {};
  }

 private:
  template <class T>
  static void convert(const char* p, std::span<float> numbers) {
    for (std::size_t i = 0; i < numbers.size(); ++i) {
      T v;
      std::memcpy(&v, p + i * sizeof(T), sizeof(T));
      numbers[i] = static_cast<float>(v);
    }
  }
  DType dtype_;
};

}  // namespace

Status RowSource::skip(std::int64_t n, bool& end) {
  std::string scratch;
  end = false;
  for (; n > 0 && !end; --n) {
    scratch.clear();
    if (auto status = next(scratch, end); !status.ok()) return status;
  }
  return {};
}

void begin_fields(std::string& record) { record.append(4, '\0'); }

void append_field(std::string& record, std::size_t record_start, std::string_view field) {
  std::uint32_t count;
  std::memcpy(&count, record.data() + record_start, 4);
  ++count;
  std::memcpy(record.data() + record_start, &count, 4);
  const auto n = static_cast<std::uint32_t>(field.size());
  record.append(reinterpret_cast<const char*>(&n), 4);
  record.append(field);
}

void append_bad_line(std::string& record, std::string_view reason) {
  record += '\0';
  record.append(reason);
}

void append_bad_record(std::string& record, std::string_view reason) {
  const std::uint32_t bad = kBadRecord;
  record.append(reinterpret_cast<const char*>(&bad), 4);
  record.append(reason);
}

Status open_file_input(const std::filesystem::path& path, std::unique_ptr<ByteInput>& out) {
  auto input = std::make_unique<FileInput>();
  if (auto status = input->open(path); !status.ok()) return status;
  out = std::move(input);
  return {};
}

Status open_jsonl(std::unique_ptr<ByteInput> input, std::unique_ptr<RowSource>& out) {
  out = std::make_unique<JsonlSource>(std::move(input));
  return {};
}

Status open_csv(std::unique_ptr<ByteInput> input, std::unique_ptr<RowSource>& out) {
  auto source = std::make_unique<CsvSource>(std::move(input));
  if (auto status = source->open(); !status.ok()) return status;
  out = std::move(source);
  return {};
}

Status open_npy(std::unique_ptr<ByteInput> input, std::unique_ptr<RowSource>& out) {
  auto source = std::make_unique<NpySource>(std::move(input));
  if (auto status = source->open(); !status.ok()) return status;
  out = std::move(source);
  return {};
}

Status open_jsonl(const std::filesystem::path& path, std::unique_ptr<RowSource>& out) {
  std::unique_ptr<ByteInput> input;
  if (auto status = open_file_input(path, input); !status.ok()) return status;
  return open_jsonl(std::move(input), out);
}

Status open_csv(const std::filesystem::path& path, std::unique_ptr<RowSource>& out) {
  std::unique_ptr<ByteInput> input;
  if (auto status = open_file_input(path, input); !status.ok()) return status;
  return open_csv(std::move(input), out);
}

Status open_npy(const std::filesystem::path& path, std::unique_ptr<RowSource>& out) {
  std::unique_ptr<ByteInput> input;
  if (auto status = open_file_input(path, input); !status.ok()) return status;
  return open_npy(std::move(input), out);
}

namespace {

class ConcatenatedSource final : public RowSource {
 public:
  explicit ConcatenatedSource(std::vector<InputPart> parts) : parts_(std::move(parts)) {
    for (const auto& p : parts_) total_bytes_ += p.size;
  }
  Status open() {
    if (parts_.empty()) return Status::invalid("no input objects");
    return parts_[0].open(current_);
  }
  RecordFormat format() const noexcept override { return current_->format(); }
  std::span<const std::string> columns() const noexcept override { return columns_.empty() ? current_->columns() : std::span<const std::string>(columns_); }
  const NpyHeader* npy_header() const noexcept override { return first_npy_ ? &*first_npy_ : current_->npy_header(); }
  std::int64_t total_rows() const noexcept override { return parts_.size() == 1 ? current_->total_rows() : -1; }
  double fraction_read() const noexcept override {
    if (total_bytes_ == 0) return -1;
    const std::size_t at = at_.load(std::memory_order_relaxed);
    const double current = at < parts_.size() ? std::max(0.0, fraction_.load(std::memory_order_relaxed)) * static_cast<double>(parts_[at].size) : 0.0;
    return (static_cast<double>(done_bytes_.load(std::memory_order_relaxed)) + current) / static_cast<double>(total_bytes_);
  }

  Status next(std::string& out, bool& end) override {
    for (;;) {
      if (auto status = current_->next(out, end); !status.ok()) return status;
      fraction_.store(current_->fraction_read(), std::memory_order_relaxed);
      if (!end) return {};
      const std::size_t at = at_.load(std::memory_order_relaxed);
      if (at + 1 >= parts_.size()) return {};
      // The next part, checked against the first.
      if (columns_.empty()) columns_.assign(current_->columns().begin(), current_->columns().end());
      if (!first_npy_ && current_->npy_header()) first_npy_ = *current_->npy_header();
      done_bytes_.store(done_bytes_.load(std::memory_order_relaxed) + parts_[at].size, std::memory_order_relaxed);
      std::unique_ptr<RowSource> next;
      if (auto status = parts_[at + 1].open(next); !status.ok()) return status;
      const std::string& name = parts_[at + 1].name;
      if (next->format() != current_->format()) return Status::invalid(name + ": another format than " + parts_[0].name);
      if (next->format() == RecordFormat::fields &&
          !std::equal(columns_.begin(), columns_.end(), next->columns().begin(), next->columns().end()))
        return Status::invalid(name + ": its header names other columns than " + parts_[0].name + "'s");
      if (const NpyHeader* h = next->npy_header();
          h && first_npy_ && (h->dtype != first_npy_->dtype || h->row_bytes() != first_npy_->row_bytes() ||
                              !std::equal(h->shape.begin() + 1, h->shape.end(), first_npy_->shape.begin() + 1, first_npy_->shape.end())))
        return Status::invalid(name + ": an array of another dtype or row shape than " + parts_[0].name);
      current_ = std::move(next);
      at_.store(at + 1, std::memory_order_relaxed);
      fraction_.store(0, std::memory_order_relaxed);
    }
  }

 private:
  std::vector<InputPart> parts_;
  std::unique_ptr<RowSource> current_;
  std::vector<std::string> columns_;
  std::optional<NpyHeader> first_npy_;
  std::uint64_t total_bytes_ = 0;
  // For the progress display's thread.
  std::atomic<std::size_t> at_{0};
  std::atomic<std::uint64_t> done_bytes_{0};
  std::atomic<double> fraction_{0};
};

}  // namespace

Status open_concatenated(std::vector<InputPart> parts, std::unique_ptr<RowSource>& out) {
  auto source = std::make_unique<ConcatenatedSource>(std::move(parts));
  if (auto status = source->open(); !status.ok()) return status;
  out = std::move(source);
  return {};
}

Status make_decoder(const RowSource& source, const DecodeOptions& options,
                    std::unique_ptr<RowDecoder>& out) {
  if (options.kind == InputKind::numbers && options.width <= 0)
    return Status::invalid("the model's input width is unknown");
  switch (source.format()) {
    case RecordFormat::json_line:
      if (options.field.empty())
        return Status::invalid("--field: name the JSON field holding each row's " +
                               std::string(options.kind == InputKind::text ? "text" : "numbers"));
      out = std::make_unique<JsonDecoder>(options);
      return {};
    case RecordFormat::npy_row: {
      const NpyHeader* header = source.npy_header();
      if (options.kind == InputKind::text) return Status::invalid("an .npy input holds numbers, the model takes text");
      const auto width = static_cast<std::int64_t>(header->row_bytes() / element_size(header->dtype));
      if (width != options.width)
        return Status::invalid("the .npy rows have " + std::to_string(width) +
                               " values (shape " + to_string(header->shape) + "), the model takes " +
                               std::to_string(options.width));
      if (!options.id_field.empty()) return Status::invalid("--id-field: an .npy input has no fields");
      out = std::make_unique<NpyDecoder>(header->dtype);
      return {};
    }
    case RecordFormat::fields: {
      const auto names = source.columns();
      auto index_of = [&](const std::string& name) -> int {
        const auto it = std::find(names.begin(), names.end(), name);
        return it == names.end() ? -1 : static_cast<int>(it - names.begin());
      };
      auto unknown = [&](const std::string& option, const std::string& name) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        return Status::invalid(option + ": no column '" + name + "' (columns: " + list + ")");
      };
      int id_column = -1;
      if (!options.id_field.empty()) {
        id_column = index_of(options.id_field);
        if (id_column < 0) return unknown("--id-field", options.id_field);
      }
      std::vector<std::string> wanted = options.columns;
      if (wanted.empty() && !options.field.empty()) wanted.push_back(options.field);
      if (wanted.empty() && options.kind == InputKind::numbers) {
        for (int i = 0; i < static_cast<int>(names.size()); ++i)
          if (i != id_column) wanted.push_back(names[static_cast<std::size_t>(i)]);
      }
      if (wanted.empty()) return Status::invalid("--columns: name the column holding each row's text");
      std::vector<int> value_columns;
      for (const auto& name : wanted) {
        const int i = index_of(name);
        if (i < 0) return unknown("--columns", name);
        value_columns.push_back(i);
      }
      if (options.kind == InputKind::text && value_columns.size() != 1)
        return Status::invalid("--columns: the model takes one text; name one column");
      if (options.kind == InputKind::numbers && value_columns.size() != 1 &&
          static_cast<std::int64_t>(value_columns.size()) != options.width)
        return Status::invalid("--columns: " + std::to_string(value_columns.size()) +
                               " columns, the model takes " + std::to_string(options.width) +
                               " numbers (name that many, or one column holding an array)");
      out = std::make_unique<FieldsDecoder>(options, std::move(value_columns), id_column,
                                            std::vector<std::string>(names.begin(), names.end()),
                                            names.size());
      return {};
    }
  }
  return Status::invalid("unknown record format");
}

void append_id_json(std::string& out, const DecodedRow& row, std::int64_t index) {
  if (row.id.empty()) {
    json_append_number(out, index);
    return;
  }
  if (row.id_is_json) {
    out += row.id;
    return;
  }
  std::string_view digits = row.id;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  const bool integer = !digits.empty() && digits.size() <= 18 &&
                       (digits.size() == 1 || digits.front() != '0') &&
                       std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (integer) out += row.id;
  else json_append_string(out, row.id);
}

}  // namespace coinfer::offline
