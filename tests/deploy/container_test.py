"""The container image end to end, with Debian's podman, offline.

Usage: python3 container_test.py REPO_ROOT BUILD_DIR

Builds localhost/coinfer:latest with deploy/container/build_image.sh (its base image from
debootstrap, cached as BUILD_DIR/container/bookworm-minbase.tar) into a podman storage of its
own under a temporary directory, then checks, with runc, a read-only root file system, the host
network and a free port:
  - the image as shipped (its CMD, `--port` added): /v2/health/ready answers; POST
    /v2/models/digits/infer with 64 FP32 values classifies a drawn "1" as 1, and the 360
    held-out digits (assets/digits_mlp/test_split.safetensors) at >= 97% accuracy; /metrics
    serves coinfer_inference_queue_depth (the HPA's metric); the server process runs as uid
    and gid 10001, not root; the image's HEALTHCHECK reports healthy (`podman healthcheck
    run`) and fails against a port where nothing listens; `podman stop` (SIGTERM) drains and
    the container exits 0;
  - deploy/kubernetes/deployment.yaml's command with configmap.yaml's TOML mounted where the
    Deployment mounts it: every model of that config is ready;
  - deploy/kubernetes/batch-job.yaml's command once per completion index, as the Indexed Job
    runs it ($(JOB_COMPLETION_INDEX) substituted, `--chunk-rows=4` added so that the 50 rows of
    assets/samples/sentences.jsonl spread over the shards), writing to a volume as uid 10001:
    every shard complete, every row embedded exactly once (unit-norm, 384 dimensions);
  - nothing is left in podman's global storage or state (/var/lib/containers, /run/runc, ...):
    podman runs with --root/--runroot/--tmpdir/--network-config-dir under the temporary
    directory, runc with its state there (a wrapper passes --root), and image operations in a
    private mount namespace where /var/lib is read-only (else podman 4.3 writes its blob-info
    cache to /var/lib/containers/cache whatever --root says).
Exit 77 (skipped) when not root, or podman, runc or unshare is missing (scripts/setup
installs them), or debootstrap is missing and no base tarball is cached.
"""

import http.client
import json
import os
import resource
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import tomllib

import numpy as np
import yaml

REPO, BUILD = (os.path.abspath(p) for p in sys.argv[1:3])
TAG = "localhost/coinfer:latest"
CACHE = os.path.join(BUILD, "container")
GLOBAL_PATHS = ["/var/lib/containers", "/run/containers", "/run/libpod", "/run/runc",
                "/run/crun", "/etc/cni/net.d/cni.lock", "/etc/containers/networks", "/var/lib/cni",
                os.path.expanduser("~/.local/share/containers"),
                os.path.expanduser("~/.config/containers")]
failures = []
started = time.monotonic()


def check(condition, message):
    print(("ok:   " if condition else "FAIL: ") + message, flush=True)
    if not condition:
        failures.append(message)


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(77)


if os.geteuid() != 0:
    skip("needs root (debootstrap, podman with a private storage)")
for tool in ("podman", "runc", "unshare"):
    if shutil.which(tool) is None:
        skip(f"{tool} is missing (scripts/setup installs podman and runc)")
if shutil.which("debootstrap") is None and not os.path.exists(
        os.path.join(CACHE, "bookworm-minbase.tar")):
    skip("debootstrap is missing and no base tarball is cached (scripts/setup installs it)")


def global_state():
    """Which of podman's global paths exist, and podman's or buildah's leftovers in /var/tmp."""
    present = {p for p in GLOBAL_PATHS if os.path.lexists(p)}
    var_tmp = {e for e in os.listdir("/var/tmp")
               if e.startswith(("buildah", "podman", "storage", "container_images"))}
    return present, var_tmp


def free_port():
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return s.getsockname()[1]


def limit(kind, wanted=4096):
    hard = resource.getrlimit(kind)[1]
    return wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)


def load_yaml(name):
    with open(os.path.join(REPO, "deploy", "kubernetes", name)) as f:
        return yaml.safe_load(f)


def read_safetensors(path):
    """{name: numpy array} from a safetensors file (F32 and I64 tensors)."""
    with open(path, "rb") as f:
        header_len = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(header_len))
        data = f.read()
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
    return out


class Http:
    """One keep-alive connection to 127.0.0.1:port."""

    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(self, method, path, body=None):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.conn.request(method, path, body=json.dumps(body) if body is not None else None,
                          headers=headers)
        r = self.conn.getresponse()
        return r.status, r.read()

    def close(self):
        self.conn.close()


tmp = tempfile.mkdtemp(prefix="coinfer-container-test-")
os.chmod(tmp, 0o755)  # the container's uid reads the files mounted from here
runc_wrapper = os.path.join(tmp, "bin", "runc")
os.makedirs(os.path.dirname(runc_wrapper))
with open(runc_wrapper, "w") as f:
    f.write(f'#!/bin/sh\nexec {shutil.which("runc")} --root {tmp}/runc "$@"\n')
os.chmod(runc_wrapper, 0o755)
os.makedirs(os.path.join(tmp, "var-tmp"))
PODMAN = ["podman", "--root", f"{tmp}/root", "--runroot", f"{tmp}/runroot",
          "--tmpdir", f"{tmp}/tmp", "--network-config-dir", f"{tmp}/cni",
          "--cgroup-manager", "cgroupfs", "--events-backend", "file", "--runtime", runc_wrapper]
ENV = dict(os.environ, TMPDIR=os.path.join(tmp, "var-tmp"))
# Image operations in a private mount namespace with /var/lib read-only (see the docstring).
PRIVATE = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
           'mount --bind /var/lib /var/lib && mount -o remount,bind,ro /var/lib && exec "$@"',
           "sh"]
RUN_OPTS = ["--network", "host", "--read-only", "--read-only-tmpfs=false",
            "--ulimit", f"nofile={limit(resource.RLIMIT_NOFILE)}:{limit(resource.RLIMIT_NOFILE)}",
            "--ulimit", f"nproc={limit(resource.RLIMIT_NPROC)}:{limit(resource.RLIMIT_NPROC)}"]


def podman(*args, private=False, timeout=120, **kw):
    cmd = (PRIVATE if private else []) + PODMAN + list(args)
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=timeout, **kw)


def wait_ready(name, port, timeout_s=120):
    """Seconds until /v2/health/ready answered 200, or None (the container's log printed)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        try:
            c = Http(port)
            status, _ = c.request("GET", "/v2/health/ready")
            c.close()
            if status == 200:
                return time.monotonic() - t0
        except OSError:
            pass
        state = podman("inspect", name, "--format", "{{.State.Status}}").stdout.strip()
        if state != "running":
            break
        time.sleep(0.2)
    logs = podman("logs", name)
    print((logs.stdout + logs.stderr)[-3000:])
    return None


def stop(name):
    """podman stop (SIGTERM, 15 s before SIGKILL): (seconds, exit code)."""
    t0 = time.monotonic()
    podman("stop", "-t", "15", name)
    seconds = time.monotonic() - t0
    code = podman("inspect", name, "--format", "{{.State.ExitCode}}").stdout.strip()
    return seconds, code


before = global_state()
try:
    # --- build --------------------------------------------------------------------------
    t0 = time.monotonic()
    build = subprocess.run(
        PRIVATE + [os.path.join(REPO, "deploy", "container", "build_image.sh"),
                   "--build-dir", BUILD, "--cache-dir", CACHE, "--tag", TAG,
                   "--runtime", runc_wrapper, "--"] + PODMAN[1:],
        env=ENV, capture_output=True, text=True, timeout=600)
    build_s = time.monotonic() - t0
    if build.returncode != 0:
        print(build.stdout[-3000:], build.stderr[-5000:])
    check(build.returncode == 0, f"build_image.sh built {TAG} ({build_s:.1f} s)")
    if build.returncode != 0:
        raise SystemExit(1)
    image = json.loads(podman("image", "inspect", TAG, private=True).stdout)[0]
    config = image["Config"]
    healthcheck = (image.get("Healthcheck") or {}).get("Test", [])
    print(f"image {TAG}: {image['Size'] / 1e6:.0f} MB, user {config.get('User')}, "
          f"cmd {config.get('Cmd')}, healthcheck {healthcheck}")
    check(config.get("User") == "10001:10001", "the image runs as 10001:10001")
    check("/usr/local/bin/coinfer-healthcheck" in healthcheck,
          "the image has a HEALTHCHECK (Docker format)")

    # --- the image as shipped -----------------------------------------------------------
    port = free_port()
    name = "coinfer-test-serve"
    t0 = time.monotonic()
    run = podman("run", "-d", "--name", name, *RUN_OPTS, "-e", f"COINFER_PORT={port}", TAG,
                 *config["Cmd"], "--port", str(port), "--grpc-port", "0")
    check(run.returncode == 0, f"podman run {' '.join(config['Cmd'])} --port {port}")
    if run.returncode != 0:
        print(run.stderr[-3000:])
        raise SystemExit(1)
    ready_s = wait_ready(name, port)
    check(ready_s is not None, f"/v2/health/ready answered 200 "
          f"({time.monotonic() - t0:.1f} s after podman run)")
    if ready_s is None:
        raise SystemExit(1)

    c = Http(port)
    one = [0, 0, 0, 16, 16, 0, 0, 0] * 8  # a "1": columns 3 and 4 lit
    status, body = c.request("POST", "/v2/models/digits/infer", {
        "inputs": [{"name": "INPUT0", "shape": [1, 64], "datatype": "FP32", "data": one}]})
    answer = json.loads(body) if status == 200 else {}
    outputs = {o["name"]: o for o in answer.get("outputs", [])}
    check(status == 200 and outputs.get("label", {}).get("data") == [1]
          and abs(sum(outputs["probabilities"]["data"]) - 1) < 1e-3,
          f"digits classifies a drawn 1 as 1 (HTTP {status}: {body[:160]!r})")
    split = read_safetensors(os.path.join(REPO, "assets", "digits_mlp", "test_split.safetensors"))
    correct = 0
    for x, y in zip(split["x"], split["y"]):
        status, body = c.request("POST", "/v2/models/digits/infer", {
            "inputs": [{"name": "INPUT0", "shape": [1, 64], "datatype": "FP32",
                        "data": [float(v) for v in x]}]})
        if status == 200:
            labels = [o for o in json.loads(body)["outputs"] if o["name"] == "label"]
            correct += labels[0]["data"] == [int(y)]
    check(correct / len(split["y"]) >= 0.97,
          f"digits in the container: {correct}/{len(split['y'])} held-out digits right (>= 97%)")
    status, body = c.request("GET", "/metrics")
    check(status == 200 and b"coinfer_inference_queue_depth{" in body,
          "/metrics serves coinfer_inference_queue_depth (the HPA's metric)")
    c.close()

    pid = podman("inspect", name, "--format", "{{.State.Pid}}").stdout.strip()
    with open(f"/proc/{pid}/status") as f:
        ids = {line.split(":")[0]: line.split()[1:] for line in f if line.startswith(("Uid", "Gid"))}
    check(ids.get("Uid") == ["10001"] * 4 and ids.get("Gid") == ["10001"] * 4,
          f"coinfer-serve (pid {pid}) runs as uid/gid 10001, not root: {ids}")
    hc = podman("healthcheck", "run", name)
    health = podman("inspect", name, "--format", "{{.State.Health.Status}}").stdout.strip()
    check(hc.returncode == 0 and health == "healthy",
          f"podman healthcheck run: exit {hc.returncode}, status {health!r}")
    bad = podman("exec", "-e", f"COINFER_PORT={free_port()}", name,
                 "/usr/local/bin/coinfer-healthcheck")
    check(bad.returncode == 1, f"the healthcheck fails where nothing listens (exit {bad.returncode})")
    seconds, code = stop(name)
    logs = podman("logs", name)
    logs = logs.stdout + logs.stderr
    check(code == "0" and "draining" in logs,
          f"podman stop: SIGTERM drained, exit {code} after {seconds:.1f} s")
    podman("rm", "-f", name)

    # --- the Deployment's command with the ConfigMap's config ---------------------------
    deployment = load_yaml("deployment.yaml")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    mount = next(m for m in container["volumeMounts"] if m["name"] == "config")
    configmap = load_yaml("configmap.yaml")
    config_dir = os.path.join(tmp, "configmap")
    os.makedirs(config_dir)
    for key, text in configmap["data"].items():
        with open(os.path.join(config_dir, key), "w") as f:
            f.write(text)
        os.chmod(os.path.join(config_dir, key), 0o644)
    os.chmod(config_dir, 0o755)
    toml = tomllib.loads(next(iter(configmap["data"].values())))
    port = free_port()
    name = "coinfer-test-deployment"
    t0 = time.monotonic()
    run = podman("run", "-d", "--name", name, *RUN_OPTS,
                 "-v", f"{config_dir}:{mount['mountPath']}:ro", TAG,
                 *container["command"], *container["args"], "--port", str(port), "--grpc-port", "0")
    check(run.returncode == 0, f"podman run {' '.join(container['command'] + container['args'])}")
    ready_s = wait_ready(name, port)
    check(ready_s is not None, f"the Deployment's command is ready "
          f"({time.monotonic() - t0:.1f} s after podman run)")
    if ready_s is not None:
        c = Http(port)
        for model in toml["models"]:
            status, _ = c.request("GET", f"/v2/models/{model}/ready")
            check(status == 200, f"configmap.yaml's model {model} is ready in the image")
        c.close()
    seconds, code = stop(name)
    grace = pod["terminationGracePeriodSeconds"]
    check(code == "0" and seconds < grace,
          f"the Deployment's container drains and exits {code} in {seconds:.1f} s (< {grace} s)")
    podman("rm", "-f", name)

    # --- the Indexed Job's pods, one per completion index -------------------------------
    job = load_yaml("batch-job.yaml")
    spec = job["spec"]
    container = spec["template"]["spec"]["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    data_dir, out_dir = os.path.join(tmp, "data"), os.path.join(tmp, "out")
    os.makedirs(data_dir)
    os.makedirs(out_dir)
    shutil.copy(os.path.join(REPO, "assets", "samples", "sentences.jsonl"),
                os.path.join(data_dir, "corpus.jsonl"))
    os.chmod(data_dir, 0o755)
    os.chmod(os.path.join(data_dir, "corpus.jsonl"), 0o644)
    os.chown(out_dir, 10001, 10001)  # what the pod's fsGroup does for the volume
    t0 = time.monotonic()
    for index in range(spec["completions"]):
        args = [a.replace("$(JOB_COMPLETION_INDEX)", str(index)) for a in container["args"]]
        run = podman("run", "--rm", *RUN_OPTS, "-e", f"JOB_COMPLETION_INDEX={index}",
                     "-v", f"{config_dir}:{mounts['config']}:ro",
                     "-v", f"{data_dir}:{mounts['data']}:ro", "-v", f"{out_dir}:{mounts['out']}",
                     TAG, *container["command"], *args, "--chunk-rows=4", timeout=300)
        if run.returncode != 0:
            print(run.stderr[-3000:])
        check(run.returncode == 0, f"shard {index}/{spec['completions']}: exit {run.returncode}")
    print(f"{spec['completions']} shards in {time.monotonic() - t0:.1f} s")
    shards = spec["completions"]
    complete = 0
    for index in range(shards):
        path = os.path.join(out_dir, f"manifest.shard-{index}-of-{shards}.json")
        if os.path.exists(path):
            with open(path) as f:
                complete += json.load(f)["complete"] is True
    check(complete == shards, f"{complete}/{shards} shard manifests say complete")
    rows = [np.load(os.path.join(out_dir, p)) for p in sorted(os.listdir(out_dir))
            if p.endswith(".rows.npy")]
    embeddings = [np.load(os.path.join(out_dir, p)) for p in sorted(os.listdir(out_dir))
                  if p.endswith(".embedding.npy")]
    rows = np.concatenate(rows) if rows else np.array([], dtype=np.int64)
    check(sorted(rows.tolist()) == list(range(50)),
          f"every one of the 50 rows written exactly once ({len(rows)} written)")
    if embeddings:
        e = np.concatenate(embeddings)
        norms = np.linalg.norm(e, axis=1)
        check(e.shape == (50, 384) and bool(np.all(np.abs(norms - 1) < 1e-3)),
              f"embeddings {e.shape}, norms {norms.min():.4f}..{norms.max():.4f}")
finally:
    podman("rm", "-a", "-f")
    podman("rmi", "-a", "-f", private=True)
    with open("/proc/self/mounts") as f:
        leftover = [line.split()[1] for line in f if line.split()[1].startswith(tmp)]
    for mountpoint in reversed(leftover):
        subprocess.run(["umount", "-l", mountpoint])
    shutil.rmtree(tmp, ignore_errors=True)
    after = global_state()
    check(after == before, "nothing left in podman's global storage and state "
          f"(new: {sorted(after[0] - before[0]) + sorted(after[1] - before[1])})")
    check(not os.path.exists(tmp), f"{tmp} removed")
    print(f"{len(failures)} failure(s); {time.monotonic() - started:.1f} s in all")

sys.exit(1 if failures else 0)
