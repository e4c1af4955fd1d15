#include <doctest/doctest.h>

#include "coinfer/net/router.hpp"

using namespace coinfer::net;

namespace {

SyncHandler tag(std::string name) {
  return [name](const HttpRequest&, HttpResponse& res) { res.body = name; };
}

std::string run(const Router& router, Method method, std::string_view path,
                Router::Outcome expected, HttpRequest* out = nullptr) {
  HttpRequest req;
  req.method = method;
  req.path = path;
  const Handler* handler = nullptr;
  std::string allowed;
  const auto outcome = router.match(req, handler, allowed);
  REQUIRE(outcome == expected);
  if (out) *out = req;
  if (outcome == Router::Outcome::method_not_allowed) return allowed;
  if (outcome != Router::Outcome::found) return {};
  HttpResponse res;
  std::get<SyncHandler>(*handler)(req, res);
  return res.body;
}

Router oip_like() {
  Router r;
  r.add(Method::get, "/v2", tag("server"));
  r.add(Method::get, "/v2/models/{model}", tag("meta"));
  r.add(Method::get, "/v2/models/{model}/ready", tag("ready"));
  r.add(Method::post, "/v2/models/{model}/versions/{version}/infer", tag("infer-v"));
  r.add(Method::post, "/v2/models/{model}/infer", tag("infer"));
  return r;
}

}  // namespace

TEST_CASE("literal routes match exactly") {
  const auto r = oip_like();
  CHECK(run(r, Method::get, "/v2", Router::Outcome::found) == "server");
  run(r, Method::get, "/v2/", Router::Outcome::not_found);
  run(r, Method::get, "/v3", Router::Outcome::not_found);
}

TEST_CASE("path parameters capture one segment each") {
  const auto r = oip_like();
  HttpRequest req;
  CHECK(run(r, Method::post, "/v2/models/mlp/versions/3/infer", Router::Outcome::found, &req) ==
        "infer-v");
  CHECK(req.param("model") == "mlp");
  CHECK(req.param("version") == "3");
  CHECK(req.param("missing").empty());
  CHECK(run(r, Method::get, "/v2/models/mlp/ready", Router::Outcome::found, &req) == "ready");
  CHECK(req.param("model") == "mlp");
}

TEST_CASE("an empty segment does not match a parameter") {
  const auto r = oip_like();
  run(r, Method::get, "/v2/models//ready", Router::Outcome::not_found);
}

TEST_CASE("a known path with the wrong method is 405 and lists the allowed methods") {
  const auto r = oip_like();
  CHECK(run(r, Method::get, "/v2/models/mlp/infer", Router::Outcome::method_not_allowed) ==
        "POST");
  CHECK(run(r, Method::delete_, "/v2", Router::Outcome::method_not_allowed) == "GET");
}

TEST_CASE("HEAD is served by the GET route") {
  const auto r = oip_like();
  CHECK(run(r, Method::head, "/v2/models/m", Router::Outcome::found) == "meta");
}

TEST_CASE("a path with more segments than any route allows is not found") {
  const auto r = oip_like();
  run(r, Method::get, "/v2/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s", Router::Outcome::not_found);
}
