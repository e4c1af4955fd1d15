#include "grpc_transport.hpp"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <vector>

#include "grpc_service.grpc.pb.h"

namespace coinfer::loadgen {
namespace asio = boost::asio;

struct GrpcTransport::State {
  inference::ModelInferRequest request;
  std::vector<std::unique_ptr<inference::GRPCInferenceService::Stub>> stubs;
  std::string authorization;
  std::uint32_t timeout_ms = 0;
};

GrpcTransport::GrpcTransport(std::unique_ptr<State> state) : state_(std::move(state)) {}
GrpcTransport::~GrpcTransport() = default;

std::unique_ptr<GrpcTransport> GrpcTransport::create(const std::string& target, int channels,
                                                     std::string_view request_json,
                                                     std::string authorization,
                                                     std::uint32_t timeout_ms, std::string& error) {
  auto state = std::make_unique<State>();
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(request_json.data(), request_json.size()), &state->request);
  if (!parsed.ok()) {
    error = "not a ModelInferRequest in protobuf's JSON mapping: " + parsed.ToString();
    return nullptr;
  }
  for (int i = 0; i < channels; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("coinfer.channel", i);  // distinct arguments: a connection of its own
    args.SetMaxReceiveMessageSize(-1);
    state->stubs.push_back(inference::GRPCInferenceService::NewStub(
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args)));
  }
  state->authorization = std::move(authorization);
  state->timeout_ms = timeout_ms;
  return std::unique_ptr<GrpcTransport>(new GrpcTransport(std::move(state)));
}

namespace {

int http_status(const grpc::Status& s) {
  switch (s.error_code()) {
    case grpc::StatusCode::OK: return 200;
    case grpc::StatusCode::INVALID_ARGUMENT: return 400;
    case grpc::StatusCode::UNAUTHENTICATED: return 401;
    case grpc::StatusCode::PERMISSION_DENIED: return 403;
    case grpc::StatusCode::NOT_FOUND: return 404;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return 429;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return 504;
    case grpc::StatusCode::UNAVAILABLE:
      // gRPC's own "failed to connect" is UNAVAILABLE too: told apart by the server's message.
      return s.error_message().find("connect") != std::string::npos ? 0 : 503;
    default: return 500;
  }
}

// One call's context and response, alive until its callback ran.
struct Call {
  grpc::ClientContext context;
  inference::ModelInferResponse response;
};

}  // namespace

asio::awaitable<int> GrpcTransport::infer(int worker) {
  State& s = *state_;
  auto call = std::make_shared<Call>();
  if (!s.authorization.empty()) call->context.AddMetadata("authorization", s.authorization);
  if (s.timeout_ms > 0) {
    call->context.set_deadline(std::chrono::system_clock::now() +
                               std::chrono::milliseconds(s.timeout_ms));
  }
  auto& stub = *s.stubs[static_cast<std::size_t>(worker) % s.stubs.size()];
  // gRPC completes the call on one of its threads: the status goes back to the caller's
  // executor.
  const grpc::Status status = co_await asio::async_initiate<decltype(asio::use_awaitable),
                                                             void(grpc::Status)>(
      [&](auto handler) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        stub.async()->ModelInfer(&call->context, &s.request, &call->response,
                                 [shared, call](grpc::Status result) {
                                   auto executor = asio::get_associated_executor(*shared);
                                   asio::post(executor, [shared, result = std::move(result)]() mutable {
                                     (*shared)(std::move(result));
                                   });
                                 });
      },
      asio::use_awaitable);
  co_return http_status(status);
}

}  // namespace coinfer::loadgen
