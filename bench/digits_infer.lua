-- wrk script for bench/classifier_bench.sh: POST an OIP v2 infer request for the digits
-- MLP ("digits", INPUT0 FP32 [1,64]).
--
-- The body is read from the file named by $BENCH_BODY_FILE (classifier_bench.sh writes one
-- held-out digit there, and checks each server's answer with the same bytes). The path is
-- $BENCH_INFER_PATH, default /v2/models/digits/infer.

local path = os.getenv("BENCH_BODY_FILE")
assert(path and path ~= "", "set BENCH_BODY_FILE to the request body's file")
local f = assert(io.open(path, "rb"))
local body = f:read("*a")
f:close()

wrk.method = "POST"
wrk.path = os.getenv("BENCH_INFER_PATH") or "/v2/models/digits/infer"
wrk.headers["Content-Type"] = "application/json"
wrk.body = body
