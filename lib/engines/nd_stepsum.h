/*
 * nd_stepsum: the step summary -- the steady window, statistics, classes,
 * breakdown and MFU over step records, and the rank spread and straggler
 * across sources -- and the writer of its records (step_summary,
 * step_ranks, straggler; trace-steps(1) documents them).
 *
 * Push interface: add step records (nd_stepsum_add; per-device records with
 * nd_stepsum_add_dev when a per-device breakdown is wanted), then
 * nd_stepsum_finish with the warmup and drop-last, then read the result
 * (nd_stepsum_result) and write records.
 *
 * Rules:
 *   job step      a step number; its duration is that of its longest
 *                 record (the slowest device or rank: the job waits for it).
 *   steady window the job steps by number, minus the first `warmup` and,
 *                 with drop_last, the last one.  When there are no more job
 *                 steps than warmup (+1 with drop_last), neither is applied:
 *                 the steady window is every step and `applied` is 0.
 *   breakdown     the parts summed over every record whose number is in
 *                 [first_step, last_step]; shares are part / summed dur.
 *   classes       nd_step_classify over the steady steps (nd_steps.h).
 *   ranks         one window per (step, source): the span of its records'
 *                 windows with the largest wait (nd_rank_wins_merge); for
 *                 each number two or more sources have, nd_step_straggler.
 *                 The named straggler is the source that is the straggler
 *                 in more than half of the compared steps.
 *
 * Ownership: the engine owns its records and result; the result and the
 * arrays it points to stay valid until nd_stepsum_free.
 */
#ifndef ND_STEPSUM_H
#define ND_STEPSUM_H

#include "nd_buf.h"
#include "nd_interval.h"
#include "nd_json.h"
#include "nd_partial.h"
#include "nd_steps.h"

#include <stddef.h>
#include <stdint.h>

/* One step record: a step of one source (over all its devices, or of one
 * device with trace-steps -d). */
typedef struct nd_stepsum_rec {
	int64_t num, ts, dur, wait;	/* ns; ts from the source origin */
	uint32_t source;
	int has_rank;
	int64_t rank;		/* when has_rank */
	int has_origin;		/* origin is a nonzero epoch clock */
	int64_t origin;
	nd_breakdown bd;
	int has_mfu;
	double mfu;
	int step_source;	/* ND_SS_* */
} nd_stepsum_rec;

/* The breakdown of one device over the steady steps. */
typedef struct nd_stepsum_dev {
	nd_breakdown bd;
	int64_t total;		/* summed step time */
} nd_stepsum_dev;

/* A step compared across sources: its windows are win[first .. first+n). */
typedef struct nd_stepsum_rankstep {
	size_t first, n;
	int abs;		/* every source has an absolute clock */
	nd_straggler sg;	/* indexes relative to first */
} nd_stepsum_rankstep;

/* Per source, over the compared steps. */
typedef struct nd_stepsum_src {
	int has_win;		/* the source has a step window */
	size_t win_first, win_last;	/* its first and last, when has_win */
	uint64_t straggler;	/* steps it was the straggler in */
	int64_t lag_max;	/* its largest lag as the straggler */
	int64_t busy_sum;	/* summed dur - wait over compared steps */
	uint64_t busy_n;
} nd_stepsum_src;

typedef struct nd_stepsum_res {
	int64_t warmup;		/* as given */
	int drop_last;		/* as given */
	int applied;		/* warmup/drop_last applied (0: too few) */
	size_t records;
	uint32_t sources;	/* highest source index + 1 */
	size_t nsteps;		/* job steps */
	const int64_t *num, *dur;	/* job steps by number */
	size_t first, last;	/* steady window: [first, last) of num/dur */
	nd_stat all, steady;
	int64_t first_step, last_step;	/* when steady.count > 0 */
	nd_step_classes cl;	/* over num/dur + first */
	nd_breakdown bd;	/* steady, over the records */
	int64_t bd_total;
	int has_mfu;
	double mfu;		/* mean over steady records with one */
	/* nd_stepsum_add_dev: per device and summed over devices (when no
	 * device record is steady: bd and bd_total) */
	size_t ndev;
	const nd_stepsum_dev *dev;
	nd_breakdown dev_bd;
	int64_t dev_total;
	/* ranks */
	const nd_rank_win *win;	/* one per (step, source), by (step, source) */
	size_t nwin;
	const nd_stepsum_rankstep *rs;
	size_t nrs;
	const nd_stepsum_src *src;	/* [sources] */
	int rank_abs;		/* every compared step had absolute clocks */
	int has_named;		/* a source is the straggler in > half */
	uint32_t named;
	int64_t lag_max, lag_max_step, lag_max_rank;	/* largest lag */
	int64_t spread_max;	/* largest dur_max - dur_min */
} nd_stepsum_res;

typedef struct nd_stepsum nd_stepsum;

nd_stepsum *nd_stepsum_new(void);
void nd_stepsum_free(nd_stepsum *s);
void nd_stepsum_add(nd_stepsum *s, const nd_stepsum_rec *r);
/* A step of one device (dev: the caller's index) for the per-device
 * breakdown; not a step record. */
void nd_stepsum_add_dev(nd_stepsum *s, int64_t num, int64_t dur,
    uint32_t dev, const nd_breakdown *bd);
/* Compute everything; call once, after the last record. */
void nd_stepsum_finish(nd_stepsum *s, int64_t warmup, int drop_last);
const nd_stepsum_res *nd_stepsum_result(const nd_stepsum *s);

/* --- partial results (nd_partial) ---
 *
 * The engine's input as body records of a partial result, so that a merge
 * adds back exactly what every part was given:
 *
 *   {"type":"step_rec","src":S,"num":N,"start_ns":T,"len_ns":D,
 *    "wait_ns":W,["src_rank":R,]["clock_ns":O,]"compute_ns":..,
 *    "communication_ns":..,"memory_ns":..,"host_ns":..,"idle_ns":..,
 *    "overlap_ns":..,["mfu":X,]"step_source":"marker"}
 *   {"type":"step_dev","dev":I,"num":N,"len_ns":D,"compute_ns":..,
 *    ...,"overlap_ns":..}
 *
 * one per nd_stepsum_add and nd_stepsum_add_dev, in the order given
 * (rank and origin when has_rank, has_origin; mfu when has_mfu).  The keys
 * are none of the stream's reserved ones, whose ranges the decoder checks
 * (nd_event): these carry any int64, exactly, but start_ns within +-2^62
 * (a time, to which the summary adds a duration), and the durations a
 * merge reads count towards its sum (nd_partial_sum).  mfu is written with
 * the digits that read back to the same double ("inf", "-inf" or "nan" as a
 * string when not finite). */
#define ND_STEPSUM_REC "step_rec"
#define ND_STEPSUM_DEV "step_dev"

/* Write the body records, each committed with nd_partial_commit.  Call
 * before nd_stepsum_finish (it sorts the records). */
void nd_stepsum_write_partial(const nd_stepsum *s, nd_partial_w *pw);
/* Add back a body record of a partial (a record handed on by
 * nd_partial_read), its source index plus src_base and its device index
 * plus dev_base: the sources and devices of partial k follow those of the
 * partials before it.  Returns 1 when ev was a step_rec or step_dev record,
 * 0 when it was neither (nothing added); dies (exit 2, FILE:LINE: ...) on
 * a malformed one.  *src_max and *dev_max (when not NULL) are raised to the
 * record's source and device index before the shift, for the caller's
 * check that they name one of the partial's sources and devices. */
int nd_stepsum_read_partial(nd_stepsum *s, nd_stream *st,
    const nd_event *ev, uint32_t src_base, uint32_t dev_base,
    int64_t *src_max, int64_t *dev_max);

/* The steady window of n job steps: [*first, *last); returns applied. */
int nd_stepsum_window(size_t n, int64_t warmup, int drop_last,
    size_t *first, size_t *last);

/* --- records (trace-steps(1)) --- */

/* Where a step was measured, for its record. */
typedef struct nd_stepsum_where {
	const char *path;	/* the source's, or NULL */
	const char *key;	/* device (is_dev) or process key, or NULL */
	int is_dev;
	const char *model;	/* device_name, or NULL */
	int has_rank;
	int64_t rank;
} nd_stepsum_where;

/* The "step" record of step s (with pw, the "profile_window" record of a
 * device without steps) and its newline, appended to b; *x gets what the
 * summary keeps of it.  nd_stepsum_step_read is its reader: 1 and *x for a
 * record with step, ts_ns and dur_ns, else 0. */
void nd_stepsum_step_write(nd_buf *b, const nd_step *s, int pw,
    const nd_stepsum_where *wh, nd_stepsum_rec *x);
int nd_stepsum_step_read(const nd_event *ev, nd_stepsum_rec *x);

/* The source's path for the rank records, or NULL. */
typedef const char *nd_stepsum_path_fn(void *ctx, uint32_t source);

/* The members of an nd_stat: count, then (when count > 0 or full) mean_ns,
 * median_ns, p90_ns, min_ns, max_ns, stddev_ns, and with full total_ns. */
void nd_stepsum_put_stat(nd_jw *w, const nd_stat *st, int full);
/* The members of a breakdown: dur_ns (total) and each part, ns. */
void nd_stepsum_put_bd(nd_jw *w, const nd_breakdown *bd, int64_t total);
/* The step_summary record, one line; its step_source is the strongest of
 * the records' ("none" without any). */
void nd_stepsum_write_summary(nd_buf *b, const nd_stepsum *s);
/* The step_ranks record of compared step i (< nrs), one line. */
void nd_stepsum_write_rankstep(nd_buf *b, const nd_stepsum *s, size_t i,
    nd_stepsum_path_fn *path, void *ctx);
/* The straggler record, one line. */
void nd_stepsum_write_straggler(nd_buf *b, const nd_stepsum *s,
    nd_stepsum_path_fn *path, void *ctx);

#endif
