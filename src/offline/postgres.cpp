#include "coinfer/offline/postgres.hpp"

#include <libpq-fe.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <simdjson.h>

namespace coinfer::offline {
namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

struct ConnectionDeleter {
  void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
using Connection = std::unique_ptr<PGconn, ConnectionDeleter>;

std::string message_of(PGconn* c) {
  std::string m = PQerrorMessage(c);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

Status connect(const std::string& connection, Connection& out) {
  out.reset(PQconnectdb(connection.c_str()));
  if (!out || PQstatus(out.get()) != CONNECTION_OK)
    return Status::invalid("postgresql: cannot connect: " + (out ? message_of(out.get()) : "out of memory"));
  return {};
}

// Runs `sql`; an error names what was being done.
Status exec(PGconn* c, const std::string& sql, const char* doing, Result* out = nullptr,
            ExecStatusType expect = PGRES_COMMAND_OK) {
  Result r(PQexec(c, sql.c_str()));
  if (!r || PQresultStatus(r.get()) != expect)
    return Status::invalid(std::string("postgresql: ") + doing + ": " + message_of(c));
  if (out) *out = std::move(r);
  return {};
}

Status exec_params(PGconn* c, const std::string& sql, std::initializer_list<std::string> params,
                   const char* doing, Result* out = nullptr, ExecStatusType expect = PGRES_COMMAND_OK) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  Result r(PQexecParams(c, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                        nullptr, nullptr, 0));
  if (!r || PQresultStatus(r.get()) != expect)
    return Status::invalid(std::string("postgresql: ") + doing + ": " + message_of(c));
  if (out) *out = std::move(r);
  return {};
}

std::string identifier(PGconn* c, const std::string& name) {
  char* quoted = PQescapeIdentifier(c, name.c_str(), name.size());
  std::string out = quoted ? quoted : "\"\"";
  PQfreemem(quoted);
  return out;
}

class PostgresSource final : public RowSource {
 public:
  Status open(const std::string& connection, const std::string& query, int fetch_rows) {
    fetch_ = "FETCH FORWARD " + std::to_string(fetch_rows) + " FROM coinfer_rows";
    if (auto status = connect(connection, conn_); !status.ok()) return status;
    if (auto status = exec(conn_.get(), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "begin");
        !status.ok())
      return status;
    if (auto status = exec(conn_.get(), "DECLARE coinfer_rows NO SCROLL CURSOR FOR " + query,
                           "the --query");
        !status.ok())
      return status;
    if (auto status = fetch(); !status.ok()) return status;
    for (int i = 0; i < PQnfields(rows_.get()); ++i) columns_.emplace_back(PQfname(rows_.get(), i));
    return {};
  }
  RecordFormat format() const noexcept override { return RecordFormat::fields; }
  std::span<const std::string> columns() const noexcept override { return columns_; }

  Status next(std::string& out, bool& end) override {
    if (row_ >= PQntuples(rows_.get())) {
      if (exhausted_) {
        end = true;
        return {};
      }
      if (auto status = fetch(); !status.ok()) return status;
      if (PQntuples(rows_.get()) == 0) {
        end = true;
        return {};
      }
    }
    end = false;
    const std::size_t start = out.size();
    begin_fields(out);
    for (int i = 0; i < PQnfields(rows_.get()); ++i)
      append_field(out, start,
                   std::string_view(PQgetvalue(rows_.get(), row_, i),
                                    static_cast<std::size_t>(PQgetlength(rows_.get(), row_, i))));
    ++row_;
    return {};
  }

  Status skip(std::int64_t n, bool& end) override {
    const std::int64_t buffered = std::min<std::int64_t>(n, PQntuples(rows_.get()) - row_);
    row_ += static_cast<int>(buffered);
    n -= buffered;
    end = false;
    if (n == 0) return {};
    if (exhausted_) {
      end = true;
      return {};
    }
    Result moved;
    if (auto status = exec(conn_.get(), "MOVE FORWARD " + std::to_string(n) + " FROM coinfer_rows",
                           "skipping rows", &moved);
        !status.ok())
      return status;
    const char* count = PQcmdTuples(moved.get());
    std::int64_t skipped = 0;
    std::from_chars(count, count + std::strlen(count), skipped);
    if (skipped < n) {
      exhausted_ = true;
      end = true;
    }
    return {};
  }

 private:
  Status fetch() {
    Result r;
    if (auto status = exec(conn_.get(), fetch_, "fetching rows", &r, PGRES_TUPLES_OK); !status.ok())
      return status;
    rows_ = std::move(r);
    row_ = 0;
    return {};
  }

  Connection conn_;
  std::string fetch_;
  Result rows_;
  int row_ = 0;
  bool exhausted_ = false;
  std::vector<std::string> columns_;
};

// COPY's text format: backslash escapes for the separator, newlines and backslash.
void append_copy_text(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

// A JSON id as plain text: strings unquoted and unescaped, numbers as they are.
void append_id_text(std::string& out, std::string_view json, simdjson::dom::parser& parser) {
  if (json.empty() || json.front() != '"') {
    append_copy_text(out, json);
    return;
  }
  std::string_view text;
  if (parser.parse(json.data(), json.size()).get(text)) text = json;  // cannot happen: we wrote it
  append_copy_text(out, text);
}

void append_number(std::string& out, DType dtype, const std::byte* p) {
  char buffer[64];
  char* end = buffer;
  if (dtype == DType::FP32) {
    float v;
    std::memcpy(&v, p, 4);
    if (std::isnan(v)) {
      out += "NaN";
      return;
    }
    if (std::isinf(v)) {
      out += v > 0 ? "Infinity" : "-Infinity";
      return;
    }
    end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  } else {
    std::int64_t v;
    std::memcpy(&v, p, 8);
    end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  }
  out.append(buffer, end);
}

class PostgresSink final : public ResultSink {
 public:
  PostgresSink(std::string connection, std::string table)
      : connection_(std::move(connection)), table_(std::move(table)) {}

  Status open(const JobIdentity& job, const ModelMetadata& model, bool resume,
              std::vector<std::int64_t>& done, CommittedTotals& totals) override {
    job_ = job;
    model_ = &model;
    if (auto status = connect(connection_, conn_); !status.ok()) return status;
    PGconn* c = conn_.get();
    exec(c, "SET client_min_messages = warning", "settings").ok();
    table_id_ = identifier(c, table_);
    dead_id_ = identifier(c, table_ + "_dead_letter");
    std::string columns = "row_index bigint PRIMARY KEY, id text";
    copy_columns_ = "row_index, id";
    for (const auto& output : model.outputs) {
      if (output.dtype != DType::FP32 && output.dtype != DType::Int64 && output.dtype != DType::Bytes)
        return Status::invalid("postgresql: output '" + output.name + "' is " +
                               std::string(to_string(output.dtype)) + " (FP32, INT64 and text only)");
      std::int64_t per_row = 1;
      for (std::size_t i = 1; i < output.shape.size(); ++i) per_row *= output.shape[i];
      const bool array = output.shape.size() > 1;
      std::string type = output.dtype == DType::FP32 ? "real" : output.dtype == DType::Int64 ? "bigint" : "text";
      if (array) type += "[]";
      columns += ", " + identifier(c, output.name) + " " + type;
      copy_columns_ += ", " + identifier(c, output.name);
      (void)per_row;
    }
    if (auto status = exec(c,
                           "CREATE TABLE IF NOT EXISTS coinfer_batch_chunks (job text NOT NULL, "
                           "shard text NOT NULL, chunk bigint NOT NULL, first_row bigint NOT NULL, "
                           "rows bigint NOT NULL, results bigint NOT NULL, errors bigint NOT NULL, "
                           "committed_at timestamptz NOT NULL DEFAULT now(), "
                           "PRIMARY KEY (job, shard, chunk))",
                           "creating coinfer_batch_chunks");
        !status.ok())
      return status;
    if (auto status = exec(c,
                           "CREATE TABLE IF NOT EXISTS coinfer_batch_jobs (job text NOT NULL, "
                           "shard text NOT NULL, finished_at timestamptz NOT NULL DEFAULT now(), "
                           "PRIMARY KEY (job, shard))",
                           "creating coinfer_batch_jobs");
        !status.ok())
      return status;
    if (auto status = exec(c, "CREATE TABLE IF NOT EXISTS " + table_id_ + " (" + columns + ")",
                           "creating the --table");
        !status.ok())
      return status;
    if (auto status = exec(c, "CREATE TABLE IF NOT EXISTS " + dead_id_ +
                                  " (row_index bigint PRIMARY KEY, id text, error text NOT NULL)",
                           "creating the dead-letter table");
        !status.ok())
      return status;
    shard_ = std::to_string(job.shard) + "/" + std::to_string(job.shards);
    key_ = job.description + " table=" + table_ + " chunk_rows=" + std::to_string(job.chunk_rows);
    Result r;
    if (auto status = exec_params(c,
                                  "SELECT chunk, rows, results, errors FROM coinfer_batch_chunks "
                                  "WHERE job = $1 AND shard = $2",
                                  {key_, shard_}, "reading committed chunks", &r, PGRES_TUPLES_OK);
        !status.ok())
      return status;
    const int n = PQntuples(r.get());
    if (n == 0) {
      // Rows from another job (other options, shard count or chunk size) would collide with
      // this one's: refused before any row is read.
      Result any;
      if (auto status = exec(c, "SELECT 1 FROM " + table_id_ + " LIMIT 1", "reading the --table", &any,
                             PGRES_TUPLES_OK);
          !status.ok())
        return status;
      if (PQntuples(any.get()) > 0)
        return Status::invalid("postgresql: table " + table_ + " holds rows of another job (or of this "
                               "one split differently): use another --table, or empty it");
    }
    if (n > 0 && !resume)
      return Status::invalid("postgresql: " + std::to_string(n) + " chunks of this job are committed "
                             "(coinfer_batch_chunks): pass --resume to continue it");
    for (int i = 0; i < n; ++i) {
      auto field = [&](int col) { return std::stoll(PQgetvalue(r.get(), i, col)); };
      done.push_back(field(0));
      totals.chunks += 1;
      totals.rows += field(1);
      totals.results += field(2);
      totals.errors += field(3);
    }
    return {};
  }

  Status commit(const ChunkWork& chunk) override {
    PGconn* c = conn_.get();
    if (auto status = exec(c, "BEGIN", "begin"); !status.ok()) return status;
    Status status = copy_results(chunk);
    if (status.ok() && !chunk.dead.empty()) status = copy_dead(chunk);
    if (status.ok()) {
      const std::int64_t results = chunk.results();
      status = exec_params(c,
                           "INSERT INTO coinfer_batch_chunks (job, shard, chunk, first_row, rows, "
                           "results, errors) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                           {key_, shard_, std::to_string(chunk.chunk), std::to_string(chunk.first_row),
                            std::to_string(chunk.rows), std::to_string(results),
                            std::to_string(chunk.rows - results)},
                           "recording the chunk");
    }
    if (status.ok()) status = exec(c, "COMMIT", "commit");
    if (!status.ok()) exec(c, "ROLLBACK", "rollback").ok();
    return status;
  }

  Status finish() override {
    return exec_params(conn_.get(),
                       "INSERT INTO coinfer_batch_jobs (job, shard) VALUES ($1, $2) "
                       "ON CONFLICT (job, shard) DO UPDATE SET finished_at = now()",
                       {key_, shard_}, "recording the job's end");
  }

 private:
  Status copy(const std::string& target, const std::string& data) {
    PGconn* c = conn_.get();
    if (auto status = exec(c, "COPY " + target + " FROM STDIN", "COPY", nullptr, PGRES_COPY_IN);
        !status.ok())
      return status;
    bool sent = true;
    for (std::size_t at = 0; sent && at < data.size(); at += 1 << 20) {
      const std::size_t n = std::min<std::size_t>(1 << 20, data.size() - at);
      sent = PQputCopyData(c, data.data() + at, static_cast<int>(n)) == 1;
    }
    if (!sent || PQputCopyEnd(c, nullptr) != 1)
      return Status::invalid("postgresql: COPY: " + message_of(c));
    Result r(PQgetResult(c));
    const bool ok = r && PQresultStatus(r.get()) == PGRES_COMMAND_OK;
    while (Result more{PQgetResult(c)}) {
    }
    if (!ok) return Status::invalid("postgresql: COPY into " + target + ": " + message_of(c));
    return {};
  }

  Status copy_results(const ChunkWork& chunk) {
    data_.clear();
    const auto& outputs = model_->outputs;
    for (std::size_t g = 0; g < chunk.good_rows.size(); ++g) {
      if (!chunk.failed.empty() && chunk.failed[g]) continue;
      data_ += std::to_string(chunk.good_rows[g]);
      data_ += '\t';
      append_id_text(data_, chunk.id(g), parser_);
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        if (outputs[o].dtype == DType::Bytes) {
          data_ += '\t';
          append_copy_text(data_, chunk.strings[o][g]);
          continue;
        }
        const Tensor& t = chunk.outputs[o];
        const std::size_t element = element_size(t.dtype());
        const std::size_t per_row = t.bytes().size() / chunk.good_rows.size() / element;
        const std::byte* p = t.bytes().data() + g * per_row * element;
        data_ += '\t';
        if (t.shape().size() == 1) {
          append_number(data_, t.dtype(), p);
          continue;
        }
        data_ += '{';
        for (std::size_t i = 0; i < per_row; ++i) {
          if (i) data_ += ',';
          append_number(data_, t.dtype(), p + i * element);
        }
        data_ += '}';
      }
      data_ += '\n';
    }
    if (data_.empty()) return {};
    return copy(table_id_ + " (" + copy_columns_ + ")", data_);
  }

  Status copy_dead(const ChunkWork& chunk) {
    data_.clear();
    for (const auto& d : chunk.dead) {
      data_ += std::to_string(d.row);
      data_ += '\t';
      append_id_text(data_, d.id, parser_);
      data_ += '\t';
      append_copy_text(data_, d.reason);
      data_ += '\n';
    }
    return copy(dead_id_ + " (row_index, id, error)", data_);
  }

  std::string connection_, table_;
  Connection conn_;
  JobIdentity job_;
  const ModelMetadata* model_ = nullptr;
  std::string table_id_, dead_id_, copy_columns_, shard_, key_;
  std::string data_;
  simdjson::dom::parser parser_;
};

}  // namespace

std::string without_secrets(const std::string& connection) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(connection.c_str(), &error);
  if (!options) {
    PQfreemem(error);
    return "(a connection string)";
  }
  std::string out;
  for (PQconninfoOption* o = options; o->keyword; ++o) {
    const std::string key = o->keyword;
    if (!o->val || !*o->val || key == "password" || key == "user" || key == "passfile" ||
        key == "sslpassword")
      continue;
    out += (out.empty() ? "" : " ") + key + "=" + o->val;
  }
  PQconninfoFree(options);
  return out;
}

bool is_postgres_connection(const std::string& text) {
  return text.starts_with("postgresql://") || text.starts_with("postgres://") ||
         (text.find('=') != std::string::npos &&
          (text.starts_with("host=") || text.starts_with("dbname=") || text.starts_with("port=") ||
           text.starts_with("user=") || text.starts_with("service=")));
}

Status open_postgres_source(const std::string& connection, const std::string& query,
                            std::unique_ptr<RowSource>& out, int fetch_rows) {
  if (query.empty()) return Status::invalid("--query: a PostgreSQL input needs a query");
  auto source = std::make_unique<PostgresSource>();
  if (auto status = source->open(connection, query, fetch_rows); !status.ok()) return status;
  out = std::move(source);
  return {};
}

Status open_postgres_sink(const std::string& connection, const std::string& table,
                          std::unique_ptr<ResultSink>& out) {
  if (table.empty()) return Status::invalid("--table: a PostgreSQL output needs a table name");
  out = std::make_unique<PostgresSink>(connection, table);
  return {};
}

}  // namespace coinfer::offline
