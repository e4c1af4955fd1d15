// TLS on the real server (tests/fixtures/tls: a test CA and a certificate for 127.0.0.1):
// HTTPS with the project's HttpClient, WSS with Beast, verification failures, TLS 1.1 refused,
// plain HTTP on a TLS port, and certificate errors named at listen().
#include <doctest/doctest.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include "coinfer/client/http_client.hpp"
#include "test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;
namespace ssl = asio::ssl;
namespace websocket = beast::websocket;

namespace {

const std::string kTlsDir = std::string(COINFER_SOURCE_DIR) + "/tests/fixtures/tls/";

ServerConfig tls_config() {
  ServerConfig config = test_config();
  config.tls_cert_file = kTlsDir + "server.pem";
  config.tls_key_file = kTlsDir + "server.key";
  return config;
}

client::HttpClientConfig https(std::string ca_file) {
  client::HttpClientConfig config;
  config.tls = true;
  config.tls_ca_file = std::move(ca_file);
  return config;
}

// A TLS client context trusting the test CA, limited to [min, max] protocol versions, at
// security level 0 so that the system's own floor does not decide for the server.
ssl::context client_context(int min_version, int max_version) {
  ssl::context context(ssl::context::tls_client);
  SSL_CTX_set_security_level(context.native_handle(), 0);
  SSL_CTX_set_min_proto_version(context.native_handle(), min_version);
  SSL_CTX_set_max_proto_version(context.native_handle(), max_version);
  context.load_verify_file(kTlsDir + "ca.pem");
  context.set_verify_mode(ssl::verify_peer);
  return context;
}

beast::error_code handshake(std::uint16_t port, ssl::context& context) {
  asio::io_context io;
  ssl::stream<tcp::socket> stream(io, context);
  stream.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
  beast::error_code ec;
  stream.handshake(ssl::stream_base::client, ec);
  return ec;
}

}  // namespace

TEST_CASE("HTTPS: the HttpClient verifies the server against the CA and infers") {
  TestServer server(tls_config());
  asio::io_context io;
  client::HttpClient http(io.get_executor(), "127.0.0.1", server.port(),
                          https(kTlsDir + "ca.pem"));
  client::HttpResult out;
  const std::string body = infer_body(4, "over-tls");
  REQUIRE(run_task(io, client::infer(http, "identity", body, out)).ok());
  CHECK(out.body.find("over-tls") != std::string::npos);
  // Keep-alive holds over TLS: the second request reuses the connection.
  REQUIRE(run_task(io, client::infer(http, "identity", body, out)).ok());
  CHECK(http.connections_opened() == 1);
}

TEST_CASE("HTTPS: a server the client cannot verify is refused at the handshake") {
  TestServer server(tls_config());
  asio::io_context io;
  // The system's CAs do not include the test CA.
  client::HttpClient http(io.get_executor(), "127.0.0.1", server.port(), https(""));
  client::HttpResult out;
  const Status status = run_task(io, client::health_live(http, out));
  CHECK(status.code() == Errc::unavailable);
  CHECK_MESSAGE(status.message().find("certificate verify failed") != std::string::npos,
                status.message());
  // The right CA, but a name the certificate does not carry.
  client::HttpClient by_name(io.get_executor(), "127.0.0.2", server.port(),
                             https(kTlsDir + "ca.pem"));
  CHECK(run_task(io, client::health_live(by_name, out)).code() == Errc::unavailable);
}

TEST_CASE("TLS 1.1 is refused, TLS 1.2 and 1.3 are accepted") {
  TestServer server(tls_config());
  ssl::context old = client_context(TLS1_1_VERSION, TLS1_1_VERSION);
  CHECK(handshake(server.port(), old));
  ssl::context v12 = client_context(TLS1_2_VERSION, TLS1_2_VERSION);
  CHECK_FALSE(handshake(server.port(), v12));
  ssl::context v13 = client_context(TLS1_3_VERSION, TLS1_3_VERSION);
  CHECK_FALSE(handshake(server.port(), v13));
}

TEST_CASE("plain HTTP on a TLS port gets no HTTP answer and harms no one") {
  TestServer server(tls_config());
  const std::string reply =
      raw_exchange(server.port(), "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(reply.find("HTTP/1.1 200") == std::string::npos);
  asio::io_context io;
  client::HttpClient http(io.get_executor(), "127.0.0.1", server.port(),
                          https(kTlsDir + "ca.pem"));
  client::HttpResult out;
  CHECK(run_task(io, client::health_live(http, out)).ok());
}

TEST_CASE("WSS: an infer request over a WebSocket on TLS") {
  TestServer server(tls_config());
  asio::io_context io;
  ssl::context context = client_context(TLS1_2_VERSION, TLS1_3_VERSION);
  websocket::stream<ssl::stream<tcp::socket>> ws(io, context);
  beast::get_lowest_layer(ws).connect({asio::ip::make_address("127.0.0.1"), server.port()});
  ws.next_layer().handshake(ssl::stream_base::client);
  ws.handshake("127.0.0.1", "/v2/ws");
  ws.text(true);
  ws.write(asio::buffer(R"({"model_name":"identity","id":"w",)" + infer_body(2).substr(1)));
  beast::flat_buffer buffer;
  ws.read(buffer);
  const std::string reply = beast::buffers_to_string(buffer.data());
  CHECK_MESSAGE(reply.find(R"("name":"OUTPUT1")") != std::string::npos, reply);
  ws.close(websocket::close_code::normal);
}

TEST_CASE("certificate and key errors are named at listen()") {
  asio::io_context io;
  net::Router router;
  ServerConfig missing = tls_config();
  missing.tls_cert_file = kTlsDir + "absent.pem";
  net::HttpServer absent(io.get_executor(), missing, router);
  const Status no_file = absent.listen();
  CHECK(no_file.code() == Errc::invalid_argument);
  CHECK_MESSAGE(no_file.message().find("server.tls_cert_file: cannot load") == 0,
                no_file.message());

  ServerConfig mismatched = tls_config();
  mismatched.tls_cert_file = kTlsDir + "ca.pem";  // not the certificate of server.key
  net::HttpServer wrong(io.get_executor(), mismatched, router);
  const Status not_its_key = wrong.listen();
  // OpenSSL names the mismatch as it loads the key ("key values mismatch").
  CHECK_MESSAGE(not_its_key.message().find("server.tls_key_file: cannot load") == 0,
                not_its_key.message());
  CHECK_MESSAGE(not_its_key.message().find("mismatch") != std::string::npos,
                not_its_key.message());
}

TEST_CASE("over max_connections a TLS connection is closed before any handshake") {
  ServerConfig config = tls_config();
  config.max_connections = 1;
  TestServer server(config);
  asio::io_context io;
  ssl::context context = client_context(TLS1_2_VERSION, TLS1_3_VERSION);
  ssl::stream<tcp::socket> first(io, context);
  first.next_layer().connect({asio::ip::make_address("127.0.0.1"), server.port()});
  first.handshake(ssl::stream_base::client);  // holds the one connection allowed
  ssl::stream<tcp::socket> extra(io, context);
  extra.next_layer().connect({asio::ip::make_address("127.0.0.1"), server.port()});
  beast::error_code ec;
  extra.handshake(ssl::stream_base::client, ec);
  // Closed (the stream ends), not a plain-text 503 read as a malformed TLS record.
  CHECK_MESSAGE((ec == ssl::error::stream_truncated || ec == asio::error::eof ||
                 ec == asio::error::connection_reset),
                ec.message());
}
