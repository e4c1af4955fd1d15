#!/usr/bin/env python3
"""Clients and probes for bench/reliability/run.sh (Python 3 standard library only).

Subcommands (each prints one JSON object on stdout unless said otherwise):
  config      write a config copy: BASE OUT [--set section.key=value ...]
  bodies      sentences file -> /v1/embeddings bodies and OIP (WebSocket) bodies
  wait-ready  poll GET /v2/health/ready until 200; prints the seconds it took
  sample      sample a process's RSS, threads and open fds until a stop file appears
  probe       one keep-alive connection, closed loop: latency of 2xx and of 503, Retry-After
  idle        open N keep-alive connections (one request each), hold them, re-check them
  slowloris   N clients each sending one header byte a second, reconnecting when closed
  drain       HTTP closed loop; sends SIGTERM mid-run; every request accounted for
  ws-drain    the same over the OIP WebSocket endpoint (many in flight per connection)
  kill-load   HTTP closed loop through a kill -9 and restart; errors located in time
"""

import argparse
import asyncio
import base64
import json
import os
import random
import re
import signal
import statistics
import sys
import time

# ----------------------------------------------------------------------------- common


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def lat_summary(seconds):
    """Latencies in seconds -> dict in milliseconds."""
    if not seconds:
        return {"n": 0}
    ms = [s * 1000.0 for s in seconds]
    return {"n": len(ms), "p50": round(pct(ms, 50), 3), "p99": round(pct(ms, 99), 3),
            "max": round(max(ms), 3), "mean": round(statistics.fmean(ms), 3)}


def split_url(url):
    m = re.match(r"^(?:http|ws)://([^/:]+):(\d+)(/.*)?$", url)
    if not m:
        raise SystemExit(f"bad url {url}")
    return m.group(1), int(m.group(2)), m.group(3) or "/"


def http_request_bytes(method, host, port, path, body=b"", close=False):
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    if close:
        head += "Connection: close\r\n"
    return head.encode() + b"\r\n" + body


class NoResponse(Exception):
    """The connection ended (EOF or reset) before any byte of a response arrived."""


class Partial(Exception):
    """The connection ended in the middle of a response."""


async def read_response(reader):
    """Returns (status, headers dict lower-case, body bytes). Raises NoResponse / Partial."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if e.partial:
            raise Partial() from None
        raise NoResponse() from None
    except (ConnectionResetError, BrokenPipeError):
        raise NoResponse() from None
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    try:
        body = await reader.readexactly(n) if n else b""
    except (asyncio.IncompleteReadError, ConnectionResetError):
        raise Partial() from None
    return status, headers, body


def close_writer(writer):
    try:
        writer.close()
    except Exception:
        pass


def load_lines(path):
    with open(path, "rb") as f:
        return [line.rstrip(b"\n") for line in f if line.strip()]


def proc_state(pid):
    """'R', 'S', 'Z', ... or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def emit(obj):
    print(json.dumps(obj, separators=(",", ":")), flush=True)


# ----------------------------------------------------------------------------- config


def cmd_config(a):
    """Line-based rewrite of a TOML config: relative weights made absolute, keys set/added."""
    base_dir = os.path.dirname(os.path.abspath(a.base))
    with open(a.base) as f:
        lines = f.read().splitlines()
    sets = {}
    for s in a.set or []:
        key, value = s.split("=", 1)
        section, name = key.rsplit(".", 1)
        sets.setdefault(section, {})[name] = value
    out, section, done = [], None, set()

    def flush_section():
        if section in sets:
            for name, value in sets[section].items():
                if (section, name) not in done:
                    out.append(f"{name} = {value}")
                    done.add((section, name))

    for line in lines:
        m = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
        if m:
            flush_section()
            section = m.group(1)
            out.append(line)
            continue
        km = re.match(r"^\s*([A-Za-z0-9_]+)\s*=", line)
        if km and section in sets and km.group(1) in sets[section]:
            out.append(f"{km.group(1)} = {sets[section][km.group(1)]}")
            done.add((section, km.group(1)))
            continue
        wm = re.match(r'^(\s*(?:weights|vocab)\s*=\s*")([^"]+)(".*)$', line)
        if wm and not wm.group(2).startswith("/"):
            line = wm.group(1) + os.path.normpath(os.path.join(base_dir, wm.group(2))) + wm.group(3)
        out.append(line)
    flush_section()
    for sec, kv in sets.items():  # sections that were not in the file
        if not any((sec, k) in done for k in kv):
            out.append(f"[{sec}]")
            out.extend(f"{k} = {v}" for k, v in kv.items())
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


def cmd_bodies(a):
    with open(a.sentences) as f:
        sentences = [s.strip() for s in f if s.strip()]
    short = [s for s in sentences if a.min_words <= len(s.split()) <= a.max_words]
    with open(a.http_out, "w") as h, open(a.oip_out, "w") as o:
        for s in short:
            h.write(json.dumps({"model": "minilm", "input": s}) + "\n")
            o.write(json.dumps({"inputs": [{"name": "text", "shape": [1], "datatype": "BYTES",
                                            "data": [s]}]}) + "\n")
    emit({"sentences": len(short), "words": [a.min_words, a.max_words]})


# ----------------------------------------------------------------------------- wait-ready


async def try_ready(host, port):
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 0.5)
    except (OSError, asyncio.TimeoutError):
        return False
    try:
        writer.write(http_request_bytes("GET", host, port, "/v2/health/ready", close=True))
        status, _, _ = await asyncio.wait_for(read_response(reader), 1.0)
        return status == 200
    except (OSError, NoResponse, Partial, asyncio.TimeoutError, ValueError, IndexError):
        return False
    finally:
        close_writer(writer)


async def wait_ready(host, port, timeout, interval=0.005):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if await try_ready(host, port):
            return time.monotonic() - t0
        await asyncio.sleep(interval)
    return None


def cmd_wait_ready(a):
    host, port, _ = split_url(a.url)
    took = asyncio.run(wait_ready(host, port, a.timeout))
    if took is None:
        sys.exit(1)
    emit({"took_s": round(took, 4), "ready_at": time.time()})


# ----------------------------------------------------------------------------- sample


def read_proc(pid):
    rss = threads = None
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, fds, threads


def server_tcp(port):
    """(established, close_wait) TCP connections whose local port is `port`."""
    est = cw = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if int(parts[1].rsplit(":", 1)[1], 16) != port:
                        continue
                    est += parts[3] == "01"
                    cw += parts[3] == "08"
        except OSError:
            pass
    return est, cw


def cmd_sample(a):
    """Samples until the stop file exists (at least once). With --port, also the server's TCP
    connections, so that fds_other (fds less connections) shows a leak apart from clients
    opening and closing connections."""
    samples, t0 = [], time.monotonic()
    while True:
        try:
            rss, fds, threads = read_proc(a.pid)
        except (FileNotFoundError, ProcessLookupError):
            break
        x = {"t": round(time.monotonic() - t0, 2), "rss_kb": rss, "fds": fds, "threads": threads}
        if a.port:
            est, cw = server_tcp(a.port)
            x.update(conns=est, close_wait=cw, fds_other=fds - est - cw)
        samples.append(x)
        if os.path.exists(a.stop_file):
            break
        time.sleep(a.interval)
    emit({"samples": samples})


# ----------------------------------------------------------------------------- probe


async def probe_conn(host, port, path, bodies, t_end, gap_s, k, lat, counts):
    reader = writer = None
    i = k
    rng = random.Random(k)
    while time.monotonic() < t_end:
        # A random pause first: a client that sends right after its previous answer would
        # arrive just after a batch left the queue, i.e. always find room.
        await asyncio.sleep(rng.uniform(0, gap_s))
        if writer is None:
            try:
                reader, writer = await asyncio.open_connection(host, port)
            except OSError:
                counts["connect"] = counts.get("connect", 0) + 1
                continue
        # One request in five is GET /v2/health/ready: the control, an answer that needs no
        # queue, timed the same way on the same connections.
        control = rng.random() < 0.2
        if control:
            req = http_request_bytes("GET", host, port, "/v2/health/ready")
        else:
            req = http_request_bytes("POST", host, port, path, bodies[i % len(bodies)])
            i += 1
        t0 = time.perf_counter()
        writer.write(req)
        try:
            status, headers, _ = await read_response(reader)
        except (NoResponse, Partial, OSError) as e:
            counts[type(e).__name__] = counts.get(type(e).__name__, 0) + 1
            close_writer(writer)
            writer = None
            continue
        dt = time.perf_counter() - t0
        lat.setdefault(f"health_{status}" if control else status, []).append(dt)
        if status == 503 and "retry-after" not in headers:
            counts["missing_retry_after"] = counts.get("missing_retry_after", 0) + 1
        if headers.get("connection", "").lower() == "close":
            close_writer(writer)
            writer = None
    if writer is not None:
        close_writer(writer)


async def probe(a):
    """Several keep-alive connections, each: random pause, one request, its latency by status."""
    host, port, path = split_url(a.url)
    bodies = load_lines(a.bodies)
    lat, counts = {}, {}
    t_end = time.monotonic() + a.duration
    await asyncio.gather(*(probe_conn(host, port, path, bodies, t_end, a.gap_ms / 1000.0, k, lat,
                                      counts) for k in range(a.connections)))
    missing = counts.pop("missing_retry_after", 0)
    emit({"connections": a.connections,
          "by_status": {str(k): lat_summary(v) for k, v in sorted(lat.items(), key=str)},
          "rejected_503": len(lat.get(503, [])),
          "rejected_503_under_1ms": sum(1 for x in lat.get(503, []) if x < 0.001),
          "missing_retry_after": missing, "connection_errors": counts})


# ----------------------------------------------------------------------------- idle


async def open_idle(host, port, sem):
    async with sem:
        try:
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(http_request_bytes("GET", host, port, "/v2/health/ready"))
            status, headers, _ = await asyncio.wait_for(read_response(reader), 30)
            if status != 200 or headers.get("connection", "").lower() == "close":
                close_writer(writer)
                return None
            return reader, writer
        except (OSError, NoResponse, Partial, asyncio.TimeoutError):
            return None


async def recheck(conn, host, port, sem):
    reader, writer = conn
    async with sem:
        try:
            writer.write(http_request_bytes("GET", host, port, "/v2/health/ready"))
            status, _, _ = await asyncio.wait_for(read_response(reader), 30)
            return status == 200
        except (OSError, NoResponse, Partial, asyncio.TimeoutError):
            return False


async def idle(a):
    host, port, _ = split_url(a.url)
    sem = asyncio.Semaphore(256)
    t0 = time.monotonic()
    conns = await asyncio.gather(*(open_idle(host, port, sem) for _ in range(a.n)))
    opened = [c for c in conns if c]
    open_s = time.monotonic() - t0
    with open(a.ready_file, "w") as f:
        f.write(str(len(opened)))
    while not os.path.exists(a.stop_file):
        await asyncio.sleep(0.1)
    held_s = time.monotonic() - t0 - open_s
    ok = await asyncio.gather(*(recheck(c, host, port, sem) for c in opened))
    for _, w in opened:
        close_writer(w)
    emit({"requested": a.n, "opened": len(opened), "open_s": round(open_s, 2),
          "held_s": round(held_s, 1), "still_open_and_served": sum(ok)})


def cmd_idle(a):
    asyncio.run(idle(a))


# ----------------------------------------------------------------------------- slowloris


async def slow_client(host, port, stop, stats, start_delay):
    await asyncio.sleep(start_delay)
    header = (f"POST /v1/embeddings HTTP/1.1\r\nHost: {host}:{port}\r\nX-Slow: "
              + "a" * 4000).encode()
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            stats["connect_errors"] += 1
            await asyncio.sleep(1)
            continue
        stats["connections"] += 1
        stats["open"] += 1
        got = asyncio.ensure_future(reader.read(4096))
        i = 0
        try:
            while not stop.is_set() and i < len(header):
                writer.write(header[i:i + 1])
                stats["bytes"] += 1
                i += 1
                done, _ = await asyncio.wait({got}, timeout=1.0)
                if done:
                    break
            if got.done():
                data = got.result() if not got.exception() else b""
                m = re.match(rb"HTTP/1\.1 (\d+)", data or b"")
                key = "answered_" + m.group(1).decode() if m else "closed_without_answer"
                stats[key] = stats.get(key, 0) + 1
        except (OSError, ConnectionError):
            stats["closed_without_answer"] = stats.get("closed_without_answer", 0) + 1
        finally:
            got.cancel()
            stats["open"] -= 1
            close_writer(writer)


async def slowloris(a):
    host, port, _ = split_url(a.url)
    stop = asyncio.Event()
    stats = {"connections": 0, "open": 0, "bytes": 0, "connect_errors": 0}
    tasks = [asyncio.ensure_future(slow_client(host, port, stop, stats, i * a.ramp_s / a.n))
             for i in range(a.n)]
    await asyncio.sleep(a.ramp_s + 0.5)
    with open(a.ready_file, "w") as f:
        f.write(str(stats["open"]))
    open_samples = []
    while not os.path.exists(a.stop_file):
        open_samples.append(stats["open"])
        await asyncio.sleep(0.5)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    stats.pop("open")
    stats["clients"] = a.n
    stats["open_min"] = min(open_samples) if open_samples else 0
    stats["open_max"] = max(open_samples) if open_samples else 0
    emit(stats)


def cmd_slowloris(a):
    asyncio.run(slowloris(a))


# ----------------------------------------------------------------------------- HTTP closed loop with events


class Events:
    """One record per request: (t_send, t_end, outcome, status)."""

    def __init__(self):
        self.records = []

    def add(self, t_send, t_end, outcome, status=None):
        self.records.append((t_send, t_end, outcome, status))


async def http_worker(host, port, path, bodies, events, stop, k, reconnect_delay, stop_on_refused,
                      sigterm_at, think_s=0.0):
    reader = writer = None
    i = k
    rng = random.Random(k)
    while not stop.is_set():
        if think_s and writer is not None:
            # a client that pauses between requests: its keep-alive connection is idle then
            await asyncio.sleep(rng.uniform(0, 2 * think_s))
        if writer is None:
            t = time.time()
            try:
                reader, writer = await asyncio.open_connection(host, port)
            except OSError:
                events.add(t, time.time(), "refused")
                if stop_on_refused and sigterm_at[0] is not None:
                    return
                await asyncio.sleep(reconnect_delay)
                continue
        req = http_request_bytes("POST", host, port, path, bodies[i % len(bodies)])
        i += 1
        t = time.time()
        try:
            writer.write(req)
            await writer.drain()
            status, headers, _ = await read_response(reader)
        except (NoResponse, OSError):
            events.add(t, time.time(), "no_response")
            close_writer(writer)
            writer = None
            await asyncio.sleep(reconnect_delay)
            continue
        except Partial:
            events.add(t, time.time(), "partial")
            close_writer(writer)
            writer = None
            continue
        events.add(t, time.time(), "ok" if 200 <= status < 300 else "status", status)
        if headers.get("connection", "").lower() == "close":
            close_writer(writer)
            writer = None
    if writer is not None:
        close_writer(writer)


def summarize_around(records, t_mark):
    before = [r for r in records if r[0] < t_mark]
    in_flight = [r for r in before if r[1] >= t_mark]
    after = [r for r in records if r[0] >= t_mark]

    def count(rs):
        c = {}
        for r in rs:
            key = r[2] if r[2] != "status" else f"status_{r[3]}"
            c[key] = c.get(key, 0) + 1
        return c
    return before, in_flight, after, count


async def drain(a):
    host, port, path = split_url(a.url)
    bodies = load_lines(a.bodies)
    events, stop, sigterm_at = Events(), asyncio.Event(), [None]
    workers = [asyncio.ensure_future(http_worker(host, port, path, bodies, events, stop, k, 0.001,
                                                 True, sigterm_at, a.think_ms / 1000.0))
               for k in range(a.concurrency)]
    await asyncio.sleep(a.before_s)
    t_sig = time.time()
    sigterm_at[0] = t_sig
    os.kill(a.pid, signal.SIGTERM)
    t_exit = None
    deadline = time.monotonic() + a.max_after_s
    while time.monotonic() < deadline:
        if proc_state(a.pid) in (None, "Z"):
            t_exit = time.time()
            break
        await asyncio.sleep(0.002)
    await asyncio.sleep(0.2)
    stop.set()
    await asyncio.wait(workers, timeout=5)
    before, in_flight, after, count = summarize_around(events.records, t_sig)
    lost_in_flight = [r for r in in_flight if r[2] != "ok"]
    emit({"concurrency": a.concurrency, "think_ms": a.think_ms,
          "requests_before_sigterm": len(before),
          "ok_before_sigterm": sum(1 for r in before if r[2] == "ok"),
          "in_flight_at_sigterm": len(in_flight),
          "in_flight_answered_ok": sum(1 for r in in_flight if r[2] == "ok"),
          "in_flight_lost": len(lost_in_flight),
          "in_flight_lost_sent_ms_before_sigterm": sorted(round((t_sig - r[0]) * 1000, 2)
                                                          for r in lost_in_flight),
          "in_flight_outcomes": count(in_flight),
          "after_sigterm_outcomes": count(after),
          "exit_after_sigterm_s": None if t_exit is None else round(t_exit - t_sig, 3),
          "last_ok_after_sigterm_s": round(max((r[1] for r in events.records if r[2] == "ok"),
                                               default=t_sig) - t_sig, 3)})


def cmd_drain(a):
    asyncio.run(drain(a))


async def kill_load(a):
    host, port, path = split_url(a.url)
    bodies = load_lines(a.bodies)
    events, stop = Events(), asyncio.Event()
    workers = [asyncio.ensure_future(http_worker(host, port, path, bodies, events, stop, k,
                                                 a.reconnect_ms / 1000.0, False, [None]))
               for k in range(a.concurrency)]
    await asyncio.sleep(a.duration)
    stop.set()
    await asyncio.wait(workers, timeout=10)
    marks = {}
    with open(a.marks) as f:
        for line in f:
            if line.strip():
                marks.update(json.loads(line))
    t_kill, t_ready = marks["kill"], marks["ready"]
    recs = events.records
    before, in_flight, after, count = summarize_around(recs, t_kill)
    done_before = [r for r in before if r[1] < t_kill]
    down = [r for r in after if r[0] < t_ready]
    up = [r for r in recs if r[0] >= t_ready]
    # A request that failed although sent after the restart was ready would be a bug; so
    # would a non-connection error (a 5xx) anywhere, or a failure before the kill.
    emit({"concurrency": a.concurrency, "kill_to_ready_s": round(t_ready - t_kill, 3),
          "before_kill": count(done_before), "in_flight_at_kill": len(in_flight),
          "in_flight_outcomes": count(in_flight),
          "sent_while_down": count(down), "sent_after_ready": count(up),
          "errors_before_kill": sum(1 for r in done_before if r[2] != "ok"),
          "http_errors": sum(1 for r in recs if r[2] == "status"),
          "failed_after_ready": sum(1 for r in up if r[2] != "ok"),
          "ok_after_ready": sum(1 for r in up if r[2] == "ok"),
          "first_ok_after_kill_s": round(min((r[1] for r in after if r[2] == "ok"),
                                             default=float("nan")) - t_kill, 3)})


def cmd_kill_load(a):
    asyncio.run(kill_load(a))


# ----------------------------------------------------------------------------- WebSocket


async def ws_connect(host, port, path):
    reader, writer = await asyncio.open_connection(host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise OSError("websocket handshake refused: " + head.split(b"\r\n")[0].decode())
    return reader, writer


def ws_frame(opcode, payload):
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = bytes([0x80 | opcode, 0x80 | n])
    elif n < 65536:
        head = bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 0x80 | 127]) + n.to_bytes(8, "big")
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + masked


async def ws_read_message(reader, writer):
    """Returns (opcode, payload) of a whole message; answers pings."""
    data, first_op = b"", None
    while True:
        b0, b1 = await reader.readexactly(2)
        op, fin, n = b0 & 0x0F, b0 & 0x80, b1 & 0x7F
        if n == 126:
            n = int.from_bytes(await reader.readexactly(2), "big")
        elif n == 127:
            n = int.from_bytes(await reader.readexactly(8), "big")
        mask = await reader.readexactly(4) if b1 & 0x80 else None
        payload = await reader.readexactly(n) if n else b""
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        if op == 9:
            writer.write(ws_frame(10, payload))
            continue
        if op == 10:
            continue
        if op == 8:
            return 8, payload
        if first_op is None:
            first_op = op
        data += payload
        if fin:
            return first_op, data


async def ws_conn_worker(host, port, path, model, bodies, k, in_flight_max, state, stop):
    try:
        reader, writer = await ws_connect(host, port, path)
    except OSError:
        state["connect_errors"] += 1
        return
    pending = {}  # id -> send time
    slots = asyncio.Semaphore(in_flight_max)
    closed = asyncio.Event()
    close_code = [None]
    seq = [0]

    async def sender():
        i = k
        while not stop.is_set() and not closed.is_set():
            await slots.acquire()
            if closed.is_set() or stop.is_set():
                break
            body = json.loads(bodies[i % len(bodies)])
            i += 1
            seq[0] += 1
            rid = f"{k}-{seq[0]}"
            body["id"], body["model_name"] = rid, model
            try:
                pending[rid] = time.time()
                writer.write(ws_frame(1, json.dumps(body).encode()))
                await writer.drain()
            except OSError:
                break

    async def receiver():
        while True:
            try:
                op, payload = await ws_read_message(reader, writer)
            except (asyncio.IncompleteReadError, OSError):
                state["eof_without_close"] += 1
                break
            if op == 8:
                close_code[0] = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                state["close_time"].append(time.time())
                try:
                    writer.write(ws_frame(8, payload[:2]))
                except OSError:
                    pass
                break
            msg = json.loads(payload)
            rid = msg.get("id")
            t_send = pending.pop(rid, None)
            if t_send is None:
                state["unmatched"] += 1
                continue
            outcome = "ok" if "outputs" in msg else f"error_{msg.get('status')}"
            state["records"].append((t_send, time.time(), outcome))
            slots.release()
        closed.set()
        slots.release()

    s, r = asyncio.ensure_future(sender()), asyncio.ensure_future(receiver())
    await r
    s.cancel()
    for rid, t_send in pending.items():
        state["records"].append((t_send, None, "unanswered"))
    state["close_codes"].append(close_code[0])
    close_writer(writer)


async def ws_drain(a):
    host, port, path = split_url(a.url)
    bodies = load_lines(a.bodies)
    state = {"records": [], "close_codes": [], "close_time": [], "connect_errors": 0,
             "eof_without_close": 0, "unmatched": 0}
    stop = asyncio.Event()
    workers = [asyncio.ensure_future(ws_conn_worker(host, port, path, a.model, bodies, k,
                                                    a.in_flight, state, stop))
               for k in range(a.connections)]
    await asyncio.sleep(a.before_s)
    t_sig = time.time()
    os.kill(a.pid, signal.SIGTERM)
    t_exit = None
    deadline = time.monotonic() + a.max_after_s
    while time.monotonic() < deadline:
        if proc_state(a.pid) in (None, "Z"):
            t_exit = time.time()
            break
        await asyncio.sleep(0.002)
    stop.set()
    await asyncio.wait(workers, timeout=5)
    recs = state["records"]
    before = [r for r in recs if r[0] < t_sig]
    in_flight = [r for r in before if r[1] is None or r[1] >= t_sig]
    after = [r for r in recs if r[0] >= t_sig]
    lost = [r for r in in_flight if r[2] != "ok"]

    def count(rs):
        c = {}
        for r in rs:
            c[r[2]] = c.get(r[2], 0) + 1
        return c
    codes = {}
    for c in state["close_codes"]:
        codes[str(c)] = codes.get(str(c), 0) + 1
    emit({"connections": a.connections, "in_flight_per_connection": a.in_flight,
          "requests_before_sigterm": len(before),
          "in_flight_at_sigterm": len(in_flight),
          "in_flight_answered_ok": sum(1 for r in in_flight if r[2] == "ok"),
          "in_flight_lost": len(lost),
          "in_flight_lost_sent_ms_before_sigterm": sorted(round((t_sig - r[0]) * 1000, 2)
                                                          for r in lost)[:50],
          "in_flight_outcomes": count(in_flight), "after_sigterm_outcomes": count(after),
          "close_codes": codes, "eof_without_close": state["eof_without_close"],
          "connect_errors": state["connect_errors"], "unmatched_replies": state["unmatched"],
          "exit_after_sigterm_s": None if t_exit is None else round(t_exit - t_sig, 3),
          "last_close_after_sigterm_s": round(max(state["close_time"], default=t_sig) - t_sig, 3)})


def cmd_ws_drain(a):
    asyncio.run(ws_drain(a))


# ----------------------------------------------------------------------------- main


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("config")
    s.add_argument("base")
    s.add_argument("out")
    s.add_argument("--set", action="append")
    s.set_defaults(fn=cmd_config)

    s = sub.add_parser("bodies")
    s.add_argument("sentences")
    s.add_argument("http_out")
    s.add_argument("oip_out")
    s.add_argument("--min-words", type=int, default=5)
    s.add_argument("--max-words", type=int, default=12)
    s.set_defaults(fn=cmd_bodies)

    s = sub.add_parser("wait-ready")
    s.add_argument("url")
    s.add_argument("--timeout", type=float, default=30)
    s.set_defaults(fn=cmd_wait_ready)

    s = sub.add_parser("sample")
    s.add_argument("pid", type=int)
    s.add_argument("stop_file")
    s.add_argument("--interval", type=float, default=1.0)
    s.add_argument("--port", type=int, default=0)
    s.set_defaults(fn=cmd_sample)

    s = sub.add_parser("probe")
    s.add_argument("url")
    s.add_argument("bodies")
    s.add_argument("--duration", type=float, default=10)
    s.add_argument("--gap-ms", type=float, default=100)
    s.add_argument("--connections", type=int, default=8)
    s.set_defaults(fn=lambda a: asyncio.run(probe(a)))

    s = sub.add_parser("idle")
    s.add_argument("url")
    s.add_argument("n", type=int)
    s.add_argument("ready_file")
    s.add_argument("stop_file")
    s.set_defaults(fn=cmd_idle)

    s = sub.add_parser("slowloris")
    s.add_argument("url")
    s.add_argument("n", type=int)
    s.add_argument("ready_file")
    s.add_argument("stop_file")
    s.add_argument("--ramp-s", type=float, default=2)
    s.set_defaults(fn=cmd_slowloris)

    s = sub.add_parser("drain")
    s.add_argument("url")
    s.add_argument("bodies")
    s.add_argument("pid", type=int)
    s.add_argument("--concurrency", type=int, default=64)
    s.add_argument("--before-s", type=float, default=3)
    s.add_argument("--max-after-s", type=float, default=15)
    s.add_argument("--think-ms", type=float, default=0)
    s.set_defaults(fn=cmd_drain)

    s = sub.add_parser("ws-drain")
    s.add_argument("url")
    s.add_argument("bodies")
    s.add_argument("pid", type=int)
    s.add_argument("--model", default="minilm")
    s.add_argument("--connections", type=int, default=4)
    s.add_argument("--in-flight", type=int, default=32)
    s.add_argument("--before-s", type=float, default=3)
    s.add_argument("--max-after-s", type=float, default=15)
    s.set_defaults(fn=cmd_ws_drain)

    s = sub.add_parser("kill-load")
    s.add_argument("url")
    s.add_argument("bodies")
    s.add_argument("marks")
    s.add_argument("--concurrency", type=int, default=32)
    s.add_argument("--duration", type=float, default=8)
    s.add_argument("--reconnect-ms", type=float, default=5)
    s.set_defaults(fn=cmd_kill_load)

    a = p.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
