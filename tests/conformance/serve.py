"""Starts coinfer-serve on a free port for a conformance test, as a user would."""
import subprocess


def start_server(binary, config, scheme="http"):
    """Returns (process, "HOST:PORT") once the server printed its listening line."""
    proc = subprocess.Popen([binary, "--config", config, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline().strip()
    prefix = f"listening on {scheme}://"
    if not line.startswith(prefix):
        proc.kill()
        raise SystemExit(f"unexpected first line from coinfer-serve: {line!r}")
    return proc, line[len(prefix):]
