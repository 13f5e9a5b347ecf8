#!/usr/bin/python3
"""A Kineto trace of one rank of an expert-parallel MoE job (issue 33, 2).

    gen_moe.py > moe.pt.trace.json

Four ProfilerSteps of 1 ms on GPU 0, stream 7; in each: attention and
expert GEMMs (cutlass / sm90 names), DeepEP's intranode notify, dispatch
and combine kernels between them (the all-to-all of the experts), and an
idle tail.  Each kernel is launched by a cudaLaunchKernel under an
aten::op on the host thread (correlation ids).  Kineto's own span
"PyTorch Profiler (0)" covers the capture.  Standard library only; the
same bytes every run.
"""
import json

STEP = 1000          # us
KERNELS = [          # (name, start in the step, duration), us
    ("void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_"
     "128x128_32x3_nn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_"
     "128x128_32x3_nn_align8::Params)", 0, 200),
    ("void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int, "
     "int const*, int*, int, int, int, bool const*, int*, int*, int*, int, "
     "void**, int**, int, int, int)", 200, 50),
    ("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, "
     "long*, float*, int*, int*, int4 const*, float const*, long const*, "
     "float const*, bool const*, int const*, int, int, int, int, int, int, "
     "int, int, void**, int, int, int, int)", 250, 200),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_"
     "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 450, 300),
    ("void deep_ep::intranode::combine<__nv_bfloat16, 8, 768>(__nv_bfloat16*, "
     "float*, int4 const*, float const*, float const*, int const*, "
     "int const*, int, int, int, int, void**, int, int, int)", 750, 200),
]
T0 = 1700000000000000    # us


def main():
    ev = []
    corr = 1
    ev.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)",
               "pid": "Spans", "tid": "PyTorch Profiler", "ts": T0 - 100,
               "dur": 4 * STEP + 300, "args": {"Op count": 0}})
    for s in range(4):
        base = T0 + s * STEP
        ev.append({"ph": "X", "cat": "user_annotation",
                   "name": "ProfilerStep#%d" % (s + 1), "pid": 10, "tid": 10,
                   "ts": base, "dur": STEP})
        for k, (name, at, dur) in enumerate(KERNELS):
            # the launch: early in the step, under an aten op
            lt = base + 2 + 5 * k
            ev.append({"ph": "X", "cat": "cpu_op",
                       "name": "aten::mm" if "gemm" in name or
                       "cutlass" in name else "deep_ep::Buffer",
                       "pid": 10, "tid": 10, "ts": lt, "dur": 4})
            ev.append({"ph": "X", "cat": "cuda_runtime",
                       "name": "cudaLaunchKernel", "pid": 10, "tid": 10,
                       "ts": lt + 1, "dur": 2,
                       "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0,
                       "tid": 7, "ts": base + at, "dur": dur,
                       "args": {"device": 0, "stream": 7,
                                "correlation": corr}})
            corr += 1
    ev.append({"ph": "M", "name": "process_name", "pid": 0, "tid": 0,
               "args": {"name": "python3"}})
    ev.append({"ph": "M", "name": "process_labels", "pid": 0, "tid": 0,
               "args": {"labels": "GPU 0"}})
    ev.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": 7,
               "args": {"name": "stream 7"}})
    print(json.dumps({"schemaVersion": 1, "distributedInfo": {"rank": 0},
                      "traceEvents": ev}, indent=1))


main()
