"""The device-op rule of ndtrace(7) ("Device ops"), written independently
of lib/core/nd_event.c for the reference checkers: kind(record) is "device",
"annot" (a device annotation) or "host"."""

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_op",
               "memcpy", "memset", "mtia_ccp_events", "hpu_op"}
ANNOT_LINES = {"Steps", "XLA Modules", "XLA TraceMe", "TensorFlow Ops",
               "TensorFlow Name Scope", "Framework Ops",
               "Framework Name Scope", "Source code", "Launch Stats"}


def kind(r):
    cat = r.get("cat")
    if isinstance(cat, str):
        c = cat.lower()
        if c in DEVICE_CATS:
            return "device"
        if c in ("gpu_user_annotation", "trace"):
            return "annot"
    p = r.get("process")
    if p in ("Ascend Hardware", "Communication"):
        return "device"
    if p in ("Overlap Analysis", "AI Core Freq"):
        return "annot"
    if isinstance(p, str) and p.startswith("/device:"):
        return "annot" if r.get("thread") in ANNOT_LINES else "device"
    return "host"
