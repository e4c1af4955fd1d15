#pragma once

#include <span>
#include <string>
#include <string_view>

#include "coinfer/net/router.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace coinfer {

struct ServerInfo {
  std::string name = "coinfer";
  std::string version = "0.1.0";
};

// The protocol extensions the server metadata names (HTTP's GET /v2 and gRPC's ServerMetadata).
std::span<const std::string_view> oip_extensions() noexcept;

// Registers the Open Inference Protocol v2 REST routes on `router`:
//   GET  /v2/health/live, /v2/health/ready, /v2
//   GET  /v2/models/{model}[/versions/{version}], .../ready
//   POST /v2/models/{model}[/versions/{version}]/infer
//   POST /v2/repository/index   (Triton's model-repository extension, index only)
//   GET  /metrics               (Prometheus text format)
//   WebSocket /v2/ws            each text message an infer request naming "model_name";
//                               replies (tagged with the request's "id") in completion order
// `repository` must outlive the router.
void add_oip_routes(net::Router& router, const ModelRepository& repository, ServerInfo info = {});

}  // namespace coinfer
