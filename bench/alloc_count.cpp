// Heap allocations on the request path, counted: the proof of the allocation-free path.
// This program interposes malloc and its kin (operator new, Asio's aligned_alloc and C code
// all end there) and counts every allocation any thread makes while a window is open. The
// server is the real one, in-process (HttpServer, the OIP routes, DynamicBatcher, a CPU
// executor, the identity model with a [1, 64] FP32 input); the client never allocates (a raw
// socket, the request built once, a fixed receive buffer). After a warm-up of 200 requests the
// window covers 1,000 keep-alive requests, so every allocation counted is the server's: a
// steady stream of same-shaped requests makes none (CTest runs it with --require-zero).
//
//   build/bench/coinfer-alloc-count
//   build/bench/coinfer-alloc-count --trace | c++filt
//   build/bench/coinfer-alloc-count --connections 64   (64 requests in flight at a time)
//
// --trace: each allocation of the counted window with its call stack recorded (backtrace(),
// into fixed storage: no allocation of its own; the first kMaxTraced), printed as function+offset
// lines per allocation (dladdr names only exported and global symbols; addr2line -f -C names
// the others from the offsets). --require-zero: --trace, and exit 1 if anything was allocated.
// heaptrack cannot see these allocations: this program's malloc comes before its preload.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "coinfer/models/identity_model.hpp"
#include "coinfer/net/http_server.hpp"
#include "coinfer/protocol/oip_routes.hpp"
#include "coinfer/runtime/cpu_executor.hpp"
#include "coinfer/serving/endpoint.hpp"
#include "coinfer/serving/model_repository.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<std::uint64_t> allocations{0};

// --trace: the stacks of the allocations of one request, any thread's.
constexpr int kMaxTraced = 128;
constexpr int kTraceDepth = 28;
std::atomic<bool> tracing{false};
std::atomic<int> traced{0};
void* stacks[kMaxTraced][kTraceDepth];
int depths[kMaxTraced];
std::size_t sizes[kMaxTraced];
thread_local bool in_backtrace = false;

void count(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (tracing.load(std::memory_order_relaxed) && !in_backtrace) {
    const int slot = traced.fetch_add(1, std::memory_order_relaxed);
    if (slot < kMaxTraced) {
      in_backtrace = true;
      depths[slot] = backtrace(stacks[slot], kTraceDepth);
      sizes[slot] = size;
      in_backtrace = false;
    }
  }
}

void print_traces() {
  const int n = std::min(traced.load(), kMaxTraced);
  std::printf("\n%d allocations traced (at most %d printed):\n", traced.load(), kMaxTraced);
  for (int i = 0; i < n; ++i) {
    std::printf("-- allocation %d: %zu bytes\n", i + 1, sizes[i]);
    for (int f = 2; f < depths[i]; ++f) {  // past count() and malloc
      Dl_info info{};
      if (dladdr(stacks[i][f], &info) != 0 && info.dli_sname != nullptr) {
        std::printf("   %s+0x%tx\n", info.dli_sname,
                    static_cast<const char*>(stacks[i][f]) - static_cast<const char*>(info.dli_saddr));
      } else if (info.dli_fname != nullptr) {
        std::printf("   %s+0x%tx\n", info.dli_fname,
                    static_cast<const char*>(stacks[i][f]) - static_cast<const char*>(info.dli_fbase));
      }
    }
  }
}

}  // namespace

// Every heap allocation goes through these: operator new (libstdc++'s calls malloc), Asio's
// aligned_alloc, and C code. glibc's own entry points do the work.
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) {
  count(n);
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
  count(n * size);
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
  count(n);
  return __libc_realloc(p, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
  count(n);
  return __libc_memalign(alignment, n);
}
void* memalign(std::size_t alignment, std::size_t n) {
  count(n);
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  count(n);
  *out = __libc_memalign(alignment, n);
  return *out ? 0 : ENOMEM;
}
void free(void* p) { __libc_free(p); }
}

using namespace coinfer;

namespace {

// A keep-alive connection over a raw socket: send() and recv() only, no allocation.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      std::perror("connect");
      std::exit(1);
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~RawClient() { ::close(fd_); }

  // Sends `request` and reads one whole response into buffer_; true on a 200.
  bool exchange(std::string_view request) { return send(request) && receive(); }

  bool send(std::string_view request) {
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, 0);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Reads one whole response into buffer_; true on a 200.
  bool receive() {
    std::size_t have = 0;
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer_ + have, sizeof buffer_ - have, 0);
      if (n <= 0) return false;
      have += static_cast<std::size_t>(n);
      const std::string_view text(buffer_, have);
      const auto head_end = text.find("\r\n\r\n");
      if (head_end == std::string_view::npos) continue;
      const auto length_at = text.find("Content-Length: ");
      if (length_at == std::string_view::npos || length_at > head_end) return false;
      const std::size_t length = std::strtoul(buffer_ + length_at + 16, nullptr, 10);
      if (have < head_end + 4 + length) continue;
      return text.starts_with("HTTP/1.1 200 ");
    }
  }

 private:
  int fd_ = -1;
  char buffer_[65536];
};

std::string infer_request() {
  std::string body = R"({"inputs":[{"name":"INPUT0","shape":[1,64],"datatype":"FP32","data":[)";
  for (int i = 0; i < 64; ++i) body += (i ? "," : "") + std::to_string(i % 17);
  body += "]}]}";
  return "POST /v2/models/identity/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
         "Content-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

int main(int argc, char** argv) {
  bool trace = false;
  bool require_zero = false;  // the CTest test: fail on any allocation, with its stack
  int connections = 1;        // concurrent keep-alive connections, each with one request out
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--trace") {
      trace = true;
    } else if (arg == "--require-zero") {
      require_zero = trace = true;
    } else if (arg == "--connections" && i + 1 < argc) {
      connections = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: coinfer-alloc-count [--trace] [--require-zero] [--connections N]\n");
      return 2;
    }
  }
  if (trace) {  // backtrace() loads its unwinder on first use: not inside a traced request
    void* warm[4];
    (void)backtrace(warm, 4);
  }
  boost::asio::io_context io;
  ModelRepository repository;
  CpuExecutor executor(1);
  net::Router router;
  (void)repository.add(std::make_unique<Endpoint>(
      std::make_shared<IdentityModel>("identity", "1", 64), io.get_executor(), executor,
      BatchPolicy{}));
  add_oip_routes(router, repository);
  ServerConfig config;
  config.host = "127.0.0.1";
  config.port = 0;
  net::HttpServer server(io.get_executor(), config, router);
  if (auto status = server.listen(); !status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  server.start();
  std::thread io_thread([&io] { io.run(); });

  const std::string request = infer_request();
  int ok = 0;
  constexpr int kRequests = 1000;
  // Rounds of one request on every connection, all sent before any answer is read: with
  // several connections the server holds that many requests at once.
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int c = 0; c < connections; ++c) clients.push_back(std::make_unique<RawClient>(server.port()));
  auto round = [&] {
    for (auto& client : clients) {
      if (!client->send(request)) return;
    }
    for (auto& client : clients) ok += client->receive() ? 1 : 0;
  };
  const int rounds = kRequests / connections;
  const int warmup_rounds = (200 + connections - 1) / connections;
  for (int i = 0; i < warmup_rounds; ++i) round();
  allocations = 0;
  counting = true;
  tracing = trace;
  for (int i = 0; i < rounds; ++i) round();
  tracing = false;
  counting = false;
  const int measured = rounds * connections;
  clients.clear();
  const auto counted = allocations.load();
  server.stop();
  io_thread.join();
  const int total = (warmup_rounds + rounds) * connections;
  std::printf("%d of %d requests answered 200 (%d connection%s); %llu allocations over the last %d "
              "(%.2f per request)\n",
              ok, total, connections, connections == 1 ? "" : "s",
              static_cast<unsigned long long>(counted), measured,
              static_cast<double>(counted) / measured);
  if (trace) print_traces();
  if (ok != total) return 1;
  return require_zero && counted > 0 ? 1 : 0;
}
