/*
 * nd_launch: device time per launching CPU op (TraceLens's kernel
 * launchers), from Kineto traces.
 *
 * The rule (ndtrace(7), "Launching CPU ops"): a launch is a host span
 * (not a device op, nd_event_kind) with an integer args.correlation (or
 * args.correlation_id): the CUDA/HIP runtime or driver call.  A device
 * op (ND_KIND_DEVICE) with the same id in the same source is one it
 * launched.  The launching CPU op of a launch is the innermost span of
 * cat "cpu_op" (Kineto 2021: "Operator") that encloses the launch's start
 * on its thread (same pid and tid): start <= t < end, of two with the
 * same start the one that came later (the shorter, in the stream's
 * order); its top-level op is the outermost one.  A launch outside every
 * CPU op is counted under no op (NULL).  Each device op adds its duration
 * (not its exclusive time) and one op to both rows.
 *
 * Streaming, per source: each thread keeps a stack of its open CPU ops,
 * which needs the stream's order (per timeline by start, the longer first
 * on ties, as nd_scan); a host span out of that order makes that
 * thread's later launches unplaced (counted, never guessed) and
 * nd_launch_disordered true: the caller reads the input again with a
 * buffered nd_launch, which holds the CPU ops and launches of a source
 * (about 56 bytes each) and places them, sorted, when the source ends;
 * spans of one thread with the same start and duration keep their stream
 * order (ndtrace(7), "Sources, timelines and order").  A launch is kept
 * in a map until its source ends (about 32 bytes a launch): every device
 * op with its id is its own, graph launches' many and a second op alike,
 * whatever the order they come in.  Device ops that come before their
 * launch wait, summed per id.  Finding the innermost and the top-level op
 * is amortised O(1) a launch.  What is left at the end of the source
 * (device ops whose launch is not in it) is counted as unmatched.
 *
 * Ownership: row names live as long as the nd_launch.
 */
#ifndef ND_LAUNCH_H
#define ND_LAUNCH_H

#include "nd_event.h"
#include "nd_partial.h"

#include <stddef.h>
#include <stdint.h>

/* The host calls that launch device work, of every vendor: CUDA's and
 * HIP's runtime and driver launches (graphs too: cudaGraphLaunch), MTIA's
 * (mtiaLaunchKernel, runFunction and the like) and Ascend's
 * (aclrtLaunchKernel).  A POSIX extended regex on the span's name: the
 * classification's "launch" family (class host), which makes a late
 * launch the cause of the device gap before the op it launched
 * (trace-gaps(1), host_wait). */
#define ND_LAUNCH_API "^(cuda|hip|cu)[A-Za-z]*Launch|^mtia[A-Za-z]*Launch|" \
	"^runFunction|^aclrt[A-Za-z]*Launch"

typedef struct nd_launch nd_launch;

enum { ND_LAUNCH_INNER = 0, ND_LAUNCH_TOP };

typedef struct nd_launch_row {
	const char *name;	/* the CPU op; NULL: launched outside any */
	uint64_t ops;		/* device ops */
	int64_t ns;		/* their summed duration */
} nd_launch_row;

typedef struct nd_launch_sum {
	uint64_t ops;		/* device ops attributed (sum of the rows) */
	int64_t ns;
	uint64_t unmatched_ops;	/* device ops with an id but no launch */
	int64_t unmatched_ns;
	uint64_t unplaced;	/* launches on a thread out of order */
} nd_launch_sum;

/* buffered: hold the host spans of a source and sort them (any order) */
nd_launch *nd_launch_new(int buffered);
void nd_launch_free(nd_launch *l);
/* A span of the stream, in the stream's order. */
void nd_launch_add(nd_launch *l, const nd_event *ev);
/* A thread of a source was out of order (never, when buffered). */
int nd_launch_disordered(const nd_launch *l);
/* The current source ends (its ids and threads are forgotten); the
 * source of the next span is another one. */
void nd_launch_end_source(nd_launch *l);
/* Rows of ND_LAUNCH_INNER or ND_LAUNCH_TOP, by device time (then more
 * ops, then name; the NULL row after named ones on ties); valid until the
 * next nd_launch_add. */
size_t nd_launch_rows(nd_launch *l, int which, const nd_launch_row **rows);
void nd_launch_totals(const nd_launch *l, nd_launch_sum *s);
/* Partial results (nd_partial): the totals, a launch_sum record, then a
 * launch_row record a row.  nd_launch_read_partial adds such a record of
 * another nd_launch back and returns 1, or returns 0 for a record of
 * another type; a record it refuses is the stream's error (nd_partial.h).
 * The rows come back in any order: nd_launch_rows sorts them. */
extern const char *const nd_launch_partial_types[];
extern const size_t nd_launch_partial_ntypes;
void nd_launch_write_partial(nd_launch *l, nd_partial_w *pw);
int nd_launch_read_partial(nd_launch *l, nd_stream *st, const nd_event *ev);

#endif
