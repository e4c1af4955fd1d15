// The OIP WebSocket message handler: what /v2/ws does with one text message (the handler
// add_oip_routes registers), through the whole pipeline: routing fields, the OIP decoder, the
// batcher, a model, the encoder.
//
// Input: one text message, e.g. {"model_name":"identity","id":"7","inputs":[...]}, held as
// the WebSocket session holds it (padding after it for in-place parsing). Every message gets
// exactly one reply, and the reply is JSON.
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::Service* service = new fuzz::Service;  // reachable: not a leak
  static const net::WebSocketHandler* handler = service->router.websocket("/v2/ws");
  check(handler != nullptr, "/v2/ws is registered");

  const fuzz::PaddedBuffer message({reinterpret_cast<const char*>(data), size});
  std::string reply;
  service->run((*handler)(message.view(), message.capacity(), nullptr, nullptr, reply));
  fuzz::print_answer("reply", reply);
  check(!reply.empty(), "every message is answered");
  check(fuzz::is_json(reply), "the reply is JSON");
  return 0;
}
