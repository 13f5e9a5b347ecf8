/*
 * nd_sum: the one bound on what a program adds up (ndtrace(7), "Sums").
 *
 * A duration is at most 2^53 ns, but nothing bounds how many a stream
 * holds, and every program adds them up: per op, scope, step, device and
 * run; 1,100 spans of 2^53 ns already pass 2^63.  So:
 *   - the dur_ns of the records of one input (every file of a run, read
 *     once) add up to at most ND_SUM_MAX: nd_stream counts them as it
 *     reads and dies at the record that passes it;
 *   - the times a program derives from positions rather than durations
 *     (gaps, step windows, pipeline windows: stretches between records,
 *     which 2^53 bounds one by one but not in number) pass nd_sum_add()
 *     where they are made, on a second total of ND_SUM_MAX;
 *   - a merge counts what it adds on a third (nd_partial_sum).
 * Every figure a program adds up is one of these, or a part of one (self
 * time, the union of a class in a window, a busy stretch), so every sum is
 * at most 2^60 and a sum of a few such sums at most a few times that:
 * int64 holds 8 times 2^60, and no sum needs a check of its own.  A
 * product of a figure and a count is taken in double or checked where it
 * is made.  Past the bound a program dies naming the input (exit 2): an
 * error, never a wrapped, saturated or negative figure.
 *
 * Clocks: origin_ns may be any int64 (ndtrace(7)), and a program that
 * puts sources on one clock (trace-pipeline, trace-steps -R) shifts each
 * by its distance from the earliest, nd_sum_apart(), at most ND_CLOCK_MAX.
 */
#ifndef ND_SUM_H
#define ND_SUM_H

#include <stdint.h>

/* 2^60 ns: 36 years, beyond any profile; int64 holds 8 times it. */
#define ND_SUM_MAX (INT64_C(1) << 60)

/* A new reading of the input (nd_stream_open): the derived total is 0. */
void nd_sum_begin(void);
/* The record the analysis was handed: PATH (as given, "-" for stdin; it
 * must outlive the reading) and LINE, for the message. */
void nd_sum_at(const char *path, uint64_t line);
/* The reading ended: its last input, copied, is what messages name. */
void nd_sum_end(void);

/* v, after adding |v| to the derived total; past ND_SUM_MAX dies with
 * "FILE:LINE: WHAT of V ns, and the gaps, steps and windows the run
 * finds add up past 2^60 (36 years in ns)". */
int64_t nd_sum_add(const char *what, int64_t v);

/* Times put on one clock are at most 2^61 ns (73 years) apart, so that a
 * time on it, plus a duration, and the difference of two stay in int64. */
#define ND_CLOCK_MAX (INT64_C(1) << 61)
/* (origin + ts) - (borigin + bts), exactly, for borigin + bts the earliest
 * of the times compared (sources' origins, the starts of one step on its
 * ranks); dies "WHAT A and B are more than 2^61 ns (73 years) apart" past
 * ND_CLOCK_MAX: not the times of one run. */
int64_t nd_sum_apart(const char *what, int64_t origin, int64_t ts,
    int64_t borigin, int64_t bts);

#endif
