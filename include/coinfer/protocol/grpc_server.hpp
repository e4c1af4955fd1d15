#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <memory>

#include "coinfer/core/config.hpp"
#include "coinfer/core/status.hpp"
#include "coinfer/protocol/oip_routes.hpp"

namespace coinfer {

class AccessControl;
class ModelRepository;

// The Open Inference Protocol v2 over gRPC: KServe's GRPCInferenceService with the Triton
// extensions tritonclient.grpc calls (proto/grpc_service.proto, docs/PROTOCOL.md).
//
// gRPC's callback API receives each call on gRPC's own threads and hands it to `io` as a
// coroutine on a strand: the same Endpoint and GenerationEndpoint pipelines as HTTP (limits,
// cache, metrics, statistics), no thread per call. A client's cancellation or deadline
// cancels the coroutine, which drops a queued request before compute and stops a generation.
// API keys come from the `authorization` metadata, TLS and the message size limit
// (max_body_bytes, larger: RESOURCE_EXHAUSTED) from the same [server] settings as HTTP.
class GrpcServer {
 public:
  // `repository` and `access` (null: no keys) must outlive the server.
  GrpcServer(boost::asio::any_io_executor io, ServerConfig config,
             const ModelRepository& repository, const AccessControl* access,
             ServerInfo info = {});
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // Binds config.host:config.grpc_port (0: any free port) and starts serving. From then on
  // the server holds work on `io` until stop() has drained it.
  Status start();
  std::uint16_t port() const noexcept;
  // Graceful stop, callable from any thread; returns at once. No new calls are taken; streams
  // are not read further and end UNAVAILABLE once their requests in flight are answered;
  // calls in flight get drain_timeout_ms, then are cancelled. Then `io` is released.
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace coinfer
