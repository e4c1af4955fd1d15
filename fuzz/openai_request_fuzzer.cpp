// The OpenAI-compatible request decoders: the bodies of POST /v1/embeddings, /tokenize,
// /detokenize, /v1/completions and /v1/chat/completions (add_openai_routes), and of Triton's
// /v2/models/llm/generate[_stream] (the service has no language model, so a generation
// request that parses ends 404 after its whole body was read and checked), each run through its route as the server runs it (routed,
// the body padded as the server holds it); embeddings go through the endpoint's pipeline
// (tokenizer, batcher, model, encoder) like any request.
//
// Input: one JSON body, e.g. {"model":"embed","input":["hello world"]}, sent to all five
// routes. Every answer is JSON, with a status a client can act on.
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::Service* service = new fuzz::Service;  // reachable: not a leak

  const fuzz::PaddedBuffer body({reinterpret_cast<const char*>(data), size});
  for (std::string_view path :
       {"/v1/embeddings", "/tokenize", "/detokenize", "/v1/completions", "/v1/chat/completions",
        "/v2/models/llm/generate", "/v2/models/llm/generate_stream"}) {
    net::HttpRequest request;
    request.method = net::Method::post;
    request.target = request.path = path;
    request.headers = {{"Content-Type", "application/json"}};
    request.body = body.view();
    request.body_capacity = body.capacity();
    const net::Handler* handler = nullptr;
    std::string allowed;
    check(service->router.match(request, handler, allowed) == net::Router::Outcome::found,
          "the OpenAI routes are registered");

    net::HttpResponse response;
    if (const auto* sync = std::get_if<net::SyncHandler>(handler)) {
      (*sync)(request, response);
    } else {
      service->run(std::get<net::AsyncHandler>(*handler)(request, response));
    }
    fuzz::print_answer(std::string(path) + " " + std::to_string(response.status), response.body);
    check(response.status == 200 || response.status == 400 || response.status == 404 ||
              response.status == 503,
          "a status a client can act on (200, 400, 404, 503)");
    check(fuzz::is_json(response.body), "the answer is JSON");
  }
  return 0;
}
