/*
 * nd_interval: sets of time intervals and the sweeps over them that the
 * time-breakdown programs share (trace-steps, trace-gaps, trace-report).
 *
 * nd_ivset is a set of half-open intervals [lo, hi) in nanoseconds, kept as
 * sorted, disjoint stretches: the union of what was added.  Touching or
 * overlapping intervals merge ([0,5) + [5,9) is [0,9)), so the measure of
 * a set never counts a nanosecond twice.  Intervals may be added in any
 * order.  One that starts at or after the start of the last stretch is
 * merged at once (the common case: a timeline's ops in order, or several
 * timelines interleaved in time); others are appended and merged by one
 * sort when their number exceeds the number of clean stretches (so the
 * cost stays O(log n) per addition, amortised).  Memory: the number of
 * disjoint busy stretches, plus at most as many unmerged additions, 16
 * bytes each; not the number of intervals added.
 *
 * Reading (nd_ivset_measure, nd_ivset_active, nd_iv_breakdown, iteration
 * over iv[0..n)) needs a normalised set: call nd_ivset_norm() first, after
 * the last addition.  Adding again afterwards is allowed.
 *
 * The breakdown sweep splits a window into the categories of ndtrace's step
 * breakdown (trace-steps(1)) by precedence, so the parts add up exactly to
 * the window's length:
 *   compute        a compute interval is active;
 *   communication  a communication interval, and no compute (exposed);
 *   memory         a memory interval, and neither of the above;
 *   host           a host interval, and no device interval;
 *   idle           nothing.
 * overlap = compute and communication both active; a part of compute, not
 * added to the five.
 *
 * Ownership: an nd_ivset is a value embedded by the caller; init it with
 * ND_IVSET_INIT (or zero it), release with nd_ivset_free.
 */
#ifndef ND_INTERVAL_H
#define ND_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct nd_iv {
	int64_t lo, hi;
} nd_iv;

typedef struct nd_ivset {
	nd_iv *iv;
	size_t n, cap;
	size_t clean;		/* iv[0..clean) sorted, disjoint, not touching */
} nd_ivset;

#define ND_IVSET_INIT { NULL, 0, 0, 0 }

/* Add [lo, hi); empty or reversed intervals are ignored. */
void nd_ivset_add(nd_ivset *s, int64_t lo, int64_t hi);
/* Add every stretch of src (any state) to dst. */
void nd_ivset_add_set(nd_ivset *dst, const nd_ivset *src);
/* Sort and merge: afterwards iv[0..n) are sorted and disjoint. */
void nd_ivset_norm(nd_ivset *s);
void nd_ivset_clear(nd_ivset *s);
void nd_ivset_free(nd_ivset *s);

/* The following need a normalised set. */
/* Total length. */
int64_t nd_ivset_total(const nd_ivset *s);
/* Length of the part of s inside [lo, hi). */
int64_t nd_ivset_measure(const nd_ivset *s, int64_t lo, int64_t hi);
/* What is active at time t: 1 when a stretch contains t. */
int nd_ivset_active(const nd_ivset *s, int64_t t);
/* Index of the first stretch that ends after t (n when none). */
size_t nd_ivset_seek(const nd_ivset *s, int64_t t);
/* 1 when some stretch overlaps [lo, hi) by at least one ns. */
int nd_ivset_overlaps(const nd_ivset *s, int64_t lo, int64_t hi);

/* The categories of the breakdown, in order of precedence. */
enum { ND_CAT_COMPUTE = 0, ND_CAT_COMM, ND_CAT_MEMORY, ND_CAT_HOST,
	ND_NCAT };

typedef struct nd_breakdown {
	int64_t compute_ns, communication_ns, memory_ns, host_ns, idle_ns;
	int64_t overlap_ns;
} nd_breakdown;

/* Breakdown of the window [lo, hi) (lo <= hi) over the normalised sets
 * cat[ND_CAT_*] (a NULL entry is an empty set).  The five parts add up to
 * hi - lo exactly. */
void nd_iv_breakdown(const nd_ivset *const cat[ND_NCAT], int64_t lo,
    int64_t hi, nd_breakdown *out);
/* a += b, part by part. */
void nd_breakdown_add(nd_breakdown *a, const nd_breakdown *b);
/* len ns during which the categories on[ND_CAT_*] (0/1) are active go to
 * the part they make: compute first (and overlap when communication is
 * also on), then communication, memory, host; idle when none. */
void nd_breakdown_part(nd_breakdown *out, const int on[ND_NCAT], int64_t len);

#endif
