/*
 * nd_report: see nd_report.h.  Collection (one pass), then a model of the
 * report (sorted tables, findings), then the writers.
 */
#include "nd_report.h"

#include "nd_agg.h"
#include "nd_by.h"
#include "nd_gaps.h"
#include "nd_hash.h"
#include "nd_interval.h"
#include "nd_json.h"
#include "nd_mem.h"
#include "nd_nest.h"
#include "nd_roofline.h"
#include "nd_sort.h"
#include "nd_steps.h"
#include "nd_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- rules of the findings --- */

enum {
	R_COMM, R_IDLE, R_HOST, R_MEMORY, R_VARIANCE, R_STRAGGLER, R_TOPOP,
	R_SMALLGAPS, R_NRULES
};

static const nd_report_rule rules[] = {
	{ "comm_exposed", 15, "exposed communication, % of steady step time" },
	{ "device_idle", 10, "device idle, % of steady step time" },
	{ "host_bound", 10, "host-only time (no device op runs), "
	    "% of steady step time" },
	{ "memory_ops", 10, "memory ops (copies) not hidden by compute, "
	    "% of steady step time" },
	{ "step_variance", 10, "steady step time stddev, % of the mean" },
	{ "straggler", 5, "largest straggler lag, % of the steady median "
	    "step" },
	{ "dominant_op", 30, "one op's exclusive time, % of all exclusive "
	    "time" },
	{ "launch_gaps", 50, "gaps of cause host_wait or kernel_wait, % of "
	    "all gap time (fires only when device_idle fires)" },
	{ NULL, 0, NULL }
};

const nd_report_rule *
nd_report_rules(void)
{
	return rules;
}

/* --- collected data --- */

struct rsrc {
	char *path, *format, *host, *producer, *sha256;
	int has_meta, has_rank, has_end, trunc, has_t;
	int64_t rank, origin, tmin, tmax;
	uint64_t spans, instants, counters, flows, others, bad_spans;
	int64_t end_events, end_spans;	/* -1: not given */
	uint64_t skipped;
};

struct srec {			/* a step of a source (all its devices) */
	int64_t num, ts, dur, wait;
	uint32_t source;
	nd_breakdown bd;
};

struct drec {			/* a step of one device */
	int64_t num, dur;
	uint32_t dev;		/* index into devs */
	nd_breakdown bd;
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
	int64_t total, max;
	uint32_t marker, region;	/* ids in r->names, UINT32_MAX none */
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
	/* regions: a node of the scope tree, (parent, segment) -> id, so
	 * that a scope of N segments costs N nodes, not N paths */
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
	struct srec *srec;
	size_t nsrec, capsrec;
	struct drec *drec;
	size_t ndrec, capdrec;
	struct rdev *devs;
	size_t ndevs, capdevs;
	nd_intern *devids;	/* (source, key) -> index in devs */
	int marker;
	uint64_t src_spans;

	/* exclusive time */
	nd_nest *nest;
	nd_intern *tls;
	nd_agg *leaf;
	nd_buf key;
	int has_device;
	uint64_t late;

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
	nd_step_classes cl;
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
	nd_intern *k_ops, *k_fams, *k_colls, *k_regs;
	struct trow *ops, *fams, *colls, *regs;
	size_t nops, nfams, ncolls, nregs;
	uint32_t *reg_pos;	/* region id -> index in regs (sorted) */
	size_t capregs;
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

static void gap_cb(void *ctx, const nd_gap *g);
static void strip_add(nd_report *r, const nd_event *ev,
    const nd_span_role *role);
static void strip_window(nd_report *r, const char *key, const nd_step *st);
static void strip_gap(nd_report *r, const nd_gap *g, const nd_gap_where *w);
static void strip_free(nd_report *r);

static void
nest_cb(void *ctx, const nd_nest_span *s)
{
	nd_report *r = ctx;
	nd_agg_row *row;

	nd_agg_add(r->leaf, (uint32_t)s->user, s->dur_ns);
	row = nd_agg_row_of(r->leaf, (uint32_t)s->user);
	row->self_ns += s->self_ns;
	if (s->overrun)
		row->overrun++;
}

static void
mem_commit(void *ctx)
{
	(void)ctx;
}

nd_report *
nd_report_new(const nd_report_opts *o)
{
	nd_report *r = nd_xcalloc(1, sizeof *r);
	nd_steps_opts so;
	nd_gaps_opts go;
	nd_mem_opts mo;

	r->o = *o;
	for (int i = 0; i < R_NRULES; i++)
		r->thr[i] = rules[i].def;
	r->cur = -1;
	r->names = nd_intern_new();
	r->devids = nd_intern_new();
	r->skipped_ix = nd_map64_new();
	memset(&so, 0, sizeof so);
	so.re = o->re;
	r->st_src = nd_steps_new(&so);
	so.per_device = 1;
	r->st_dev = nd_steps_new(&so);
	r->nest = nd_nest_new(ND_NEST_CLIP, nest_cb, r);
	if (o->unordered)
		nd_nest_buffer_all(r->nest);
	r->tls = nd_intern_new();
	r->leaf = nd_agg_new();
	memset(&go, 0, sizeof go);
	go.level = ND_GAP_DEVICE;
	go.kernel_wait_ns = 30000;	/* trace-gaps(1) default */
	go.unordered = o->unordered;
	r->gaps = nd_gaps_new(&go);
	memset(&mo, 0, sizeof mo);
	/* timelines in start order (else --unordered): keep only the spans a
	 * memory sample falls in, not every span */
	mo.ordered = !o->unordered;
	r->mem = nd_mem_new(&mo, &r->membuf, mem_commit, NULL);
	{
		nd_roof_opts ro;
		const char *bad;

		memset(&ro, 0, sizeof ro);
		ro.timelines = ND_ROOF_AUTO;
		ro.device = o->device;
		ro.peak_tflops = o->peak_tflops;
		ro.peak_gbps = o->peak_gbps;
		r->roofby = nd_by_parse("name", NULL, 0, &bad);
		r->roof = nd_roof_new(&ro, r->roofby);
	}
	return r;
}

int
nd_report_set_threshold(nd_report *r, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char *end;
	double v;

	if (eq == NULL || eq[1] == '\0')
		return -1;
	v = strtod(eq + 1, &end);
	if (*end != '\0' || !(v >= 0) || v > 1e9)
		return -1;
	for (int i = 0; i < R_NRULES; i++)
		if (strlen(rules[i].id) == (size_t)(eq - spec) &&
		    strncmp(rules[i].id, spec, (size_t)(eq - spec)) == 0) {
			r->thr[i] = v;
			return 0;
		}
	return -1;
}

static uint32_t
name_id(nd_report *r, const char *s)
{
	if (s == NULL)
		return UINT32_MAX;
	return nd_intern_id(r->names, s, strlen(s));
}

static const char *
name_of(const nd_report *r, uint32_t id)
{
	if (id == UINT32_MAX)
		return NULL;
	return nd_intern_str(r->names, id, NULL);
}

/* ix (may be NULL: a table of a few rows) finds the row of an id without
 * a scan. */
static void
cnt_add(struct cnt **a, size_t *n, size_t *cap, nd_map64 *ix, uint32_t id,
    uint64_t k, int64_t ns)
{
	if (ix != NULL) {
		int isnew;
		uint64_t *v = nd_map64_put(ix, id, &isnew);

		if (isnew)
			*v = *n;
		else {
			(*a)[*v].n += k;
			(*a)[*v].ns += ns;
			return;
		}
	} else
		for (size_t i = 0; i < *n; i++)
			if ((*a)[i].id == id) {
				(*a)[i].n += k;
				(*a)[i].ns += ns;
				return;
			}
	nd_grow(a, cap, *n + 1, sizeof **a);
	(*a)[*n].id = id;
	(*a)[*n].n = k;
	(*a)[*n].ns = ns;
	(*n)++;
}

static char *
jstrdup(const nd_jval *v)
{
	nd_buf b = { 0 };
	char *s;

	if (v == NULL || v->type != ND_JSTR)
		return NULL;
	nd_json_unescape(v, &b);
	s = nd_xstrndup(b.p ? b.p : "", b.len);
	nd_buf_free(&b);
	return s;
}

static char *
strdup_n(nd_str s)
{
	return s.p == NULL ? NULL : nd_xstrndup(s.p, s.n);
}

/* --- per source --- */

static void
gap_cb(void *ctx, const nd_gap *g)
{
	nd_report *r = ctx;
	nd_gap_where w;
	uint32_t pid;
	struct payload *p;

	nd_gaps_where(r->gaps, g, &w);
	strip_gap(r, g, &w);
	r->ngaps++;
	r->gap_total += g->dur;
	if (g->dur > r->gap_max) {
		char lab[512];

		r->gap_max = g->dur;
		r->gap_max_ts = g->ts;
		const struct rsrc *s = &r->src[r->cursrc];
		const char *d = w.device ? w.device : w.process ?
		    w.process : "?";

		if (r->nsrc <= 1)
			snprintf(lab, sizeof lab, "%s", d);
		else if (s->has_rank)
			snprintf(lab, sizeof lab, "rank %lld %s",
			    (long long)s->rank, d);
		else
			snprintf(lab, sizeof lab, "source %u %s", r->cursrc, d);
		r->gap_max_dev = name_id(r, lab);
	}
	cnt_add(&r->causes, &r->ncauses, &r->capcauses, NULL,
	    name_id(r, g->cause ? g->cause : "other"), 1, g->dur);
	pid = name_id(r, g->payload.name ? g->payload.name : "?");
	if (pid >= r->cappay) {
		size_t old = r->cappay;

		nd_grow(&r->pay, &r->cappay, (size_t)pid + 1, sizeof *r->pay);
		memset(r->pay + old, 0, (r->cappay - old) * sizeof *r->pay);
	}
	p = &r->pay[pid];
	if (p->n == 0) {
		nd_grow(&r->payids, &r->cappayids, r->npayids + 1,
		    sizeof *r->payids);
		r->payids[r->npayids++] = pid;
		p->marker = name_id(r, g->marker.name);
		p->region = name_id(r, g->payload.scope);
	}
	p->n++;
	p->total += g->dur;
	if (g->dur > p->max)
		p->max = g->dur;
}

static void
finish_source(nd_report *r)
{
	const nd_step *st;
	size_t n;

	if (r->cur < 0)
		return;
	n = nd_steps_finish(r->st_src, &st);
	for (size_t i = 0; i < n; i++) {
		struct srec *x;

		nd_grow(&r->srec, &r->capsrec, r->nsrec + 1, sizeof *r->srec);
		x = &r->srec[r->nsrec++];
		x->num = st[i].num;
		x->ts = st[i].ts;
		x->dur = st[i].dur;
		x->wait = st[i].wait_ns;
		x->source = r->cursrc;
		x->bd = st[i].bd;
		if (r->marker == ND_SM_NONE || st[i].marker > r->marker)
			r->marker = st[i].marker;
	}
	n = nd_steps_finish(r->st_dev, &st);
	for (size_t i = 0; i < n; i++) {
		struct drec *x;
		const char *key = st[i].dev >= 0 ?
		    nd_steps_device(r->st_dev, st[i].dev, NULL, NULL) : "host";
		uint32_t d;

		/* by a table, not a scan: many devices with many steps */
		nd_buf_reset(&r->key);
		nd_buf_add(&r->key, &r->cursrc, sizeof r->cursrc);
		nd_buf_adds(&r->key, key);
		d = nd_intern_id(r->devids, r->key.p, r->key.len);
		if (d == r->ndevs) {
			nd_grow(&r->devs, &r->capdevs, r->ndevs + 1,
			    sizeof *r->devs);
			r->devs[d].source = r->cursrc;
			r->devs[d].key = nd_xstrdup(key);
			r->ndevs++;
		}
		if (st[i].dev >= 0)
			strip_window(r, key, &st[i]);
		nd_grow(&r->drec, &r->capdrec, r->ndrec + 1, sizeof *r->drec);
		x = &r->drec[r->ndrec++];
		x->num = st[i].num;
		x->dur = st[i].dur;
		x->dev = d;
		x->bd = st[i].bd;
	}
	nd_steps_reset(r->st_src);
	nd_steps_reset(r->st_dev);
	if (r->cursrc < r->nsrc && r->src[r->cursrc].spans > 0)
		nd_gaps_finish(r->gaps, gap_cb, r);
	nd_gaps_reset(r->gaps);
	nd_nest_flush_all(r->nest);
}

static struct rsrc *
source_at(nd_report *r, uint32_t i, const nd_source_info *si)
{
	while (r->nsrc <= i) {
		struct rsrc *s;

		nd_grow(&r->src, &r->capsrc, r->nsrc + 1, sizeof *r->src);
		s = &r->src[r->nsrc++];
		memset(s, 0, sizeof *s);
		s->end_events = s->end_spans = -1;
		if (si != NULL && r->nsrc - 1 == i) {
			s->path = si->path ? nd_xstrdup(si->path) : NULL;
			s->format = si->format ? nd_xstrdup(si->format) : NULL;
			s->host = si->host ? nd_xstrdup(si->host) : NULL;
			s->has_meta = si->has_meta;
			s->has_rank = si->has_rank;
			s->rank = si->rank;
			s->origin = si->origin_ns;
		}
	}
	return &r->src[i];
}

static void
read_end(nd_report *r, struct rsrc *s, const nd_event *ev)
{
	const nd_jval *v;
	nd_jiter it;
	nd_jval k, val;
	nd_jerr e;
	int64_t x;

	s->has_end = 1;
	if ((v = nd_event_get(ev, "events")) != NULL && nd_json_int(v, &x) == 0)
		s->end_events = x;
	if ((v = nd_event_get(ev, "spans")) != NULL && nd_json_int(v, &x) == 0)
		s->end_spans = x;
	if ((v = nd_event_get(ev, "sha256")) != NULL && s->sha256 == NULL)
		s->sha256 = jstrdup(v);
	if ((v = nd_event_get(ev, "suspected_truncation")) != NULL &&
	    v->type == ND_JTRUE)
		s->trunc = 1;
	if ((v = nd_event_get(ev, "skipped")) != NULL && v->type == ND_JOBJ) {
		nd_jiter_init(&it, v, ev->line);
		while (nd_jiter_next(&it, &k, &val, &e) == 1) {
			char *key = jstrdup(&k);

			if (nd_json_int(&val, &x) == 0 && x > 0)
				s->skipped += (uint64_t)x;
			if (nd_json_int(&val, &x) == 0 && x > 0)
				cnt_add(&r->skipped, &r->nskipped,
				    &r->capskipped, r->skipped_ix,
				    name_id(r, key),
				    (uint64_t)x, 0);
			free(key);
		}
	}
	if ((v = nd_event_get(ev, "warnings")) != NULL && v->type == ND_JARR) {
		nd_jaiter_init(&it, v, ev->line);
		while (nd_jaiter_next(&it, &val, &e) == 1) {
			char *w = jstrdup(&val);
			nd_buf b = { 0 };

			if (w == NULL)
				continue;
			nd_buf_addf(&b, "%s: %s", s->path ? s->path : "input",
			    w);
			free(w);
			nd_grow(&r->warn, &r->capwarn, r->nwarn + 1,
			    sizeof *r->warn);
			r->warn[r->nwarn++] = nd_xstrndup(b.p, b.len);
			nd_buf_free(&b);
		}
	}
}

static uint32_t
timeline_of(nd_report *r, const nd_event *ev, int kind)
{
	int64_t k[4];

	/* device ops nest among themselves (trace-topk's device timelines) */
	k[0] = ev->source;
	k[1] = (ev->has & ND_HAS_PID) ? ev->pid : INT64_MIN;
	k[2] = (ev->has & ND_HAS_TID) ? ev->tid : INT64_MIN;
	k[3] = kind == ND_KIND_DEVICE;
	return nd_intern_id(r->tls, (const char *)k, sizeof k);
}

static void
add_span(nd_report *r, struct rsrc *s, const nd_event *ev)
{
	nd_span_role role;
	int kind;
	uint32_t id;

	if (!(ev->has & ND_HAS_TS) || !(ev->has & ND_HAS_DUR) ||
	    ev->dur_ns < 0) {
		s->bad_spans++;
		return;
	}
	s->spans++;
	r->src_spans++;
	if (!s->has_t || ev->ts_ns < s->tmin)
		s->tmin = ev->ts_ns;
	if (!s->has_t || ev->ts_ns + ev->dur_ns > s->tmax)
		s->tmax = ev->ts_ns + ev->dur_ns;
	s->has_t = 1;
	nd_span_role_of(ev, r->o.re, &role);
	nd_steps_add(r->st_src, ev, &role);
	nd_steps_add(r->st_dev, ev, &role);
	if (nd_gaps_add(r->gaps, ev, &role) != 0)
		nd_die(2, "%s: spans out of start order on a timeline; use "
		    "--unordered", s->path ? s->path : "input");
	if (role.role == ND_ROLE_DEVICE && r->o.html)
		strip_add(r, ev, &role);
	kind = nd_span_kind(ev);
	if (kind == ND_KIND_DEVICE)
		r->has_device = 1;
	nd_buf_reset(&r->key);
	nd_aggkey_raw(&r->key, kind == ND_KIND_DEVICE ? "d" : "h", 1);
#define KEYSTR(f) do { \
	if (ev->f.p != NULL) \
		nd_aggkey_str(&r->key, ev->f.p, ev->f.n); \
	else \
		nd_aggkey_none(&r->key); \
} while (0)
	KEYSTR(name);
	KEYSTR(family);
	KEYSTR(cls);
	KEYSTR(scope);
#undef KEYSTR
	id = nd_agg_id(r->leaf, r->key.p, r->key.len);
	if (nd_nest_add(r->nest, timeline_of(r, ev, kind), ev->ts_ns, ev->dur_ns,
	    id) == ND_NEST_LATE)
		nd_die(2, "%s: spans out of start order on a timeline; use "
		    "--unordered", s->path ? s->path : "input");
}

void
nd_report_event(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	struct rsrc *s;

	if ((int64_t)ev->source != r->cur) {
		if (r->cur >= 0)
			finish_source(r);
		r->cur = ev->source;
		r->cursrc = ev->source;
	}
	s = source_at(r, ev->source, si);
	switch (ev->type) {
	case ND_EV_SPAN:
		add_span(r, s, ev);
		nd_roof_record(r->roof, ev, si);
		/* every span: nd_mem attributes the memory peak to the op
		 * running at it */
		nd_mem_record(r->mem, ev, si);
		return;
	case ND_EV_META: {
		const nd_jval *v = nd_event_get(ev, "producer");

		free(s->producer);
		s->producer = jstrdup(v);
		nd_steps_meta(r->st_src, ev);
		nd_steps_meta(r->st_dev, ev);
		nd_mem_record(r->mem, ev, si);
		nd_roof_record(r->roof, ev, si);
		return;
	}
	case ND_EV_END:
		read_end(r, s, ev);
		nd_mem_record(r->mem, ev, si);
		return;
	case ND_EV_INSTANT:
		s->instants++;
		nd_mem_record(r->mem, ev, si);
		return;
	case ND_EV_COUNTER:
		s->counters++;
		nd_mem_record(r->mem, ev, si);
		return;
	case ND_EV_FLOW:
		s->flows++;
		return;
	default:
		if (nd_str_eq(ev->type_name, "delta") ||
		    nd_str_eq(ev->type_name, "verdict")) {
			nd_grow(&r->diff, &r->capdiff, r->ndiff + 1,
			    sizeof *r->diff);
			r->diff[r->ndiff++] = nd_xstrndup(ev->line, ev->len);
		}
		s->others++;
		return;
	}
}

/* --- the model --- */

static int
srec_num_cmp(const void *a, const void *b, void *ctx)
{
	const struct srec *x = a, *y = b;

	(void)ctx;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int64_t
src_rank(const nd_report *r, uint32_t source)
{
	if (source < r->nsrc && r->src[source].has_rank)
		return r->src[source].rank;
	return source;
}

/* One step seen by several ranks: who straggles, by how much. */
static void
rank_step(void *ctx, const nd_rank_win *w, size_t n, int abs,
    const nd_straggler *sg)
{
	nd_report *r = ctx;
	uint32_t who = w[sg->straggler].source;

	if (!abs)
		r->rank_abs = 0;
	for (size_t k = 0; k < n; k++) {
		r->ranks[w[k].source].busy_sum += w[k].dur - w[k].wait;
		r->ranks[w[k].source].busy_n++;
	}
	r->ranks[who].straggler++;
	if (sg->lag_ns > r->ranks[who].lag_max)
		r->ranks[who].lag_max = sg->lag_ns;
	if (r->rank_steps == 0 || sg->lag_ns > r->lag_max) {
		r->lag_max = sg->lag_ns;
		r->lag_max_step = w[0].num;
		r->lag_max_rank = src_rank(r, who);
	}
	if (sg->dur_max - sg->dur_min > r->spread_max)
		r->spread_max = sg->dur_max - sg->dur_min;
	r->rank_steps++;
}

/* The step statistics (trace-steps -s) and the straggler (-r). */
static void
model_steps(nd_report *r)
{
	int64_t *num, *dur;
	size_t nj = 0, first, last;

	nd_sort(r->srec, r->nsrec, sizeof *r->srec, srec_num_cmp, NULL);
	num = nd_xmalloc((r->nsrec ? r->nsrec : 1) * sizeof *num);
	dur = nd_xmalloc((r->nsrec ? r->nsrec : 1) * sizeof *dur);
	for (size_t i = 0; i < r->nsrec; i++) {
		if (nj > 0 && num[nj - 1] == r->srec[i].num) {
			if (r->srec[i].dur > dur[nj - 1])
				dur[nj - 1] = r->srec[i].dur;
			continue;
		}
		num[nj] = r->srec[i].num;
		dur[nj] = r->srec[i].dur;
		nj++;
	}
	r->nsteps = nj;
	nd_stat_of(dur, nj, &r->all);
	/* too few steps for the warmup: the whole run is the steady state */
	r->warmup = (size_t)r->o.warmup < nj ? r->o.warmup : 0;
	first = (size_t)r->warmup < nj ? (size_t)r->warmup : nj;
	last = nj;
	if (r->o.drop_last && last > first)
		last--;
	nd_stat_of(dur + first, last - first, &r->steady);
	nd_step_classify(num + first, dur + first, last - first, &r->cl);
	r->cl_num = nd_xmalloc((last - first + 1) * sizeof *r->cl_num);
	memcpy(r->cl_num, num + first, (last - first) * sizeof *num);
	r->cl_dur = nd_xmalloc((last - first + 1) * sizeof *r->cl_dur);
	memcpy(r->cl_dur, dur + first, (last - first) * sizeof *dur);
	if (last > first) {
		r->first_step = num[first];
		r->last_step = num[last - 1];
	}
	for (size_t i = 0; i < r->nsrec; i++) {
		const struct srec *x = &r->srec[i];

		if (last == first || x->num < r->first_step ||
		    x->num > r->last_step)
			continue;
		nd_breakdown_add(&r->bd, &x->bd);
		r->bd_total += x->dur;
	}
	/* per device, steady steps */
	r->devbd = nd_xcalloc(r->ndevs ? r->ndevs : 1, sizeof *r->devbd);
	r->ndevbd = r->ndevs;
	for (size_t i = 0; i < r->ndevs; i++)
		r->devbd[i].dev = (uint32_t)i;
	for (size_t i = 0; i < r->ndrec; i++) {
		const struct drec *x = &r->drec[i];

		if (last == first || x->num < r->first_step ||
		    x->num > r->last_step)
			continue;
		nd_breakdown_add(&r->devbd[x->dev].bd, &x->bd);
		r->devbd[x->dev].total += x->dur;
		nd_breakdown_add(&r->dbd, &x->bd);
		r->dbd_total += x->dur;
	}
	if (r->dbd_total == 0) {
		r->dbd = r->bd;
		r->dbd_total = r->bd_total;
	}

	/* ranks: one window per (step, source), as trace-steps -r */
	{
		nd_rank_win *per = nd_xmalloc((r->nsrec ? r->nsrec : 1) *
		    sizeof *per);
		size_t nper;

		for (size_t i = 0; i < r->nsrec; i++) {
			const struct srec *x = &r->srec[i];
			const struct rsrc *sx = &r->src[x->source];

			per[i].num = x->num;
			per[i].ts = x->ts;
			per[i].dur = x->dur;
			per[i].wait = x->wait;
			per[i].rank = src_rank(r, x->source);
			per[i].has_rank = sx->has_rank;
			per[i].source = x->source;
			per[i].origin = sx->origin;
			per[i].has_origin = sx->has_meta && sx->origin != 0;
		}
		nper = nd_rank_wins_merge(per, r->nsrec);
		r->ranks = nd_xcalloc(r->nsrc ? r->nsrc : 1, sizeof *r->ranks);
		r->nranks = r->nsrc;
		for (size_t i = 0; i < r->nsrc; i++)
			r->ranks[i].rank = src_rank(r, (uint32_t)i);
		r->rank_abs = 1;
		nd_rank_steps(per, nper, rank_step, r);
		free(per);
	}
	free(num);
	free(dur);
}

/* trace-topk's order: self, total, count (all descending), then the
 * bytes of the group key as nd_aggkey_str encodes it. */
static int
trow_cmp(const void *a, const void *b, void *ctx)
{
	const struct trow *x = a, *y = b;
	nd_buf *k = ctx;
	int c;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	nd_buf_reset(&k[0]);
	nd_buf_reset(&k[1]);
	nd_aggkey_str(&k[0], x->key, strlen(x->key));
	nd_aggkey_str(&k[1], y->key, strlen(y->key));
	c = memcmp(k[0].p, k[1].p, k[0].len < k[1].len ? k[0].len :
	    k[1].len);
	if (c != 0)
		return c;
	return (k[0].len > k[1].len) - (k[0].len < k[1].len);
}

/* Roll the leaves up into a table keyed by one of their fields. */
enum { F_NAME = 1, F_FAMILY, F_CLASS, F_SCOPE };

static const char *
leaf_field(const char *k, size_t n, int field, size_t *len)
{
	const char *p = k, *end = k + n, *s;
	int tag, i = 0;

	while (nd_aggkey_next(&p, end, &tag, &s, len)) {
		if (i == field)
			return tag == ND_AGGKEY_NONE ? NULL : s;
		i++;
	}
	return NULL;
}

static struct trow *
rollup(nd_report *r, nd_intern *keys, struct trow **rows, size_t *nrows,
    const char *key, size_t klen)
{
	uint32_t id = nd_intern_id(keys, key, klen);

	if (id >= *nrows) {
		size_t cap = *nrows, have = 0;

		/* the array holds a power of two (at least 16) of rows: grow
		 * by doubling, not by one row per new key (a copy each) */
		if (cap > 0)
			for (have = 16; have < cap; have <<= 1)
				;
		if ((size_t)id + 1 > have) {
			size_t nc = have > 0 ? have : 16;

			while (nc < (size_t)id + 1)
				nc <<= 1;
			*rows = nd_xrealloc(*rows, nc * sizeof **rows);
		}
		memset(*rows + cap, 0, ((size_t)id + 1 - cap) * sizeof **rows);
		*nrows = (size_t)id + 1;
		(*rows)[id].key = nd_intern_str(keys, id, NULL);
	}
	(void)r;
	return &(*rows)[id];
}

static void
row_add(struct trow *t, const nd_agg_row *row)
{
	t->count += row->count;
	t->self += row->self_ns;
	t->total += row->total_ns;
	if (row->count > 0 && row->hist.max > t->max)
		t->max = row->hist.max;
}

static size_t cut(const nd_report *r, size_t n);

/* The path of region t (after reg_order), built from the end. */
static void
reg_path(const nd_report *r, const struct trow *t, nd_buf *p)
{
	size_t pos = t->plen;

	nd_buf_reset(p);
	nd_buf_reserve(p, t->plen + 1);
	p->len = t->plen;
	p->p[p->len] = '\0';
	for (;;) {
		pos -= t->seglen;
		if (t->seglen > 0)
			memcpy(p->p + pos, t->seg, t->seglen);
		if (t->parent == UINT32_MAX)
			break;
		p->p[--pos] = '/';
		t = &r->regs[r->reg_pos[t->parent]];
	}
}

/* The region below `parent` (UINT32_MAX: a top one) named seg. */
static struct trow *
reg_node(nd_report *r, uint32_t parent, const char *seg, size_t n)
{
	nd_buf *k = &r->key;
	uint32_t id;
	struct trow *t;

	nd_buf_reset(k);
	nd_buf_add(k, &parent, sizeof parent);
	nd_buf_add(k, seg, n);
	id = nd_intern_id(r->k_regs, k->p, k->len);
	if (id < r->nregs)
		return &r->regs[id];
	nd_grow(&r->regs, &r->capregs, (size_t)id + 1, sizeof *r->regs);
	t = &r->regs[id];
	memset(t, 0, sizeof *t);
	r->nregs = (size_t)id + 1;
	t->id = id;
	t->parent = parent;
	t->seg = nd_intern_str(r->k_regs, id, NULL) + sizeof parent;
	t->seglen = n;
	if (parent == UINT32_MAX) {
		t->depth = 1;
		t->plen = n;
	} else {
		t->depth = r->regs[parent].depth + 1;
		t->plen = r->regs[parent].plen + 1 + n;
	}
	return t;
}

static int
seg_cmp(const void *a, const void *b, void *ctx)
{
	const struct trow *x = (const struct trow *)ctx + *(const uint32_t *)a;
	const struct trow *y = (const struct trow *)ctx + *(const uint32_t *)b;
	int c = memcmp(x->seg, y->seg, x->seglen < y->seglen ? x->seglen :
	    y->seglen);

	if (c != 0)
		return c;
	return (x->seglen > y->seglen) - (x->seglen < y->seglen);
}

/* The regions' order: inclusive time, count (both descending), then the
 * shorter path, then tree order (parents first, siblings by segment).
 * Comparing ranks instead of paths keeps a deep scope from costing a
 * path comparison per pair. */
static int
reg_cmp(const void *a, const void *b, void *ctx)
{
	const struct trow *x = a, *y = b;

	(void)ctx;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Rank the regions in tree order, sort them, and give the ones shown
 * their path. */
static void
reg_order(nd_report *r)
{
	size_t n = r->nregs, *at, m;
	uint32_t *kids, *st;
	size_t nst = 0, rank = 0;
	nd_buf p = ND_BUF_INIT;

	if (n == 0)
		return;
	/* children of each node (n: the top), by counting */
	at = nd_xcalloc(n + 2, sizeof *at);
	kids = nd_xmalloc(n * sizeof *kids);
	for (size_t i = 0; i < n; i++)
		at[(r->regs[i].parent == UINT32_MAX ? n :
		    r->regs[i].parent) + 1]++;
	for (size_t i = 0; i <= n; i++)
		at[i + 1] += at[i];
	for (size_t i = 0; i < n; i++)
		kids[at[r->regs[i].parent == UINT32_MAX ? n :
		    r->regs[i].parent]++] = (uint32_t)i;
	/* at[i] is now the end of node i's children */
	for (size_t i = 0; i <= n; i++) {
		size_t lo = i > 0 ? at[i - 1] : 0;

		nd_sort(kids + lo, at[i] - lo, sizeof *kids, seg_cmp, r->regs);
	}
	st = nd_xmalloc(n * sizeof *st);
	for (size_t i = at[n]; i-- > (n > 0 ? at[n - 1] : 0);)
		st[nst++] = kids[i];
	while (nst > 0) {
		uint32_t id = st[--nst];
		size_t lo = id > 0 ? at[id - 1] : 0;

		r->regs[id].rank = rank++;
		for (size_t i = at[id]; i-- > lo;)
			st[nst++] = kids[i];
	}
	free(st);
	free(kids);
	free(at);
	nd_sort(r->regs, n, sizeof *r->regs, reg_cmp, NULL);
	r->reg_pos = nd_xmalloc(n * sizeof *r->reg_pos);
	for (size_t i = 0; i < n; i++)
		r->reg_pos[r->regs[i].id] = (uint32_t)i;
	m = cut(r, n);
	r->reg_own = nd_xcalloc(m ? m : 1, sizeof *r->reg_own);
	for (size_t i = 0; i < m; i++) {
		reg_path(r, &r->regs[i], &p);
		r->reg_own[i] = nd_xstrndup(p.p ? p.p : "", p.len);
		r->regs[i].key = r->reg_own[i];
	}
	r->nreg_own = m;
	nd_buf_free(&p);
}

static void
model_tables(nd_report *r)
{
	uint32_t n = nd_agg_count(r->leaf);

	r->fallback = !r->has_device;
	r->k_ops = nd_intern_new();
	r->k_fams = nd_intern_new();
	r->k_colls = nd_intern_new();
	r->k_regs = nd_intern_new();
	for (uint32_t i = 0; i < n; i++) {
		size_t kn, len;
		const char *k = nd_agg_key(r->leaf, i, &kn);
		const nd_agg_row *row = nd_agg_row_of(r->leaf, i);
		const char *s;
		struct trow *t;

		if (row->count == 0)
			continue;
		if (!r->fallback && k[5] != 'd')
			continue;
		r->self_total += row->self_ns;
		r->ops_spans += row->count;
		s = leaf_field(k, kn, F_NAME, &len);
		t = rollup(r, r->k_ops, &r->ops, &r->nops, s ? s : "(none)",
		    s ? len : 6);
		row_add(t, row);
		s = leaf_field(k, kn, F_FAMILY, &len);
		t = rollup(r, r->k_fams, &r->fams, &r->nfams, s ? s : "(none)",
		    s ? len : 6);
		row_add(t, row);
		s = leaf_field(k, kn, F_CLASS, &len);
		if (s != NULL && len == 13 &&
		    memcmp(s, "communication", 13) == 0) {
			s = leaf_field(k, kn, F_FAMILY, &len);
			t = rollup(r, r->k_colls, &r->colls, &r->ncolls,
			    s ? s : "(none)", s ? len : 6);
			row_add(t, row);
			r->coll_total += row->self_ns;
		}
		s = leaf_field(k, kn, F_SCOPE, &len);
		if (s != NULL && len > 0) {
			uint32_t cur = UINT32_MAX;
			size_t a = 0;

			for (size_t j = 0; j <= len; j++) {
				if (j < len && s[j] != '/')
					continue;
				t = reg_node(r, cur, s + a, j - a);
				cur = t->id;
				a = j + 1;
				t->count += row->count;
				t->self += row->self_ns;	/* inclusive */
				if (j == len)
					t->excl += row->self_ns;
			}
		}
	}
	{
		nd_buf k[2] = { { 0 }, { 0 } };

		nd_sort(r->ops, r->nops, sizeof *r->ops, trow_cmp, k);
		nd_sort(r->fams, r->nfams, sizeof *r->fams, trow_cmp, k);
		nd_sort(r->colls, r->ncolls, sizeof *r->colls, trow_cmp, k);
		nd_buf_free(&k[0]);
		nd_buf_free(&k[1]);
	}
	reg_order(r);
}

static void
model_memory(nd_report *r)
{
	nd_event ev;
	nd_buf scratch = { 0 };
	nd_everr err;
	size_t i = 0;

	nd_mem_stream_done(r->mem);
	nd_mem_finish(r->mem);
	nd_event_init(&ev);
	while (i < r->membuf.len) {
		char *nl = memchr(r->membuf.p + i, '\n', r->membuf.len - i);
		size_t len = nl ? (size_t)(nl - (r->membuf.p + i)) :
		    r->membuf.len - i;
		const nd_jval *v;
		struct mpeak *p;
		int64_t x;

		if (nd_event_decode(&ev, r->membuf.p + i, len, &scratch,
		    &err) == 0 && nd_str_eq(ev.type_name, "mem_peak")) {
			r->peaks = nd_xrealloc(r->peaks, (r->npeaks + 1) *
			    sizeof *r->peaks);
			p = &r->peaks[r->npeaks++];
			memset(p, 0, sizeof *p);
			p->source = jstrdup(nd_event_get(&ev, "source"));
			p->device = strdup_n(ev.device);
			if (p->device == NULL)
				p->device = jstrdup(nd_event_get(&ev,
				    "allocator"));
			p->op = jstrdup(nd_event_get(&ev, "op"));
			p->scope = strdup_n(ev.scope);
			p->ts = ev.ts_ns;
			if ((v = nd_event_get(&ev, "allocated_bytes")) &&
			    nd_json_int(v, &x) == 0)
				p->alloc = x;
			if ((v = nd_event_get(&ev, "reserved_bytes")) &&
			    nd_json_int(v, &x) == 0)
				p->reserved = x;
			if (ev.has & ND_HAS_STEP) {
				p->has_step = 1;
				p->step = ev.step;
			}
		}
		i += len + 1;
	}
	nd_event_free(&ev);
	nd_buf_free(&scratch);
}

static double
pct(int64_t a, int64_t b)
{
	return b > 0 ? 100.0 * (double)a / (double)b : 0;
}

static char *
xfmt(const char *fmt, ...) ND_PRINTF(1, 2);

static char *
xfmt(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = nd_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static void put_dur(nd_buf *b, int64_t ns);

/* A duration as text, in slot i of r->durs (valid until reused). */
static const char *
fdur(nd_report *r, int i, int64_t ns)
{
	nd_buf b = { 0 };

	put_dur(&b, ns);
	snprintf(r->durs[i], sizeof r->durs[i], "%.*s", (int)b.len, b.p);
	nd_buf_free(&b);
	return r->durs[i];
}

static void
fire(nd_report *r, int rule, char *statement, char *evidence,
    char *suggestion)
{
	struct finding *f = &r->fnd[r->nfnd++];

	f->rule = rule;
	f->value = r->val[rule];
	f->statement = statement;
	f->evidence = evidence;
	f->suggestion = suggestion;
}

static void
model_findings(nd_report *r)
{
	double v;

	if (r->dbd_total > 0) {
		r->val[R_COMM] = pct(r->dbd.communication_ns, r->dbd_total);
		r->val[R_IDLE] = pct(r->dbd.idle_ns, r->dbd_total);
		r->val[R_HOST] = pct(r->dbd.host_ns, r->dbd_total);
		r->val[R_MEMORY] = pct(r->dbd.memory_ns, r->dbd_total);
		r->has_val[R_COMM] = r->has_val[R_IDLE] = 1;
		r->has_val[R_HOST] = r->has_val[R_MEMORY] = 1;
	}
	if (r->steady.count >= 2 && r->steady.mean > 0) {
		r->val[R_VARIANCE] = pct(r->steady.stddev, r->steady.mean);
		r->has_val[R_VARIANCE] = 1;
	}
	if (r->rank_steps > 0 && r->steady.median > 0) {
		r->val[R_STRAGGLER] = pct(r->lag_max, r->steady.median);
		r->has_val[R_STRAGGLER] = 1;
	}
	if (r->nops > 0 && r->self_total > 0) {
		r->val[R_TOPOP] = pct(r->ops[0].self, r->self_total);
		r->has_val[R_TOPOP] = 1;
	}
	if (r->gap_total > 0) {
		int64_t launch = 0;

		for (size_t i = 0; i < r->ncauses; i++) {
			const char *c = name_of(r, r->causes[i].id);

			if (strcmp(c, "host_wait") == 0 ||
			    strcmp(c, "kernel_wait") == 0)
				launch += r->causes[i].ns;
		}
		r->val[R_SMALLGAPS] = pct(launch, r->gap_total);
		r->has_val[R_SMALLGAPS] = 1;
	}

	v = r->val[R_COMM];
	if (r->has_val[R_COMM] && v >= r->thr[R_COMM])
		fire(r, R_COMM, xfmt("communication is highly exposed: %.1f %% "
		    "of step time, threshold %g %%", v, r->thr[R_COMM]),
		    xfmt("exposed communication %.1f %%, overlapped with "
		    "compute %.1f %% of step time; top collective: %s",
		    v, pct(r->dbd.overlap_ns, r->dbd_total),
		    r->ncolls ? r->colls[0].key : "none"),
		    xfmt("overlap collectives with compute (async "
		    "collectives, latency-hiding scheduler, gradient bucketing"
		    "), reduce what is communicated (sharding, bf16 "
		    "gradients), or check the interconnect"));
	v = r->val[R_IDLE];
	if (r->has_val[R_IDLE] && v >= r->thr[R_IDLE])
		fire(r, R_IDLE, xfmt("the device is often idle: %.1f %% of "
		    "step time, threshold %g %%", v, r->thr[R_IDLE]),
		    xfmt("%llu gaps, %.1f %% of them (by time) with cause "
		    "host_wait or kernel_wait; largest gap payload: %s",
		    (unsigned long long)r->ngaps, r->val[R_SMALLGAPS],
		    r->npayids ? "see section 6" : "none"),
		    xfmt("see section 6 for the ops that follow the gaps; "
		    "feed the device ahead (prefetch inputs, avoid host "
		    "synchronisation, larger or fused kernels, CUDA graphs)"));
	v = r->val[R_SMALLGAPS];
	if (r->has_val[R_SMALLGAPS] && r->has_val[R_IDLE] &&
	    r->val[R_IDLE] >= r->thr[R_IDLE] && v >= r->thr[R_SMALLGAPS])
		fire(r, R_SMALLGAPS, xfmt("the device waits for launches: "
		    "%.1f %% of gap time is host_wait or kernel_wait, "
		    "threshold %g %%", v, r->thr[R_SMALLGAPS]),
		    xfmt("%llu gaps, total gap time in section 6",
		    (unsigned long long)r->ngaps),
		    xfmt("launch overhead dominates: fuse small ops "
		    "(torch.compile, XLA fusion), use CUDA graphs, raise the "
		    "batch size per launch"));
	v = r->val[R_HOST];
	if (r->has_val[R_HOST] && v >= r->thr[R_HOST])
		fire(r, R_HOST, xfmt("the step is host-bound: the host works "
		    "while no device op runs for %.1f %% of step time, "
		    "threshold %g %%", v, r->thr[R_HOST]),
		    xfmt("host-only time %.1f %% of step time",
		    v),
		    xfmt("move input processing off the training loop "
		    "(more data-loader workers, prefetch), avoid per-step "
		    "Python work and .item()/host synchronisation"));
	v = r->val[R_MEMORY];
	if (r->has_val[R_MEMORY] && v >= r->thr[R_MEMORY])
		fire(r, R_MEMORY, xfmt("memory ops are exposed: %.1f %% of "
		    "step time, threshold %g %%", v, r->thr[R_MEMORY]),
		    xfmt("copies and memsets not overlapped by compute or "
		    "communication: %.1f %% of step time", v),
		    xfmt("pin host memory and copy asynchronously, keep "
		    "tensors on the device, avoid host round trips"));
	v = r->val[R_VARIANCE];
	if (r->has_val[R_VARIANCE] && v >= r->thr[R_VARIANCE]) {
		const nd_step_class *h = r->cl.nclass == 2 ? &r->cl.c[1] : NULL;

		fire(r, R_VARIANCE, xfmt("step time varies: stddev %.1f %% "
		    "of the mean, threshold %g %%", v, r->thr[R_VARIANCE]),
		    h != NULL && h->has_period ?
		    xfmt("two classes: %llu heavy steps every %lld steps "
		    "(phase %lld), heavy median %s vs light %s",
		    (unsigned long long)h->st.count, (long long)h->period,
		    (long long)h->phase, fdur(r, 0, h->st.median),
		    fdur(r, 1, r->cl.c[0].st.median)) :
		    h != NULL ? xfmt("two classes: %llu heavy steps, heavy "
		    "median %s vs light %s", (unsigned long long)h->st.count,
		    fdur(r, 0, h->st.median),
		    fdur(r, 1, r->cl.c[0].st.median)) :
		    xfmt("steady steps: mean %s, stddev %s, min %s, max %s",
		    fdur(r, 0, r->steady.mean), fdur(r, 1, r->steady.stddev),
		    fdur(r, 2, r->steady.min), fdur(r, 3, r->steady.max)),
		    xfmt(h != NULL && h->has_period ? "periodic heavy steps "
		    "are usually checkpointing, evaluation or logging: make "
		    "them asynchronous or less frequent" : "look at the "
		    "slowest steps (trace-steps) for data-loading stalls, "
		    "recompilation or garbage collection"));
	}
	v = r->val[R_STRAGGLER];
	if (r->has_val[R_STRAGGLER] && v >= r->thr[R_STRAGGLER])
		fire(r, R_STRAGGLER, xfmt("rank %lld is a straggler: it is "
		    "ready %s after the median rank, %.1f %% of the "
		    "median step, threshold %g %%", (long long)r->lag_max_rank,
		    fdur(r, 0, r->lag_max), v, r->thr[R_STRAGGLER]),
		    xfmt("step %lld; %zu steps compared across ranks (%s "
		    "clock)", (long long)r->lag_max_step, r->rank_steps,
		    r->rank_abs ? "absolute" : "relative"),
		    xfmt("look at that rank's input pipeline, host and "
		    "device (thermal throttling, noisy neighbours), and at "
		    "load balance across ranks"));
	v = r->val[R_TOPOP];
	if (r->has_val[R_TOPOP] && v >= r->thr[R_TOPOP])
		fire(r, R_TOPOP, xfmt("one op dominates: %s takes %.1f %% of "
		    "exclusive time, threshold %g %%", r->ops[0].key, v,
		    r->thr[R_TOPOP]),
		    xfmt("%llu calls, %s exclusive in total",
		    (unsigned long long)r->ops[0].count,
		    fdur(r, 0, r->ops[0].self)),
		    xfmt("optimise that op first: check its shapes, "
		    "precision and fusion (trace-topk --by name,scope)"));
}

void
nd_report_finish(nd_report *r)
{
	if (r->finished)
		return;
	finish_source(r);
	r->finished = 1;
	model_steps(r);
	model_tables(r);
	model_memory(r);
	r->nroof = nd_roof_finish(r->roof, &r->roofrows, &r->roofsum);
	model_findings(r);
}

void
nd_report_free(nd_report *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nsrc; i++) {
		free(r->src[i].path);
		free(r->src[i].format);
		free(r->src[i].host);
		free(r->src[i].producer);
		free(r->src[i].sha256);
	}
	free(r->src);
	for (size_t i = 0; i < r->nwarn; i++)
		free(r->warn[i]);
	free(r->warn);
	free(r->skipped);
	for (size_t i = 0; i < r->ndevs; i++)
		free(r->devs[i].key);
	free(r->devs);
	nd_intern_free(r->devids);
	nd_map64_free(r->skipped_ix);
	free(r->srec);
	free(r->drec);
	nd_steps_free(r->st_src);
	nd_steps_free(r->st_dev);
	nd_nest_free(r->nest);
	nd_intern_free(r->tls);
	nd_agg_free(r->leaf);
	nd_buf_free(&r->key);
	nd_gaps_free(r->gaps);
	free(r->causes);
	free(r->pay);
	free(r->payids);
	nd_mem_free(r->mem);
	nd_buf_free(&r->membuf);
	for (size_t i = 0; i < r->npeaks; i++) {
		free(r->peaks[i].source);
		free(r->peaks[i].device);
		free(r->peaks[i].op);
		free(r->peaks[i].scope);
	}
	free(r->peaks);
	nd_roof_free(r->roof);
	nd_by_free(r->roofby);
	if (r->finished)
		nd_step_classes_free(&r->cl);
	free(r->cl_num);
	free(r->cl_dur);
	free(r->devbd);
	free(r->ranks);
	free(r->ops);
	free(r->fams);
	free(r->colls);
	free(r->regs);
	free(r->reg_pos);
	for (size_t i = 0; i < r->nreg_own; i++)
		free(r->reg_own[i]);
	free(r->reg_own);
	for (size_t i = 0; i < r->nfnd; i++) {
		free(r->fnd[i].statement);
		free(r->fnd[i].evidence);
		free(r->fnd[i].suggestion);
	}
	if (r->k_ops) {
		nd_intern_free(r->k_ops);
		nd_intern_free(r->k_fams);
		nd_intern_free(r->k_colls);
		nd_intern_free(r->k_regs);
	}
	for (size_t i = 0; i < r->ndiff; i++)
		free(r->diff[i]);
	free(r->diff);
	strip_free(r);
	nd_intern_free(r->names);
	free(r);
}


/* --- Markdown --- */

static void
put_dur(nd_buf *b, int64_t ns)
{
	int64_t a = ns < 0 ? -ns : ns;

	if (a < 1000)
		nd_buf_addf(b, "%lld ns", (long long)ns);
	else if (a < 1000000)
		nd_buf_addf(b, "%.1f us", (double)ns / 1e3);
	else if (a < 1000000000)
		nd_buf_addf(b, "%.3f ms", (double)ns / 1e6);
	else
		nd_buf_addf(b, "%.3f s", (double)ns / 1e9);
}

static void
put_pct(nd_buf *b, int64_t a, int64_t tot)
{
	nd_buf_addf(b, "%.1f %%", pct(a, tot));
}

/* Text in a table cell or a line: | and newlines escaped, < and > as
 * entities so that HTML conversion and Markdown viewers agree. */
static void
put_txt(nd_buf *b, const char *s)
{
	if (s == NULL) {
		nd_buf_adds(b, "-");
		return;
	}
	for (; *s; s++) {
		switch (*s) {
		case '|':
			nd_buf_adds(b, "\\|");
			break;
		case '\n':
		case '\r':
		case '\t':
			nd_buf_addc(b, ' ');
			break;
		case '`':
		case '*':
		case '_':
		case '\\':
		case '[':
		case ']':
			nd_buf_addc(b, '\\');
			nd_buf_addc(b, *s);
			break;
		case '<':
			nd_buf_adds(b, "&lt;");
			break;
		case '>':
			nd_buf_adds(b, "&gt;");
			break;
		case '&':
			nd_buf_adds(b, "&amp;");
			break;
		default:
			nd_buf_addc(b, *s);
		}
	}
}

/* A name in a table: at most ND_REPORT_NAME_MAX characters shown. */
#define ND_REPORT_NAME_MAX 72

static void
put_name(nd_buf *b, const char *s)
{
	char tmp[ND_REPORT_NAME_MAX + 8];
	size_t n;

	if (s == NULL || (n = strlen(s)) <= ND_REPORT_NAME_MAX) {
		put_txt(b, s);
		return;
	}
	n = ND_REPORT_NAME_MAX - 3;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;		/* not inside a UTF-8 sequence */
	memcpy(tmp, s, n);
	memcpy(tmp + n, "...", 4);
	put_txt(b, tmp);
}

static size_t
cut(const nd_report *r, size_t n)
{
	return r->o.top > 0 && (size_t)r->o.top < n ? (size_t)r->o.top : n;
}

static void
more(nd_buf *b, const nd_report *r, size_t n, const char *what)
{
	if (cut(r, n) < n)
		nd_buf_addf(b, "\n%zu more %s not shown (--top %d).\n",
		    n - cut(r, n), what, r->o.top);
}

static const char *
dev_label(const nd_report *r, uint32_t d, char *buf, size_t n)
{
	const struct rdev *x = &r->devs[d];

	if (r->nsrc <= 1)
		return x->key;
	if (r->src[x->source].has_rank)
		snprintf(buf, n, "rank %lld %s",
		    (long long)r->src[x->source].rank, x->key);
	else
		snprintf(buf, n, "source %u %s", x->source, x->key);
	return buf;
}

static void
md_sources(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "## 1 Source and provenance\n\n");
	if (r->nsrc == 0) {
		nd_buf_adds(b, "The input is empty.\n\n");
		return;
	}
	nd_buf_adds(b, "| # | source | format | host | rank | producer | "
	    "span | sha256 |\n|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_buf_addf(b, "| %zu | ", i);
		put_txt(b, s->path);
		nd_buf_adds(b, " | ");
		put_txt(b, s->format);
		nd_buf_adds(b, " | ");
		put_txt(b, s->host);
		if (s->has_rank)
			nd_buf_addf(b, " | %lld | ", (long long)s->rank);
		else
			nd_buf_adds(b, " | - | ");
		put_txt(b, s->producer);
		nd_buf_adds(b, " | ");
		if (s->has_t)
			put_dur(b, s->tmax - s->tmin);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " | ");
		if (s->sha256)
			nd_buf_addf(b, "%.16s", s->sha256);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n");
	if (r->o.stamp != NULL) {
		put_txt(b, r->o.stamp);
		nd_buf_adds(b, "\n\n");
	}
}

static void
md_quality(nd_report *r, nd_buf *b)
{
	int trunc = 0;
	uint64_t skipped = 0;

	nd_buf_adds(b, "## 2 Trace quality\n\n");
	nd_buf_adds(b, "| # | spans | instants | counters | flows | other | "
	    "input events | skipped | truncated |\n"
	    "|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_buf_addf(b, "| %zu | %llu | %llu | %llu | %llu | %llu | ",
		    i, (unsigned long long)s->spans,
		    (unsigned long long)s->instants,
		    (unsigned long long)s->counters,
		    (unsigned long long)s->flows,
		    (unsigned long long)s->others);
		if (s->end_events >= 0)
			nd_buf_addf(b, "%lld", (long long)s->end_events);
		else
			nd_buf_adds(b, "-");
		if (s->has_end)
			nd_buf_addf(b, " | %llu | %s |\n",
			    (unsigned long long)s->skipped,
			    s->trunc ? "**yes**" : "no");
		else
			nd_buf_adds(b, " | - | no end record |\n");
		trunc |= s->trunc;
	}
	nd_buf_adds(b, "\n");
	for (size_t i = 0; i < r->nskipped; i++)
		skipped += r->skipped[i].n;
	if (r->nskipped == 0)
		nd_buf_adds(b, "Skipped events: none.\n\n");
	else {
		nd_buf_addf(b, "Skipped events: %llu.\n\n| reason | events |\n"
		    "|---|---|\n", (unsigned long long)skipped);
		for (size_t i = 0; i < r->nskipped; i++) {
			const char *why = name_of(r, r->skipped[i].id);

			nd_buf_adds(b, "| ");
			put_txt(b, why);
			nd_buf_addf(b, " | %llu |\n",
			    (unsigned long long)r->skipped[i].n);
		}
		nd_buf_adds(b, "\n");
		for (size_t i = 0; i < r->nskipped; i++) {
			const char *why = name_of(r, r->skipped[i].id);

			if (strncmp(why, "unmatched_", 10) == 0) {
				nd_buf_adds(b, "B/E mismatches: begin and end "
				    "events without a partner were skipped "
				    "(reasons `unmatched_*`).\n\n");
				break;
			}
		}
	}
	for (size_t i = 0; i < r->nsrc; i++)
		if (r->src[i].bad_spans > 0)
			nd_buf_addf(b, "Source %zu: %llu spans without ts_ns "
			    "or dur_ns were left out.\n\n", i,
			    (unsigned long long)r->src[i].bad_spans);
	if (trunc)
		nd_buf_adds(b, "**Suspected truncation**: a source stops at "
		    "a known export cap (1,000,000 or 5,000,000 events), so "
		    "the end of the run is missing. Read the XPlane "
		    "(`xplane2ndjson run/`) instead of the trace viewer's "
		    "JSON.\n\n");
	else
		nd_buf_adds(b, "Truncation: none suspected.\n\n");
	if (r->nwarn == 0)
		nd_buf_adds(b, "Warnings: none.\n\n");
	else {
		size_t n = cut(r, r->nwarn);

		nd_buf_addf(b, "Warnings: %zu.\n\n", r->nwarn);
		for (size_t i = 0; i < n; i++) {
			nd_buf_adds(b, "- ");
			put_txt(b, r->warn[i]);
			nd_buf_adds(b, "\n");
		}
		more(b, r, r->nwarn, "warnings");
		nd_buf_adds(b, "\n");
	}
}

static void
md_steps(nd_report *r, nd_buf *b)
{
	static const char *const names[] = { "mean", "median", "p90", "min",
	    "max", "stddev", "total" };
	const int64_t *va = &r->all.mean, *vs = &r->steady.mean;

	nd_buf_adds(b, "## 3 Steps\n\n");
	if (r->nsteps == 0) {
		nd_buf_adds(b, "No steps found (no step markers and no step "
		    "keys on device ops; see --step-regex).\n\n");
		return;
	}
	nd_buf_addf(b, "%zu steps, marked by %s; steady state: %llu steps "
	    "(%lld to %lld; warmup %lld%s).\n\n", r->nsteps,
	    nd_sm_name(r->marker), (unsigned long long)r->steady.count,
	    (long long)r->first_step, (long long)r->last_step,
	    (long long)r->warmup, r->o.drop_last ? ", last dropped" : "");
	if (r->warmup != r->o.warmup)
		nd_buf_addf(b, "Only %zu steps: the warmup of %lld is not left "
		    "out.\n\n", r->nsteps, (long long)r->o.warmup);
	nd_buf_adds(b, "| statistic | all steps | steady |\n|---|---|---|\n");
	for (int i = 0; i < 7; i++) {
		nd_buf_addf(b, "| %s | ", names[i]);
		put_dur(b, va[i]);
		nd_buf_adds(b, " | ");
		if (r->steady.count)
			put_dur(b, vs[i]);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n");
	if (r->steady.count > 0) {
		nd_buf_adds(b, "| class | steps | median | mean | share | "
		    "representative | period |\n"
		    "|---|---|---|---|---|---|---|\n");
		for (int c = 0; c < r->cl.nclass; c++) {
			const nd_step_class *k = &r->cl.c[c];

			nd_buf_addf(b, "| %s | %llu | ", k->name,
			    (unsigned long long)k->st.count);
			put_dur(b, k->st.median);
			nd_buf_adds(b, " | ");
			put_dur(b, k->st.mean);
			nd_buf_adds(b, " | ");
			put_pct(b, k->st.total, r->steady.total);
			nd_buf_addf(b, " | %lld | ", (long long)k->representative);
			if (k->has_period)
				nd_buf_addf(b, "every %lld (phase %lld)",
				    (long long)k->period, (long long)k->phase);
			else
				nd_buf_adds(b, "-");
			nd_buf_adds(b, " |\n");
		}
		nd_buf_addf(b, "\nClass split: r2 %.4f, gap %.4f, ratio %.4f "
		    "(two classes need r2 >= %g, gap >= %g, ratio >= %g).\n\n",
		    r->cl.r2, r->cl.gap, r->cl.ratio, ND_CLASS_MIN_R2,
		    ND_CLASS_MIN_GAP, ND_CLASS_MIN_RATIO);
	}
	if (r->rank_steps > 0) {
		nd_buf_addf(b, "Ranks: %zu steps compared across ranks "
		    "(%s clock); largest straggler lag ", r->rank_steps,
		    r->rank_abs ? "absolute" : "relative");
		put_dur(b, r->lag_max);
		nd_buf_addf(b, " (rank %lld, step %lld); largest spread of "
		    "step time ", (long long)r->lag_max_rank,
		    (long long)r->lag_max_step);
		put_dur(b, r->spread_max);
		nd_buf_adds(b, ".\n\n| rank | straggler in | largest lag | "
		    "mean busy |\n|---|---|---|---|\n");
		for (size_t i = 0; i < r->nranks; i++) {
			nd_buf_addf(b, "| %lld | %llu | ",
			    (long long)r->ranks[i].rank,
			    (unsigned long long)r->ranks[i].straggler);
			put_dur(b, r->ranks[i].lag_max);
			nd_buf_adds(b, " | ");
			if (r->ranks[i].busy_n)
				put_dur(b, r->ranks[i].busy_sum /
				    (int64_t)r->ranks[i].busy_n);
			else
				nd_buf_adds(b, "-");
			nd_buf_adds(b, " |\n");
		}
		nd_buf_adds(b, "\n");
	}
}

static void
md_bd_row(nd_buf *b, const char *label, const nd_breakdown *bd,
    int64_t tot)
{
	nd_buf_adds(b, "| ");
	put_txt(b, label);
	nd_buf_adds(b, " | ");
	put_dur(b, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->compute_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->communication_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->overlap_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->memory_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->idle_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->host_ns, tot);
	nd_buf_adds(b, " |\n");
}

static void
md_breakdown(nd_report *r, nd_buf *b)
{
	char lab[512];

	nd_buf_adds(b, "## 4 Time breakdown per device\n\n");
	if (r->bd_total == 0) {
		nd_buf_adds(b, "No steady steps: no breakdown.\n\n");
		return;
	}
	nd_buf_adds(b, "Steady steps, % of step time[^rules]. \"all devices\" "
	    "sums the devices (what the findings use); \"step window\" "
	    "counts a category when it runs on any device of the window "
	    "(trace-steps -s).\n\n"
	    "| device | step time | compute | exposed communication | "
	    "overlap | memory | idle | host |\n"
	    "|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < r->ndevbd; i++)
		if (r->devbd[i].total > 0)
			md_bd_row(b, dev_label(r, r->devbd[i].dev, lab,
			    sizeof lab), &r->devbd[i].bd, r->devbd[i].total);
	if (r->ndevbd > 1)
		md_bd_row(b, "all devices", &r->dbd, r->dbd_total);
	md_bd_row(b, "step window (any device)", &r->bd, r->bd_total);
	nd_buf_adds(b, "\n[^rules]: Rules (trace-steps(1), BREAKDOWN): a "
	    "device op is communication when its `class` is communication or "
	    "stall, memory when it is memory, else compute (classes from the "
	    "nd\\_classify rule table: `trace-classify --print-rules`). The "
	    "window is split by precedence compute, exposed communication "
	    "(no compute), memory (neither), host (a host span and no device "
	    "op), idle (nothing); overlap is compute while communication "
	    "runs, a part of compute. The parts add up to the step time.\n\n");
}

static void
md_trow_table(nd_report *r, nd_buf *b, const char *what,
    const struct trow *t, size_t n, int64_t tot)
{
	size_t m = cut(r, n);

	nd_buf_addf(b, "| # | %s | count | exclusive | share | total | "
	    "mean | max |\n|---|---|---|---|---|---|---|---|\n", what);
	for (size_t i = 0; i < m; i++) {
		nd_buf_addf(b, "| %zu | ", i + 1);
		put_name(b, t[i].key);
		nd_buf_addf(b, " | %llu | ", (unsigned long long)t[i].count);
		put_dur(b, t[i].self);
		nd_buf_adds(b, " | ");
		put_pct(b, t[i].self, tot);
		nd_buf_adds(b, " | ");
		put_dur(b, t[i].total);
		nd_buf_adds(b, " | ");
		put_dur(b, t[i].count ? t[i].total / (int64_t)t[i].count : 0);
		nd_buf_adds(b, " | ");
		put_dur(b, t[i].max);
		nd_buf_adds(b, " |\n");
	}
	more(b, r, n, "rows");
	nd_buf_adds(b, "\n");
}

/* The roofline of the top ops (trace-roofline by name), when the spans
 * carry flops. */
static void
md_roofline(nd_report *r, nd_buf *b)
{
	const nd_roof_sum *s = &r->roofsum;
	const nd_roof_row *first = r->nroof > 0 ? &r->roofrows[0] : NULL;
	size_t m = cut(r, r->nroof);
	int uniform = first != NULL && first->peak == 1 &&
	    first->peak_tflops > 0 && first->peak_gbps > 0;

	if (r->nroof == 0)
		return;
	for (size_t i = 1; i < r->nroof && uniform; i++)
		if (r->roofrows[i].peak != 1 ||
		    r->roofrows[i].peak_tflops != first->peak_tflops ||
		    r->roofrows[i].peak_gbps != first->peak_gbps)
			uniform = 0;
	nd_buf_adds(b, "### Roofline\n\n");
	nd_buf_addf(b, "%llu of %llu spans on %s timelines (",
	    (unsigned long long)s->flops_spans,
	    (unsigned long long)s->spans, s->timelines);
	put_dur(b, s->flops_ns);
	nd_buf_adds(b, " of ");
	put_dur(b, s->total_ns);
	nd_buf_adds(b, ") carry flops; ops by time with flops");
	if (uniform) {
		nd_buf_addf(b, ", against %g TFLOP/s and %g GB/s (ridge %.1f "
		    "FLOP/byte", first->peak_tflops, first->peak_gbps,
		    first->peak_tflops * 1e3 / first->peak_gbps);
		if (first->device_name != NULL) {
			nd_buf_adds(b, ", ");
			put_txt(b, first->device_name);
		}
		nd_buf_adds(b, ")");
	} else
		nd_buf_adds(b, "; no single device peak is known "
		    "(--device, --peak-tflops, --peak-gbps)");
	nd_buf_adds(b, ".\n\n| # | op | count | time | TFLOP/s | GB/s | "
	    "FLOP/byte | bound | % of roofline |\n"
	    "|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < m; i++) {
		const nd_roof_row *x = &r->roofrows[i];
		nd_roof_fig f;
		int tag;
		const char *k;
		size_t kl;
		char *name;

		nd_roof_figures(x, &f);
		nd_buf_addf(b, "| %zu | ", i + 1);
		if (nd_by_field(x->key, x->keylen, 0, &tag, &k, &kl)) {
			name = nd_xstrndup(k, kl);
			put_name(b, name);
			free(name);
		} else
			nd_buf_adds(b, "-");
		nd_buf_addf(b, " | %llu | ", (unsigned long long)x->flops_count);
		put_dur(b, x->flops_ns);
		nd_buf_addf(b, " | %.3f | ", f.tflops);
		if (f.has_bytes)
			nd_buf_addf(b, "%.1f | %.2f | ", f.gbps, f.intensity);
		else
			nd_buf_adds(b, "- | - | ");
		if (f.has_roof)
			nd_buf_addf(b, "%s | %.1f%% |\n", f.bound, f.pct);
		else
			nd_buf_adds(b, "- | - |\n");
	}
	more(b, r, r->nroof, "rows");
	nd_buf_adds(b, "\n");
}

static void
md_ops(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "## 5 Top ops by exclusive time\n\n");
	if (r->nops == 0) {
		nd_buf_adds(b, "No spans.\n\n");
		return;
	}
	nd_buf_addf(b, "%s: %llu spans, ", r->fallback ? "All timelines "
	    "(no device ops)" : "Device ops", (unsigned long long)r->ops_spans);
	put_dur(b, r->self_total);
	nd_buf_adds(b, " exclusive in total.\n\n### Ops\n\n");
	md_trow_table(r, b, "op", r->ops, r->nops, r->self_total);
	nd_buf_adds(b, "### Families\n\n");
	md_trow_table(r, b, "family", r->fams, r->nfams, r->self_total);
	nd_buf_adds(b, "### Collectives by kind\n\n");
	if (r->ncolls == 0)
		nd_buf_adds(b, "No communication ops.\n\n");
	else
		md_trow_table(r, b, "collective", r->colls, r->ncolls,
		    r->self_total);
	md_roofline(r, b);
}

static int
pay_cmp(const void *a, const void *b, void *ctx)
{
	const nd_report *r = ctx;
	const struct payload *x = &r->pay[*(const uint32_t *)a];
	const struct payload *y = &r->pay[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(name_of(r, *(const uint32_t *)a),
	    name_of(r, *(const uint32_t *)b));
}

static int
cause_cmp(const void *a, const void *b, void *ctx)
{
	const nd_report *r = ctx;
	const struct cnt *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(name_of(r, x->id), name_of(r, y->id));
}

static void
md_gaps(nd_report *r, nd_buf *b)
{
	size_t m;

	nd_buf_adds(b, "## 6 Idle gaps\n\n");
	if (r->ngaps == 0) {
		nd_buf_adds(b, "No idle gaps on the devices.\n\n");
		return;
	}
	nd_sort(r->causes, r->ncauses, sizeof *r->causes, cause_cmp, r);
	nd_sort(r->payids, r->npayids, sizeof *r->payids, pay_cmp, r);
	nd_buf_addf(b, "%llu gaps where no op runs on a device "
	    "(trace-gaps(1), device level), ", (unsigned long long)r->ngaps);
	put_dur(b, r->gap_total);
	nd_buf_adds(b, " in total; the largest ");
	put_dur(b, r->gap_max);
	nd_buf_adds(b, " on ");
	put_txt(b, name_of(r, r->gap_max_dev));
	nd_buf_addf(b, " at ts_ns %lld.\n\n", (long long)r->gap_max_ts);
	nd_buf_adds(b, "| cause | gaps | time | share |\n|---|---|---|---|\n");
	for (size_t i = 0; i < r->ncauses; i++) {
		nd_buf_adds(b, "| ");
		put_txt(b, name_of(r, r->causes[i].id));
		nd_buf_addf(b, " | %llu | ", (unsigned long long)r->causes[i].n);
		put_dur(b, r->causes[i].ns);
		nd_buf_adds(b, " | ");
		put_pct(b, r->causes[i].ns, r->gap_total);
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n### Payload ops after gaps\n\n| # | payload | "
	    "marker | gaps | total gap | max gap | region |\n"
	    "|---|---|---|---|---|---|---|\n");
	m = cut(r, r->npayids);
	for (size_t i = 0; i < m; i++) {
		const struct payload *p = &r->pay[r->payids[i]];

		nd_buf_addf(b, "| %zu | ", i + 1);
		put_name(b, name_of(r, r->payids[i]));
		nd_buf_adds(b, " | ");
		put_name(b, name_of(r, p->marker));
		nd_buf_addf(b, " | %llu | ", (unsigned long long)p->n);
		put_dur(b, p->total);
		nd_buf_adds(b, " | ");
		put_dur(b, p->max);
		nd_buf_adds(b, " | ");
		put_name(b, name_of(r, p->region));
		nd_buf_adds(b, " |\n");
	}
	more(b, r, r->npayids, "payload ops");
	nd_buf_adds(b, "\n");
}

static void
md_regions(nd_report *r, nd_buf *b)
{
	size_t m;

	nd_buf_adds(b, "## 7 Regions\n\n");
	if (r->nregs == 0) {
		nd_buf_adds(b, "No named scopes (`scope`) on the spans.\n\n");
		return;
	}
	nd_buf_adds(b, "Named-scope tree (`scope`), by inclusive exclusive-"
	    "time of the ops below each region.\n\n| region | depth | ops | "
	    "inclusive | exclusive | share |\n|---|---|---|---|---|---|\n");
	m = cut(r, r->nregs);
	for (size_t i = 0; i < m; i++) {
		nd_buf_adds(b, "| ");
		put_name(b, r->regs[i].key);
		nd_buf_addf(b, " | %d | %llu | ", r->regs[i].depth,
		    (unsigned long long)r->regs[i].count);
		put_dur(b, r->regs[i].self);
		nd_buf_adds(b, " | ");
		put_dur(b, r->regs[i].excl);
		nd_buf_adds(b, " | ");
		put_pct(b, r->regs[i].self, r->self_total);
		nd_buf_adds(b, " |\n");
	}
	more(b, r, r->nregs, "regions");
	nd_buf_adds(b, "\n");
}

static void
md_memory(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "## 8 Memory\n\n");
	if (r->npeaks == 0) {
		nd_buf_adds(b, "The stream has no memory counters.\n\n");
		return;
	}
	nd_buf_adds(b, "The op running at the peak is the innermost span of the "
	    "sample's own timeline that contains it (as trace-mem).\n\n");
	nd_buf_adds(b, "| source | device | peak allocated | reserved | "
	    "at ts_ns | step | op | scope |\n"
	    "|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < r->npeaks; i++) {
		const struct mpeak *p = &r->peaks[i];

		nd_buf_adds(b, "| ");
		put_txt(b, p->source);
		nd_buf_adds(b, " | ");
		put_txt(b, p->device);
		nd_buf_addf(b, " | %.1f MiB | %.1f MiB | %lld | ",
		    (double)p->alloc / 1048576.0,
		    (double)p->reserved / 1048576.0, (long long)p->ts);
		if (p->has_step)
			nd_buf_addf(b, "%lld", (long long)p->step);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " | ");
		put_txt(b, p->op);
		nd_buf_adds(b, " | ");
		put_txt(b, p->scope);
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n");
}

static void
md_findings(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "## 9 Findings\n\n");
	if (r->nfnd == 0) {
		nd_buf_adds(b, "No single bottleneck dominates");
		if (r->dbd_total > 0) {
			nd_buf_adds(b, ": compute ");
			put_pct(b, r->dbd.compute_ns, r->dbd_total);
			nd_buf_adds(b, ", exposed communication ");
			put_pct(b, r->dbd.communication_ns, r->dbd_total);
			nd_buf_adds(b, ", memory ");
			put_pct(b, r->dbd.memory_ns, r->dbd_total);
			nd_buf_adds(b, ", host ");
			put_pct(b, r->dbd.host_ns, r->dbd_total);
			nd_buf_adds(b, ", idle ");
			put_pct(b, r->dbd.idle_ns, r->dbd_total);
			nd_buf_adds(b, " of steady step time, all devices");
		}
		nd_buf_adds(b, ".\n\n");
	}
	for (size_t i = 0; i < r->nfnd; i++) {
		const struct finding *f = &r->fnd[i];

		nd_buf_addf(b, "### %s\n\n", rules[f->rule].id);
		put_txt(b, f->statement);
		nd_buf_adds(b, ".\n\n- Evidence: ");
		put_txt(b, f->evidence);
		nd_buf_adds(b, ".\n- Suggestion: ");
		put_txt(b, f->suggestion);
		nd_buf_adds(b, ".\n\n");
	}
	nd_buf_adds(b, "### Thresholds\n\n| rule | measures | threshold | "
	    "value | fired |\n|---|---|---|---|---|\n");
	for (int i = 0; i < R_NRULES; i++) {
		int fired = 0;

		for (size_t j = 0; j < r->nfnd; j++)
			fired |= r->fnd[j].rule == i;
		nd_buf_addf(b, "| %s | %s | %g %% | ", rules[i].id,
		    rules[i].what, r->thr[i]);
		if (r->has_val[i])
			nd_buf_addf(b, "%.1f %%", r->val[i]);
		else
			nd_buf_adds(b, "-");
		nd_buf_addf(b, " | %s |\n", fired ? "yes" : "no");
	}
	nd_buf_adds(b, "\nSet a threshold with `--threshold ID=PERCENT`.\n");
}

/* --- a trace-diff output as a comparison report --- */

/* A comparison: trace-diff records and no span. */
static int
is_comparison(const nd_report *r)
{
	return r->ndiff > 0 && r->ops_spans == 0 && r->nsteps == 0;
}

static int64_t
jint(const nd_event *ev, const char *k, int *has)
{
	const nd_jval *v = nd_event_get(ev, k);
	int64_t x = 0;

	*has = v != NULL && nd_json_int64(v, &x) == 0;
	return x;
}

static double
jdbl(const nd_event *ev, const char *k, int *has)
{
	const nd_jval *v = nd_event_get(ev, k);

	*has = v != NULL && v->type == ND_JNUM;
	return *has ? nd_json_double(v) : 0;
}

static void
put_jstr(nd_buf *b, const nd_event *ev, const char *k)
{
	char *s = jstrdup(nd_event_get(ev, k));

	put_name(b, s);
	free(s);
}

static int
is_kind(const nd_event *ev, const char *kind)
{
	const nd_jval *v = nd_event_get(ev, "kind");

	return v != NULL && v->type == ND_JSTR && nd_jstr_eq(v, kind);
}

static void
md_comparison(nd_report *r, nd_buf *b)
{
	nd_event ev;
	nd_buf scratch = { 0 };
	nd_everr err;
	int has, h2;
	size_t shown = 0, keys = 0;
	static const char *const kinds[] = { "step", "share", "key" };
	static const char *const heads[] = {
	    "## 2 Steps\n\n| metric | before | after | delta | change |\n"
	    "|---|---|---|---|---|\n",
	    "## 3 Shares of step time\n\n| metric | before | after | delta |\n"
	    "|---|---|---|---|\n",
	    "## 4 Per-key exclusive time\n\n| # | key | before | after | "
	    "delta | change | status |\n|---|---|---|---|---|---|---|\n" };

	nd_event_init(&ev);
	nd_buf_adds(b, "# Comparison report\n\nThe input is the output of "
	    "trace-diff(1): before/after deltas and a verdict.\n\n"
	    "## 1 Verdict\n\n");
	for (size_t i = 0; i < r->ndiff; i++) {
		nd_jiter it;
		nd_jval v;
		nd_jerr e;
		const nd_jval *f;

		if (nd_event_decode(&ev, r->diff[i], strlen(r->diff[i]),
		    &scratch, &err) != 0 || !nd_str_eq(ev.type_name, "verdict"))
			continue;
		nd_buf_adds(b, "Status: **");
		put_jstr(b, &ev, "status");
		nd_buf_adds(b, "**.\n\n");
		f = nd_event_get(&ev, "fired");
		if (f == NULL || f->type != ND_JARR)
			continue;
		nd_buf_adds(b, "| rule | level | measured | threshold |\n"
		    "|---|---|---|---|\n");
		nd_jaiter_init(&it, f, ev.line);
		while (nd_jaiter_next(&it, &v, &e) == 1) {
			nd_jiter mi;
			nd_jval k, x;
			char *rule = NULL, *level = NULL, *unit = NULL;
			double meas = 0, thr = 0;

			if (v.type != ND_JOBJ)
				continue;
			nd_jiter_init(&mi, &v, ev.line);
			while (nd_jiter_next(&mi, &k, &x, &e) == 1) {
				if (nd_jstr_eq(&k, "rule"))
					rule = jstrdup(&x);
				else if (nd_jstr_eq(&k, "level"))
					level = jstrdup(&x);
				else if (nd_jstr_eq(&k, "unit"))
					unit = jstrdup(&x);
				else if (nd_jstr_eq(&k, "measured") &&
				    x.type == ND_JNUM)
					meas = nd_json_double(&x);
				else if (nd_jstr_eq(&k, "threshold") &&
				    x.type == ND_JNUM)
					thr = nd_json_double(&x);
			}
			nd_buf_adds(b, "| ");
			put_txt(b, rule);
			nd_buf_adds(b, " | ");
			put_txt(b, level);
			nd_buf_addf(b, " | %.2f %s | %g %s |\n", meas,
			    unit ? unit : "", thr, unit ? unit : "");
			free(rule);
			free(level);
			free(unit);
		}
		nd_buf_adds(b, "\n");
	}
	for (int kd = 0; kd < 3; kd++) {
		h2 = 0;
		for (size_t i = 0; i < r->ndiff; i++) {
			int64_t bn, an, dn;
			double pc;
			int hp;

			if (nd_event_decode(&ev, r->diff[i], strlen(r->diff[i]),
			    &scratch, &err) != 0 ||
			    !nd_str_eq(ev.type_name, "delta") ||
			    !is_kind(&ev, kinds[kd]))
				continue;
			if (!h2)
				nd_buf_adds(b, heads[kd]);
			h2 = 1;
			if (kd == 2) {
				keys++;
				if (r->o.top > 0 && shown >= (size_t)r->o.top)
					continue;
				shown++;
				nd_buf_addf(b, "| %zu | ", shown);
				put_jstr(b, &ev, "key");
			} else {
				nd_buf_adds(b, "| ");
				put_jstr(b, &ev, "metric");
			}
			if (kd == 1) {
				nd_buf_addf(b, " | %.1f %% | %.1f %% | %+.1f pp |\n",
				    100 * jdbl(&ev, "before", &has),
				    100 * jdbl(&ev, "after", &has),
				    100 * jdbl(&ev, "delta", &has));
				continue;
			}
			bn = jint(&ev, "before_ns", &has);
			an = jint(&ev, "after_ns", &has);
			dn = jint(&ev, "delta_ns", &has);
			pc = jdbl(&ev, "pct", &hp);
			if (!has) {	/* a count, not a duration */
				nd_buf_addf(b, " | %g | %g | %+g | %+.1f %% |\n",
				    jdbl(&ev, "before", &has),
				    jdbl(&ev, "after", &has),
				    jdbl(&ev, "delta", &has), pc);
				continue;
			}
			nd_buf_adds(b, " | ");
			put_dur(b, bn);
			nd_buf_adds(b, " | ");
			put_dur(b, an);
			nd_buf_adds(b, " | ");
			if (dn > 0)
				nd_buf_addc(b, '+');
			put_dur(b, dn);
			if (hp)
				nd_buf_addf(b, " | %+.1f %%", pc);
			else
				nd_buf_adds(b, " | -");
			if (kd == 2) {
				nd_buf_adds(b, " | ");
				put_jstr(b, &ev, "status");
			}
			nd_buf_adds(b, " |\n");
		}
		if (kd == 2 && keys > shown)
			nd_buf_addf(b, "\n%zu more keys not shown (--top %d).\n",
			    keys - shown, r->o.top);
		if (h2)
			nd_buf_adds(b, "\n");
	}
	nd_event_free(&ev);
	nd_buf_free(&scratch);
}

void
nd_report_markdown(nd_report *r, nd_buf *b)
{
	nd_report_finish(r);
	if (is_comparison(r)) {
		md_comparison(r, b);
		return;
	}
	nd_buf_adds(b, "# Trace report\n\n");
	md_sources(r, b);
	md_quality(r, b);
	md_steps(r, b);
	md_breakdown(r, b);
	md_ops(r, b);
	md_gaps(r, b);
	md_regions(r, b);
	md_memory(r, b);
	md_findings(r, b);
}

static void
j_stat(nd_jw *w, const char *k, const nd_stat *st)
{
	nd_jw_key(w, k);
	nd_jw_obj(w);
	nd_jw_kuint(w, "count", st->count);
	nd_jw_kint(w, "mean_ns", st->mean);
	nd_jw_kint(w, "median_ns", st->median);
	nd_jw_kint(w, "p90_ns", st->p90);
	nd_jw_kint(w, "min_ns", st->min);
	nd_jw_kint(w, "max_ns", st->max);
	nd_jw_kint(w, "stddev_ns", st->stddev);
	nd_jw_kint(w, "total_ns", st->total);
	nd_jw_obj_end(w);
}

static void
j_bd(nd_jw *w, const nd_breakdown *bd, int64_t tot)
{
	nd_jw_kint(w, "dur_ns", tot);
	nd_jw_kint(w, "compute_ns", bd->compute_ns);
	nd_jw_kint(w, "communication_ns", bd->communication_ns);
	nd_jw_kint(w, "memory_ns", bd->memory_ns);
	nd_jw_kint(w, "host_ns", bd->host_ns);
	nd_jw_kint(w, "idle_ns", bd->idle_ns);
	nd_jw_kint(w, "overlap_ns", bd->overlap_ns);
}

static void
j_str(nd_jw *w, const char *k, const char *v)
{
	nd_jw_key(w, k);
	if (v == NULL)
		nd_jw_null(w);
	else
		nd_jw_cstr(w, v);
}

static void
j_rows(nd_report *r, nd_jw *w, const char *k, const char *name,
    const struct trow *t, size_t n, int regions)
{
	size_t m = cut(r, n);

	nd_jw_key(w, k);
	nd_jw_arr(w);
	for (size_t i = 0; i < m; i++) {
		nd_jw_obj(w);
		nd_jw_kcstr(w, name, t[i].key);
		nd_jw_kuint(w, "count", t[i].count);
		if (regions) {
			nd_jw_kint(w, "depth", t[i].depth);
			nd_jw_kint(w, "inclusive_ns", t[i].self);
			nd_jw_kint(w, "exclusive_ns", t[i].excl);
		} else {
			nd_jw_kint(w, "self_ns", t[i].self);
			nd_jw_kint(w, "total_ns", t[i].total);
			nd_jw_kint(w, "max_ns", t[i].max);
		}
		nd_jw_kdbl(w, "share", r->self_total > 0 ?
		    (double)t[i].self / (double)r->self_total : 0);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_kuint(w, k[0] == 'o' ? "ops_rows" : k[0] == 'f' ?
	    "families_rows" : k[0] == 'c' ? "collectives_rows" :
	    "regions_rows", n);
}

void
nd_report_json(nd_report *r, nd_buf *b)
{
	nd_jw w;
	char lab[512];

	nd_report_finish(r);
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "schema", ND_REPORT_SCHEMA);
	if (is_comparison(r)) {
		/* the trace-diff records as they came, in order */
		nd_jw_kcstr(&w, "kind", "comparison");
		nd_jw_key(&w, "records");
		nd_jw_arr(&w);
		for (size_t i = 0; i < r->ndiff; i++)
			nd_jw_raw(&w, r->diff[i], strlen(r->diff[i]));
		nd_jw_arr_end(&w);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		return;
	}
	nd_jw_kcstr(&w, "kind", "report");
	if (r->o.stamp)
		nd_jw_kcstr(&w, "stamp", r->o.stamp);
	nd_jw_key(&w, "sources");
	nd_jw_arr(&w);
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_jw_obj(&w);
		j_str(&w, "source", s->path);
		j_str(&w, "format", s->format);
		j_str(&w, "host", s->host);
		nd_jw_key(&w, "rank");
		if (s->has_rank)
			nd_jw_int(&w, s->rank);
		else
			nd_jw_null(&w);
		j_str(&w, "producer", s->producer);
		j_str(&w, "sha256", s->sha256);
		nd_jw_kint(&w, "origin_ns", s->origin);
		nd_jw_kint(&w, "span_ns", s->has_t ? s->tmax - s->tmin : 0);
		nd_jw_kuint(&w, "spans", s->spans);
		nd_jw_kuint(&w, "instants", s->instants);
		nd_jw_kuint(&w, "counters", s->counters);
		nd_jw_kuint(&w, "flows", s->flows);
		nd_jw_kuint(&w, "other", s->others);
		nd_jw_kuint(&w, "spans_without_time", s->bad_spans);
		nd_jw_kbool(&w, "has_end", s->has_end);
		nd_jw_key(&w, "events");
		if (s->end_events >= 0)
			nd_jw_int(&w, s->end_events);
		else
			nd_jw_null(&w);
		nd_jw_kuint(&w, "skipped", s->skipped);
		nd_jw_kbool(&w, "suspected_truncation", s->trunc);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);

	nd_jw_key(&w, "quality");
	nd_jw_obj(&w);
	nd_jw_key(&w, "skipped");
	nd_jw_obj(&w);
	for (size_t i = 0; i < r->nskipped; i++) {
		nd_jw_key(&w, name_of(r, r->skipped[i].id));
		nd_jw_uint(&w, r->skipped[i].n);
	}
	nd_jw_obj_end(&w);
	nd_jw_key(&w, "warnings");
	nd_jw_arr(&w);
	for (size_t i = 0; i < r->nwarn; i++)
		nd_jw_cstr(&w, r->warn[i]);
	nd_jw_arr_end(&w);
	nd_jw_obj_end(&w);

	nd_jw_key(&w, "steps");
	nd_jw_obj(&w);
	nd_jw_kuint(&w, "count", r->nsteps);
	nd_jw_kcstr(&w, "marker", r->nsteps ? nd_sm_name(r->marker) : "none");
	nd_jw_kint(&w, "warmup", r->warmup);
	nd_jw_kbool(&w, "drop_last", r->o.drop_last);
	j_stat(&w, "all", &r->all);
	j_stat(&w, "steady", &r->steady);
	if (r->steady.count > 0) {
		nd_jw_kint(&w, "first_step", r->first_step);
		nd_jw_kint(&w, "last_step", r->last_step);
		nd_jw_key(&w, "classes");
		nd_jw_arr(&w);
		for (int c = 0; c < r->cl.nclass; c++) {
			const nd_step_class *k = &r->cl.c[c];

			nd_jw_obj(&w);
			nd_jw_kcstr(&w, "class", k->name);
			j_stat(&w, "stat", &k->st);
			nd_jw_kint(&w, "representative_step", k->representative);
			if (k->has_period) {
				nd_jw_kint(&w, "period", k->period);
				nd_jw_kint(&w, "phase", k->phase);
			}
			nd_jw_obj_end(&w);
		}
		nd_jw_arr_end(&w);
	}
	nd_jw_key(&w, "ranks");
	nd_jw_obj(&w);
	nd_jw_kuint(&w, "steps_compared", r->rank_steps);
	if (r->rank_steps > 0) {
		nd_jw_kcstr(&w, "clock", r->rank_abs ? "absolute" : "relative");
		nd_jw_kint(&w, "lag_max_ns", r->lag_max);
		nd_jw_kint(&w, "lag_max_rank", r->lag_max_rank);
		nd_jw_kint(&w, "lag_max_step", r->lag_max_step);
		nd_jw_kint(&w, "spread_max_ns", r->spread_max);
		nd_jw_key(&w, "per_rank");
		nd_jw_arr(&w);
		for (size_t i = 0; i < r->nranks; i++) {
			nd_jw_obj(&w);
			nd_jw_kint(&w, "rank", r->ranks[i].rank);
			nd_jw_kuint(&w, "straggler", r->ranks[i].straggler);
			nd_jw_kint(&w, "lag_max_ns", r->ranks[i].lag_max);
			nd_jw_obj_end(&w);
		}
		nd_jw_arr_end(&w);
	}
	nd_jw_obj_end(&w);
	nd_jw_obj_end(&w);

	nd_jw_key(&w, "breakdown");
	nd_jw_obj(&w);
	nd_jw_key(&w, "devices");
	nd_jw_arr(&w);
	for (size_t i = 0; i < r->ndevbd; i++) {
		if (r->devbd[i].total == 0)
			continue;
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "device", dev_label(r, r->devbd[i].dev, lab,
		    sizeof lab));
		j_bd(&w, &r->devbd[i].bd, r->devbd[i].total);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_key(&w, "all_devices");
	nd_jw_obj(&w);
	j_bd(&w, &r->dbd, r->dbd_total);
	nd_jw_obj_end(&w);
	nd_jw_key(&w, "step_window");
	nd_jw_obj(&w);
	j_bd(&w, &r->bd, r->bd_total);
	nd_jw_obj_end(&w);
	nd_jw_obj_end(&w);

	nd_jw_key(&w, "ops");
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "timelines", r->fallback ? "all" : "device");
	nd_jw_kuint(&w, "spans", r->ops_spans);
	nd_jw_kint(&w, "self_ns", r->self_total);
	j_rows(r, &w, "ops", "name", r->ops, r->nops, 0);
	j_rows(r, &w, "families", "family", r->fams, r->nfams, 0);
	j_rows(r, &w, "collectives", "family", r->colls, r->ncolls, 0);
	if (r->nroof > 0) {
		size_t m = cut(r, r->nroof);

		nd_jw_key(&w, "roofline");
		nd_jw_obj(&w);
		nd_roof_sum_json(&w, &r->roofsum);
		nd_jw_kuint(&w, "shown", m);
		nd_jw_key(&w, "top");
		nd_jw_arr(&w);
		for (size_t i = 0; i < m; i++) {
			nd_jw_obj(&w);
			nd_by_json(r->roofby, &w, r->roofrows[i].key,
			    r->roofrows[i].keylen);
			nd_roof_row_json(&w, &r->roofrows[i]);
			nd_jw_obj_end(&w);
		}
		nd_jw_arr_end(&w);
		nd_jw_obj_end(&w);
	}
	nd_jw_obj_end(&w);

	nd_sort(r->causes, r->ncauses, sizeof *r->causes, cause_cmp, r);
	nd_sort(r->payids, r->npayids, sizeof *r->payids, pay_cmp, r);
	nd_jw_key(&w, "gaps");
	nd_jw_obj(&w);
	nd_jw_kuint(&w, "count", r->ngaps);
	nd_jw_kint(&w, "total_ns", r->gap_total);
	nd_jw_kint(&w, "max_ns", r->gap_max);
	nd_jw_key(&w, "causes");
	nd_jw_arr(&w);
	for (size_t i = 0; i < r->ncauses; i++) {
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "cause", name_of(r, r->causes[i].id));
		nd_jw_kuint(&w, "count", r->causes[i].n);
		nd_jw_kint(&w, "dur_ns", r->causes[i].ns);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_key(&w, "payloads");
	nd_jw_arr(&w);
	for (size_t i = 0; i < cut(r, r->npayids); i++) {
		const struct payload *p = &r->pay[r->payids[i]];

		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "payload", name_of(r, r->payids[i]));
		j_str(&w, "marker", name_of(r, p->marker));
		nd_jw_kuint(&w, "count", p->n);
		nd_jw_kint(&w, "total_ns", p->total);
		nd_jw_kint(&w, "max_ns", p->max);
		j_str(&w, "region", name_of(r, p->region));
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_obj_end(&w);

	nd_jw_key(&w, "regions");
	nd_jw_obj(&w);
	j_rows(r, &w, "regions", "path", r->regs, r->nregs, 1);
	nd_jw_obj_end(&w);

	nd_jw_key(&w, "memory");
	nd_jw_arr(&w);
	for (size_t i = 0; i < r->npeaks; i++) {
		const struct mpeak *p = &r->peaks[i];

		nd_jw_obj(&w);
		j_str(&w, "source", p->source);
		j_str(&w, "device", p->device);
		nd_jw_kint(&w, "ts_ns", p->ts);
		nd_jw_kint(&w, "allocated_bytes", p->alloc);
		nd_jw_kint(&w, "reserved_bytes", p->reserved);
		if (p->has_step)
			nd_jw_kint(&w, "step", p->step);
		j_str(&w, "op", p->op);
		j_str(&w, "scope", p->scope);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);

	nd_jw_key(&w, "findings");
	nd_jw_arr(&w);
	for (size_t i = 0; i < r->nfnd; i++) {
		const struct finding *f = &r->fnd[i];

		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "rule", rules[f->rule].id);
		nd_jw_kdbl(&w, "value", f->value);
		nd_jw_kdbl(&w, "threshold", r->thr[f->rule]);
		nd_jw_kcstr(&w, "statement", f->statement);
		nd_jw_kcstr(&w, "evidence", f->evidence);
		nd_jw_kcstr(&w, "suggestion", f->suggestion);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_key(&w, "thresholds");
	nd_jw_arr(&w);
	for (int i = 0; i < R_NRULES; i++) {
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "rule", rules[i].id);
		nd_jw_kcstr(&w, "measures", rules[i].what);
		nd_jw_kdbl(&w, "threshold", r->thr[i]);
		nd_jw_key(&w, "value");
		if (r->has_val[i])
			nd_jw_dbl(&w, r->val[i]);
		else
			nd_jw_null(&w);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

/* --- HTML: the Markdown converted, plus inline SVG charts --- */

static void
h_esc_inline(nd_buf *b, const char *s, size_t n)
{
	int code = 0, strong = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 1 < n) {
			c = s[++i];
			if (c == '<')
				nd_buf_adds(b, "&lt;");
			else if (c == '>')
				nd_buf_adds(b, "&gt;");
			else if (c == '&')
				nd_buf_adds(b, "&amp;");
			else
				nd_buf_addc(b, c);
			continue;
		}
		if (c == '`') {
			nd_buf_adds(b, code ? "</code>" : "<code>");
			code = !code;
		} else if (c == '*' && i + 1 < n && s[i + 1] == '*') {
			nd_buf_adds(b, strong ? "</strong>" : "<strong>");
			strong = !strong;
			i++;
		} else if (c == '[' && i + 1 < n && s[i + 1] == '^') {
			while (i < n && s[i] != ']')
				i++;
			nd_buf_adds(b, "<sup>1</sup>");
		} else if (c == '<')
			nd_buf_adds(b, "&lt;");
		else if (c == '>')
			nd_buf_adds(b, "&gt;");
		else
			nd_buf_addc(b, c);
	}
	if (code)
		nd_buf_adds(b, "</code>");
	if (strong)
		nd_buf_adds(b, "</strong>");
}

static void
h_row(nd_buf *b, const char *s, size_t n, const char *cell)
{
	size_t i = 1, start = 1;

	nd_buf_adds(b, "<tr>");
	for (; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] != '|')
			continue;
		nd_buf_addf(b, "<%s>", cell);
		while (start < i && s[start] == ' ')
			start++;
		h_esc_inline(b, s + start, i > start && s[i - 1] == ' ' ?
		    i - start - 1 : i - start);
		nd_buf_addf(b, "</%s>", cell);
		start = i + 1;
	}
	nd_buf_adds(b, "</tr>\n");
}

static const char *const cat_color[] = { "#4e79a7", "#e15759", "#f28e2b",
	"#b07aa1", "#bab0ac" };
static const char *const cat_name[] = { "compute", "exposed communication",
	"memory", "host", "idle" };

static void
svg_steps(nd_report *r, nd_buf *b)
{
	size_t n = r->steady.count, m = n > 400 ? 400 : n;
	double w = 720, h = 160, bw;
	int64_t max = r->steady.max > 0 ? r->steady.max : 1;

	if (n == 0)
		return;
	bw = w / (double)m;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"step "
	    "times\"><rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	    w, h + 20);
	for (size_t i = 0; i < m; i++) {
		int heavy = 0;
		double bh = h * (double)r->cl_dur[i] / (double)max;

		if (r->cl.nclass == 2)
			for (size_t k = 0; k < r->cl.c[1].n; k++)
				if (r->cl.idx[r->cl.c[1].first + k] == i)
					heavy = 1;
		nd_buf_addf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\" fill=\"%s\"><title>step %lld: %.3f ms"
		    "</title></rect>\n", (double)i * bw, h - bh,
		    bw > 2 ? bw - 1 : bw, bh, heavy ? "#e15759" : "#4e79a7",
		    (long long)r->cl_num[i], (double)r->cl_dur[i] / 1e6);
	}
	nd_buf_addf(b, "<text x=\"0\" y=\"%.0f\" font-size=\"12\">steady steps "
	    "%lld to %lld; max %.3f ms%s</text></svg><figcaption>Step time "
	    "(blue: %s, red: heavy)</figcaption></figure>\n", h + 16,
	    (long long)r->first_step, (long long)r->last_step,
	    (double)max / 1e6, m < n ? " (first 400 shown)" : "",
	    r->cl.nclass == 2 ? "light" : "typical");
}

static void
svg_breakdown(nd_report *r, nd_buf *b)
{
	char lab[512];
	double w = 520, x0 = 200, rowh = 22;
	size_t rows = 0;

	for (size_t i = 0; i < r->ndevbd; i++)
		rows += r->devbd[i].total > 0;
	if (rows == 0)
		return;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"time "
	    "breakdown\"><rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#fff\"/>\n", x0 + w + 10, rowh * (double)(rows + 1) + 10);
	rows = 0;
	for (size_t i = 0; i < r->ndevbd; i++) {
		const nd_breakdown *bd = &r->devbd[i].bd;
		int64_t part[5] = { bd->compute_ns, bd->communication_ns,
		    bd->memory_ns, bd->host_ns, bd->idle_ns };
		double x = x0, y = rowh * (double)rows;

		if (r->devbd[i].total == 0)
			continue;
		nd_buf_addf(b, "<text x=\"0\" y=\"%.0f\" font-size=\"12\">",
		    y + 15);
		h_esc_inline(b, dev_label(r, r->devbd[i].dev, lab, sizeof lab),
		    strlen(dev_label(r, r->devbd[i].dev, lab, sizeof lab)));
		nd_buf_adds(b, "</text>\n");
		for (int c = 0; c < 5; c++) {
			double pw = w * (double)part[c] /
			    (double)r->devbd[i].total;

			if (pw <= 0)
				continue;
			nd_buf_addf(b, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
			    "height=\"%.0f\" fill=\"%s\"><title>%s %.1f %%"
			    "</title></rect>\n", x, y + 2, pw, rowh - 4,
			    cat_color[c], cat_name[c],
			    pct(part[c], r->devbd[i].total));
			x += pw;
		}
		rows++;
	}
	{
		double x = 0, y = rowh * (double)rows + 16;

		for (int c = 0; c < 5; c++) {
			nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
			    "height=\"10\" fill=\"%s\"/><text x=\"%.0f\" "
			    "y=\"%.0f\" font-size=\"11\">%s</text>\n", x, y - 9,
			    cat_color[c], x + 13, y, cat_name[c]);
			x += 14 + 7 * (double)strlen(cat_name[c]) + 12;
		}
	}
	nd_buf_adds(b, "</svg><figcaption>Time breakdown per device, steady "
	    "steps</figcaption></figure>\n");
}

/* An icicle of the named-scope tree: depth down, inclusive time across.
 * Regions come in tree order (parents first, siblings by segment). */
static void
svg_regions(nd_report *r, nd_buf *b)
{
	double w = 720, rowh = 22;
	int maxd = 0;
	size_t *ord;
	double *x0, *next;
	nd_buf path = ND_BUF_INIT;

	if (r->nregs == 0 || r->self_total <= 0)
		return;
	ord = nd_xmalloc(r->nregs * sizeof *ord);
	x0 = nd_xcalloc(r->nregs, sizeof *x0);
	next = nd_xcalloc(r->nregs, sizeof *next);
	for (size_t i = 0; i < r->nregs; i++) {
		ord[r->regs[i].rank] = i;
		if (r->regs[i].depth > maxd)
			maxd = r->regs[i].depth;
	}
	if (maxd > 6)
		maxd = 6;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"regions"
	    "\"><rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n", w,
	    rowh * maxd + 4);
	{
		double rootx = 0;

		for (size_t k = 0; k < r->nregs; k++) {
			const struct trow *t = &r->regs[ord[k]];
			uint32_t id = t->id;
			double pw = w * (double)t->self /
			    (double)r->self_total;

			if (t->parent == UINT32_MAX) {
				x0[id] = rootx;
				rootx += pw;
			} else {
				x0[id] = x0[t->parent] + next[t->parent];
				next[t->parent] += pw;
			}
			if (t->depth > maxd || pw < 0.5)
				continue;
			reg_path(r, t, &path);
			nd_buf_addf(b, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
			    "height=\"%.0f\" fill=\"%s\" stroke=\"#fff\">"
			    "<title>", x0[id], rowh * (t->depth - 1), pw,
			    rowh - 2, cat_color[(t->depth - 1) % 2 ? 0 : 2]);
			h_esc_inline(b, path.p, path.len);
			nd_buf_addf(b, ": %.3f ms</title></rect>\n",
			    (double)t->self / 1e6);
			if (pw > 60) {
				size_t fit = (size_t)(pw / 7);

				nd_buf_addf(b, "<text x=\"%.2f\" y=\"%.0f\" "
				    "font-size=\"11\" fill=\"#fff\">", x0[id] + 3,
				    rowh * (t->depth - 1) + 14);
				h_esc_inline(b, t->seg, t->seglen < fit ?
				    t->seglen : fit);
				nd_buf_adds(b, "</text>\n");
			}
		}
	}
	nd_buf_adds(b, "</svg><figcaption>Regions: the named-scope tree, "
	    "width = inclusive exclusive-time</figcaption></figure>\n");
	nd_buf_free(&path);
	free(ord);
	free(x0);
	free(next);
}

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

static const char *const sc_name[SC_N] = { "compute", "communication",
	"memory", "other" };
static const char *const sc_color[SC_N] = { "#4e79a7", "#e15759",
	"#f28e2b", "#bab0ac" };

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

static struct sdev *
strip_dev(nd_report *r, const char *k, size_t n, int add)
{
	struct strip *s = r->strip;
	struct sdev *d;

	for (size_t i = 0; i < s->ndev; i++) {
		d = &s->dev[i];
		if (d->source == r->cursrc && d->klen == n &&
		    memcmp(d->key, k, n) == 0)
			return d;
	}
	if (!add || s->ndev == STRIP_DEVS)
		return NULL;
	d = &s->dev[s->ndev++];
	memset(d, 0, sizeof *d);
	d->source = r->cursrc;
	d->key = nd_xstrndup(k, n);
	d->klen = n;
	return d;
}

static void
strip_add(nd_report *r, const nd_event *ev, const nd_span_role *role)
{
	struct strip *s = r->strip;
	struct sdev *d;
	struct sop op;
	const char *k;
	size_t n;

	if (s == NULL) {
		s = r->strip = nd_xcalloc(1, sizeof *s);
		s->names = nd_intern_new();
	}
	/* every device kept and none of this source: nothing to do */
	if (s->ndev == STRIP_DEVS && s->dev[STRIP_DEVS - 1].source !=
	    r->cursrc)
		return;
	nd_span_device_ref(ev, &s->kb, &k, &n);
	if ((d = strip_dev(r, k, n, 1)) == NULL)
		return;
	op.ts = ev->ts_ns;
	op.dur = ev->dur_ns;
	op.name = nd_intern_id(s->names, ev->name.p ? ev->name.p : "?",
	    ev->name.p ? ev->name.n : 1);
	if (role->cat == ND_CAT_COMM)
		op.cls = SC_COMM;
	else if (role->cat == ND_CAT_MEMORY)
		op.cls = SC_MEMORY;
	else if (ev->cls.p != NULL && !nd_str_eq(ev->cls, "compute"))
		op.cls = SC_OTHER;
	else
		op.cls = SC_COMPUTE;
	if (d->n < STRIP_RING) {
		nd_grow(&d->ring, &d->cap, d->n + 1, sizeof *d->ring);
		d->ring[d->n++] = op;
		return;
	}
	if (!d->lost || d->ring[d->head].ts + d->ring[d->head].dur >
	    d->lost_end)
		d->lost_end = d->ring[d->head].ts + d->ring[d->head].dur;
	d->lost = 1;
	d->ring[d->head] = op;
	d->head = (d->head + 1) % STRIP_RING;
}

static void
strip_window(nd_report *r, const char *key, const nd_step *st)
{
	struct sdev *d;

	if (r->strip == NULL ||
	    (d = strip_dev(r, key, strlen(key), 0)) == NULL)
		return;
	nd_grow(&d->win, &d->capwin, d->nwin + 1, sizeof *d->win);
	d->win[d->nwin].num = st->num;
	d->win[d->nwin].ts = st->ts;
	d->win[d->nwin].dur = st->dur;
	d->nwin++;
}

static void
strip_gap(nd_report *r, const nd_gap *g, const nd_gap_where *w)
{
	struct strip *s = r->strip;
	struct sdev *d;
	const char *cause = g->cause ? g->cause : "other";
	const char *pay = g->payload.name ? g->payload.name : "?";

	if (s == NULL)
		return;
	if (w->device != NULL)
		d = strip_dev(r, w->device, strlen(w->device), 0);
	else if (w->process != NULL)
		d = strip_dev(r, w->process, strlen(w->process), 0);
	else {
		nd_buf_reset(&s->kb);
		nd_buf_addf(&s->kb, "pid %lld", (long long)w->pid);
		d = strip_dev(r, s->kb.p, s->kb.len, 0);
	}
	/* a gap that ends before a dropped op ends is in no complete window */
	if (d == NULL || (d->lost && g->ts + g->dur <= d->lost_end))
		return;
	nd_grow(&d->gaps, &d->capgaps, d->ngaps + 1, sizeof *d->gaps);
	d->gaps[d->ngaps].ts = g->ts;
	d->gaps[d->ngaps].dur = g->dur;
	d->gaps[d->ngaps].payload = nd_intern_id(s->names, pay, strlen(pay));
	d->gaps[d->ngaps].cause = nd_intern_id(s->names, cause,
	    strlen(cause));
	d->ngaps++;
}

static void
strip_free(nd_report *r)
{
	struct strip *s = r->strip;

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->ndev; i++) {
		free(s->dev[i].key);
		free(s->dev[i].ring);
		free(s->dev[i].gaps);
		free(s->dev[i].win);
	}
	nd_intern_free(s->names);
	nd_buf_free(&s->kb);
	free(s);
}

/* text for SVG: the XML specials escaped, nothing else interpreted */
static void
h_text(nd_buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '<')
			nd_buf_adds(b, "&lt;");
		else if (*s == '>')
			nd_buf_adds(b, "&gt;");
		else if (*s == '&')
			nd_buf_adds(b, "&amp;");
		else if (*s == '"')
			nd_buf_adds(b, "&quot;");
		else
			nd_buf_addc(b, *s);
	}
}

static int
swin_cmp(const void *a, const void *b, void *ctx)
{
	const struct swin *x = a, *y = b;

	(void)ctx;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The first window of step num on d, or NULL (d->win sorted). */
static const struct swin *
strip_win_of(const struct sdev *d, int64_t num)
{
	size_t lo = 0, hi = d->nwin;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->win[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nwin && d->win[lo].num == num ? &d->win[lo] : NULL;
}

static int
rep_cmp(const void *a, const void *b, void *ctx)
{
	const nd_report *r = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int64_t di = r->cl_dur[i] - r->steady.median;
	int64_t dj = r->cl_dur[j] - r->steady.median;

	if (di < 0)
		di = -di;
	if (dj < 0)
		dj = -dj;
	if (di != dj)
		return di < dj ? -1 : 1;
	if (r->cl_num[i] != r->cl_num[j])
		return r->cl_num[i] < r->cl_num[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The representative step (index into cl_num), or -1; *closest: the steady
 * step closest to the median with a window on a kept device, or -1. */
static ptrdiff_t
strip_pick(nd_report *r, ptrdiff_t *closest)
{
	struct strip *s = r->strip;
	size_t n = r->steady.count, *idx;
	ptrdiff_t pick = -1;

	*closest = -1;
	if (n == 0)
		return -1;
	idx = nd_xmalloc(n * sizeof *idx);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	nd_sort(idx, n, sizeof *idx, rep_cmp, r);
	for (size_t k = 0; k < n && pick < 0; k++) {
		int has = 0, ok = 1;

		for (size_t i = 0; i < s->ndev; i++) {
			const struct sdev *d = &s->dev[i];
			const struct swin *w = strip_win_of(d, r->cl_num[idx[k]]);

			if (w == NULL)
				continue;
			has = 1;
			if (d->lost && w->ts < d->lost_end)
				ok = 0;
		}
		if (has && *closest < 0)
			*closest = (ptrdiff_t)idx[k];
		if (has && ok)
			pick = (ptrdiff_t)idx[k];
	}
	free(idx);
	return pick;
}

struct sclip {
	int64_t s, e, dur;	/* clipped start and end; the op's duration */
	uint32_t name;
	int cls;
};

static int
sclip_cmp(const void *a, const void *b, void *ctx)
{
	const struct sclip *x = a, *y = b;

	(void)ctx;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int
sgap_cmp(const void *a, const void *b, void *ctx)
{
	const struct sgap *x = a, *y = b;

	(void)ctx;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The ops of d in [ts, te), clipped, by class then start. */
static struct sclip *
strip_clip(const struct sdev *d, int64_t ts, int64_t te, size_t *np)
{
	struct sclip *v = nd_xmalloc((d->n ? d->n : 1) * sizeof *v);
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++) {
		const struct sop *o = &d->ring[i];

		if (o->ts >= te || o->ts + o->dur <= ts)
			continue;
		v[n].s = o->ts > ts ? o->ts : ts;
		v[n].e = o->ts + o->dur < te ? o->ts + o->dur : te;
		v[n].dur = o->dur;
		v[n].name = o->name;
		v[n].cls = o->cls;
		n++;
	}
	nd_sort(v, n, sizeof *v, sclip_cmp, NULL);
	*np = n;
	return v;
}

static void
strip_lane(nd_report *r, nd_buf *b, const struct sclip *v, size_t n,
    int64_t ts, double scale, double px_ns, double y)
{
	struct strip *s = r->strip;

	for (size_t i = 0; i < n;) {
		int64_t ps = v[i].s, pe = v[i].e, busy = 0, cur = v[i].s;
		size_t j = i, longest = i;
		double x, w;

		/* one piece: ops less than one pixel apart */
		for (; j < n && (double)(v[j].s - pe) < px_ns; j++) {
			int64_t a = v[j].s > cur ? v[j].s : cur;

			if (v[j].e > a)
				busy += v[j].e - a;
			if (v[j].e > cur)
				cur = v[j].e;
			if (v[j].e > pe)
				pe = v[j].e;
			if (v[j].dur > v[longest].dur)
				longest = j;
		}
		x = STRIP_X0 + (double)(ps - ts) * scale;
		w = (double)(pe - ps) * scale;
		nd_buf_addf(b, "<rect class=\"op\" x=\"%.2f\" y=\"%.0f\" "
		    "width=\"%.2f\" height=\"%d\" fill=\"%s\"",
		    x, y, w < 1 ? 1.0 : w, STRIP_LANE - 1,
		    sc_color[v[i].cls]);
		/* a merged piece with idle time inside: lighter */
		if (busy < pe - ps)
			nd_buf_addf(b, " fill-opacity=\"%.2f\"", 0.3 + 0.7 *
			    (double)busy / (double)(pe - ps));
		nd_buf_adds(b, "><title>");
		if (j - i == 1) {
			h_text(b, nd_intern_str(s->names, v[i].name, NULL));
			nd_buf_adds(b, ": ");
			put_dur(b, v[i].dur);
		} else {
			nd_buf_addf(b, "%zu %s ops, ", j - i,
			    sc_name[v[i].cls]);
			put_dur(b, busy);
			nd_buf_adds(b, " busy; longest ");
			h_text(b, nd_intern_str(s->names, v[longest].name,
			    NULL));
			nd_buf_adds(b, " (");
			put_dur(b, v[longest].dur);
			nd_buf_adds(b, ")");
		}
		nd_buf_adds(b, "</title></rect>\n");
		i = j;
	}
}

static void
strip_label(const nd_report *r, const struct sdev *d, char *buf, size_t n)
{
	if (r->nsrc <= 1)
		snprintf(buf, n, "%s", d->key);
	else if (d->source < r->nsrc && r->src[d->source].has_rank)
		snprintf(buf, n, "rank %lld %s",
		    (long long)r->src[d->source].rank, d->key);
	else
		snprintf(buf, n, "source %u %s", d->source, d->key);
}

static void
svg_strip(nd_report *r, nd_buf *b)
{
	struct strip *s = r->strip;
	const struct swin *win[STRIP_DEVS];
	struct sclip *clip[STRIP_DEVS];
	size_t nclip[STRIP_DEVS], rows = 0, ndevs = 0, small = 0;
	int lane[SC_N], nlanes = 0;
	ptrdiff_t pick, closest;
	int64_t num, maxdur = 0, tick, small_ns = 0;
	double scale, px_ns, y = 0, rowh;
	char lab[512];

	if (s == NULL || s->ndev == 0)
		return;
	if (r->steady.count == 0) {
		nd_buf_adds(b, "<p class=\"note\">No timeline strip: no "
		    "steps.</p>\n");
		return;
	}
	for (size_t i = 0; i < s->ndev; i++)
		nd_sort(s->dev[i].win, s->dev[i].nwin, sizeof *s->dev[i].win,
		    swin_cmp, NULL);
	if ((pick = strip_pick(r, &closest)) < 0) {
		nd_buf_addf(b, "<p class=\"note\">No timeline strip: no steady "
		    "step of the first %d devices has all its ops among the "
		    "latest %d kept per device.</p>\n", STRIP_DEVS, STRIP_RING);
		return;
	}
	num = r->cl_num[pick];
	for (int c = 0; c < SC_N; c++)
		lane[c] = -1;
	for (size_t i = 0; i < s->ndev; i++) {
		win[i] = strip_win_of(&s->dev[i], num);
		clip[i] = NULL;
		nclip[i] = 0;
		if (win[i] == NULL)
			continue;
		rows++;
		if (win[i]->dur > maxdur)
			maxdur = win[i]->dur;
		clip[i] = strip_clip(&s->dev[i], win[i]->ts,
		    win[i]->ts + win[i]->dur, &nclip[i]);
		for (size_t k = 0; k < nclip[i]; k++)
			lane[clip[i][k].cls] = 0;
	}
	for (int c = 0; c < SC_N; c++)
		if (lane[c] == 0)
			lane[c] = nlanes++;
	if (nlanes == 0)
		nlanes = 1;
	if (maxdur <= 0)
		maxdur = 1;
	scale = (double)STRIP_PX / (double)maxdur;
	px_ns = (double)maxdur / STRIP_PX;
	rowh = 18 + nlanes * STRIP_LANE + 16;
	for (size_t i = 0; i < r->ndevs; i++)
		ndevs += strcmp(r->devs[i].key, "host") != 0;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%.0f\" role=\"img\" aria-label=\"timeline "
	    "of step %lld\"><rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#fff\"/>\n<defs><pattern id=\"nd-gap\" width=\"6\" "
	    "height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\""
	    "rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fdd\"/>"
	    "<rect width=\"3\" height=\"6\" fill=\"#d62728\"/></pattern>"
	    "</defs>\n", STRIP_PX + 2 * STRIP_X0, rowh * (double)rows + 52,
	    (long long)num);
	for (size_t i = 0; i < s->ndev; i++) {
		const struct sdev *d = &s->dev[i];
		const struct swin *w = win[i];
		int64_t te;
		struct sgap *gv;
		size_t ng = 0;
		double top;

		if (w == NULL)
			continue;
		te = w->ts + w->dur;
		top = y + 18;
		strip_label(r, d, lab, sizeof lab);
		nd_buf_addf(b, "<g class=\"strip\"><text x=\"%d\" y=\"%.0f\" "
		    "font-size=\"12\">", STRIP_X0, y + 13);
		h_text(b, lab);
		nd_buf_addf(b, ": step %lld, ts_ns %lld, ", (long long)num,
		    (long long)w->ts);
		put_dur(b, w->dur);
		nd_buf_addf(b, "</text>\n<rect x=\"%d\" y=\"%.0f\" "
		    "width=\"%.2f\" height=\"%d\" fill=\"#f4f4f4\"/>\n",
		    STRIP_X0, top, (double)w->dur * scale,
		    nlanes * STRIP_LANE);
		/* the gaps of the window, clipped, of at least a pixel */
		gv = nd_xmalloc((d->ngaps ? d->ngaps : 1) * sizeof *gv);
		for (size_t k = 0; k < d->ngaps; k++) {
			const struct sgap *g = &d->gaps[k];
			int64_t a = g->ts > w->ts ? g->ts : w->ts;
			int64_t e = g->ts + g->dur < te ? g->ts + g->dur : te;

			if (e <= a)
				continue;
			if ((double)(e - a) < px_ns) {
				small++;
				small_ns += e - a;
				continue;
			}
			gv[ng] = *g;
			gv[ng].ts = a;
			gv[ng].dur = e - a;
			nd_buf_addf(b, "<rect class=\"gap\" x=\"%.2f\" "
			    "y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			    "fill=\"url(#nd-gap)\" stroke=\"#d62728\" "
			    "stroke-width=\"0.5\"><title>idle ",
			    STRIP_X0 + (double)(a - w->ts) * scale, top,
			    (double)(e - a) * scale, nlanes * STRIP_LANE);
			put_dur(b, g->dur);
			nd_buf_addf(b, " at ts_ns %lld; payload ",
			    (long long)g->ts);
			h_text(b, nd_intern_str(s->names, g->payload, NULL));
			nd_buf_adds(b, ", cause ");
			h_text(b, nd_intern_str(s->names, g->cause, NULL));
			nd_buf_adds(b, "</title></rect>\n");
			ng++;
		}
		for (int c = 0; c < SC_N; c++) {
			size_t k0 = 0, k1;

			if (lane[c] < 0)
				continue;
			while (k0 < nclip[i] && clip[i][k0].cls != c)
				k0++;
			for (k1 = k0; k1 < nclip[i] && clip[i][k1].cls == c;)
				k1++;
			strip_lane(r, b, clip[i] + k0, k1 - k0, w->ts, scale,
			    px_ns, top + lane[c] * STRIP_LANE);
		}
		/* the largest gaps, labelled */
		nd_sort(gv, ng, sizeof *gv, sgap_cmp, NULL);
		for (size_t k = 0; k < ng && k < STRIP_LABELS; k++) {
			double x = STRIP_X0 + ((double)(gv[k].ts - w->ts) +
			    (double)gv[k].dur / 2) * scale;

			nd_buf_addf(b, "<text class=\"gap-label\" x=\"%.2f\" "
			    "y=\"%.0f\" font-size=\"10\" fill=\"#b00\" "
			    "text-anchor=\"%s\">", x,
			    top + nlanes * STRIP_LANE + 11,
			    x < STRIP_X0 + 30 ? "start" :
			    x > STRIP_X0 + STRIP_PX - 30 ? "end" : "middle");
			put_dur(b, gv[k].dur);
			nd_buf_adds(b, "</text>\n");
		}
		nd_buf_adds(b, "</g>\n");
		free(gv);
		y += rowh;
	}
	/* the time axis: a tick every 1, 2 or 5 times a power of ten ns,
	 * at most 11 ticks */
	for (tick = 1; tick * 10 < maxdur;) {
		if (tick * 20 >= maxdur) {
			tick *= 2;
			break;
		}
		if (tick * 50 >= maxdur) {
			tick *= 5;
			break;
		}
		tick *= 10;
	}
	nd_buf_addf(b, "<g class=\"axis\"><line x1=\"%d\" y1=\"%.0f\" "
	    "x2=\"%d\" y2=\"%.0f\" stroke=\"#555\"/>\n", STRIP_X0, y + 4,
	    STRIP_X0 + STRIP_PX, y + 4);
	for (int64_t t = 0; t <= maxdur; t += tick) {
		double x = STRIP_X0 + (double)t * scale;

		nd_buf_addf(b, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" "
		    "y2=\"%.0f\" stroke=\"#555\"/><text x=\"%.2f\" y=\"%.0f\" "
		    "font-size=\"10\" text-anchor=\"%s\">", x, y + 4, x, y + 8,
		    x, y + 18, t == 0 ? "start" : x > STRIP_X0 + STRIP_PX - 20 ?
		    "end" : "middle");
		put_dur(b, t);
		nd_buf_adds(b, "</text>\n");
	}
	nd_buf_adds(b, "</g>\n");
	{
		double x = STRIP_X0, ly = y + 40;

		for (int c = 0; c < SC_N; c++) {
			if (lane[c] < 0)
				continue;
			nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
			    "height=\"10\" fill=\"%s\"/><text x=\"%.0f\" "
			    "y=\"%.0f\" font-size=\"11\">%s</text>\n", x,
			    ly - 9, sc_color[c], x + 13, ly, sc_name[c]);
			x += 14 + 7 * (double)strlen(sc_name[c]) + 12;
		}
		nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
		    "height=\"10\" fill=\"url(#nd-gap)\"/><text x=\"%.0f\" "
		    "y=\"%.0f\" font-size=\"11\">idle gap</text>\n", x, ly - 9,
		    x + 13, ly);
	}
	nd_buf_addf(b, "</svg><figcaption>Timeline of step %lld, the steady "
	    "step whose time is closest to the steady median (", (long long)num);
	put_dur(b, r->steady.median);
	nd_buf_addf(b, "), on each device from its own start of the step: "
	    "ops by class, one lane a class; idle gaps (trace-gaps(1), device "
	    "level) hatched red, the %d largest labelled", STRIP_LABELS);
	if (small > 0) {
		nd_buf_addf(b, "; %zu gaps narrower than one pixel (%.0f ns), ",
		    small, px_ns);
		put_dur(b, small_ns);
		nd_buf_adds(b, " in all, not drawn");
	}
	nd_buf_adds(b, ".");
	if (closest >= 0 && closest != pick)
		nd_buf_addf(b, " The closest, step %lld, lost ops to the cap "
		    "of %d ops kept per device.", (long long)r->cl_num[closest],
		    STRIP_RING);
	if (rows < ndevs)
		nd_buf_addf(b, " Devices drawn: %zu of the %zu with step "
		    "windows (of the first %d devices with device ops, those "
		    "with a window of step %lld).", rows, ndevs, STRIP_DEVS,
		    (long long)num);
	nd_buf_adds(b, "</figcaption></figure>\n");
	for (size_t i = 0; i < s->ndev; i++)
		free(clip[i]);
}

static void
h_chart(nd_report *r, nd_buf *b, int section)
{
	if (section == 3)
		svg_steps(r, b);
	else if (section == 4)
		svg_breakdown(r, b);
	else if (section == 6)
		svg_strip(r, b);
	else if (section == 7)
		svg_regions(r, b);
}

void
nd_report_html(nd_report *r, nd_buf *b)
{
	nd_buf md = { 0 };
	size_t i = 0;
	int in_table = 0, in_list = 0, in_p = 0, section = 0;

	nd_report_markdown(r, &md);
	nd_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\"><title>Trace report</title>\n<style>\n"
	    "body{font:14px/1.4 sans-serif;margin:2em auto;max-width:1100px;"
	    "color:#222;padding:0 1em}\n"
	    "table{border-collapse:collapse;margin:.5em 0}\n"
	    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
	    "vertical-align:top}\nth{background:#f0f0f0}\n"
	    "td{max-width:40em;overflow-wrap:anywhere}\n"
	    "code{background:#f4f4f4}\nfigure{margin:1em 0}\n"
	    "figcaption{font-size:12px;color:#555}\n.note{font-size:12px;"
	    "color:#555}\nh2{border-bottom:1px solid #ddd;margin-top:1.5em}\n"
	    "</style></head><body>\n");
	while (i < md.len) {
		char *nl = memchr(md.p + i, '\n', md.len - i);
		size_t n = nl ? (size_t)(nl - (md.p + i)) : md.len - i;
		const char *s = md.p + i;

		i += n + 1;
		if (in_table && (n == 0 || s[0] != '|')) {
			nd_buf_adds(b, "</table>\n");
			in_table = 0;
		}
		if (in_list && (n < 2 || s[0] != '-' || s[1] != ' ')) {
			nd_buf_adds(b, "</ul>\n");
			in_list = 0;
		}
		if (in_p && (n == 0 || s[0] == '#' || s[0] == '|')) {
			nd_buf_adds(b, "</p>\n");
			in_p = 0;
		}
		if (n == 0)
			continue;
		if (n > 3 && memcmp(s, "## ", 3) == 0) {
			if (section > 0)
				h_chart(r, b, section);
			section = s[3] - '0';
			nd_buf_addf(b, "<h2 id=\"s%d\">", section);
			h_esc_inline(b, s + 3, n - 3);
			nd_buf_adds(b, "</h2>\n");
		} else if (n > 4 && memcmp(s, "### ", 4) == 0) {
			nd_buf_adds(b, "<h3>");
			h_esc_inline(b, s + 4, n - 4);
			nd_buf_adds(b, "</h3>\n");
		} else if (n > 2 && memcmp(s, "# ", 2) == 0) {
			nd_buf_adds(b, "<h1>");
			h_esc_inline(b, s + 2, n - 2);
			nd_buf_adds(b, "</h1>\n");
		} else if (s[0] == '|') {
			if (!in_table) {
				nd_buf_adds(b, "<table>\n");
				h_row(b, s, n, "th");
				in_table = 1;
			} else if (n > 3 && memcmp(s, "|---", 4) == 0)
				continue;
			else
				h_row(b, s, n, "td");
		} else if (n > 1 && s[0] == '-' && s[1] == ' ') {
			if (!in_list)
				nd_buf_adds(b, "<ul>\n");
			in_list = 1;
			nd_buf_adds(b, "<li>");
			h_esc_inline(b, s + 2, n - 2);
			nd_buf_adds(b, "</li>\n");
		} else if (n > 2 && memcmp(s, "[^", 2) == 0) {
			const char *c = memchr(s, ':', n);
			size_t k = c ? (size_t)(c - s) + 1 : 0;

			nd_buf_adds(b, "<p class=\"note\"><sup>1</sup>");
			h_esc_inline(b, s + k, n - k);
			nd_buf_adds(b, "</p>\n");
		} else {
			nd_buf_adds(b, in_p ? " " : "<p>");
			in_p = 1;
			h_esc_inline(b, s, n);
		}
	}
	if (in_table)
		nd_buf_adds(b, "</table>\n");
	if (in_list)
		nd_buf_adds(b, "</ul>\n");
	if (in_p)
		nd_buf_adds(b, "</p>\n");
	if (section > 0)
		h_chart(r, b, section);
	nd_buf_adds(b, "</body></html>\n");
	nd_buf_free(&md);
}
