/*
 * nd_report_int.h: what the parts of nd_report share (private to lib/).
 *
 *   nd_report.c           new, free, thresholds, helpers of every part
 *   nd_report_collect.c   nd_report_event: sources, end records, spans,
 *                         gaps, memory, roofline, the timeline strip
 *   nd_report_model.c     nd_report_finish: steps, tables, regions, memory
 *   nd_report_findings.c  the rules and their findings
 *   nd_report_md.c        Markdown (and a trace-diff output as a comparison)
 *   nd_report_json.c      JSON
 *   nd_report_html.c      HTML: the Markdown converted, plus SVG charts
 */
#ifndef ND_REPORT_INT_H
#define ND_REPORT_INT_H

#include "nd_report.h"

#include "nd_agg.h"
#include "nd_by.h"
#include "nd_gaps.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_mem.h"
#include "nd_nest.h"
#include "nd_regions.h"
#include "nd_scan.h"
#include "nd_roofline.h"
#include "nd_steps.h"
#include "nd_stepsum.h"
#include "nd_util.h"

#include <stddef.h>
#include <stdint.h>

/* the finding rules, index into nd_rep_rules */
enum {
	R_COMM, R_IDLE, R_HOST, R_MEMORY, R_VARIANCE, R_STRAGGLER, R_TOPOP,
	R_SMALLGAPS, R_NRULES
};


struct rsrc {
	char *path, *format, *host, *producer, *sha256;
	int has_meta, has_rank, has_end, trunc, has_t;
	int64_t rank, origin, tmin, tmax;
	uint64_t spans, instants, counters, flows, others, bad_spans;
	int64_t end_events, end_spans;	/* -1: not given */
	uint64_t skipped;
};

struct rdev {
	uint32_t source;
	char *key;
};

struct cnt {			/* a counted name */
	uint32_t id;		/* in r->names */
	uint64_t n;
	int64_t ns;
};

struct payload {
	uint64_t n;
	int64_t total, max, max_ts;
	/* of the longest gap (the earliest on ties), so that the order
	 * gaps are found in does not matter; ids in r->names */
	uint32_t marker, region;
};

struct mpeak {
	char *source, *device, *op, *scope;
	int64_t ts, alloc, reserved, step;
	int has_step;
};

/* A row of a rolled-up table. */
struct trow {
	const char *key;	/* regions: NULL unless shown (reg_paths) */
	uint64_t count;
	int64_t self, total, max;
	int depth;
	int64_t excl;
	/* regions: a node of the scope tree (nd_rtree ids) */
	uint32_t id, parent;	/* parent UINT32_MAX at the top */
	const char *seg;
	size_t seglen, plen;	/* plen: length of the whole path */
	size_t rank;		/* in tree order, siblings by segment */
};

struct finding {
	int rule;
	double value;
	char *statement, *evidence, *suggestion;
};

struct nd_report {
	nd_report_opts o;
	double thr[R_NRULES];

	struct rsrc *src;
	size_t nsrc, capsrc;
	int64_t cur;
	uint32_t cursrc;

	nd_intern *names;	/* strings referenced by id */
	struct cnt *skipped;
	size_t nskipped, capskipped;
	nd_map64 *skipped_ix;	/* name id -> index in skipped */
	char **warn;
	size_t nwarn, capwarn;

	/* steps */
	nd_steps *st_src, *st_dev;
	nd_stepsum *ss;		/* the step records: per source, and per
				 * device (index into devs) */
	struct rdev *devs;
	size_t ndevs, capdevs;
	nd_intern *devids;	/* (source, key) -> index in devs */
	int marker;
	uint64_t src_spans;

	/* exclusive time (nd_scan, device ops else every span), per leaf
	 * key: d/h, name, family, class, scope */
	nd_scanner *scan;	/* kept across readings (nd_report_end) */
	nd_agg *leaf;
	nd_buf key;
	int has_device;
	int gaps_late;		/* a span out of order for nd_gaps */

	/* gaps */
	nd_gaps *gaps;
	uint64_t ngaps;
	int64_t gap_total, gap_max, gap_max_ts;
	uint32_t gap_max_dev;	/* name id */
	struct cnt *causes;
	size_t ncauses, capcauses;
	struct payload *pay;	/* indexed by name id of the payload */
	size_t cappay;
	uint32_t *payids;
	size_t npayids, cappayids;

	/* memory */
	nd_mem *mem;
	nd_buf membuf;
	struct mpeak *peaks;
	size_t npeaks;

	/* roofline (nd_roofline, by op name) */
	nd_by *roofby;
	nd_roof *roof;
	const nd_roof_row *roofrows;
	size_t nroof;
	nd_roof_sum roofsum;

	/* model, after finish */
	int finished;
	nd_stat all, steady;
	int64_t first_step, last_step;
	size_t nsteps;
	int64_t warmup;		/* the warmup used */
	int warmup_applied;	/* nd_stepsum_res.applied */
	nd_step_classes cl;	/* owned by ss */
	int64_t *cl_num;	/* step numbers of the steady steps */
	int64_t *cl_dur;	/* and their durations */
	nd_breakdown bd;	/* per step window (trace-steps -s) */
	int64_t bd_total;
	nd_breakdown dbd;	/* summed over devices: what findings use */
	int64_t dbd_total;
	struct {
		uint32_t dev;
		nd_breakdown bd;
		int64_t total;
	} *devbd;
	size_t ndevbd;
	/* ranks */
	size_t rank_steps;	/* steps compared across >= 2 ranks */
	int rank_abs;
	struct {
		int64_t rank;
		uint64_t straggler;	/* times it was the straggler */
		int64_t lag_max, busy_sum;
		uint64_t busy_n;
	} *ranks;
	size_t nranks;
	int64_t lag_max, lag_max_step, lag_max_rank, spread_max;
	nd_intern *k_ops, *k_fams, *k_colls;	/* names of the rows */
	nd_rtree *rtree;	/* the regions */
	struct trow *ops, *fams, *colls, *regs;
	size_t nops, nfams, ncolls, nregs;
	uint32_t *reg_pos;	/* region id -> index in regs (sorted) */
	char **reg_own;		/* the paths of the regions shown */
	size_t nreg_own;
	int64_t self_total, coll_total;
	uint64_t ops_spans;
	int fallback;
	char durs[8][32];	/* fdur() results */
	char **diff;		/* trace-diff records (delta, verdict) */
	size_t ndiff, capdiff;
	struct finding fnd[R_NRULES];
	size_t nfnd;
	double val[R_NRULES];
	int has_val[R_NRULES];
	struct strip *strip;	/* the timeline strip (HTML) */
};
/*
 * The timeline strip of the representative step (HTML, section 6).
 *
 * Collection, in bounded memory: the first STRIP_DEVS devices that have
 * device ops, in stream order, each keep the latest STRIP_RING of their
 * device ops in a ring (an older op is dropped, and the latest end of a
 * dropped op remembered), their step windows (nd_steps per device) and the
 * gaps of nd_gaps (device level) that end after every dropped op.  A window
 * is complete on a device when it starts at or after the end of every
 * dropped op: all its ops are in the ring.  The rings take at most
 * STRIP_DEVS * STRIP_RING * 24 bytes (12 MiB); the kept gaps are fewer than
 * the kept ops (each ends where a kept op starts); the windows are one a
 * step, as r->drec.
 *
 * The representative step: of the steady steps, the one whose duration is
 * closest to the steady median (the lower number on ties) among those that
 * have a window on a kept device and are complete on every kept device.
 *
 * Drawing: one <g class="strip"> per kept device with a window of that step,
 * over its own window, all at one scale (STRIP_PX pixels for the longest
 * window); one lane per class present; in a lane, the union of the ops of
 * that class clipped to the window, pieces less than one pixel apart merged
 * (so at most about STRIP_PX rects a lane); every gap overlapping the
 * window, clipped to it, of at least one pixel, hatched red with its
 * duration, payload and cause in a <title>; the STRIP_LABELS largest
 * labelled with their duration; then a time axis.
 */
#define STRIP_DEVS 8
#define STRIP_RING 65536
#define STRIP_PX 1000
#define STRIP_LABELS 3
#define STRIP_X0 10
#define STRIP_LANE 10

enum { SC_COMPUTE, SC_COMM, SC_MEMORY, SC_OTHER, SC_N };

struct sop {
	int64_t ts, dur;
	uint32_t name;		/* in strip->names */
	int cls;		/* SC_* */
};

struct sgap {
	int64_t ts, dur;
	uint32_t payload, cause;	/* in strip->names */
};

struct swin {
	int64_t num, ts, dur;
};

struct sdev {
	uint32_t source;
	char *key;
	size_t klen;
	struct sop *ring;
	size_t n, head, cap;	/* n kept; head: the oldest when full */
	int lost;
	int64_t lost_end;	/* the latest end of a dropped op */
	struct sgap *gaps;
	size_t ngaps, capgaps;
	struct swin *win;
	size_t nwin, capwin;
};

struct strip {
	struct sdev dev[STRIP_DEVS];
	size_t ndev;
	nd_intern *names;
	nd_buf kb;
};


extern const nd_report_rule nd_rep_rules[];

/* nd_report.c */
uint32_t nd_rep_name_id(nd_report *r, const char *s);
const char *nd_rep_name_of(const nd_report *r, uint32_t id);
char *nd_rep_jstrdup(const nd_jval *v);
double nd_rep_pct(int64_t a, int64_t b);
void nd_rep_put_dur(nd_buf *b, int64_t ns);
size_t nd_rep_cut(const nd_report *r, size_t n);
const char *nd_rep_dev_label(const nd_report *r, uint32_t d, char *buf,
    size_t n);
void nd_rep_init(nd_report *r, int again);
void nd_rep_fini(nd_report *r);

/* nd_report_collect.c */
void nd_rep_scan_new(nd_report *r);
void nd_rep_finish_source(nd_report *r);
void nd_rep_strip_free(nd_report *r);

/* nd_report_model.c */
void nd_rep_reg_path(const nd_report *r, const struct trow *t, nd_buf *p);
int nd_rep_pay_cmp(const void *a, const void *b, void *ctx);
int nd_rep_cause_cmp(const void *a, const void *b, void *ctx);
int nd_rep_is_comparison(const nd_report *r);

/* nd_report_findings.c */
void nd_rep_model_findings(nd_report *r);

#endif
