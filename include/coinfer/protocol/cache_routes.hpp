#pragma once

#include "coinfer/net/router.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace coinfer {

// The response cache's HTTP interface (docs/CACHE.md), on the repository's cache stage:
//   GET    /v2/cache                        entries, bytes, vectors, partitions, settings
//   DELETE /v2/cache/entries/{id}           one entry (the id an X-Cache-Entry header gave)
//   DELETE /v2/cache/namespaces/{namespace} every entry of a namespace
// With API keys a caller reaches only its own tenant's entries and namespaces. Without a
// cache every route answers 404 saying so.
void add_cache_routes(net::Router& router, const ModelRepository& repository);

}  // namespace coinfer
