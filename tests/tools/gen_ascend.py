#!/usr/bin/env python3
"""gen_ascend.py [-o OBJECT_FORM] ARRAY_FORM: write a small torch_npu
trace (ASCEND_PROFILER_OUTPUT/trace_view.json layout) made by hand from
the published layout, since no real one is at hand:

  - "ts" as a string of decimal microseconds with three decimals, "dur"
    as a float (some as strings), as torch_npu and CANN write them;
  - processes "Python" (cpu_op and python_function spans, ProfilerStep#N),
    "CANN" (AscendCL and Node@launch API spans), "Ascend Hardware"
    (tasks on "Stream N" threads, no "cat", args."Task Type"),
    "Communication" (HCCL hcom_* ops), "Overlap Analysis" and
    "AI Core Freq" (derived lanes), device pids in CANN's layout
    (pid << 10 | sort index << 5 | device id), device 1;
  - async_npu flows (torch_to_npu, id = the task's start in ns) from each
    launching cpu_op to its device tasks; HostToDevice flows (string ids)
    from Node@launch to the HCCL ops;
  - three steps; step 2 leaves the device idle for 400 us while the host
    works (a blocking aten::item).

The output is deterministic: the fixtures in tests/fixtures/ascend/ are
this script's output (tests/ascend.bats checks it)."""
import json
import sys

BASE = 1699529623106750125          # ns since the epoch
HOST_PID = 2400
def dev_pid(sort, dev=1):
    return HOST_PID << 10 | sort << 5 | dev
CANN_PID = HOST_PID << 10 | 3 << 5 | 31
HW, COMM, OVL, FREQ = dev_pid(4), dev_pid(5), dev_pid(6), dev_pid(7)
TID = 2400

ev = []


def us(ns):
    """CANN's convert_ns2us_str: integer ns as a decimal us string."""
    s = str(ns)
    return "0." + s.rjust(3, "0") if len(s) <= 3 else s[:-3] + "." + s[-3:]


def dur_us(ns, as_str=False):
    return us(ns) if as_str else ns / 1000


def meta(pid, name, labels, threads):
    ev.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
               "args": {"name": name}})
    ev.append({"ph": "M", "name": "process_labels", "pid": pid, "tid": 0,
               "args": {"labels": labels}})
    for tid, tname in threads:
        ev.append({"ph": "M", "name": "thread_name", "pid": pid,
                   "tid": tid, "args": {"name": tname}})


def x(name, pid, tid, ts, dur, cat=None, args=None, dur_str=False):
    e = {"ph": "X", "name": name, "pid": pid, "tid": tid,
         "ts": us(BASE + ts), "dur": dur_us(dur, dur_str)}
    if cat is not None:
        e["cat"] = cat
    if args is not None:
        e["args"] = args
    ev.append(e)
    return e


task_id = [0]


def task(name, ttype, stream, ts, dur, launcher_ts=None):
    task_id[0] += 1
    x(name, HW, stream, ts, dur, args={
        "Model Id": 4294967295, "Task Type": ttype, "Stream Id": stream,
        "Task Id": task_id[0], "Batch Id": 0, "Subtask Id": 4294967295,
        "connection_id": 1000 + task_id[0]})
    if launcher_ts is not None:
        fid = BASE + ts
        ev.append({"ph": "s", "bp": "e", "name": "torch_to_npu", "id": fid,
                   "pid": HOST_PID, "tid": TID, "ts": us(BASE + launcher_ts),
                   "cat": "async_npu"})
        ev.append({"ph": "f", "bp": "e", "name": "torch_to_npu", "id": fid,
                   "pid": HW, "tid": stream, "ts": us(BASE + ts),
                   "cat": "async_npu"})


def hccl(name, ts, dur, launch_ts, conn):
    x("Node@launch", CANN_PID, TID, launch_ts, 9100,
      args={"Thread Id": TID, "Mode": "launch", "level": "node",
            "item_id": name, "connection_id": conn})
    x(name, COMM, 11, ts, dur, args={"connection_id": conn}, dur_str=True)
    fid = str(81604378000 + conn)
    ev.append({"ph": "s", "name": "HostToDevice" + fid, "cat": "HostToDevice",
               "id": fid, "pid": CANN_PID, "tid": TID,
               "ts": us(BASE + launch_ts)})
    ev.append({"ph": "f", "bp": "e", "name": "HostToDevice" + fid,
               "cat": "HostToDevice", "id": fid, "pid": COMM, "tid": 11,
               "ts": us(BASE + ts)})


def op(name, ts, dur, cat="cpu_op"):
    x(name, HOST_PID, TID, ts, dur, cat=cat,
      args={"Sequence number": 1, "Fwd thread id": 0})


def step(n, t0, length, idle):
    """One training step from t0 (ns after BASE); idle: ns the device waits
    for the host before the optimizer."""
    op("ProfilerStep#%d" % n, t0, length)
    x("nn.Module: Model_0", HOST_PID, TID, t0 + 10125, 390000,
      cat="python_function")
    x("nn.Module: Linear_0", HOST_PID, TID, t0 + 20250, 180000,
      cat="python_function")
    op("aten::matmul", t0 + 30375, 50000)
    x("AscendCL@aclnnMatmul", CANN_PID, TID, t0 + 40500, 30250)
    task("aclnnMatmul_MatMulV2_MatMulV2", "AI_CORE", 2, t0 + 60125,
         150375, t0 + 30375)
    op("aten::add", t0 + 100500, 30000)
    task("aclnnAdd_AddAiCore_Add", "AI_VECTOR_CORE", 2, t0 + 215001, 20499,
         t0 + 100500)
    op("aten::_npu_flash_attention", t0 + 210000, 25125)
    task("FlashAttentionScore", "MIX_AIC", 2, t0 + 240000, 60333,
         t0 + 210000)
    op("aten::nonzero", t0 + 310000, 20000)
    task("NonZero", "AI_CPU", 5, t0 + 320500, 30001, t0 + 310000)
    op("HcclAllreduce", t0 + 420000, 30000)
    hccl("hcom_allReduce__%d_0_1" % (100 + n), t0 + 500000, 150125,
         t0 + 425000, 10 * n)
    if n == 1:
        op("HcclBroadcast", t0 + 455000, 10000)
        hccl("hcom_broadcast__%d_0" % (200 + n), t0 + 660000, 20250,
             t0 + 456000, 10 * n + 1)
    if idle:
        op("aten::item", t0 + 690000, idle)
    t1 = t0 + 700000 + idle
    op("Optimizer.step#SGD.step", t1, 200000)
    op("aten::add_", t1 + 10000, 20000)
    task("aclnnInplaceAdd_AddAiCore_Add", "AI_VECTOR_CORE", 2,
         t1 + 40000, 100750, t1 + 10000)
    # what torch_npu derives: overlap lanes and the AI Core frequency
    x("Computing", OVL, 1, t0 + 60125, 300375)
    x("Communication(Not Overlapped)", OVL, 3, t0 + 500000, 150125)
    ev.append({"ph": "C", "name": "AI Core Freq", "pid": FREQ, "tid": 0,
               "ts": us(BASE + t0), "args": {"MHz": 1800 - 50 * n}})


def build():
    meta(HOST_PID, "Python", "CPU", [(TID, "Thread %d" % TID)])
    meta(CANN_PID, "CANN", "CPU", [(TID, "Thread %d" % TID)])
    meta(HW, "Ascend Hardware", "NPU", [(2, "Stream 2"), (5, "Stream 5")])
    meta(COMM, "Communication", "NPU", [(11, "Group 0 Communication")])
    meta(OVL, "Overlap Analysis", "NPU",
         [(1, "Computing"), (3, "Communication(Not Overlapped)")])
    meta(FREQ, "AI Core Freq", "NPU", [])
    step(1, 0, 1000000, 0)
    step(2, 1000000, 1400000, 400000)
    step(3, 2400000, 1000000, 0)
    return ev


def main():
    args = sys.argv[1:]
    obj = None
    if len(args) == 3 and args[0] == "-o":
        obj, args = args[1], args[2:]
    if len(args) != 1:
        sys.exit(__doc__.split("\n")[0])
    events = build()
    with open(args[0], "w") as f:
        # torch_npu's layout: a bare array, one event a line
        f.write("[\n" + ",\n".join(json.dumps(e) for e in events) + "\n]\n")
    if obj:
        with open(obj, "w") as f:
            json.dump({"traceEvents": events}, f, indent=1)
            f.write("\n")


main()
