#pragma once

#include <memory>
#include <string>

#include "coinfer/core/status.hpp"
#include "coinfer/offline/sinks.hpp"
#include "coinfer/offline/sources.hpp"

namespace coinfer::offline {

// True for a libpq connection string: a postgresql:// or postgres:// URI, or key=value pairs.
bool is_postgres_connection(const std::string& text);

// A connection string as a manifest or log may keep it: its settings without the user,
// password, passfile and sslpassword (parsed by libpq, URIs and key=value strings alike).
std::string without_secrets(const std::string& connection);

// Rows of `query` through a server-side cursor (DECLARE ... NO SCROLL CURSOR, FETCH `fetch_rows`
// at a time inside one read-only transaction), so the result is never held whole in memory.
// A `fields` source: each row's columns as text (NULL as empty). Row indexes are positions in
// the result, so the query needs an ORDER BY for a resumed or sharded run to see the same rows.
Status open_postgres_source(const std::string& connection, const std::string& query,
                            std::unique_ptr<RowSource>& out, int fetch_rows = 2000);

// Results into `table` (created when missing: row_index bigint primary key, id text, then one
// column per model output: real / bigint, or real[] / bigint[] for several values a row),
// written with COPY. Dead letters go to `<table>_dead_letter` (row_index, id, error), and each
// chunk is recorded in coinfer_batch_chunks (job, shard, chunk, rows, results, errors), all in
// one transaction per chunk: the database's own commit is the chunk's.
Status open_postgres_sink(const std::string& connection, const std::string& table,
                          std::unique_ptr<ResultSink>& out);

}  // namespace coinfer::offline
