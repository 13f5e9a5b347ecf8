/*
 * nd_nest: nesting of spans on their timeline, exclusive (self) time, and
 * the union of busy intervals.
 *
 * The rule (ndtrace(7), trace-topk(1)): on one timeline a span is the child
 * of the innermost open span it starts inside (start >= parent start and
 * start < parent end); of two spans with the same start the longer is the
 * parent; of two with the same start and duration the one that came first.
 * A zero-length span is never a parent.  The exclusive time of a span is
 * its duration minus the union of the intervals of its descendants, each
 * descendant clipped to the span's end.  A child that ends after its parent
 * (profilers that truncate times produce them) is clipped for the parent
 * and counted as an overrun (nd_nest_span.overrun).  With this rule the
 * exclusive times of all spans of a timeline add up exactly to the length
 * of the union of its spans, so shares of summed exclusive time never
 * count a nanosecond twice.
 *
 * ND_NEST_REPARENT is PyTorch's rule instead (torch.autograd.profiler
 * FunctionEvent children, what key_averages() reports): a span that ends
 * after the open span it starts in is not its child; that open span is
 * closed and the new span is tried against the next one out.  A parent's
 * self time is then its duration minus the sum of its children's
 * durations, which can be negative.  Use it to reproduce PyTorch's numbers.
 *
 * Streaming: each timeline keeps a stack of open spans; a span is final
 * (and reported through the callback) when a later span on the timeline
 * starts at or after its end, or when the timeline is flushed.  For input
 * in the contract's order (per timeline by start, longer first on ties)
 * memory is the depth of the open stack.  A span that arrives out of order
 * is still handled exactly when it starts at or after the end of every span
 * already reported on its timeline: the timeline then buffers its open and
 * later spans and sorts them when flushed.  A span that starts before the
 * end of an already reported span cannot be placed any more (its parent or
 * children were reported): nd_nest_add returns ND_NEST_LATE and drops it;
 * the caller then starts again with that timeline buffered from its first
 * span (nd_nest_set_buffered), or with nd_nest_buffer_all, which is exact
 * on any order at the cost of memory proportional to the spans.
 *
 * Timelines are dense ids the caller assigns (e.g. interned (source, pid,
 * tid)).  `user` is an opaque tag the callback gets back (a row id).
 */
#ifndef ND_NEST_H
#define ND_NEST_H

#include "nd_event.h"

#include <stddef.h>
#include <stdint.h>

/* The nesting rule at its root, for every engine that keeps the open
 * spans of a timeline (nd_nest, the CPU op around a launch in nd_launch,
 * the op running at a memory sample in nd_mem): an open span still holds
 * a later start t when t is before its end.  A span of no length holds
 * nothing. */
static inline int
nd_nest_holds(int64_t end, int64_t t)
{
	return t < end;
}

typedef enum {
	ND_NEST_CLIP = 0,	/* the ndtrace rule (default) */
	ND_NEST_REPARENT	/* PyTorch key_averages() */
} nd_nest_rule;

enum {
	ND_NEST_OK = 0,
	ND_NEST_LATE = -1	/* dropped: starts before a reported span ended */
};

/* A finished span, as given to the callback. */
typedef struct nd_nest_span {
	int64_t ts_ns, dur_ns;
	int64_t self_ns;	/* exclusive time; >= 0 under ND_NEST_CLIP */
	uint64_t user;		/* the tag given to nd_nest_add */
	uint32_t timeline;
	uint32_t depth;		/* 0 for a span with no parent */
	int overrun;		/* ended after its parent (clipped/reparented) */
} nd_nest_span;

typedef void (*nd_nest_fn)(void *ctx, const nd_nest_span *s);

typedef struct nd_nest nd_nest;

nd_nest *nd_nest_new(nd_nest_rule rule, nd_nest_fn fn, void *ctx);
/* Reports nothing more: flush first if the open spans matter. */
void nd_nest_free(nd_nest *n);

/* Buffer every timeline from its first span (exact on any order). */
void nd_nest_buffer_all(nd_nest *n);
/* Buffer this timeline from its first span. */
void nd_nest_set_buffered(nd_nest *n, uint32_t timeline);

/* Add a span (dur >= 0).  ND_NEST_OK or ND_NEST_LATE (see above). */
int nd_nest_add(nd_nest *n, uint32_t timeline, int64_t ts, int64_t dur,
    uint64_t user);
/* Report every open or buffered span of a timeline / of all timelines (at
 * the end of a source or of the input).  A timeline may receive spans again
 * afterwards, starting at or after the end of those reported. */
void nd_nest_flush(nd_nest *n, uint32_t timeline);
void nd_nest_flush_all(nd_nest *n);

/* Spans held (open or buffered) now, and the most ever held: the memory
 * figure of the streaming claim above. */
size_t nd_nest_held(const nd_nest *n);
size_t nd_nest_held_max(const nd_nest *n);
/* Timelines that switched to buffering because of out-of-order spans. */
size_t nd_nest_reordered(const nd_nest *n);

/*
 * nd_union: the total length of the union of intervals [lo, hi) added in
 * any order (busy time of a device over all its timelines).  Intervals
 * that arrive in order are merged as they come; out-of-order ones are kept
 * and merged by sorting when their number doubles, so memory is the number
 * of disjoint busy stretches seen so far.  A zero value is an empty union.
 */
typedef struct nd_union {
	int64_t (*iv)[2];
	size_t n, cap, clean;	/* iv[0..clean) sorted and disjoint */
} nd_union;

void nd_union_add(nd_union *u, int64_t lo, int64_t hi);
int64_t nd_union_total(nd_union *u);
void nd_union_free(nd_union *u);

#endif
