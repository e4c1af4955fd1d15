#pragma once
// coinfer-loadgen's gRPC transport (grpc://HOST:PORT): ModelInfer calls of the Open Inference
// Protocol's GRPCInferenceService. Its own translation unit, which alone includes gRPC (the
// rest of the load generator keeps the library's precompiled header).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace coinfer::loadgen {

class GrpcTransport {
 public:
  // `request_json`: one ModelInferRequest in protobuf's JSON mapping ("model_name", "inputs"
  // with typed "contents", or "raw_input_contents" as base64), sent by every call; `channels`
  // HTTP/2 connections to `target` ("HOST:PORT"), call i on channel i % channels.
  // Null with `error` set when the request does not parse.
  static std::unique_ptr<GrpcTransport> create(const std::string& target, int channels,
                                               std::string_view request_json,
                                               std::string authorization,
                                               std::uint32_t timeout_ms, std::string& error);
  ~GrpcTransport();

  // One ModelInfer on `worker`'s channel, completed on the caller's executor. The HTTP status
  // coinfer answers the same failure with (200 when the call succeeded; 503 UNAVAILABLE,
  // 504 DEADLINE_EXCEEDED, 429 RESOURCE_EXHAUSTED, 400 INVALID_ARGUMENT, 404 NOT_FOUND, ...);
  // 0 when the connection failed.
  boost::asio::awaitable<int> infer(int worker);

 private:
  struct State;
  explicit GrpcTransport(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace coinfer::loadgen
