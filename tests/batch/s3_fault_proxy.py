"""An HTTP/1.1 proxy in front of an S3 server that misbehaves as real stores and networks do.

Usage: python3 s3_fault_proxy.py LISTEN_PORT UPSTREAM_PORT [--slowdown-every N] [--cut-every M]

Every N-th request is answered 503 SlowDown (S3's throttling answer) without reaching the
server; every M-th response with a body of more than 1 KiB is cut off halfway (its head and
half its body sent, then the connection closed). Requests are forwarded byte for byte, the
Host header included, so SigV4 signatures still verify. Prints "ready" once listening.
Killing this process is how a test takes "the server" away while the store keeps its state.
"""

import argparse
import socket
import threading

SLOWDOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
            b'<Message>Please reduce your request rate.</Message></Error>')

parser = argparse.ArgumentParser()
parser.add_argument("listen", type=int)
parser.add_argument("upstream", type=int)
parser.add_argument("--slowdown-every", type=int, default=0)
parser.add_argument("--cut-every", type=int, default=0)
args = parser.parse_args()

lock = threading.Lock()
counts = {"requests": 0, "bodies": 0}


def read_head(f):
    lines = []
    while True:
        line = f.readline(65537)
        if not line:
            return None
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            return b"".join(lines)


def header(head, name):
    for line in head.split(b"\r\n")[1:]:
        if b":" in line:
            k, v = line.split(b":", 1)
            if k.strip().lower() == name:
                return v.strip()
    return None


def serve(client):
    upstream = None
    try:
        cf = client.makefile("rb")
        while True:
            head = read_head(cf)
            if head is None:
                return
            length = int(header(head, b"content-length") or 0)
            body = cf.read(length) if length else b""
            method = head.split(b" ", 1)[0]
            with lock:
                counts["requests"] += 1
                n = counts["requests"]
            if args.slowdown_every and n % args.slowdown_every == 0:
                client.sendall(b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\n"
                               b"Content-Length: " + str(len(SLOWDOWN)).encode() + b"\r\n\r\n" + SLOWDOWN)
                continue
            if upstream is None:
                upstream = socket.create_connection(("127.0.0.1", args.upstream))
                uf = upstream.makefile("rb")
            upstream.sendall(head + body)
            rhead = read_head(uf)
            if rhead is None:
                return
            status = int(rhead.split(b" ", 2)[1])
            rlength = int(header(rhead, b"content-length") or 0)
            if method == b"HEAD" or status in (204, 304) or status < 200:
                rlength = 0
            rbody = uf.read(rlength) if rlength else b""
            cut = False
            if len(rbody) > 1024 and args.cut_every:
                with lock:
                    counts["bodies"] += 1
                    cut = counts["bodies"] % args.cut_every == 0
            if cut:
                client.sendall(rhead + rbody[: len(rbody) // 2])
                return
            client.sendall(rhead + rbody)
            if (header(rhead, b"connection") or b"").lower() == b"close":
                return
    except (OSError, ValueError):
        return
    finally:
        client.close()
        if upstream is not None:
            upstream.close()


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", args.listen))
listener.listen(64)
print("ready", flush=True)
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
