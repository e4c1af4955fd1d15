"""Starts coinfer-serve on a free port for a conformance test, as a user would."""
import os
import subprocess


def start_server(binary, config, scheme="http", extra_args=()):
    """Returns (process, "HOST:PORT") once the server printed its listening line."""
    proc = subprocess.Popen([binary, "--config", config, "--port", "0", "--grpc-port", "0", *extra_args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline().strip()
    prefix = f"listening on {scheme}://"
    if not line.startswith(prefix):
        proc.kill()
        raise SystemExit(f"unexpected first line from coinfer-serve: {line!r}")
    return proc, line[len(prefix):]


def read_grpc_address(proc, scheme="grpc"):
    """The "HOST:PORT" of the gRPC listening line, which follows the HTTP one."""
    line = proc.stdout.readline().strip()
    prefix = f"listening on {scheme}://"
    if not line.startswith(prefix):
        proc.kill()
        raise SystemExit(f"unexpected second line from coinfer-serve: {line!r}")
    return line[len(prefix):]


# The exit status of a test that could not run what it tests: CTest reports it as skipped
# (SKIP_RETURN_CODE), not passed, and scripts/test fails on it (docs/RELIABILITY.md).
SKIPPED = 77


def minilm_int8_floors():
    """(min, mean) floors for MiniLM INT8's cosines to sentence-transformers, as docs/MODELS.md
    reports them per instruction set: weights span +-127 where the CPU has AVX-512 VNNI (min
    0.998, mean 0.9993), +-63 on AVX2 (min 0.994, mean 0.9982); the floors sit just under, so
    that an error twice the documented one fails. ONEDNN_MAX_CPU_ISA capped below VNNI counts
    as AVX2, as src/ops/small_m_gemm.cpp's detection does."""
    with open("/proc/cpuinfo") as f:
        vnni = "avx512_vnni" in f.read()
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    if cap not in ("ALL", "DEFAULT") and not (cap.startswith("AVX512_CORE_") or cap == "AVX10_1_512"):
        vnni = False
    return (0.9975, 0.999) if vnni else (0.9935, 0.9978)


def smollm2_installed(config):
    """Whether the SmolLM2 GGUF that `config`'s repository links is there; prints SKIPPED if not
    (a test that needs it then exits SKIPPED, one that checks other things first does so at the
    end)."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(config)))
    if os.path.exists(os.path.join(repo, "assets", "SmolLM2-135M-Instruct.Q4_1.gguf")):
        return True
    print("SKIPPED: assets/SmolLM2-135M-Instruct.Q4_1.gguf is absent (scripts/setup installs it)")
    return False


def config_copy(default_toml, directory, server_keys="", append="", replace=()):
    """Writes default_toml into `directory` with its asset paths made absolute, `server_keys`
    (TOML lines) added to [server], each (old, new) of `replace` replaced once (an `old` the
    file lacks stops the test: the default config changed) and `append` at the end; returns
    the new file's path."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(default_toml)))
    with open(default_toml) as f:
        text = f.read().replace('"../assets/', f'"{repo}/assets/')
    text = text.replace("[server]\n", "[server]\n" + server_keys, 1)
    for old, new in replace:
        if old not in text:
            raise SystemExit(f"{default_toml} has no {old!r}")
        text = text.replace(old, new, 1)
    text += append
    path = os.path.join(directory, "config.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def opt_into_semantic_cache(config, model="smollm2"):
    """Turns `model`'s cache = "exact" in the config file `config` into "semantic" (the default
    service caches exact repeats only; docs/CACHE.md)."""
    import re
    with open(config) as f:
        text = f.read()
    pattern = r'(\[models\.' + re.escape(model) + r'\][^\[]*?\ncache = )"exact"'
    text, n = re.subn(pattern, r'\1"semantic"', text, count=1)
    if n != 1:
        raise SystemExit(f"{config}: no cache = \"exact\" line in [models.{model}]")
    with open(config, "w") as f:
        f.write(text)
