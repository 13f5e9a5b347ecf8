#!/usr/bin/env python3
"""gen_pipeline.py: run a real pipeline-parallel training job on this
machine and profile every rank, for trace-pipeline(1)'s fixtures.

  gen_pipeline.py --schedule 1f1b|gpipe --stages P --microbatches M
                  [--slow-stage S --slow-factor K] [--steps N]
                  [--hidden H] [--batch B] [--layers L] [--seed SEED]
                  --out DIR

P processes (one per stage) talk over gloo on 127.0.0.1 with
torch.set_num_threads(1).  Stage r holds L nn.Linear(H, H) + ReLU layers
(stage S K times as many); the last stage ends in an MSE loss.  A
hand-written schedule drives blocking dist.send / dist.recv:

  gpipe  every forward, then every backward;
  1f1b   min(P-1-r, M) warm-up forwards on stage r, then one forward and
         one backward in turn, then the remaining backwards.

A gloo send completes only when the peer has posted its receive, so the
1F1B steady state pairs "send F(k) / receive B(j)" with the next stage's
"send B(j) / receive F(k)", the even rank of the two sending first (see
program()); no wait is hidden in an async handle.

record_function names, the micro-batch number after '#':
  forward_step#K, backward_step#K          the compute of micro-batch K;
  recv_forward#K, send_forward#K,          the P2P, outside the compute
  recv_backward#K, send_backward#K         ranges (waiting is bubble).

torch.profiler.profile(schedule(wait=1, warmup=1, active=2)) on every
rank: two steps are recorded (torch 1.13 names them ProfilerStep#1 and
#2; the manifest takes the numbers from the trace); dist.barrier()
right before each prof.step(), so the step markers of the ranks start
together.  Debian's torch 1.13 has no Kineto and writes the legacy trace
format (times in us from the profiler's start, no clock origin).  Its
P2P records, inside our ranges: "c10d::send" > "gloo:send" and
"c10d::recv_" > "gloo:recv", each lasting until the message is through
(with isend instead, torch 1.13 ends "gloo:send" only at the handle's
wait(), which is why this generator does not use it).

Writes DIR/PREFIX_rank<r>.pt.trace.json.gz (gzip without name or time)
and DIR/PREFIX.expect.json, PREFIX = <schedule>_p<P>_m<M>[_slow<S>]:
{"schedule", "stages", "microbatches", "slow_stage" (or null),
 "steps": [profiled step numbers], "order": {"<rank>": "F0 F1 B0 ..."}}
"order" is what the generator ran on each rank in every step (the same
in each).  Timings are real, so a second run differs; the orders do not.
"""
import argparse
import gzip
import json
import os
import shutil
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.autograd.profiler import record_function

WAIT, WARMUP, ACTIVE = 1, 1, 2


def program(kind, p, m, r):
    """Stage r's actions in order: ("F"|"B", k) compute, ("send"|"recv",
    peer, "F"|"B", k) P2P.  1F1B as Megatron-LM runs it: warm-up
    forwards, then forward, send F / receive B, backward, send B /
    receive F.  Those pairs talk to one peer, whose pair is the mirror
    image; the even rank of the two sends first, the odd one receives
    first, so blocking sends never wait on each other."""
    first, last = r == 0, r == p - 1
    ops = []

    def recv_f(k):
        if not first:
            ops.append(("recv", r - 1, "F", k))

    def send_f(k):
        if not last:
            ops.append(("send", r + 1, "F", k))

    def recv_b(k):
        if not last:
            ops.append(("recv", r + 1, "B", k))

    def send_b(k):
        if not first:
            ops.append(("send", r - 1, "B", k))

    def pair(send, recv):
        if r % 2 == 0:
            send()
            recv()
        else:
            recv()
            send()

    if kind == "gpipe":
        for i in range(m):
            recv_f(i)
            ops.append(("F", i))
            send_f(i)
        for i in range(m):
            recv_b(i)
            ops.append(("B", i))
            send_b(i)
        return ops
    warm = min(p - 1 - r, m)
    rest = m - warm
    for i in range(warm):
        recv_f(i)
        ops.append(("F", i))
        send_f(i)
    if rest > 0:
        recv_f(warm)
    for i in range(rest):
        k = warm + i
        ops.append(("F", k))
        pair(lambda: send_f(k), lambda: recv_b(i))
        ops.append(("B", i))
        if i == rest - 1:
            send_b(i)
        else:
            pair(lambda: send_b(i), lambda: recv_f(k + 1))
    for i in range(rest, m):
        recv_b(i)
        ops.append(("B", i))
        send_b(i)
    return ops


def order_string(ops):
    return " ".join("%s%d" % op for op in ops if op[0] in ("F", "B"))


def build_stage(a, r):
    layers = a.layers * (a.slow_factor if r == a.slow_stage else 1)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(a.hidden, a.hidden), nn.ReLU()]
    return nn.Sequential(*mods)


P2P_NAME = {("send", "F"): "send_forward", ("recv", "F"): "recv_forward",
            ("send", "B"): "send_backward", ("recv", "B"): "recv_backward"}


def run_step(a, r, model, opt, ops):
    """One training step of stage r: its actions over M micro-batches."""
    last = a.stages - 1
    shape = (a.batch, a.hidden)
    inputs, outputs, grads = {}, {}, {}
    opt.zero_grad()
    for op in ops:
        if op[0] in ("send", "recv"):
            what, peer, ph, k = op
            with record_function("%s#%d" % (P2P_NAME[what, ph], k)):
                if what == "recv":
                    t = torch.empty(shape)
                    dist.recv(t, src=peer)
                    (inputs if ph == "F" else grads)[k] = t
                elif ph == "F":
                    dist.send(outputs[k].detach(), dst=peer)
                else:
                    dist.send(inputs.pop(k).grad, dst=peer)
            continue
        ph, k = op
        if ph == "F":
            x = inputs.get(k)
            if x is None:
                x = inputs[k] = torch.randn(shape)
            x.requires_grad_(r > 0)
            with record_function("forward_step#%d" % k):
                y = model(x)
                if r == last:
                    y = nn.functional.mse_loss(y, torch.zeros(shape))
            outputs[k] = y
        else:
            with record_function("backward_step#%d" % k):
                torch.autograd.backward(outputs.pop(k), grads.pop(k, None))
            if r == 0:
                del inputs[k]
    opt.step()


def worker(r, a, port, tmp):
    torch.set_num_threads(1)
    torch.manual_seed(a.seed * 1000 + r)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=r, world_size=a.stages)
    model = build_stage(a, r)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    ops = program(a.schedule, a.stages, a.microbatches, r)
    path = os.path.join(tmp, "rank%d.json" % r)

    def ready(prof):
        prof.export_chrome_trace(path)

    sched = torch.profiler.schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE,
                                    repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=sched, on_trace_ready=ready) as prof:
        for _ in range(a.steps):
            run_step(a, r, model, opt, ops)
            dist.barrier()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def profiled_steps(path):
    """The N of the ProfilerStep#N ranges the profiler wrote (torch 1.13's
    legacy profiler numbers the recorded steps 1 and 2, not 2 and 3)."""
    with open(path) as f:
        names = {e["name"] for e in json.load(f)}
    return sorted(int(n[len("ProfilerStep#"):]) for n in names
                  if n.startswith("ProfilerStep#"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schedule", choices=["1f1b", "gpipe"], default="1f1b")
    ap.add_argument("--stages", type=int, default=2)
    ap.add_argument("--microbatches", type=int, default=4)
    ap.add_argument("--slow-stage", type=int, default=None)
    ap.add_argument("--slow-factor", type=int, default=3)
    ap.add_argument("--steps", type=int, default=WAIT + WARMUP + ACTIVE)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.stages < 1 or a.microbatches < 1:
        ap.error("--stages and --microbatches must be at least 1")
    if a.steps < WAIT + WARMUP + ACTIVE:
        ap.error("--steps must be at least %d" % (WAIT + WARMUP + ACTIVE))
    if a.slow_stage is not None and not 0 <= a.slow_stage < a.stages:
        ap.error("--slow-stage must be a stage")
    prefix = "%s_p%d_m%d" % (a.schedule, a.stages, a.microbatches)
    if a.slow_stage is not None:
        prefix += "_slow%d" % a.slow_stage
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="gen_pipeline.")
    try:
        mp.spawn(worker, args=(a, free_port(), tmp), nprocs=a.stages)
        for r in range(a.stages):
            dst = os.path.join(a.out, "%s_rank%d.pt.trace.json.gz" % (prefix, r))
            with open(os.path.join(tmp, "rank%d.json" % r), "rb") as f, \
                    open(dst, "wb") as raw, \
                    gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                  mtime=0, compresslevel=9) as z:
                shutil.copyfileobj(f, z)
        steps = profiled_steps(os.path.join(tmp, "rank0.json"))
    finally:
        shutil.rmtree(tmp)
    man = {
        "schedule": a.schedule,
        "stages": a.stages,
        "microbatches": a.microbatches,
        "slow_stage": a.slow_stage,
        "steps": steps,
        "order": {str(r): order_string(program(a.schedule, a.stages,
                                               a.microbatches, r))
                  for r in range(a.stages)},
    }
    with open(os.path.join(a.out, prefix + ".expect.json"), "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")
    print(prefix)


if __name__ == "__main__":
    sys.exit(main())
