/*
 * nd_steps: training steps in a stream -- how they are detected, the time
 * breakdown of each step window, and the statistics over steps (nd_stat,
 * light/heavy classes, periodicity, stragglers) that nd_stepsum (the step
 * summary of trace-steps, trace-report and trace-diff) combines.  Also used
 * by trace-gaps(1) (--within-steps).  trace-steps(1) is the reference for
 * every rule stated here.
 *
 * What a span is to the step analysis (nd_span_role):
 *   device op      nd_event_kind() == ND_KIND_DEVICE (nd_event.h), with
 *                  dur_ns > 0; its category by `class`: communication and
 *                  stall (a device-side wait: TPU barrier-cores,
 *                  dependency-wait) -> ND_CAT_COMM, memory -> ND_CAT_MEMORY,
 *                  anything else or absent -> ND_CAT_COMPUTE.
 *   step marker    see below; never host activity.
 *   host activity  any other span of kind ND_KIND_HOST with dur_ns > 0,
 *                  except containers that say where the host is rather
 *                  than that it works: Python stack frames (`cat`
 *                  python_function or `family` python), Kineto
 *                  record_function ranges (`cat` user_annotation) and
 *                  spans of `class` other (metadata planes).
 *
 * Step markers, strongest first; in each source the strongest kind present
 * decides the steps and the others are ignored:
 *   ND_SM_REGEX      --step-regex RE matches the span name (host or device
 *                    lines); the number is the first capture group, else
 *                    args.step_num, else the last run of digits in the name,
 *                    else the order of start (1, 2, ...);
 *   ND_SM_STEPSLINE  XPlane: a span on the "Steps" line of a /device:
 *                    process, named with the step number (else
 *                    args.step_num, args.group_id); one window per device;
 *   ND_SM_PROFILER   PyTorch: a host span named "ProfilerStep#N" (Kineto
 *                    cat user_annotation / cpu_op / Operator, or none in the
 *                    legacy format); the device-side copy
 *                    (gpu_user_annotation) is ignored;
 *   ND_SM_STEPNUM    JAX/TensorFlow StepTraceAnnotation: a host span with an
 *                    integer args.step_num (usually named "train");
 *   ND_SM_OPSTEP     none of the above: the `step` key of device ops; a
 *                    step's window runs from its first op's start to its
 *                    last op's end.
 * Markers on device processes give one window per device; host markers
 * one per source.  Several markers with the same number in one scope
 * (threads, devices) make one window from the first start to the last end.
 * A record (without per_device) spans the windows of one number over the
 * scopes, unless they are all device windows out of phase (their union is
 * not one interval): then each device keeps its own record.
 * Without any marker: the XLA module or inferred steps below, else no
 * steps (nd_steps_profile).
 */
#ifndef ND_STEPS_H
#define ND_STEPS_H

#include "nd_event.h"
#include "nd_interval.h"
#include "nd_json.h"
#include "nd_buf.h"

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

enum {
	ND_SM_NONE = 0, ND_SM_OPSTEP, ND_SM_STEPNUM, ND_SM_PROFILER,
	ND_SM_STEPSLINE, ND_SM_REGEX
};
/* "op_step", "step_num", "profiler_step", "steps_line", "regex". */
const char *nd_sm_name(int marker);

/*
 * Where a source's steps come from (`step_source` of step records and of
 * the report), weakest first: none (no steps: analyses use the profile
 * window, first to last device op, per device), inferred (a repeating
 * top-level span sequence), xla_module (repeated executions of the
 * top-level XLA program), marker (any ND_SM_* above, or --step-regex).
 */
enum { ND_SS_NONE = 0, ND_SS_INFERRED, ND_SS_XLA_MODULE, ND_SS_MARKER };

/*
 * Steps without markers (trace-steps(1), "Steps without markers"), tried
 * in this order when a source has no marker of any kind:
 *   xla_module  the executions of the step module: the XLA module (span
 *               name without its "(fingerprint)") with the most time on
 *               the devices' "XLA Modules" lines, else (no such line) the
 *               one with the most time in host spans "NAME:XLA <platform>
 *               module"; the first seen on ties.  The k-th execution on a
 *               device (a host thread) is step k.  A device's window is the
 *               execution; a host thread's runs from it to the thread's next
 *               execution, the last to the end of the last device op.
 *   inferred    a repeating top-level span: a host span or device
 *               annotation that starts at or after the end of the previous
 *               top-level span of its thread, grouped by (thread, name).
 *               Convincing when it runs at least ND_INFER_MIN_REPEATS times,
 *               busies its thread for at least ND_INFER_MIN_BUSY of the time
 *               from its first start to its last end, its first start leaves
 *               at least ND_INFER_MIN_COVER of the source's device-op
 *               extent (first op start to last op end) after it, and the
 *               source has device ops.  The convincing one with the most
 *               summed time (the first seen on ties) defines the steps:
 *               execution k is step k, to the next execution's start, the
 *               last to the end of the last device op; one window per
 *               source.
 * Step numbers count from 1 in order of start (an XLA run_id is not used:
 * it is not the same execution on every device).
 */
#define ND_INFER_MIN_REPEATS 3
#define ND_INFER_MIN_BUSY 0.5
#define ND_INFER_MIN_COVER 0.8
/* Candidates (thread, name) kept per source; later new ones are ignored. */
#define ND_INFER_MAX_CANDS 65536
/* "none", "inferred", "xla_module", "marker". */
const char *nd_ss_name(int step_source);
/* The step_source of a step record's member (NULL: absent), by name;
 * ND_SS_MARKER when absent or unknown (records from before it existed). */
int nd_ss_of(const nd_jval *v);

/* Roles of a span. */
/* A step marker has role ND_ROLE_NONE (ND_ROLE_DEVICE when --step-regex
 * names a device op, which stays device work) and `marker` set. */
enum { ND_ROLE_NONE = 0, ND_ROLE_DEVICE, ND_ROLE_HOST };

typedef struct nd_span_role {
	int role;		/* ND_ROLE_* */
	int kind;		/* nd_event_kind() */
	int cat;		/* device op: ND_CAT_COMPUTE/COMM/MEMORY */
	int marker;		/* a step marker: ND_SM_*, else ND_SM_NONE */
	int has_num;		/* marker: the step number is known */
	int64_t num;		/* marker: step number */
	int comm;		/* host activity of class communication */
	int sync;		/* a host span (of any role but marker) that waits
				 * for the device: *Synchronize,
				 * block_until_ready, BlockHostUntilReady */
	int xla;		/* an XLA module execution: 1 on the "XLA
				 * Modules" line of a device, 2 a host span
				 * "NAME:XLA <platform> module" */
} nd_span_role;

/* What ev (a span) is; re: the --step-regex, or NULL. */
void nd_span_role_of(const nd_event *ev, const regex_t *re, nd_span_role *r);

/* The device a span belongs to, as a key: `device`, else `process`, else
 * "pid N"; appended to b (which is reset first). */
void nd_span_device_key(const nd_event *ev, nd_buf *b);
/* The same key without a copy when it is a field of ev (*k then points into
 * ev); b holds it otherwise. */
void nd_span_device_ref(const nd_event *ev, nd_buf *b, const char **k,
    size_t *n);

/* Lightweight marker ops that trace-gaps(1) looks past to find the payload:
 * iota, constant, bitcast, get-tuple-element, parameter, tuple, after-all,
 * Kineto's "Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event"
 * (with any ".N" suffixes) and copy-start*, copy-done*. */
int nd_op_is_light(const char *name, size_t n);

/* --- collecting one source ---
 *
 * Memory (trace-steps(1), "Order and memory"): the busy stretches of each
 * timeline (pid, tid) and category go to union logs on a spool
 * (nd_ivlog.h) as they close, and so do the flops of ops without a step
 * key; only the open stretch and one chunk per log stay in memory.  A log
 * that gets an op out of order keeps the rest in memory (an nd_ivset).
 * At nd_steps_end_source the per-device or per-source unions are merged from
 * those logs and the records computed in one sweep by start. */

typedef struct nd_steps nd_steps;

typedef struct nd_steps_opts {
	const regex_t *re;	/* --step-regex, or NULL */
	int per_device;		/* one record per device */
	double peak_tflops;	/* > 0: overrides the table */
	int flops;		/* collect flops (MFU) */
	int markers_only;	/* only step windows (nd_steps_windows) */
} nd_steps_opts;

/* One step window (a step record of trace-steps(1)). */
typedef struct nd_step {
	int64_t num;		/* step number */
	int64_t ts, dur;	/* window, ns from the source origin */
	int marker;		/* ND_SM_* that defined it */
	int source;		/* ND_SS_*: where the window comes from */
	int dev;		/* device index (nd_steps_device), -1: all */
	uint32_t ndev;		/* devices in the window's domain */
	nd_breakdown bd;	/* parts add up to dur */
	int64_t wait_ns;	/* time any communication ran (device or host) */
	int has_flops;
	double flops;		/* summed op flops (model_flops if present) */
	double peak_tflops;	/* summed peak of the domain; 0: unknown */
} nd_step;

nd_steps *nd_steps_new(const nd_steps_opts *o);
void nd_steps_free(nd_steps *s);
/* A meta record of the source: device names (see trace-steps(1)). */
void nd_steps_meta(nd_steps *s, const nd_event *meta);
/* A span of the current source and its role. */
void nd_steps_add(nd_steps *s, const nd_event *ev, const nd_span_role *r);
/* The source is complete: compute its steps, sorted by (device, start).
 * The array stays valid until nd_steps_reset. */
size_t nd_steps_end_source(nd_steps *s, const nd_step **out);
/* After nd_steps_end_source returned 0 (no steps): the profile window of each
 * device of the source, from its first device op's start to its last device
 * op's end, with the breakdown of a step window on one device (num 0,
 * marker ND_SM_NONE, source ND_SS_NONE), sorted by device; 0 when the
 * source has steps or no device op.  Valid until nd_steps_reset. */
size_t nd_steps_profile(nd_steps *s, const nd_step **out);
/* Device index i of the current source: its key (nd_span_device_key);
 * *model its model name when known (else NULL); *is_device 1 when the key
 * is the spans' `device` (0: their process or pid).  Either may be NULL. */
const char *nd_steps_device(const nd_steps *s, int i, const char **model,
    int *is_device);
uint32_t nd_steps_ndevices(const nd_steps *s);
/* After nd_steps_end_source: what defines the source's steps when they are
 * not marked (the XLA module or the repeating span's name), else NULL. */
const char *nd_steps_what(const nd_steps *s);
/* 1 when the source had device ops. */
int nd_steps_has_devices(const nd_steps *s);
/* Forget the source (next one begins). */
void nd_steps_reset(nd_steps *s);

/* The step windows of the source by marker only (no breakdown), for
 * trace-gaps --within-steps: dev -1 for host markers, else the device
 * index; ts/dur/num/marker filled. */
size_t nd_steps_windows(nd_steps *s, const nd_step **out);

/* --- statistics over steps --- */

/* Summary statistics of n durations (ns).  median and p90 follow the
 * nearest-rank definition (the ceil(q n)-th smallest); mean and stddev
 * (population, divided by n) are rounded to whole ns. */
typedef struct nd_stat {
	uint64_t count;
	int64_t mean, median, p90, min, max, stddev, total;
} nd_stat;
void nd_stat_of(const int64_t *dur, size_t n, nd_stat *st);

/*
 * Step classes.  Rule (trace-steps(1), CLASSES): with at least
 * ND_CLASS_MIN_STEPS steps, split the sorted log durations at the point
 * that minimises the within-group sum of squares (optimal 1-D two-means).
 * The split is real when all of:
 *   it explains at least ND_CLASS_MIN_R2 of the variance of the logs;
 *   lightest heavy / heaviest light >= ND_CLASS_MIN_GAP;
 *   heavy median / light median >= ND_CLASS_MIN_RATIO.
 * Then classes "light" and "heavy", else one class "typical".  A class's
 * representative step is the one whose duration is closest to the class
 * median (the earliest on ties).  Periodicity: when the heavy steps are at
 * least two and their numbers are evenly spaced by k >= 2, period k and
 * phase (first heavy number mod k); else no period.
 */
#define ND_CLASS_MIN_STEPS 4
#define ND_CLASS_MIN_R2 0.8
#define ND_CLASS_MIN_GAP 1.15
#define ND_CLASS_MIN_RATIO 1.25

typedef struct nd_step_class {
	const char *name;	/* "typical", "light", "heavy" */
	nd_stat st;
	int64_t representative;	/* step number */
	size_t first, n;	/* members: idx[first .. first + n) */
	int has_period;
	int64_t period, phase;
} nd_step_class;

typedef struct nd_step_classes {
	int nclass;		/* 1 or 2 */
	nd_step_class c[2];
	double r2, gap, ratio;	/* the split's figures (best split) */
	size_t *idx;		/* indexes into the input, by class, then by
				 * duration; caller frees */
} nd_step_classes;

/* Classify steps (num[i], dur[i]), i < n. */
void nd_step_classify(const int64_t *num, const int64_t *dur, size_t n,
    nd_step_classes *out);
void nd_step_classes_free(nd_step_classes *c);

/*
 * Stragglers across ranks (trace-steps(1), --ranks).  For one step number,
 * each rank's window [start, end) and wait (nd_step.wait_ns).  A rank is
 * ready when its own work is done: end - wait.  The straggler is the rank
 * ready last (the others wait for it in their collectives); `lag` is how
 * much later it is ready than the median ready time of all ranks (the
 * lower middle for an even count).  With
 * absolute clocks (every source has a nonzero origin_ns) start/end are
 * compared in epoch time; otherwise each rank's times count from its own
 * step start, i.e. the ranks are compared by their busy time dur - wait.
 */
typedef struct nd_rank_step {
	int64_t rank;		/* rank, or source index when unknown */
	int64_t start, end;	/* absolute ns when abs, else relative */
	int64_t wait;
} nd_rank_step;

typedef struct nd_straggler {
	size_t straggler;	/* index into the input */
	int64_t lag_ns;		/* ready - median ready */
	size_t last;		/* index of the rank that ends last */
	int64_t last_by_ns;	/* its end - the next latest end */
	int64_t dur_min, dur_max, end_spread;	/* end_spread: abs only */
} nd_straggler;

void nd_step_straggler(const nd_rank_step *r, size_t n, int abs,
    nd_straggler *out);

/* The cross-rank view (trace-steps -r, trace-report): one window per step
 * and source, the span of its devices' windows with the largest host wait.
 * origin is the source's clock origin; has_origin when it has a meta record
 * with a nonzero origin_ns (times are then comparable across sources). */
typedef struct nd_rank_win {
	int64_t num, ts, dur, wait;
	int64_t rank;		/* rank, or the source index when unknown */
	int has_rank;
	int64_t origin;
	int has_origin;
	uint32_t source;
} nd_rank_win;

/* Merge windows sorted by step number then source into one per (step,
 * source), in place; returns their count. */
size_t nd_rank_wins_merge(nd_rank_win *w, size_t n);
/* For every step that two or more sources have, in order: its windows
 * w[0..n), whether clocks are absolute (every one has_origin) and the
 * straggler analysis. */
typedef void nd_rank_fn(void *ctx, const nd_rank_win *w, size_t n, int abs,
    const nd_straggler *sg);
void nd_rank_steps(const nd_rank_win *w, size_t n, nd_rank_fn *fn,
    void *ctx);

#endif
