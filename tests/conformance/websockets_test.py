"""The `websockets` Python package (a third-party client) against coinfer-serve's /v2/ws.

Usage: websockets_test.py PATH/TO/coinfer-serve PATH/TO/config.toml
"""
import asyncio
import json
import signal
import sys

import websockets

from serve import start_server  # tests/conformance/serve.py


def request(model, rid, rows):
    return json.dumps({"model_name": model, "id": rid, "inputs": [
        {"name": "INPUT0", "shape": [len(rows), len(rows[0])], "datatype": "FP32", "data": rows}]})


async def check_round_trip(url):
    async with websockets.connect(url) as ws:
        await ws.send(request("identity", "r1", [[1.5, 2.5]]))
        reply = json.loads(await ws.recv())
        assert reply["id"] == "r1", reply
        assert reply["outputs"][0]["data"] == [1.5, 2.5], reply
        assert reply["outputs"][1]["data"] == [4.0], reply


async def check_many_in_flight(url):
    async with websockets.connect(url) as ws:
        for i in range(100):
            await ws.send(request("identity", str(i), [[float(i)]]))
        replies = [json.loads(await ws.recv()) for _ in range(100)]
        by_id = {r["id"]: r for r in replies}
        assert sorted(by_id, key=int) == [str(i) for i in range(100)], sorted(by_id)
        for i in range(100):
            assert by_id[str(i)]["outputs"][0]["data"] == [float(i)], by_id[str(i)]


async def check_digits(url):
    async with websockets.connect(url) as ws:
        one = [0, 0, 0, 16, 16, 0, 0, 0] * 8
        await ws.send(request("digits", "d", [one]))
        reply = json.loads(await ws.recv())
        label = next(o for o in reply["outputs"] if o["name"] == "label")
        assert label["data"] == [1], reply


async def check_errors_keep_connection(url):
    async with websockets.connect(url) as ws:
        await ws.send("this is not json")
        error = json.loads(await ws.recv())
        assert error["status"] == 400 and "error" in error, error
        await ws.send(json.dumps({"model_name": "nope", "id": "e", "inputs": []}))
        error = json.loads(await ws.recv())
        assert error == {"id": "e", "error": "unknown model 'nope'", "status": 404}, error
        await ws.send(request("identity", "after", [[1.0]]))
        assert json.loads(await ws.recv())["id"] == "after"


async def check_binary_closes_1003(url):
    async with websockets.connect(url) as ws:
        await ws.send(b"\x00\x01")
        try:
            await ws.recv()
        except websockets.ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 1003, closed
        else:
            raise AssertionError("a binary message did not close the connection")


async def run_all(url):
    passed = failed = 0
    for check in [check_round_trip, check_many_in_flight, check_digits,
                  check_errors_keep_connection, check_binary_closes_1003]:
        try:
            await asyncio.wait_for(check(url), timeout=20)
            passed += 1
            print(f"ok   {check.__name__}")
        except Exception as e:  # report every failing check, not only the first
            failed += 1
            print(f"FAIL {check.__name__}: {type(e).__name__}: {e}")
    return passed, failed


def main():
    proc, address = start_server(sys.argv[1], sys.argv[2])
    try:
        passed, failed = asyncio.run(run_all(f"ws://{address}/v2/ws"))
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=15)
    if code != 0:
        print(f"FAIL coinfer-serve exited {code} after SIGTERM")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
