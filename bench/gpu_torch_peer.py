"""The GEMM peer for coinfer-gpu-bench, run in the same session on the same GPU: PyTorch's
INT8 GEMM (torch._int_mm, INT8 x INT8 -> INT32 through cuBLASLt) and FP16 matmul at the
shapes coinfer-gpu-bench measures. Prints one `key=value` line per result, in
coinfer-gpu-bench's format with `peer=torch` in front, so scripts/gpu_check puts them side
by side. Timed with CUDA events over about 50 ms of calls after warm-up, as the C++ side is.

    python3 bench/gpu_torch_peer.py
"""

import sys

try:
    import torch
except ImportError:
    print("peer=torch skipped reason=\"no torch\"")
    sys.exit(0)


def time_us(fn, target_ms=50.0):
    for _ in range(3):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    one = max(start.elapsed_time(stop), 1e-3)
    calls = int(min(max(target_ms / one, 5), 2000))
    start.record()
    for _ in range(calls):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / calls * 1e3


def gemm(m, n, k):
    """Y[m, n] = X[m, k] . W[n, k]^T, as coinfer's layers compute it."""
    us = {}
    # _int_mm wants more than 16 rows (and k, n multiples of 8): smaller m run as 17 rows.
    m8 = max(m, 17)
    x8 = torch.ones((m8, k), dtype=torch.int8, device="cuda")
    w8 = torch.ones((n, k), dtype=torch.int8, device="cuda")
    try:
        # W^T is a column-major view: the TN case.
        us["int8"] = time_us(lambda: torch._int_mm(x8, w8.t()))
        if m8 != m:
            print(f"peer=torch note m={m} m_padded={m8} (torch._int_mm needs m > 16)")
    except RuntimeError as e:
        print(f"peer=torch gemm dtype=int8 m={m} n={n} k={k} unsupported=\"{str(e).splitlines()[0]}\"")
    # FP32 accumulation throughout, as coinfer's FP16 GEMM (CUBLAS_COMPUTE_32F).
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    x16 = torch.ones((m, k), dtype=torch.float16, device="cuda")
    w16 = torch.ones((n, k), dtype=torch.float16, device="cuda")
    us["fp16"] = time_us(lambda: torch.matmul(x16, w16.t()))
    for dtype, t in us.items():
        tops = 2.0 * m * n * k / (t * 1e-6) / 1e12
        print(f"peer=torch gemm dtype={dtype} m={m} n={n} k={k} us={t:.2f} tops={tops:.3f}")


def main():
    if not torch.cuda.is_available():
        print("peer=torch skipped reason=\"no CUDA device\"")
        return
    print(f"peer=torch version={torch.__version__} device=\"{torch.cuda.get_device_name()}\"")
    for m in (1, 64, 256, 1024):
        for n, k in ((256, 64), (256, 256), (16, 256)):
            gemm(m, n, k)
    gemm(4096, 4096, 4096)


if __name__ == "__main__":
    main()
