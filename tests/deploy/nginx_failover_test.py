"""nginx in front of three coinfer-serve replicas (deploy/nginx/coinfer.conf): real processes,
real sockets, Debian's nginx on loopback, coinfer-loadgen driving the load.

Usage: python3 nginx_failover_test.py COINFER_SERVE COINFER_LOADGEN NGINX_CONF [--report FILE]

  - capacity: one replica directly, then three behind nginx (same loadgen settings);
  - a namespace (X-Cache-Namespace) always reaches the same replica, and namespaces spread;
    requests without one spread too (least_conn); a WebSocket session passes through, and a
    chat completion's SSE stream arrives event by event (not buffered);
  - failover: under load, one replica is killed with SIGKILL and restarted on its port: requests
    are lost only among those in flight on it (nginx retries the rest on another replica), and
    after nginx's fail_timeout the throughput is back and the restarted replica serves again.
The figures go to --report (JSON) for docs/SCALING.md.
"""

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websockets

SERVE, LOADGEN, NGINX_CONF = sys.argv[1], sys.argv[2], sys.argv[3]
REPORT = sys.argv[sys.argv.index("--report") + 1] if "--report" in sys.argv else None
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(REPO, "configs", "default.toml")
CONCURRENCY = 32
failures = []
report = {}


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_replica(port):
    p = subprocess.Popen([SERVE, "--config", CONFIG, "--model", "digits", "--model", "smollm2", "--port", str(port), "--grpc-port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    if "listening on" not in line:
        raise RuntimeError(f"replica on {port} did not start: {line!r}")
    return p


def get(url, headers=None, data=None):
    request = urllib.request.Request(url, data=data, headers=headers or {})
    with urllib.request.urlopen(request, timeout=10) as r:
        return r.status, dict(r.headers), r.read()


BODY = json.dumps({"inputs": [{"name": "INPUT0", "shape": [1, 64], "datatype": "FP32",
                               "data": [float((k * 7) % 17) for k in range(64)]}]})


def loadgen(port, seconds, concurrency=CONCURRENCY):
    p = subprocess.run([LOADGEN, "--url", f"http://127.0.0.1:{port}/v2/models/digits/infer", "--body", BODY,
                        "--duration-s", str(seconds), "--warmup-s", "0.5", "--concurrency", str(concurrency),
                        "--json"], capture_output=True, text=True, timeout=seconds + 60)
    return json.loads(p.stdout)


def success_count(port):
    _, _, text = get(f"http://127.0.0.1:{port}/metrics")
    m = re.search(r'coinfer_inference_request_success_total\{model="digits"[^}]*\} (\d+)', text.decode())
    return int(m.group(1)) if m else 0


ports = [free_port() for _ in range(3)]
nginx_port = free_port()
prefix = tempfile.mkdtemp(prefix="coinfer-nginx-")
os.chmod(prefix, 0o777)  # nginx's workers (nobody when started as root) write temp files here
replicas = [start_replica(p) for p in ports]
conf = open(NGINX_CONF).read()
for k, port in enumerate(ports):
    conf = conf.replace(f"127.0.0.1:800{k + 1}", f"127.0.0.1:{port}")
conf = conf.replace("listen 8000;", f"listen 127.0.0.1:{nginx_port};")
with open(os.path.join(prefix, "coinfer.conf"), "w") as f:
    f.write(conf)
nginx = subprocess.Popen(["nginx", "-c", os.path.join(prefix, "coinfer.conf"), "-p", prefix, "-g", "daemon off;"],
                         stderr=subprocess.PIPE, text=True)
try:
    for _ in range(100):
        try:
            if get(f"http://127.0.0.1:{nginx_port}/v2/health/ready")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    else:
        raise RuntimeError("nginx did not come up: " + (nginx.stderr.read() if nginx.poll() is not None else ""))

    # --- capacity: one replica directly vs three behind nginx ------------------------------
    direct = loadgen(ports[0], 4)
    proxied = loadgen(nginx_port, 4)
    check(direct["errors"] == 0 and proxied["errors"] == 0, f"errors: {direct['errors']} {proxied['errors']}")
    report["one_replica_direct"] = {k: direct[k] for k in ("throughput_rps", "latency_us", "errors")}
    report["three_replicas_nginx"] = {k: proxied[k] for k in ("throughput_rps", "latency_us", "errors")}
    print(f"capacity: one replica {direct['throughput_rps']:.0f} req/s (p99 {direct['latency_us']['p99']:.0f} us), "
          f"three behind nginx {proxied['throughput_rps']:.0f} req/s (p99 {proxied['latency_us']['p99']:.0f} us)",
          flush=True)

    # --- routing: namespaces stick, the rest spreads; WebSocket passes through --------------
    url = f"http://127.0.0.1:{nginx_port}/v2/models/digits/infer"
    by_namespace = {}
    for n in range(12):
        seen = set()
        for _ in range(5):
            status, headers, _ = get(url, {"X-Cache-Namespace": f"team-{n}", "Content-Type": "application/json"},
                                     BODY.encode())
            check(status == 200, f"status {status}")
            seen.add(headers.get("X-Coinfer-Upstream"))
        check(len(seen) == 1, f"namespace team-{n} reached {seen}")
        by_namespace[f"team-{n}"] = seen.pop()
    spread = set(by_namespace.values())
    check(len(spread) >= 2, f"12 namespaces all on {spread}")
    plain = {get(url, {"Content-Type": "application/json"}, BODY.encode())[1].get("X-Coinfer-Upstream")
             for _ in range(30)}
    check(len(plain) >= 2, f"requests without a namespace all on {plain}")
    report["namespaces"] = {"namespaces": 12, "replicas_used": len(spread)}
    print(f"routing: 12 namespaces each on one replica, {len(spread)} replicas used; "
          f"without a namespace {len(plain)} replicas", flush=True)

    async def ws_roundtrip():
        async with websockets.connect(f"ws://127.0.0.1:{nginx_port}/v2/ws") as ws:
            message = json.loads(BODY)
            message.update({"model_name": "digits", "id": "w1"})
            await ws.send(json.dumps(message))
            return json.loads(await ws.recv())
    reply = asyncio.run(ws_roundtrip())
    check(reply.get("id") == "w1" and reply.get("outputs"), f"websocket through nginx: {reply}")

    # An SSE token stream passes through as it is written, not buffered to the end.
    request = urllib.request.Request(
        f"http://127.0.0.1:{nginx_port}/v1/chat/completions",
        data=json.dumps({"model": "smollm2", "stream": True, "max_tokens": 32, "temperature": 0,
                         "messages": [{"role": "user", "content": "Tell me about the sea."}]}).encode(),
        headers={"Content-Type": "application/json", "Cache-Control": "no-store"})
    arrivals = []
    with urllib.request.urlopen(request, timeout=60) as r:
        for line in r:
            if line.startswith(b"data: "):
                arrivals.append((time.monotonic(), line.strip()))
    check(len(arrivals) >= 6 and arrivals[-1][1] == b"data: [DONE]", f"SSE through nginx: {len(arrivals)} events")
    spread_ms = (arrivals[-1][0] - arrivals[0][0]) * 1000 if arrivals else 0
    check(spread_ms >= 50, f"SSE events arrived together ({spread_ms:.0f} ms apart): buffered")
    report["sse"] = {"events": len(arrivals), "first_to_last_ms": spread_ms}
    print(f"SSE through nginx: {len(arrivals)} events over {spread_ms:.0f} ms", flush=True)

    # --- failover: kill -9 one replica under load, restart it -------------------------------
    before = loadgen(nginx_port, 3)
    during = subprocess.Popen([LOADGEN, "--url", url, "--body", BODY, "--duration-s", "8", "--warmup-s", "0",
                               "--concurrency", str(CONCURRENCY), "--json"], stdout=subprocess.PIPE, text=True)
    time.sleep(2)
    replicas[1].send_signal(signal.SIGKILL)
    replicas[1].wait()
    time.sleep(3)
    replicas[1] = start_replica(ports[1])  # returns once it listens, its models loaded
    back_at = time.time()
    during_result = json.loads(during.communicate(timeout=60)[0])
    # nginx tries a failed replica again once fail_timeout (5 s) has passed since its last
    # failure, which can be as late as the moment the replica came back.
    time.sleep(max(0.0, 5.5 - (time.time() - back_at)))
    after = loadgen(nginx_port, 4)
    served = success_count(ports[1])
    check(before["errors"] == 0 and after["errors"] == 0, f"errors before {before['errors']} after {after['errors']}")
    check(during_result["errors"] <= CONCURRENCY,
          f"{during_result['errors']} requests lost, more than the {CONCURRENCY} that can be in flight")
    check(after["throughput_rps"] >= 0.6 * before["throughput_rps"],
          f"throughput did not recover: {after['throughput_rps']:.0f} vs {before['throughput_rps']:.0f} req/s")
    check(served > 0, "the restarted replica served nothing")
    report["failover"] = {
        "before_rps": before["throughput_rps"], "during_rps": during_result["throughput_rps"],
        "during_requests": during_result["requests"], "lost": during_result["errors"],
        "lost_by_status": during_result.get("errors_by_status"), "after_rps": after["throughput_rps"],
        "restarted_replica_served": served, "concurrency": CONCURRENCY}
    print(f"failover: {before['throughput_rps']:.0f} req/s before; {during_result['requests']} requests while a "
          f"replica was killed and restarted, {during_result['errors']} lost; {after['throughput_rps']:.0f} req/s "
          f"after, the restarted replica served {served}", flush=True)
finally:
    nginx.send_signal(signal.SIGQUIT)
    try:
        nginx.wait(timeout=10)
    except subprocess.TimeoutExpired:
        nginx.kill()
    for r in replicas:
        r.send_signal(signal.SIGTERM)
    for r in replicas:
        try:
            r.wait(timeout=15)
        except subprocess.TimeoutExpired:
            r.kill()

if REPORT:
    with open(REPORT, "w") as f:
        json.dump(report, f, indent=1)
if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("ok")
