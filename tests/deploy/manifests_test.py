"""deploy/kubernetes/*.yaml, validated offline and checked against each other and the image.

Usage: python3 manifests_test.py REPO_ROOT

  - `kubernetes-validate --strict` (the pip package, which ships the schemas) accepts every
    resource of every manifest against Kubernetes 1.37 (the newest it knows) and 1.30, with no
    warning either (an unknown kind or apiVersion is only a warning there);
  - the image is the one deploy/container/build_image.sh tags, run as the Containerfile's user;
  - configmap.yaml's TOML parses (tomllib), listens on 0.0.0.0 on the port the Deployment
    exposes, serves the models of configs/default.toml from the same asset files as the image
    ships them, and is mounted where the Deployment's and the Job's --config point;
  - the Deployment's preStop sleep plus drain_timeout_ms fits in terminationGracePeriodSeconds;
    readiness probes /v2/health/ready, liveness /v2/health/live; every container has resource
    requests and limits;
  - the Service and the PodDisruptionBudget select the Deployment's pods; the HPA scales the
    Deployment on the Pods metric coinfer_inference_queue_depth, which docs/METRICS.md lists;
  - the Job is Indexed, runs `coinfer-batch ... --shard=$(JOB_COMPLETION_INDEX)/N --resume` with
    N = completions, and docs/BATCH.md's example Job is the same job.
"""

import glob
import os
import re
import subprocess
import sys
import tomllib

import yaml

REPO = os.path.abspath(sys.argv[1])
K8S = os.path.join(REPO, "deploy", "kubernetes")
VERSIONS = ["1.37.0", "1.30.0"]
failures = []


def check(condition, message):
    print(("ok:   " if condition else "FAIL: ") + message, flush=True)
    if not condition:
        failures.append(message)


def read(*parts):
    with open(os.path.join(REPO, *parts)) as f:
        return f.read()


files = sorted(glob.glob(os.path.join(K8S, "*.yaml")))
check(len(files) > 0, f"manifests in {K8S}")
documents = {f: [d for d in yaml.safe_load_all(read(f)) if d] for f in files}

# --- offline schema validation ------------------------------------------------------------
for version in VERSIONS:
    p = subprocess.run([sys.executable, "-m", "kubernetes_validate", "--strict", "-k", version,
                        *files], capture_output=True, text=True, cwd=K8S)
    if "No module named kubernetes_validate" in p.stderr:
        check(False, "kubernetes-validate is installed (scripts/setup installs it)")
        break
    lines = p.stdout.splitlines() + p.stderr.splitlines()
    problems = [line for line in lines if not line.startswith("INFO ")]
    passed = [line for line in lines if line.startswith("INFO ") and " passed " in line]
    expected = sum(len(d) for d in documents.values())
    for line in problems:
        print("  " + line)
    check(p.returncode == 0 and not problems and len(passed) == expected,
          f"kubernetes-validate --strict -k {version}: {len(passed)}/{expected} resources "
          f"passed, {len(problems)} errors or warnings, exit {p.returncode}")

# --- the resources ------------------------------------------------------------------------
by_kind = {}
for docs in documents.values():
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
for kind in ("ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler",
             "PodDisruptionBudget", "Job"):
    check(len(by_kind.get(kind, [])) == 1, f"one {kind}")
if failures:
    sys.exit(1)
configmap = by_kind["ConfigMap"][0]
deployment = by_kind["Deployment"][0]
service = by_kind["Service"][0]
hpa = by_kind["HorizontalPodAutoscaler"][0]
pdb = by_kind["PodDisruptionBudget"][0]
job = by_kind["Job"][0]
pod = deployment["spec"]["template"]["spec"]
server = pod["containers"][0]
job_pod = job["spec"]["template"]["spec"]
batch = job_pod["containers"][0]

# --- the image ----------------------------------------------------------------------------
build_script = read("deploy", "container", "build_image.sh")
tag = re.search(r'^tag="([^"]+)"', build_script, re.M).group(1)
for name, container in (("Deployment", server), ("Job", batch)):
    check(container["image"] == tag, f"the {name}'s image {container['image']} is the one "
          f"build_image.sh tags ({tag})")
user = re.search(r"^USER (\d+):(\d+)", read("deploy", "container", "Containerfile"), re.M)
for name, spec in (("Deployment", pod), ("Job", job_pod)):
    sc = spec.get("securityContext", {})
    check(sc.get("runAsNonRoot") is True and str(sc.get("runAsUser")) == user.group(1)
          and str(sc.get("runAsGroup")) == user.group(2),
          f"the {name} runs as the Containerfile's user {user.group(1)}:{user.group(2)}, non-root")

# --- the config ---------------------------------------------------------------------------
(key, text), = configmap["data"].items()
try:
    config = tomllib.loads(text)
except tomllib.TOMLDecodeError as e:
    config = {}
    check(False, f"configmap.yaml's {key} parses as TOML: {e}")
server_config = config.get("server", {})
check(server_config.get("host") == "0.0.0.0", f"configmap.yaml listens on 0.0.0.0 "
      f"(host = {server_config.get('host')!r})")
ports = {p["name"]: p["containerPort"] for p in server["ports"]}
check(ports.get("http") == server_config.get("port", 8000),
      f"the Deployment exposes the config's port {server_config.get('port', 8000)}")
check(ports.get("grpc") == server_config.get("grpc_port", 8001),
      f"the Deployment exposes the config's gRPC port {server_config.get('grpc_port', 8001)}")


def config_path(spec, container):
    """(--config argument, the file the ConfigMap volume puts there)"""
    args = container.get("command", []) + container.get("args", [])
    arg = next((a.split("=", 1)[1] if "=" in a else args[i + 1]
                for i, a in enumerate(args) if a.startswith("--config")), None)
    volume = next(v["name"] for v in spec["volumes"]
                  if v.get("configMap", {}).get("name") == configmap["metadata"]["name"])
    mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == volume)
    return arg, f"{mount.rstrip('/')}/{key}"


for name, spec, container in (("Deployment", pod, server), ("Job", job_pod, batch)):
    arg, mounted = config_path(spec, container)
    check(arg == mounted, f"the {name}'s --config {arg} is where the ConfigMap is mounted "
          f"({mounted})")

default = tomllib.loads(read("configs", "default.toml"))
check(set(config.get("models", {})) == set(default["models"]),
      f"configmap.yaml serves configs/default.toml's models ({sorted(default['models'])})")
shipped = re.search(r"^for asset in ([^;]+); do", build_script, re.M).group(1).split()
for model, settings in config.get("models", {}).items():
    if "weights" not in settings:
        continue
    path = settings["weights"]
    relative = os.path.relpath(path, "/opt/coinfer")
    default_path = os.path.normpath(os.path.join(REPO, "configs",
                                                 default["models"].get(model, {}).get("weights", "")))
    check(path.startswith("/opt/coinfer/assets/") and relative.split("/")[1] in shipped
          and os.path.join(REPO, relative) == default_path and os.path.exists(default_path),
          f"models.{model}.weights {path}: in the image, the file default.toml names")

# --- shutdown -----------------------------------------------------------------------------
drain_s = server_config.get("drain_timeout_ms", 10000) / 1000
command = server.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
sleep_s = float(command[1]) if command[:1] == ["sleep"] and len(command) == 2 else None
grace_s = pod.get("terminationGracePeriodSeconds", 30)
check(sleep_s is not None and sleep_s + drain_s < grace_s,
      f"preStop sleep {sleep_s} s + drain_timeout_ms {drain_s:g} s < "
      f"terminationGracePeriodSeconds {grace_s}")

# --- probes and resources -----------------------------------------------------------------
check(server.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/v2/health/ready",
      "readiness probes /v2/health/ready")
check(server.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/v2/health/live",
      "liveness probes /v2/health/live")
for name, container in (("Deployment", server), ("Job", batch)):
    r = container.get("resources", {})
    check(all(k in r.get(kind, {}) for kind in ("requests", "limits") for k in ("cpu", "memory")),
          f"the {name}'s container has cpu and memory requests and limits")

# --- selectors and the autoscaler ---------------------------------------------------------
labels = deployment["spec"]["template"]["metadata"]["labels"]
selected = deployment["spec"]["selector"]["matchLabels"]
check(selected.items() <= labels.items(), "the Deployment's selector matches its pods")
check(service["spec"]["selector"].items() <= labels.items()
      and all(p["targetPort"] in ports or p["targetPort"] in ports.values()
              for p in service["spec"]["ports"]),
      "the Service selects the Deployment's pods and targets their port")
check(pdb["spec"]["selector"]["matchLabels"].items() <= labels.items(),
      "the PodDisruptionBudget selects the Deployment's pods")
target = hpa["spec"]["scaleTargetRef"]
check(target["kind"] == "Deployment" and target["name"] == deployment["metadata"]["name"],
      "the HPA scales the Deployment")
metrics = hpa["spec"]["metrics"]
check(any(m["type"] == "Pods" and m["pods"]["metric"]["name"] == "coinfer_inference_queue_depth"
          for m in metrics), "the HPA scales on the Pods metric coinfer_inference_queue_depth")
check("`coinfer_inference_queue_depth` | gauge" in read("docs", "METRICS.md"),
      "docs/METRICS.md lists coinfer_inference_queue_depth as a gauge")
check(hpa["spec"].get("minReplicas", 1) > pdb["spec"].get("maxUnavailable", 0),
      "the HPA's minReplicas leaves a replica serving within the PodDisruptionBudget")

# --- the Indexed Job ----------------------------------------------------------------------
spec = job["spec"]
args = batch.get("args", [])
shards = [a for a in args if "JOB_COMPLETION_INDEX" in a]
check(spec.get("completionMode") == "Indexed", "the Job is Indexed")
check(batch.get("command") == ["coinfer-batch"], "the Job runs coinfer-batch")
check(shards == [f"--shard=$(JOB_COMPLETION_INDEX)/{spec['completions']}"],
      f"the Job passes --shard=$(JOB_COMPLETION_INDEX)/completions ({shards})")
check("--resume" in args, "the Job passes --resume (a retried pod resumes its shard)")
check(spec.get("parallelism", 1) <= spec["completions"], "parallelism <= completions")

batch_md = read("docs", "BATCH.md")
documented = [d for block in re.findall(r"```yaml\n(.*?)```", batch_md, re.S)
              for d in yaml.safe_load_all(block) if d and d.get("kind") == "Job"]
check(len(documented) == 1, "docs/BATCH.md shows one Job")
if documented:
    doc = documented[0]
    doc_container = doc["spec"]["template"]["spec"]["containers"][0]
    same = {
        "name": doc["metadata"]["name"] == job["metadata"]["name"],
        "completions, parallelism, completionMode, backoffLimit": all(
            doc["spec"].get(k) == spec.get(k)
            for k in ("completions", "parallelism", "completionMode", "backoffLimit")),
        "image": doc_container["image"] == batch["image"],
        "command and args": (doc_container.get("command"), doc_container.get("args"))
        == (batch.get("command"), batch.get("args")),
    }
    check(all(same.values()), "docs/BATCH.md's Job is deploy/kubernetes/batch-job.yaml's "
          f"({', '.join(k for k, v in same.items() if not v) or 'same'})")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
