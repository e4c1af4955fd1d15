-- wrk script for bench/classifier_bench.sh: POST an OIP v2 infer request for the digits
-- MLP ("digits", INPUT0 FP32 [1,64]).
--
-- The body is read from the file named by $BENCH_BODY_FILE (classifier_bench.sh writes one
-- held-out digit there, and checks each server's answer with the same bytes). The path is
-- $BENCH_INFER_PATH, default /v2/models/digits/infer. bench/binary_bench.sh also uses it for
-- any model: with $BENCH_HEADER_LENGTH set, the body is a binary tensor data request whose
-- first BENCH_HEADER_LENGTH bytes are its JSON (Inference-Header-Content-Length).

local path = os.getenv("BENCH_BODY_FILE")
assert(path and path ~= "", "set BENCH_BODY_FILE to the request body's file")
local f = assert(io.open(path, "rb"))
local body = f:read("*a")
f:close()

wrk.method = "POST"
wrk.path = os.getenv("BENCH_INFER_PATH") or "/v2/models/digits/infer"
local header_length = os.getenv("BENCH_HEADER_LENGTH")
if header_length and header_length ~= "" then
  wrk.headers["Content-Type"] = "application/octet-stream"
  wrk.headers["Inference-Header-Content-Length"] = header_length
else
  wrk.headers["Content-Type"] = "application/json"
end
wrk.body = body
