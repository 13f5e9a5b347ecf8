/*
 * nd_diff: before/after comparison of two ndtrace streams, regression
 * rules and the verdict.  Used by trace-diff(1), which is the reference for
 * every rule stated here, and meant for trace-report (rendering a diff).
 *
 * A side (nd_diff_side) is read from its stream (once when in order) and
 * keeps only figures:
 *   - steps: detected by nd_steps (the trace-steps(1) rules), per source,
 *     and summarised by nd_stepsum (job steps, the steady window with the
 *     warmup and drop-last, its nd_stat, classes and breakdown);
 *   - exclusive time per key: from nd_scan with ND_TL_DEVICE and
 *     ND_NEST_CLIP (device ops only when the side has any, else every
 *     span; an input out of order is read again, nd_drive), summed per key
 *     of each dimension (name, family, class, scope, cat and the --by key).
 *     Per step = sum / the side's job step count (1 when no step was
 *     found);
 *   - provenance: each source's path, the sha256 of its `end` record and
 *     the run id (meta key `run_id`, if any).
 *
 * Ownership: an nd_diff_side and an nd_diff own everything they point to;
 * free them with nd_diff_side_free / nd_diff_free.
 */
#ifndef ND_DIFF_H
#define ND_DIFF_H

#include "nd_buf.h"
#include "nd_json.h"
#include "nd_steps.h"
#include "nd_stream.h"

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

/* Dimensions of the per-key tables. */
enum {
	ND_DIM_NAME = 0, ND_DIM_FAMILY, ND_DIM_CLASS, ND_DIM_SCOPE, ND_DIM_CAT,
	ND_DIM_BY,		/* the --by key when it is none of the above */
	ND_NDIM
};

typedef struct nd_diff_opts {
	const regex_t *re;	/* --step-regex, or NULL */
	int64_t warmup;		/* job steps left out of the steady state */
	int drop_last;		/* leave the last job step out too */
	const char *by;		/* key of the per-key deltas ("name") */
	double min_pct;		/* |pct| below this: unchanged (default 1) */
} nd_diff_opts;

typedef struct nd_diff_src {
	char *path;		/* meta source, or the file name */
	char *sha256;		/* from the end record; NULL when absent */
	char *run_id;		/* meta run_id; NULL when absent */
} nd_diff_src;

typedef struct nd_diff_side nd_diff_side;

/* A side read record by record (nd_diffrun feeds it from nd_run): every
 * record of the side in order, end_source after each of its sources, end
 * at the end of a reading (1: read the side again, after restart), finish
 * for the side (then owned by the caller).  Input errors end the program
 * (exit 2). */
typedef struct nd_diff_reader nd_diff_reader;
nd_diff_reader *nd_diff_reader_new(const nd_diff_opts *o);
void nd_diff_reader_record(nd_diff_reader *r, const nd_event *ev,
    const nd_source_info *si);
void nd_diff_reader_end_source(nd_diff_reader *r);
int nd_diff_reader_end(nd_diff_reader *r);
void nd_diff_reader_restart(nd_diff_reader *r);
/* The side read; NULL with err when it has no answer (a --by key no span
 * has). */
nd_diff_side *nd_diff_reader_finish(nd_diff_reader *r, nd_err *err);
void nd_diff_reader_free(nd_diff_reader *r);
void nd_diff_side_free(nd_diff_side *s);
size_t nd_diff_side_sources(const nd_diff_side *s, const nd_diff_src **out);
/* Job steps (all) and steady steps. */
uint64_t nd_diff_side_steps(const nd_diff_side *s);
const nd_stat *nd_diff_side_steady(const nd_diff_side *s);

/* --- deltas --- */

enum { ND_DK_STEP = 1, ND_DK_SHARE, ND_DK_KEY };
enum {
	ND_ST_UNCHANGED = 0, ND_ST_REGRESSED, ND_ST_IMPROVED, ND_ST_NEW,
	ND_ST_VANISHED
};
const char *nd_diff_status_name(int st);

typedef struct nd_delta {
	int kind;		/* ND_DK_* */
	char *metric;		/* the rule metric: step.median, share.idle,
				 * op:NAME, family:NAME, ... (owned) */
	int has_before, has_after;
	double before, after;	/* ns (step, key: ns per step), share */
	double delta;		/* after - before */
	int has_pct;		/* before != 0 */
	double pct;		/* 100 * delta / before */
	/* ND_DK_STEP */
	const char *cls;	/* "all", "light", "heavy" */
	const char *stat;	/* "median", "p90", "mean", "count" */
	/* ND_DK_SHARE */
	const char *part;
	/* ND_DK_KEY */
	int dim;
	char *key;		/* NULL: absent key (owned) */
	size_t key_len;
	double count_before, count_after;	/* instances per step */
	int status;		/* ND_ST_* */
} nd_delta;

typedef struct nd_diff {
	nd_delta *d;		/* step and share deltas, then per-key deltas
				 * of every dimension */
	size_t n;
	size_t nsummary;	/* d[0 .. nsummary): step and share */
	const char *by;
	int by_dim;		/* dimension of --by */
	size_t key_first[ND_NDIM], key_n[ND_NDIM];	/* per dimension,
				 * sorted by delta descending, then key */
	uint64_t steps_before, steps_after;
	int applied_before, applied_after;	/* nd_stepsum_res.applied */
	int classes;		/* both sides have light/heavy classes */
	uint64_t nstatus[5];	/* counts of ND_ST_* in the --by dimension */
} nd_diff;

void nd_diff_compute(const nd_diff_side *before, const nd_diff_side *after,
    const nd_diff_opts *o, nd_diff *out);
void nd_diff_free(nd_diff *d);
/* The delta of a metric id (exact match), or NULL. */
const nd_delta *nd_diff_find(const nd_diff *d, const char *metric);

/* --- rules --- */

enum { ND_RULE_WARN = 1, ND_RULE_FAIL = 2 };
enum { ND_RU_PCT = 1, ND_RU_ABS };

typedef struct nd_rule {
	char *id;		/* canonical text: METRIC OP VALUE (owned) */
	char *metric;		/* owned */
	int level;		/* ND_RULE_* */
	int gt;			/* 1: '>', 0: '<' */
	int unit;		/* ND_RU_* */
	double value;		/* percent, or ns / share points */
} nd_rule;

/* Parse RULE text (see trace-diff(1), RULES).  0 ok; -1 with a message in
 * err (without the rule text). */
int nd_rule_parse(const char *text, int level, nd_rule *r, char *err,
    size_t errlen);
void nd_rule_free(nd_rule *r);
/* The default rules (4): fail step.median>+5%, step.p90>+10%; warn
 * share.communication>+0.05, share.idle>+0.05.  Caller frees each. */
size_t nd_rule_defaults(nd_rule *out);

typedef struct nd_fired {
	const nd_rule *rule;
	const nd_delta *d;	/* NULL: key absent on both sides */
	double measured;	/* pct or delta, as the rule compares */
	int inf;		/* measured is +inf (before 0) */
} nd_fired;

typedef struct nd_verdict {
	int status;		/* 0 pass, ND_RULE_WARN, ND_RULE_FAIL */
	nd_fired *fired;
	size_t nfired;
	char **missing;		/* rule ids whose metric is unavailable */
	size_t nmissing;
} nd_verdict;

/* Evaluate; -1 with err filled when a rule names a key dimension that is
 * not aggregated. */
int nd_diff_verdict(const nd_diff *d, const nd_rule *rules, size_t n,
    nd_verdict *v, char *err, size_t errlen);
void nd_verdict_free(nd_verdict *v);
const char *nd_verdict_name(int status);	/* pass, warn, fail */

/* --- output --- */

/* The delta records (all of them) as NDJSON lines. */
void nd_diff_write_deltas(nd_buf *b, const nd_diff *d);
/* The verdict record; warnings: messages (may be 0). */
void nd_diff_write_verdict(nd_buf *b, const nd_diff *d, const nd_verdict *v,
    const nd_rule *rules, size_t nrules, const nd_diff_side *before,
    const nd_diff_side *after, char **warnings, size_t nwarn);
/* A table for people; top: rows of each key list (0: all). */
void nd_diff_write_table(nd_buf *b, const nd_diff *d, const nd_verdict *v,
    size_t top);
/* Provenance of a side as a value: {"sources":[{"source","sha256",
 * "run_id"}],"steps":N,"steady_steps":N,"warmup_applied":B}. */
void nd_diff_put_side(nd_jw *w, const nd_diff_side *s);

#endif
