// coinfer-serve as a user runs it: a child process, found through its "listening on" line.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <optional>

#include "test_process.hpp"
#include "test_support.hpp"

using namespace coinfer::test;
using namespace std::chrono_literals;


namespace {

// The default config, with only the models a test uses loaded (--model): the whole default
// service loads SmolLM2 and the embedding models, most of a minute under TSan.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> extra_args = {"--model", "identity"}) {
    std::vector<std::string> args = {COINFER_SERVE_PATH, "--config",
                                     std::string(COINFER_SOURCE_DIR) + "/configs/default.toml",
                                     "--port", "0", "--grpc-port", "-1"};  // gRPC: its own tests
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    const Child child = spawn_with_stdout(std::move(args));
    pid_ = child.pid;
    stdout_ = fdopen(child.stdout_fd, "r");
    char line[256] = {};
    REQUIRE(fgets(line, sizeof line, stdout_) != nullptr);
    first_line_ = line;
    const auto colon = first_line_.rfind(':');
    REQUIRE(first_line_.rfind("listening on http://127.0.0.1:", 0) == 0);
    port_ = static_cast<std::uint16_t>(std::stoi(first_line_.substr(colon + 1)));
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_) fclose(stdout_);
  }
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  void signal(int sig) { kill(pid_, sig); }
  // Exit code, or -1 if it did not exit within `limit`.
  int wait_exit(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return exit_code(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  std::string first_line_;
  std::uint16_t port_ = 0;
};

// The value of `name` in a running process's environment, as its current image received it.
std::optional<std::string> environment_of(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string all{std::istreambuf_iterator<char>(in), {}};
  const std::string key = name + "=";
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = std::min(all.find('\0', at), all.size());
    if (all.compare(at, key.size(), key) == 0) return all.substr(at + key.size(), end - at - key.size());
    at = end + 1;
  }
  return std::nullopt;
}

// Sets (or, given nullopt, removes) an environment variable for the scope of one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1); else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("the compute team spins briefly at its barriers unless the environment chose a policy") {
  {
    ScopedEnv unset("OMP_WAIT_POLICY", std::nullopt);
    ScopedEnv unset_spin("GOMP_SPINCOUNT", std::nullopt);
    ServeProcess serve;  // re-runs itself with the variables set, same pid, then listens
    CHECK(environment_of(serve.pid(), "OMP_WAIT_POLICY") == "active");
    CHECK(environment_of(serve.pid(), "GOMP_SPINCOUNT") == "2000");
    Client client(serve.port());
    CHECK(client.post("/v2/models/identity/infer", infer_body(4)).status == 200);
  }
  {
    ScopedEnv chosen("OMP_WAIT_POLICY", "passive");
    ScopedEnv unset_spin("GOMP_SPINCOUNT", std::nullopt);
    ServeProcess serve;
    CHECK(environment_of(serve.pid(), "OMP_WAIT_POLICY") == "passive");
    CHECK(environment_of(serve.pid(), "GOMP_SPINCOUNT") == std::nullopt);
  }
  {
    ScopedEnv unset("OMP_WAIT_POLICY", std::nullopt);
    ScopedEnv chosen_spin("GOMP_SPINCOUNT", "100");
    ServeProcess serve;
    CHECK(environment_of(serve.pid(), "OMP_WAIT_POLICY") == std::nullopt);
    CHECK(environment_of(serve.pid(), "GOMP_SPINCOUNT") == "100");
  }
}

TEST_CASE("coinfer-serve prints its address and answers infer") {
  ServeProcess serve;
  Client client(serve.port());
  const auto reply = client.post("/v2/models/identity/infer", infer_body(64));
  CHECK(reply.status == 200);
  CHECK(reply.body.find(R"("name":"OUTPUT1")") != std::string::npos);
}

TEST_CASE("SIGTERM drains an in-flight request, refuses new connections and exits 0") {
  ServeProcess serve;
  Client busy(serve.port());
  const std::string body = infer_body(16, "draining");
  const std::string head = "POST /v2/models/identity/infer HTTP/1.1\r\nHost: x\r\n"
                           "Content-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n";
  asio::write(busy.socket(), asio::buffer(head + body.substr(0, 20)));
  std::this_thread::sleep_for(100ms);
  serve.signal(SIGTERM);
  std::this_thread::sleep_for(200ms);
  {
    asio::io_context io;
    tcp::socket late(io);
    beast::error_code ec;
    late.connect({asio::ip::make_address("127.0.0.1"), serve.port()}, ec);
    CHECK(ec == asio::error::connection_refused);
  }
  asio::write(busy.socket(), asio::buffer(body.substr(20)));
  const auto reply = busy.receive();
  CHECK(reply.status == 200);
  CHECK(reply.body.find("draining") != std::string::npos);
  CHECK(serve.wait_exit(10s) == 0);
}

TEST_CASE("SIGINT with no traffic exits 0 at once") {
  ServeProcess serve;
  serve.signal(SIGINT);
  CHECK(serve.wait_exit(5s) == 0);
}

TEST_CASE("the default service classifies a digit with the MLP, from any working directory") {
  // Started from the test's directory, config given by absolute path.
  ServeProcess serve({"--model", "digits"});
  Client client(serve.port());
  // An 8x8 "1": a vertical bar of full-intensity pixels in columns 3 and 4.
  std::string data;
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) data += std::string(data.empty() ? "" : ",") + (c == 3 || c == 4 ? "16" : "0");
  }
  const auto reply = client.post(
      "/v2/models/digits/infer",
      R"({"inputs":[{"name":"INPUT0","shape":[1,64],"datatype":"FP32","data":[)" + data + "]}]}");
  CHECK(reply.status == 200);
  CHECK(reply.body.find(R"("name":"label","datatype":"INT64","shape":[1],"data":[1])") !=
        std::string::npos);
}
