"""The live dashboard (GET /dashboard) in headless Chromium, against the real server under load.

Usage: python3 dashboard_test.py COINFER_SERVE COINFER_LOADGEN CONFIG ARTIFACTS_DIR [--page FILE]

  - coinfer-serve starts on port 0 with CONFIG and is stopped (SIGTERM) at the end, pass or fail;
  - the page receives stats messages from /v2/stats/stream;
  - the digit pad: a "0" drawn as a loop and a "1" as a vertical stroke, with the mouse, are
    classified as 0 and 1;
  - sentence similarity: a cosine in [-1, 1] for two paraphrases, with the cache's verdict;
  - chat: a reply streams into #chat-output from the first generator;
  - under coinfer-loadgen (closed loop, 8 workers, digits) the requests chart fills and the
    page sees a non-zero requests/s for digits; the latency and batch-size charts have points;
  - no console error and no uncaught page error from start to end.

Screenshots go to ARTIFACTS_DIR (idle.png, playground.png, under-load.png, under-load-view.png);
with COINFER_UPDATE_SCREENSHOT=1 the viewport one under load is also written to
docs/dashboard.png in the source tree.

--page FILE (development only) serves FILE for /dashboard instead of the server's own page.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

try:
    from playwright.sync_api import sync_playwright
except ImportError:
    sys.exit("dashboard_test: FAIL: no Python package playwright (scripts/setup installs playwright 1.49)")

CHROMIUM = "/usr/bin/chromium"
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("serve")
parser.add_argument("loadgen")
parser.add_argument("config")
parser.add_argument("artifacts")
parser.add_argument("--page", help="development only: serve this file for /dashboard")
args = parser.parse_args()

if not os.access(CHROMIUM, os.X_OK):
    sys.exit(f"dashboard_test: FAIL: no {CHROMIUM} (scripts/setup installs chromium)")
os.makedirs(args.artifacts, exist_ok=True)
started = time.monotonic()


def say(message):
    print(f"[{time.monotonic() - started:5.1f} s] {message}", flush=True)


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)
    say("ok: " + message)


# ---------------------------------------------------------------- the server

class Server:
    """coinfer-serve on port 0; its output goes to ARTIFACTS/serve.log."""

    def __init__(self):
        self.log = open(os.path.join(args.artifacts, "serve.log"), "w")
        self.port = None
        self.found = threading.Event()
        self.proc = subprocess.Popen(
            [os.path.abspath(args.serve), "--config", os.path.abspath(args.config), "--port", "0", "--grpc-port", "0"],
            cwd=SOURCE_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "OMP_WAIT_POLICY": "passive"})
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.log.write(line)
            self.log.flush()
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m and not self.found.is_set():
                self.port = int(m.group(1))
                self.found.set()
        self.found.set()

    def url(self, path=""):
        return f"http://127.0.0.1:{self.port}{path}"

    def wait_ready(self, timeout_s=90):
        if not self.found.wait(timeout_s) or self.port is None:
            raise CheckFailed(f"coinfer-serve printed no 'listening on' line (see {self.log.name})")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CheckFailed(f"coinfer-serve exited with {self.proc.returncode} (see {self.log.name})")
            try:
                with urllib.request.urlopen(self.url("/v2/health/ready"), timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.25)
        raise CheckFailed(f"/v2/health/ready not 200 after {timeout_s} s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# ---------------------------------------------------------------- the page

def state(page, expression):
    return page.evaluate(f"() => window.coinferDashboard && ({expression})")


def points(page, canvas_id):
    return int(page.get_attribute(f"#{canvas_id}", "data-points") or 0)


def draw(page, stroke):
    """Draws one stroke on the digit pad: points in 0..1 pad coordinates."""
    box = page.locator("#digit-pad").bounding_box()
    at = lambda p: (box["x"] + p[0] * box["width"], box["y"] + p[1] * box["height"])
    page.mouse.move(*at(stroke[0]))
    page.mouse.down()
    for p in stroke[1:]:
        page.mouse.move(*at(p), steps=2)
    page.mouse.up()


def check_digit(page, name, stroke, expected):
    page.click("#digit-clear")
    draw(page, stroke)
    page.wait_for_function("document.getElementById('digit-label').textContent !== '–' || "
                           "document.getElementById('digit-error').textContent !== ''", timeout=15000)
    error = page.text_content("#digit-error")
    check(not error, f"digits answered the drawn {name}" + (f": {error}" if error else ""))
    label = page.text_content("#digit-label").strip()
    probs = state(page, "coinferDashboard.digit && coinferDashboard.digit.probabilities")
    top = f"{max(probs):.3f}" if probs else "?"
    check(label == str(expected), f"a {name} drawn with the mouse shows label {label!r} "
                                  f"(expected {expected}, probability {top})")


def check_similarity(page):
    page.fill("#sim-a", "How do I reset my password?")
    page.fill("#sim-b", "How can I change my password?")
    page.click("#sim-compare")
    page.wait_for_function("/^-?\\d/.test(document.getElementById('similarity').textContent) || "
                           "document.getElementById('sim-error').textContent !== ''", timeout=20000)
    error = page.text_content("#sim-error")
    check(not error, "/v1/embeddings answered" + (f": {error}" if error else ""))
    text = page.text_content("#similarity").strip()
    value = float(text) if re.fullmatch(r"-?\d+\.\d{3}", text) else math.nan
    check(-1 <= value <= 1, f"#similarity shows a cosine in [-1, 1] with 3 decimals: {text!r}")
    say("   verdict: " + page.text_content("#sim-verdict"))


def check_chat(page):
    page.wait_for_selector("#chat-card", state="visible", timeout=15000)
    model = page.input_value("#chat-model")
    check(bool(model), f"the chat shows a generator to talk to ({model!r})")
    page.fill("#chat-max-tokens", "24")
    page.fill("#chat-input", "Name three colours.")
    page.click("#chat-send")
    page.wait_for_function("document.querySelector('#chat-output .msg.assistant') && "
                           "document.querySelector('#chat-output .msg.assistant').textContent.length > 0 || "
                           "document.getElementById('chat-error').textContent !== ''", timeout=60000)
    say("   first text arrived")
    page.wait_for_function("!coinferDashboard.chat.streaming", timeout=60000)
    error = page.text_content("#chat-error")
    check(not error, "/v1/chat/completions streamed to the end" + (f": {error}" if error else ""))
    reply = page.text_content("#chat-output .msg.assistant").strip()
    check(len(reply) > 0, f"a reply streamed into #chat-output: {reply[:80]!r}")
    say("   " + page.text_content("#chat-meta"))


def load(server, body_file, seconds):
    return subprocess.Popen(
        [os.path.abspath(args.loadgen), "--url", server.url("/v2/models/digits/infer"),
         "--body-file", body_file, "--mode", "closed", "--concurrency", "8",
         "--duration-s", str(seconds), "--warmup-s", "0.5", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def screenshot(page, name, full_page=True):
    path = os.path.join(args.artifacts, name)
    page.screenshot(path=path, full_page=full_page)
    say(f"   screenshot {path} ({os.path.getsize(path) // 1024} KiB)")
    return path


def main():
    work = tempfile.mkdtemp(prefix="coinfer-dashboard-test-")
    body_file = os.path.join(work, "digits.json")
    with open(os.path.join(SOURCE_DIR, "assets", "samples", "digits.jsonl")) as f:
        pixels = json.loads(f.readline())["pixels"]
    with open(body_file, "w") as f:
        json.dump({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 64], "data": pixels}]}, f)

    server = Server()
    problems = []  # console errors and uncaught page errors
    try:
        server.wait_ready()
        say(f"coinfer-serve ready on port {server.port}")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(f"console error: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            if args.page:
                with open(args.page, "rb") as f:
                    html = f.read()
                page.route("**/dashboard", lambda route: route.fulfill(
                    status=200, content_type="text/html; charset=utf-8", body=html))
                say(f"serving {args.page} for /dashboard (development)")

            page.goto(server.url("/dashboard"))
            check(page.evaluate("() => typeof window.coinferDashboard === 'object'"),
                  "/dashboard is the live dashboard (window.coinferDashboard exists)")
            page.wait_for_function("window.coinferDashboard.messages >= 2", timeout=15000)
            check(state(page, "coinferDashboard.messages") >= 2, "the page received 2 stats messages")
            check(points(page, "chart-requests") > 0, "the requests chart plots the first messages")
            screenshot(page, "idle.png")

            check_digit(page, '"0" (a loop)', [(0.5 + 0.22 * math.sin(2 * math.pi * i / 24),
                                                0.5 - 0.34 * math.cos(2 * math.pi * i / 24)) for i in range(25)], 0)
            check_digit(page, '"1" (a vertical stroke)', [(0.52, 0.14), (0.5, 0.5), (0.48, 0.86)], 1)
            check_similarity(page)
            check_chat(page)
            screenshot(page, "playground.png")

            say("coinfer-loadgen: closed loop, 8 workers, digits, 5 s")
            loadgen = load(server, body_file, 5)
            time.sleep(4.5)
            peak = state(page, "coinferDashboard.peakRequestsPerS.digits || 0")
            check(peak > 0, f"the page saw digits at {peak:.0f} requests/s")
            check(points(page, "chart-requests") > 0,
                  f"the requests chart has {points(page, 'chart-requests')} points")
            check(points(page, "chart-latency") > 0,
                  f"the latency chart has {points(page, 'chart-latency')} points")
            check(points(page, "chart-batch") > 0,
                  f"the batch-size chart has {points(page, 'chart-batch')} non-empty buckets")
            total = page.text_content("#total-rps")
            check(total not in ("–", "0"), f"the header shows {total} requests/s")
            screenshot(page, "under-load.png")
            page.evaluate("window.scrollTo(0, 0)")  # the header and the charts, for the README
            view = screenshot(page, "under-load-view.png", full_page=False)
            if os.environ.get("COINFER_UPDATE_SCREENSHOT") == "1":
                target = os.path.join(SOURCE_DIR, "docs", "dashboard.png")
                shutil.copyfile(view, target)
                say(f"   wrote {target}")

            out, err = loadgen.communicate(timeout=30)
            check(loadgen.returncode == 0, f"coinfer-loadgen exited {loadgen.returncode} {err.strip()[-300:]}")
            result = json.loads(out)
            check(result["ok"] > 0, f"coinfer-loadgen: {result['ok']} ok of {result['requests']}, "
                                    f"{result['throughput_rps']:.0f} req/s")
            received = state(page, "coinferDashboard.messages")
            check(received >= 8, f"{received} stats messages received over the test")
            browser.close()
        check(not problems, "no console errors or page errors" + "".join("\n  " + p for p in problems))
    except CheckFailed as e:
        print(f"FAIL: {e}", flush=True)
        return 1
    except Exception as e:  # Playwright timeouts and the like: a failure with its message
        print(f"FAIL: {type(e).__name__}: {e}", flush=True)
        for p in problems:
            print("  " + p)
        return 1
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    say("dashboard test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
