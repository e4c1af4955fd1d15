// The OpenAI routes' request decoding, called through the router as the server calls it (no
// socket: the handler gets the request the server would build).
#include "coinfer/protocol/openai_routes.hpp"

#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <string>
#include <string_view>

using namespace coinfer;

namespace {

struct Answer {
  int status = 0;
  std::string body;
};

// POSTs `json` to `path`, the body padded as the server pads it.
Answer post(const net::Router& router, std::string_view path, std::string_view json) {
  std::string body(json);
  body.reserve(json.size() + 64);
  net::HttpRequest request;
  request.method = net::Method::post;
  request.target = request.path = path;
  request.body = body;
  request.body_capacity = body.capacity();
  const net::Handler* handler = nullptr;
  std::string allowed;
  REQUIRE(router.match(request, handler, allowed) == net::Router::Outcome::found);
  net::HttpResponse response;
  if (const auto* sync = std::get_if<net::SyncHandler>(handler)) {
    (*sync)(request, response);
  } else {
    boost::asio::io_context io;
    boost::asio::co_spawn(io, std::get<net::AsyncHandler>(*handler)(request, response),
                          boost::asio::detached);
    io.run();
  }
  return {response.status, response.body};
}

}  // namespace

// Found by fuzz/openai_request_fuzzer: /tokenize and /detokenize iterated the object of a body
// that did not parse, which has no document behind it (a null dereference in a release build).
TEST_CASE("a body that is not a JSON object is refused with 400 on every OpenAI route") {
  ModelRepository repository;
  net::Router router;
  add_openai_routes(router, repository);
  for (std::string_view path : {"/v1/embeddings", "/tokenize", "/detokenize"}) {
    for (std::string_view body : {"", "not json", "[1, 2]", "42"}) {
      CAPTURE(path);
      CAPTURE(body);
      const Answer answer = post(router, path, body);
      CHECK(answer.status == 400);
      CHECK(answer.body.find("body must be a JSON object") != std::string::npos);
    }
  }
}
