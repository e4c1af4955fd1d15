-- wrk script for bench/http_bench.sh: POST an OIP v2 infer request for the
-- built-in "identity" model (INPUT0, FP32 [1,64]).
--
-- The body is read from the file named by $BENCH_BODY_FILE when set (http_bench.sh
-- writes it, and checks each server's answer with the same bytes); otherwise it is
-- built here with the same formula: data[i] = i*0.25 + 0.125 - 4, i = 0..63
-- (exact in FP32; row sum 256).

local body
local path = os.getenv("BENCH_BODY_FILE")
if path and path ~= "" then
  local f = assert(io.open(path, "rb"))
  body = f:read("*a")
  f:close()
else
  local vals = {}
  for i = 0, 63 do
    vals[#vals + 1] = string.format("%g", i * 0.25 + 0.125 - 4)
  end
  body = '{"inputs":[{"name":"INPUT0","shape":[1,64],"datatype":"FP32","data":['
    .. table.concat(vals, ",") .. ']}]}'
end

wrk.method = "POST"
wrk.path = "/v2/models/identity/infer"
wrk.headers["Content-Type"] = "application/json"
wrk.body = body
