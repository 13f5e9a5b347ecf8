/*
 * nd_gaps: idle intervals ("gaps") on device op timelines, the op that
 * ends each one (marker), the first op that does real work after it
 * (payload), and their likely cause.  The reference for every rule is
 * trace-gaps(1); in short:
 *
 * - Ops are the spans nd_span_role_of() calls device ops (dur_ns > 0);
 *   a source without any falls back to its host activity spans.
 * - Timeline level: on one (source, pid, tid), a gap is a stretch between
 *   the first op's start and the last op's end where no op runs.  Device
 *   level: where no op runs on any timeline of the device (the `device`
 *   key, else the process).  Only gaps of at least thr = max(min, 1) ns
 *   exist for the rest of the rules.
 * - before: the op with the latest end before the gap (the later start on
 *   ties); marker: the first op after it (the longer on equal starts, then
 *   the first timeline seen); payload: looking at most ND_GAP_LOOKAHEAD
 *   ops ahead in start order from the marker, the first that is not a
 *   lightweight op (nd_op_is_light), stopping before an op that follows
 *   another gap of at least thr; the marker when none qualifies.
 * - cause, first that applies: sync (a host synchronisation span of the
 *   source overlaps the gap), host_wait (the host span that launched the
 *   marker -- same args.correlation or args.correlation_id in the source --
 *   started at or after the gap's start), kernel_wait (shorter than the
 *   kernel-wait threshold), collective_wait (the payload is a
 *   communication op, or a host communication span overlaps the gap),
 *   other.
 *
 * Memory and order.  Each timeline is processed as it streams, in the
 * order ndtrace(7) guarantees (start ascending per timeline); it keeps its
 * current op, its head (the first ops), and for each gap of at least thr
 * at most ND_GAP_LOOKAHEAD ops after it.  Gaps whose look-ahead is closed
 * go to an nd_spool (memory up to ND_SPOOL_MEM, then an unlinked temporary
 * file) in chunks, so resident memory stays bounded whatever the number of
 * ops or gaps.  Evidence for the causes is kept per source (launch start
 * per correlation id, sync and host communication stretches, host spans
 * when host context is asked).  Gaps are final when their source ends (a
 * later timeline of the device may still fill them): then each timeline's
 * gaps are read back in order (device level: a sweep over the device's
 * timelines) and handed out in batches.  A timeline out of order makes
 * nd_gaps_add fail unless the unordered option is set, which buffers every
 * op of every timeline until its source ends (exact on any order, memory
 * per op).
 */
#ifndef ND_GAPS_H
#define ND_GAPS_H

#include "nd_event.h"
#include "nd_steps.h"

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#define ND_GAP_LOOKAHEAD 8
#define ND_GAP_MAX_CTX 3

enum { ND_GAP_TIMELINE = 0, ND_GAP_DEVICE };

typedef struct nd_gaps_opts {
	int level;		/* ND_GAP_TIMELINE or ND_GAP_DEVICE */
	int64_t min_ns;		/* report gaps of at least this */
	int64_t kernel_wait_ns;	/* shorter gaps: kernel_wait */
	int host_context;	/* 0, or how many host spans per gap */
	int within_steps;	/* clip gaps to step windows */
	const regex_t *re;	/* --step-regex for the step windows */
	int unordered;		/* buffer every timeline */
} nd_gaps_opts;

typedef struct nd_gap_op {
	const char *name, *scope;	/* scope NULL when absent */
	size_t name_n, scope_n;		/* names may hold NUL */
	int has_step;
	int64_t step;
	int64_t ts, dur;
} nd_gap_op;

typedef struct nd_gap_ctx {
	const char *name, *thread;	/* thread NULL when absent */
	size_t name_n, thread_n;	/* names may hold NUL */
	int64_t ts, dur, overlap;
} nd_gap_ctx;

typedef struct nd_gap {
	int64_t ts, dur;
	int tl;			/* timeline index; -1 at device level */
	int dev;		/* device index */
	nd_gap_op before, marker, payload;
	int payload_index;	/* 0: the payload is the marker */
	const char *cause;
	int has_wstep;		/* within-steps: the window's step */
	int64_t wstep;
	int nctx;
	nd_gap_ctx ctx[ND_GAP_MAX_CTX];
} nd_gap;

/* Where a gap is: the keys that apply (NULL / has_ 0 when not). */
typedef struct nd_gap_where {
	int has_pid, has_tid;
	int64_t pid, tid;
	const char *process, *thread, *device;
} nd_gap_where;

typedef struct nd_gaps nd_gaps;

nd_gaps *nd_gaps_new(const nd_gaps_opts *o);
void nd_gaps_free(nd_gaps *g);
/* A span of the current source with its role.  0, or -1 when the span is
 * out of order on its timeline (and the unordered option is off). */
int nd_gaps_add(nd_gaps *g, const nd_event *ev, const nd_span_role *r);
/* The source is complete: hand each of its gaps to fn, by timeline (or
 * device) then start; returns how many.  A gap (and its strings) is valid
 * during the call only (strings until nd_gaps_free).  Without host context
 * only one timeline's or device's gaps are held at a time. */
typedef void (*nd_gap_fn)(void *ctx, const nd_gap *gap);
size_t nd_gaps_end_source(nd_gaps *g, nd_gap_fn fn, void *ctx);
void nd_gaps_where(const nd_gaps *g, const nd_gap *gap, nd_gap_where *w);
/*
 * Per-line totals of the finished source, cheap enough to come with the
 * device level: each timeline (source, pid, tid) the gaps were found on --
 * the device timelines, or the host ones when the source fell back -- with
 * its ops, its timeline-level gaps (the -l timeline gaps of at least
 * max(min, 1) ns, not clipped to steps: no payload, no cause) and its
 * active window, first op start to last op end.  Timelines by pid, tid
 * and names (the order of the gap records too, whatever the order of the
 * spans).  devkey: the device key (nd_span_device_key), valid
 * until nd_gaps_free.
 */
typedef struct nd_gap_line {
	nd_gap_where w;
	const char *devkey;
	uint64_t ops, gaps;
	int64_t idle_ns, max_ns, first, last;
} nd_gap_line;

typedef void (*nd_gap_line_fn)(void *ctx, const nd_gap_line *line);
size_t nd_gaps_lines(const nd_gaps *g, nd_gap_line_fn fn, void *ctx);
/* The device keys of the finished source that had device ops (none when
 * it fell back to host timelines), each once, in the order of their
 * first timeline (nd_gaps_lines); returns how many. */
size_t nd_gaps_devices(const nd_gaps *g, void (*fn)(void *ctx,
    const char *key), void *ctx);
/* 1 when the finished source had no device ops and used host timelines. */
int nd_gaps_fallback(const nd_gaps *g);
/* The rank the source's spans carry (first seen), if any. */
int nd_gaps_rank(const nd_gaps *g, int64_t *rank);
void nd_gaps_reset(nd_gaps *g);

#endif
