#!/usr/bin/env python3
"""Turns the raw outputs of one bench/reliability/run.sh scenario into measurement lines.

  report.py SCENARIO DIR [options]    one JSON line per measurement on stdout, appended to
                                      $RELIABILITY_RESULTS too; exit 1 if a check failed
  report.py summary WORKDIR           the human table of everything measured (stderr in run.sh)

Each line: {"scenario","measure","value","unit","target","met","gate"[,"detail"]}; gate
"check" fails the run when not met, "report" (throughput and latency ratios on a shared,
noisy machine) never does.
"""

import argparse
import json
import os
import sys

failed = False


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {} if default is None else default


def read_int(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def emit(scenario, measure, value, unit, target, met, gate="check", detail=None):
    global failed
    line = {"scenario": scenario, "measure": measure, "value": value, "unit": unit,
            "target": target, "met": met, "gate": gate}
    if detail is not None:
        line["detail"] = detail
    text = json.dumps(line, separators=(",", ":"))
    print(text, flush=True)
    out = os.environ.get("RELIABILITY_RESULTS")
    if out:
        with open(out, "a") as f:
            f.write(text + "\n")
    if gate == "check" and met is False:
        failed = True


def rps(d):
    return round(d.get("ok", 0) / d["duration_s"], 1) if d.get("duration_s") else 0.0


def ms(d, key="p99"):
    v = d.get("latency_us", {}).get(key)
    return None if v is None else round(v / 1000.0, 2)


def brief(d):
    return {k: d.get(k) for k in ("requests", "ok", "errors", "errors_by_status")} | {
        "p50_ms": ms(d, "p50"), "p99_ms": ms(d), "max_ms": ms(d, "max")}


def exit_ok(dirpath, name="exit_code"):
    return read_int(os.path.join(dirpath, name))


# ----------------------------------------------------------------------------- scenarios


def capacity(a):
    d = load(os.path.join(a.dir, "capacity.json"))
    emit("capacity", "closed loop, 64 clients: sentences/s", rps(d), "req/s", "measured", None,
         "report", brief(d))


def overload(a):
    f = lambda n: load(os.path.join(a.dir, n))
    base, over, rec, probe = f("baseline.json"), f("overload.json"), f("recovery.json"), f("probe.json")
    cap = a.capacity
    goodput = rps(over)
    s = "overload"
    emit(s, "offered rate", over.get("rate"), "req/s", "2x capacity", None, "report")
    emit(s, "goodput (2xx/s) / capacity", round(goodput / cap, 3) if cap else None, "ratio",
         ">= 0.90", bool(cap) and goodput / cap >= 0.9, "report",
         {"goodput_rps": goodput, "capacity_rps": cap})
    by = over.get("errors_by_status", {})
    other = {k: v for k, v in by.items() if k not in ("503", "504")}
    emit(s, "errors other than 503/504 at 2x", sum(other.values()), "requests", "0",
         not other and bool(over), "check", by)
    emit(s, "rejected with 503", by.get("503", 0), "requests", "> 0", None, "report",
         {"504_deadline_passed": by.get("504", 0)})
    p503 = probe.get("by_status", {}).get("503", {})
    emit(s, "503 carries Retry-After", probe.get("missing_retry_after"), "missing",
         "0 missing", probe.get("missing_retry_after") == 0 and probe.get("rejected_503", 0) > 0,
         "check", {"probed_503": probe.get("rejected_503")})
    under = probe.get("rejected_503_under_1ms", 0)
    n503 = probe.get("rejected_503", 0)
    emit(s, "503 answer time p99 (one client, send to full response)", p503.get("p99"), "ms",
         "< 1 ms", p503.get("p99") is not None and p503["p99"] < 1.0, "report",
         {"p50_ms": p503.get("p50"), "max_ms": p503.get("max"),
          "share_under_1ms": round(under / n503, 4) if n503 else None,
          "probe_200": probe.get("by_status", {}).get("200")})
    hc = probe.get("by_status", {}).get("health_200", {})
    if hc.get("n"):
        emit(s, "control: GET /v2/health/ready p99 on the same connections", hc.get("p99"), "ms",
             "what the client and the shared cores add", None, "report",
             {"p50_ms": hc.get("p50"), "max_ms": hc.get("max"), "n": hc.get("n")})
    p99 = ms(over)
    emit(s, "p99 of admitted (2xx) requests", p99, "ms",
         f"<= {a.deadline_us / 1000:g} ms (queue deadline)",
         p99 is not None and p99 <= a.deadline_us / 1000, "report", brief(over))
    rp99, bp99 = ms(rec), ms(base)
    rec_ok = rec.get("errors", 1) == 0 and rp99 is not None and bp99 is not None and \
        rp99 <= max(2 * bp99, bp99 + 50)
    emit(s, "recovery: 0.5x right after, errors / p99", rec.get("errors"), "errors",
         "0 errors, p99 <= 2x the 0.5x baseline", rec_ok, "report",
         {"p99_ms": rp99, "baseline_p99_ms": bp99, "recovery": brief(rec), "baseline": brief(base)})
    emit(s, "server exit status after SIGTERM", exit_ok(a.dir), "", "0", exit_ok(a.dir) == 0)


def soak(a):
    d = load(os.path.join(a.dir, "soak.json"))
    samples = load(os.path.join(a.dir, "samples.json")).get("samples", [])
    s = "soak"
    emit(s, "throughput at 0.7x", rps(d), "req/s", f"{0.7 * a.capacity:.1f} offered", None,
         "report", brief(d))
    emit(s, "errors", d.get("errors"), "requests", "0", d.get("errors") == 0 and bool(d), "check",
         d.get("errors_by_status"))
    if len(samples) >= 5:
        n = len(samples)
        # The first 10% of the run (warm-up, first allocations) is the settling period; the
        # baseline is the median of the next 10%.
        skip = max(1, n // 10, sum(1 for x in samples if x["t"] < 5))
        settle = samples[skip:]
        head = sorted(x["rss_kb"] for x in settle[:max(1, n // 10)])
        ref = head[len(head) // 2]
        rss = [x["rss_kb"] for x in settle]
        dev = max(abs(v - ref) for v in rss) / ref
        fds = [x["fds"] for x in settle]
        other = [x.get("fds_other", x["fds"]) for x in settle]
        fref = other[0]
        fdev = max(abs(v - fref) for v in other) / fref
        emit(s, "RSS max deviation from baseline", round(100 * dev, 2), "%", "<= 5%", dev <= 0.05,
             "check", {"baseline_mb": round(ref / 1024, 1), "min_mb": round(min(rss) / 1024, 1),
                       "max_mb": round(max(rss) / 1024, 1),
                       "first_mb": round(samples[0]["rss_kb"] / 1024, 1),
                       "last_mb": round(samples[-1]["rss_kb"] / 1024, 1), "samples": n,
                       "span_s": samples[-1]["t"]})
        emit(s, "open fds other than client connections: max deviation", round(100 * fdev, 2), "%",
             "<= 5%", fdev <= 0.05, "check",
             {"fds_other_min": min(other), "fds_other_max": max(other), "fds_min": min(fds),
              "fds_max": max(fds), "connections_min": min(x.get("conns", 0) for x in settle),
              "connections_max": max(x.get("conns", 0) for x in settle),
              "close_wait_max": max(x.get("close_wait", 0) for x in settle),
              "threads": samples[-1]["threads"]})
        b = (load(os.path.join(a.dir, "before.json")).get("samples") or [{}])[0]
        e = (load(os.path.join(a.dir, "after.json")).get("samples") or [{}])[0]
        if b and e:
            emit(s, "open fds after the load ended (before it started)", e["fds"], "fds",
                 f"<= {b['fds']}", e["fds"] <= b["fds"], "check",
                 {"connections_after": e.get("conns"), "close_wait_after": e.get("close_wait"),
                  "rss_before_mb": round(b["rss_kb"] / 1024, 1),
                  "rss_after_mb": round(e["rss_kb"] / 1024, 1)})
        half = samples[n // 2:]
        if len(half) >= 2 and half[-1]["t"] > half[0]["t"]:
            slope = (half[-1]["rss_kb"] - half[0]["rss_kb"]) / 1024 / ((half[-1]["t"] - half[0]["t"]) / 60)
            emit(s, "RSS slope over the second half", round(slope, 3), "MB/min", "~0", None, "report")
    else:
        emit(s, "RSS samples", len(samples), "samples", ">= 5", False)
    emit(s, "server exit status after SIGTERM", exit_ok(a.dir), "", "0", exit_ok(a.dir) == 0)


def cpu_pct(path):
    """cpu_mark file (two lines: time ticks...) -> CPU % of each pid over the interval."""
    try:
        with open(path) as f:
            rows = [[float(v) for v in line.split()] for line in f if line.strip()]
        (t0, *c0), (t1, *c1) = rows[0], rows[-1]
        hz = os.sysconf("SC_CLK_TCK")
        return [round(100 * (b - a) / hz / (t1 - t0), 1) for a, b in zip(c0, c1)]
    except (OSError, ValueError, IndexError, ZeroDivisionError):
        return []


def cpu_line(s, a, clients):
    base, withh = cpu_pct(os.path.join(a.dir, "cpu_baseline")), cpu_pct(os.path.join(a.dir, "cpu_with"))
    if base and withh:
        emit(s, f"server CPU without / with {clients}", f"{base[0]} / {withh[0]}", "% of a core",
             "reported", None, "report",
             {f"{clients}_client_cpu_pct": withh[1] if len(withh) > 1 else None,
              "machine_cores": os.cpu_count()})


def _rss(path):
    smp = load(path).get("samples", [])
    return smp[-1] if smp else {}


def connections(a):
    base = load(os.path.join(a.dir, "baseline.json"))
    withi = load(os.path.join(a.dir, "with_idle.json"))
    idle = load(os.path.join(a.dir, "idle.json"))
    s = "connections"
    emit(s, "idle keep-alive connections opened", idle.get("opened"), "connections",
         f"{a.idle}", idle.get("opened") == a.idle, "check", {"open_s": idle.get("open_s")})
    emit(s, "idle connections still open and served at the end", idle.get("still_open_and_served"),
         "connections", f"{a.idle}", idle.get("still_open_and_served") == a.idle, "check",
         {"held_s": idle.get("held_s")})
    emit(s, "normal load errors beside them", withi.get("errors"), "requests", "0",
         withi.get("errors") == 0 and bool(withi), "check", withi.get("errors_by_status"))
    r0, r1 = rps(base), rps(withi)
    emit(s, "normal throughput with / without idle connections", round(r1 / r0, 3) if r0 else None,
         "ratio", ">= 0.90", bool(r0) and r1 / r0 >= 0.9, "report", {"without_rps": r0, "with_rps": r1})
    emit(s, "normal p99 with idle connections", ms(withi), "ms", f"without: {ms(base)} ms", None,
         "report", {"with": brief(withi), "without": brief(base)})
    b, w = _rss(os.path.join(a.dir, "before.json")), load(os.path.join(a.dir, "with.json")).get("samples", [])
    if b and w:
        peak = max(w, key=lambda x: x["rss_kb"])
        emit(s, "server memory per idle connection",
             round((peak["rss_kb"] - b["rss_kb"]) / max(1, idle.get("opened") or 1), 2), "KiB",
             "reported", None, "report",
             {"rss_before_mb": round(b["rss_kb"] / 1024, 1), "rss_with_mb": round(peak["rss_kb"] / 1024, 1),
              "fds_before": b["fds"], "fds_with": max(x["fds"] for x in w)})
    cpu_line(s, a, "idle connections")
    emit(s, "server exit status after SIGTERM", exit_ok(a.dir), "", "0", exit_ok(a.dir) == 0)


def slowloris(a):
    base = load(os.path.join(a.dir, "baseline.json"))
    withs = load(os.path.join(a.dir, "with_slowloris.json"))
    slow = load(os.path.join(a.dir, "slowloris.json"))
    s = "slowloris"
    emit(s, "slowloris connections open during the load (min)", slow.get("open_min"), "connections",
         f"~{a.clients}", None, "report", slow)
    emit(s, "normal load errors beside them", withs.get("errors"), "requests", "0",
         withs.get("errors") == 0 and bool(withs), "check", withs.get("errors_by_status"))
    r0, r1 = rps(base), rps(withs)
    emit(s, "normal throughput with / without slowloris", round(r1 / r0, 3) if r0 else None,
         "ratio", ">= 0.90", bool(r0) and r1 / r0 >= 0.9, "report", {"without_rps": r0, "with_rps": r1})
    emit(s, "normal p99 with slowloris", ms(withs), "ms", f"without: {ms(base)} ms", None, "report",
         {"with": brief(withs), "without": brief(base)})
    cpu_line(s, a, "slowloris")
    emit(s, "server exit status after SIGTERM", exit_ok(a.dir), "", "0", exit_ok(a.dir) == 0)


def drain(a):
    for kind, name in (("http", "HTTP"), ("ws", "WebSocket")):
        d = load(os.path.join(a.dir, f"{kind}.json"))
        rc = read_int(os.path.join(a.dir, f"{kind}_exit_code"))
        s = f"drain-{kind}"
        emit(s, f"{name}: requests in flight at SIGTERM", d.get("in_flight_at_sigterm"), "requests",
             "> 0", (d.get("in_flight_at_sigterm") or 0) > 0, "check", d.get("in_flight_outcomes"))
        emit(s, f"{name}: in-flight requests lost (no answer)", d.get("in_flight_lost"), "requests",
             "0", d.get("in_flight_lost") == 0, "check",
             {"sent_ms_before_sigterm": d.get("in_flight_lost_sent_ms_before_sigterm")})
        emit(s, f"{name}: exit status", rc, "", "0", rc == 0)
        t = d.get("exit_after_sigterm_s")
        emit(s, f"{name}: SIGTERM to exit", t, "s", f"<= {a.drain_timeout_ms / 1000:g} s (drain_timeout_ms)",
             t is not None and t <= a.drain_timeout_ms / 1000, "check",
             {"after_sigterm": d.get("after_sigterm_outcomes"),
              "close_codes": d.get("close_codes"),
              "requests_before_sigterm": d.get("requests_before_sigterm")})


def kill(a):
    d = load(os.path.join(a.dir, "load.json"))
    marks = {}
    try:
        with open(os.path.join(a.dir, "marks")) as f:
            for line in f:
                if line.strip():
                    marks.update(json.loads(line))
    except OSError:
        pass
    exec_to_ready = round(marks["ready"] - marks["exec"], 3) if "ready" in marks and "exec" in marks else None
    s = "kill"
    emit(s, "kill -9 to ready (restart + model load)", d.get("kill_to_ready_s"), "s", "measured",
         None, "report", {"exec_to_ready_s": exec_to_ready,
                          "first_ok_after_kill_s": d.get("first_ok_after_kill_s")})
    emit(s, "requests in flight at the kill", d.get("in_flight_at_kill"), "requests",
         "only these may fail", None, "report", d.get("in_flight_outcomes"))
    emit(s, "failures before the kill", d.get("errors_before_kill"), "requests", "0",
         d.get("errors_before_kill") == 0, "check", d.get("before_kill"))
    emit(s, "HTTP error statuses (non-connection errors)", d.get("http_errors"), "requests", "0",
         d.get("http_errors") == 0, "check")
    emit(s, "failures among requests sent after ready", d.get("failed_after_ready"), "requests", "0",
         d.get("failed_after_ready") == 0 and (d.get("ok_after_ready") or 0) > 0, "check",
         {"ok_after_ready": d.get("ok_after_ready"), "sent_while_down": d.get("sent_while_down")})
    emit(s, "restarted server exit status", exit_ok(a.dir), "", "0", exit_ok(a.dir) == 0)


def summary(a):
    rows = []
    try:
        with open(os.path.join(a.dir, "results.jsonl")) as f:
            rows = [json.loads(x) for x in f if x.strip()]
    except OSError:
        pass
    print(f"{'scenario':<12} {'measure':<58} {'value':>10} {'unit':<11} {'target':<34} result")
    bad = 0
    for r in rows:
        met = r["met"]
        res = "-" if met is None else ("met" if met else ("FAILED" if r["gate"] == "check" else "not met"))
        bad += res == "FAILED"
        v = r["value"]
        print(f"{r['scenario']:<12} {r['measure'][:58]:<58} {str(v):>10} {r['unit']:<11} "
              f"{str(r['target'])[:34]:<34} {res}")
    print(f"{len(rows)} measurements, {bad} failed check(s)")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario")
    p.add_argument("dir")
    p.add_argument("--capacity", type=float, default=0)
    p.add_argument("--deadline-us", type=float, default=0)
    p.add_argument("--queue", type=int, default=0)
    p.add_argument("--idle", type=int, default=0)
    p.add_argument("--clients", type=int, default=0)
    p.add_argument("--drain-timeout-ms", type=float, default=10000)
    a = p.parse_args()
    {"capacity": capacity, "overload": overload, "soak": soak, "connections": connections,
     "slowloris": slowloris, "drain": drain, "kill": kill, "summary": summary}[a.scenario](a)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
