/*
 * nd_report_int.h: what the parts of nd_report share (private to lib/).
 *
 * The parts, in layers: a file calls only those above it in this list
 * (tests/tools/file_layers.py checks it).
 *
 *   nd_report_util.c      helpers of every part: names, labels, shares,
 *                         the fields of a partial's records
 *   nd_report_dl.c        what the findings collect while reading
 *   nd_report_stripcol.c  the timeline strip, collected
 *   nd_report_source.c    the source part: sources, end records
 *   nd_report_collect.c   nd_report_event over the parts: sources, steps,
 *                         gaps, strip, data loading, ops, pipeline,
 *                         roofline, memory
 *   nd_report_model.c     steps, tables, regions, memory, gaps
 *   nd_report_findings.c  the rules and their findings
 *   nd_report_pipe.c      the Pipeline section (nd_pipe), every format
 *   nd_report.c           new, free, thresholds, end, finish
 *   nd_report_strip.c     HTML: the timeline strip
 *   nd_report_charts.c    the HTML page's figures: SVG charts, summary
 *   nd_report_json.c      the JSON data of each part of the report
 *   nd_report_doc.c       the report as a document (nd_doc): its text,
 *                         figures and JSON data, which nd_doc_markdown,
 *                         nd_doc_html and nd_doc_new_json render; a
 *                         trace-diff output as a comparison report
 *   nd_report_run.c       the report as an engine of nd_run; its partial
 *                         results, which are its parts' (nd_rep_parts)
 *
 * The writers (nd_doc.c: Markdown, JSON; nd_doc_html.c) know only
 * nd_doc.h.
 */
#ifndef ND_REPORT_INT_H
#define ND_REPORT_INT_H

#include "nd_report.h"
#include "nd_doc.h"
#include "nd_svg.h"

#include "nd_agg.h"
#include "nd_by.h"
#include "nd_cli.h"
#include "nd_gaps.h"
#include "nd_gapsum.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_launch.h"
#include "nd_mem.h"
#include "nd_nest.h"
#include "nd_peak.h"
#include "nd_pipe.h"
#include "nd_regions.h"
#include "nd_scan.h"
#include "nd_roofline.h"
#include "nd_steps.h"
#include "nd_stepsum.h"
#include "nd_util.h"

#include <stddef.h>
#include <stdint.h>

/* the header record of a partial result (nd_report_run.c) */
#define ND_REPORT_PARTIAL_HEADER "report_partial"

/* the finding rules, index into nd_rep_rules */
enum { RW_NONE = 0, RW_STEADY, RW_PROFILE };

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
	/* the device's profile window (nd_steps_profile) when its source
	 * has no steps: breakdown and length, ns */
	nd_breakdown pw_bd;
	int64_t pw_total;
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
	size_t keylen;		/* a name may hold NUL: never strlen(key) */
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
	/* the time the finding explains, and its share of the window
	 * (nd_report_findings.c says how each rule counts it) */
	int64_t explains_ns;
	double explains_pct;
	char *ev_json;		/* the evidence as a JSON object */
};

/* Host spans of data loading of the current source (their union, for the
 * gap time they overlap), and the gap time found before pageable
 * host-to-device copies and during data loading (nd_report_findings.c). */
struct rfind {
	int64_t (*dl)[2];
	size_t ndl, capdl, dl_merged;
	uint32_t dl_source;
	int64_t pageable_gap_ns, dl_gap_ns;
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
	/* where the steps come from: the strongest ND_SS_* over sources, and
	 * what defined inferred steps (the module or span name), or NULL */
	int step_source;
	char *step_what;
	/* what dbd, dbd_total and devbd cover: RW_STEADY the steady steps,
	 * RW_PROFILE the profile window of each device (first to last device
	 * op) when no source has steps, RW_NONE nothing (no device op) */
	int window;
	uint64_t src_spans;
	/* the record being collected: a span with a start and a duration
	 * (span_ok), and its role (nd_report_collect.c) */
	int span_ok;
	nd_span_role role;

	/* exclusive time (nd_scan, device ops else every span), per leaf
	 * key: d/h, name, family, class, scope */
	nd_scan *scan;	/* kept across readings (nd_report_end) */
	nd_agg *leaf;
	nd_buf key;
	int has_device;
	int gaps_late;		/* a span out of order for nd_gaps */

	/* gaps: their totals by cause, payload and scope (nd_gapsum), and
	 * the longest of all (the earliest on ties; its device labelled when
	 * written: more sources may follow) */
	nd_gaps *gaps;
	nd_gapsum *gs;
	int has_gap;
	int64_t gap_max, gap_max_ts;
	uint32_t gap_max_dev;	/* name id */
	uint32_t gap_max_src;
	/* after finish, nd_gapsum's rows as the sections show them (in its
	 * order): count and total of all gaps, by cause, by payload (pay
	 * indexed by name id, payids in order) and by region (gregs; region
	 * UINT32_MAX: none) */
	uint64_t ngaps;
	int64_t gap_total;
	struct cnt *causes;
	size_t ncauses, capcauses;
	struct payload *pay;
	size_t cappay;
	uint32_t *payids;
	size_t npayids, cappayids;
	struct payload *gregs;
	size_t ngregs, capgregs;
	/* per-line gaps (nd_gaps_lines): one row per timeline of a source,
	 * sorted by idle time after finish */
	struct gline {
		uint32_t source, label;	/* label: name id, "device thread" */
		uint64_t ops, gaps;
		int64_t idle, max, active;
	} *lines;
	size_t nlines, caplines;
	size_t nlines_gap;	/* the first lines, those with a gap */
	uint64_t line_gaps;
	int64_t line_idle, line_max;
	/* hardware: the devices with device ops of each source (nd_gaps) and
	 * their model (nd_devnames of the source's meta records) */
	nd_devnames *dn;
	struct hwrow {
		uint32_t source, model;	/* model: name id, UINT32_MAX unknown */
		uint64_t n;
	} *hw;
	size_t nhw, caphw;
	nd_map64 *hw_ix;	/* source << 32 | model -> index in hw */
	uint64_t ndevices;
	struct hwrow *hwall;	/* after finish: by model over sources
				 * (source unused); hw then by source */
	size_t nhwall;

	/* memory */
	nd_mem *mem;
	nd_buf membuf;
	struct mpeak *peaks;
	size_t npeaks;

	/* device time per launching CPU op */
	nd_launch *launch;

	/* roofline (nd_roofline, by op name) */
	nd_by *roofby;
	nd_roofline *roof;
	const nd_roofline_row *roofrows;
	size_t nroof;
	nd_roofline_sum roofsum;

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
	/* op x region: exclusive time of each (name, scope), the rows shown
	 * (nd_rep_cut) of nopreg_rows; names in r->names, region NULL: none */
	struct orow {
		const char *op, *region;
		size_t oplen, regionlen;	/* they may hold NUL */
		uint64_t count;
		int64_t excl, total;
	} *opreg;
	size_t nopreg, nopreg_rows;
	uint32_t *reg_pos;	/* region id -> index in regs (sorted) */
	char **reg_own;		/* the paths of the regions shown */
	size_t nreg_own;
	int64_t self_total, coll_total;
	uint64_t ops_spans;
	int fallback;
	char durs[8][32];	/* fdur() results */
	char fnames[4][4 * 72 + 8];	/* fname() results (ND_NAME_WIDTH) */
	char **diff;		/* trace-diff records (delta, verdict) */
	size_t ndiff, capdiff;
	struct finding fnd[R_NRULES];
	size_t nfnd;
	const char *notrun[R_NRULES];	/* why a rule did not run, or NULL */
	struct rfind rf;
	double val[R_NRULES];
	int has_val[R_NRULES];
	struct strip *strip;	/* the timeline strip (HTML) */
	/* the pipeline schedule (nd_pipe, default rules); after finish the
	 * step the Pipeline section shows, or NULL: not a pipeline job */
	nd_pipe *pipe;
	const nd_pipe_step *pipe_st;
	size_t pipe_nsteps;	/* steps of a pipeline schedule */
	uint32_t sources;	/* the sources a partial result declares */
};
/*
 * The timeline strip of the representative step (HTML, section 6).
 *
 * Collection, in bounded memory: the first STRIP_DEVS devices that have
 * device ops, by source and then name (nd_rep_strip_slot), each keep the
 * latest STRIP_RING of their device ops in a ring (an older op is dropped, and the latest end of a
 * dropped op remembered), their step windows (nd_steps per device) and the
 * gaps of nd_gaps (device level) that end after every dropped op.  A window
 * is complete on a device when it starts at or after the end of every
 * dropped op: all its ops are in the ring.  The host activity (spans of
 * ND_ROLE_HOST) of each source that has a kept device is kept the same
 * way, in one ring a source (a span inside the one kept last is not kept:
 * it adds nothing to the union, drawn without a count of spans, which
 * would depend on the order of the stream).  The rings take at most 2 *
 * STRIP_DEVS * STRIP_RING * 24 bytes (24 MiB); the kept gaps are fewer than the kept ops
 * (each ends where a kept op starts); the windows are one a step, as
 * r->drec.
 *
 * The representative step: of the steady steps, the one whose duration is
 * closest to the steady median (the lower number on ties) among those that
 * have a window on a kept device and are complete on every kept device.
 * Without steady steps, the profile window of each kept device (its first
 * op's start to its last op's end) when it is complete.
 *
 * Drawing: one <g class="strip"> per kept device with a window of that step,
 * over its own window, all at one scale (STRIP_PX pixels for the longest
 * window); one lane per class present, then a host lane (the union of the
 * source's host activity); in a lane, the union of the spans of that class
 * clipped to the window, pieces less than one pixel apart merged (so at
 * most about STRIP_PX rects a lane); every gap overlapping the window,
 * clipped to it, of at least one pixel, hatched with its duration, payload
 * and cause in a <title>; the STRIP_LABELS largest whose labels do not
 * collide labelled with their duration; then a time axis.
 */
#define STRIP_DEVS 8
#define STRIP_RING 65536
#define STRIP_PX 1000
#define STRIP_LABELS 3
#define STRIP_X0 10
#define STRIP_LANE 10

struct sop {
	int64_t ts, dur;
	uint32_t name;		/* in strip->names */
	int cls;		/* SC_* */
};

/* The latest STRIP_RING spans of a timeline. */
struct sring {
	struct sop *v;
	size_t n, head, cap;	/* n kept; head: the oldest when full */
	int lost;
	int64_t lost_end;	/* the latest end of a dropped span */
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
	struct sring ops;
	struct sgap *gaps;
	size_t ngaps, capgaps;
	struct swin *win;
	size_t nwin, capwin;
};

struct shost {
	uint32_t source;
	struct sring spans;
};

struct strip {
	struct sdev dev[STRIP_DEVS];
	size_t ndev;
	struct shost host[STRIP_DEVS];	/* sources with a kept device */
	size_t nhost;
	struct sring cur;	/* host activity of the current source */
	nd_intern *names;	/* of the kept spans and gaps */
	size_t names_live;	/* names referred to at the last count */
	nd_buf kb;
};


/*
 * The parts of the collection (nd_report_collect.c): each takes every
 * record (record) and keeps what it answers from, and is a part of a
 * partial result: save writes its state as body records (most of them its
 * engines' own: nd_stepsum, nd_gapsum, nd_agg, nd_launch, nd_pipe,
 * nd_roofline), and load adds such a record of another reading back, its
 * type the index of its type in types[0..ntypes) and then etypes[0..
 * *netypes) (an engine's list).  The partial holds the parts in order; the
 * source part comes first, so that the records after it may name the
 * partial's sources.  NULL callbacks and lists are skipped.
 */
struct rmerge;
struct rpart {
	void (*record)(nd_report *r, const nd_event *ev,
	    const nd_source_info *si);
	void (*save)(nd_report *r, nd_partial_w *pw);
	const char *const *types;
	size_t ntypes;
	const char *const *etypes;
	const size_t *netypes;
	void (*load)(struct rmerge *m, size_t type);
};

/* A partial result being read (nd_report_run.c): the record (st, ev), and
 * where the partial puts its sources and devices: those of partial k
 * follow those of partials 0..k-1 (base, devbase).  Tables built in the
 * order things were first seen are added to in that order, and every
 * "first seen wins on ties" rule is applied to the partials in order, so a
 * merge builds the state one reading of every input would. */
struct rmerge {
	nd_report *r;
	nd_stream *st;
	const nd_event *ev;
	unsigned nheaders;
	char *collect;		/* the collection options of the first */
	uint32_t base, sources;	/* of the partial being read */
	uint32_t devbase;
	size_t ndevs;		/* devices of the partial read so far */
	/* the strip: the device or host ring the records that follow go
	 * to, NULL when it is not kept */
	struct sdev *sdev;
	struct sring *sring;
};

extern const struct rpart nd_rep_part_source, nd_rep_part_strip;

extern const nd_report_rule nd_rep_rules[];

/* nd_report_util.c */
uint32_t nd_rep_name_id(nd_report *r, const char *s);
/* The same for a name of n bytes, which may hold NUL. */
uint32_t nd_rep_name_idn(nd_report *r, const char *s, size_t n);
/* A name and its length n (it may hold NUL); NULL for UINT32_MAX. */
const char *nd_rep_name_ofn(const nd_report *r, uint32_t id, size_t *n);
const char *nd_rep_name_of(const nd_report *r, uint32_t id);
double nd_rep_pct(int64_t a, int64_t b);
size_t nd_rep_cut(const nd_report *r, size_t n);
const char *nd_rep_dev_label(const nd_report *r, uint32_t d, char *buf,
    size_t n);
const char *nd_rep_src_label(const nd_report *r, uint32_t source,
    const char *name, char *buf, size_t n);
/* "s" after a count of n, but 1: "1 gap", "2 gaps". */
const char *nd_rep_s(uint64_t n);
/* s[0..n) contains needle (ASCII, any case). */
int nd_rep_has_ci(const char *s, size_t n, const char *needle);
/* The fields of the record a merge reads (nd_partial.h's getters): a
 * source index of the partial, shifted (one of its rp_src records, which
 * come first), and a name (string or null) as an id in r->names. */
uint32_t nd_rep_m_src(const struct rmerge *m, const char *key);
uint32_t nd_rep_m_name(const struct rmerge *m, const char *key);
/* Add k, ns to the row of name id in a table of counted names (a row
 * added at the end when new); ix, when not NULL, indexes the rows. */
void nd_rep_cnt_add(struct cnt **a, size_t *n, size_t *cap, nd_map64 *ix,
    uint32_t id, uint64_t k, int64_t ns);

/* nd_report.c */
void nd_rep_init(nd_report *r, int again);
void nd_rep_fini(nd_report *r);

/* nd_report_stripcol.c */
void nd_rep_strip_add(nd_report *r, const nd_event *ev,
    const nd_span_role *role);
void nd_rep_strip_window(nd_report *r, const char *key, const nd_step *st);
void nd_rep_strip_gap(nd_report *r, const nd_gap *g, const nd_gap_where *w);
void nd_rep_strip_free(nd_report *r);
/* A slot for device k[0..n) of source src: the STRIP_DEVS first in
 * nd_rep_sdev_cmp's order are kept, whatever order they come in (one
 * before the last of a full set takes that one's place); NULL when it is
 * not among them. */
struct sdev *nd_rep_strip_slot(struct strip *s, uint32_t src, const char *k,
    size_t n);
int nd_rep_sdev_cmp(uint32_t src, const char *k, size_t n,
    const struct sdev *d);
void nd_rep_sdev_free(struct sdev *d);
void nd_rep_strip_end_source(nd_report *r);

/* nd_report_source.c */
/* A record of trace-diff (delta, verdict), which the report keeps as it
 * is (an nd_partial_ok_fn). */
int nd_rep_is_diff(const nd_event *ev);
/* The source of index i, added (with those before it) on first use; si:
 * what the driver knows of it. */
struct rsrc *nd_rep_source_at(nd_report *r, uint32_t i,
    const nd_source_info *si);

/* nd_report_collect.c */
extern const struct rpart *const nd_rep_parts[];
extern const size_t nd_rep_nparts;
void nd_rep_scan_new(nd_report *r);
void nd_rep_end_source(nd_report *r);

/* nd_report_model.c */
void nd_rep_model(nd_report *r);
void nd_rep_model_gaps(nd_report *r);
void nd_rep_model_opreg(nd_report *r);
/* The fields of a leaf key (nd_report_collect.c: kind, name, family,
 * class, scope). */
enum { F_NAME = 1, F_FAMILY, F_CLASS, F_SCOPE };
const char *nd_rep_leaf_field(const char *k, size_t n, int field,
    size_t *len);
void nd_rep_reg_path(const nd_report *r, const struct trow *t, nd_buf *p);
int nd_rep_is_comparison(const nd_report *r);

/* nd_report_findings.c */
void nd_rep_model_findings(nd_report *r);

/* nd_report_pipe.c: the Pipeline section */
void nd_rep_pipe_model(nd_report *r);
void nd_rep_pipe_doc(nd_report *r, nd_doc *d);
void nd_rep_pipe_json(nd_report *r, nd_jw *w);
void nd_rep_pipe_svg(nd_report *r, nd_buf *b);

/* nd_report_charts.c: the figures of the HTML page */
void nd_rep_svg_steps(nd_report *r, nd_buf *b);
void nd_rep_svg_breakdown(nd_report *r, nd_buf *b);
void nd_rep_svg_regions(nd_report *r, nd_buf *b);
/* The breakdown of all devices summed, linked to the section (id, title)
 * that has it per device (id NULL: none). */
void nd_rep_svg_sum(nd_report *r, nd_buf *b, const char *id,
    const char *title);
/* The first three findings, linked to their subsections (ids[i]). */
void nd_rep_html_findings(nd_report *r, nd_buf *b, const char *const *ids);

/* nd_report_json.c: the members of the report's JSON object, in parts
 * (RJ_*: the order nd_report_doc.c writes them in) */
enum { RJ_HEAD, RJ_SOURCES, RJ_QUALITY, RJ_STEPS, RJ_BREAKDOWN, RJ_OPS,
	RJ_GAPS, RJ_REGIONS, RJ_MEMORY, RJ_PIPELINE, RJ_FINDINGS };
void nd_rep_json(nd_report *r, nd_jw *w, int part);

/* nd_report_strip.c */
void nd_rep_svg_strip(nd_report *r, nd_buf *b);

/* nd_report_dl.c */
void nd_rep_find_span(nd_report *r, const nd_event *ev);
void nd_rep_find_gap(nd_report *r, const nd_gap *g);
void nd_rep_find_free(nd_report *r);

#endif
