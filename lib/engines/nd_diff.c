/*
 * nd_diff: see nd_diff.h and trace-diff(1).
 */
#include "nd_diff.h"

#include "nd_by.h"
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_name.h"
#include "nd_nest.h"
#include "nd_scan.h"
#include "nd_sort.h"
#include "nd_stepsum.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dim_names[ND_NDIM] = {
	"name", "family", "class", "scope", "cat", NULL
};

static const char *const share_parts[] = {
	"compute", "communication", "memory", "host", "idle", "overlap"
};
#define NPARTS 6

static const char *const step_stats[] = { "median", "p90", "mean", "count" };
#define NSTATS 4

/* ---- one side ---- */

struct dimtab {
	nd_intern *in;
	int64_t *self;		/* the spans nd_scan counts */
	uint64_t *cnt;
	size_t cap;
};

struct pend {
	uint32_t id[ND_NDIM];
};

struct nd_diff_side {
	nd_diff_src *src;
	size_t nsrc;
	struct dimtab dim[ND_NDIM];
	int ndim;		/* dimensions in use (ND_DIM_BY or not) */
	const char *by;
	/* steps (nd_stepsum) */
	nd_stepsum *sum;
	uint64_t njob;
	int applied;		/* warmup/drop-last applied */
	nd_stat steady;
	int nclass;
	const char *cname[2];
	nd_stat cst[2];
	nd_breakdown bd;
	int64_t bd_total;
	/* reading */
	struct pend *pend;
	size_t npend, cappend;
	uint32_t *freel;
	size_t nfree, capfree;
};

static void
dim_grow(struct dimtab *t, uint32_t id)
{
	size_t old = t->cap, c = old;

	if (id < t->cap)
		return;
	nd_grow(&t->self, &c, (size_t)id + 1, sizeof *t->self);
	c = old;
	nd_grow(&t->cnt, &c, (size_t)id + 1, sizeof *t->cnt);
	t->cap = c;
	memset(t->self + old, 0, (t->cap - old) * sizeof *t->self);
	memset(t->cnt + old, 0, (t->cap - old) * sizeof *t->cnt);
}

/* The reading of one side: nd_diff_reader_record feeds the step
 * detection and the exclusive-time engine (nd_scan). */
struct nd_diff_reader {
	nd_diff_side *s;
	const nd_diff_opts *o;
	nd_steps *steps;
	nd_scan *scan;
	nd_by *byk;		/* for nd_by_check */
	int bydim;		/* dimension of --by */
	int64_t cur;		/* current source, -1 before the first */
	int64_t base;		/* the run's id of the side's first source */
	nd_buf tmp;
};

static void
nest_done(void *ctx, const nd_nest_span *sp)
{
	nd_diff_reader *r = ctx;
	nd_diff_side *s = r->s;
	struct pend *p = &s->pend[sp->user];

	for (int d = 0; d < s->ndim; d++) {
		struct dimtab *t = &s->dim[d];

		t->self[p->id[d]] += sp->self_ns;
		t->cnt[p->id[d]]++;
	}
	if (s->nfree == s->capfree)
		nd_grow(&s->freel, &s->capfree, s->nfree + 1, sizeof *s->freel);
	s->freel[s->nfree++] = (uint32_t)sp->user;
}

/* nd_scan forgets what it counted: the spans before the first device op,
 * or a reading to do again. */
static void
nest_reset(void *ctx)
{
	nd_diff_reader *r = ctx;
	nd_diff_side *s = r->s;

	for (int d = 0; d < s->ndim; d++) {
		struct dimtab *t = &s->dim[d];

		if (t->cap > 0) {
			memset(t->self, 0, t->cap * sizeof *t->self);
			memset(t->cnt, 0, t->cap * sizeof *t->cnt);
		}
	}
	s->npend = 0;
	s->nfree = 0;
}

static const char absent_key[1] = { '\0' };

static uint32_t
key_id(struct dimtab *t, nd_str v)
{
	uint32_t id;

	if (v.p == NULL)
		id = nd_intern_id(t->in, absent_key, 1);
	else
		id = nd_intern_id(t->in, v.p, v.n);
	dim_grow(t, id);
	return id;
}

static nd_str
by_value(const nd_event *ev, const char *by, nd_buf *tmp)
{
	nd_jval v;
	const nd_jval *pv = NULL;

	if (strncmp(by, "args.", 5) == 0) {
		if (nd_event_arg(ev, by + 5, &v))	/* 1: found */
			pv = &v;
	} else
		pv = nd_event_get(ev, by);
	if (pv == NULL || pv->type == ND_JNONE || pv->type == ND_JNULL)
		return ND_STR_NONE;
	nd_buf_reset(tmp);
	if (pv->type == ND_JSTR)
		nd_json_unescape(pv, tmp);
	else
		nd_buf_add(tmp, pv->raw, pv->len);
	return (nd_str){ tmp->p != NULL ? tmp->p : "", tmp->len };
}

static void
flush_steps(nd_diff_side *s, nd_steps *steps)
{
	const nd_step *st;
	size_t n = nd_steps_end_source(steps, &st);
	nd_stepsum_rec x;

	if (s->sum == NULL)
		s->sum = nd_stepsum_new();
	memset(&x, 0, sizeof x);
	for (size_t i = 0; i < n; i++) {
		x.num = st[i].num;
		x.ts = st[i].ts;
		x.dur = st[i].dur;
		x.wait = st[i].wait_ns;
		x.bd = st[i].bd;
		nd_stepsum_add(s->sum, &x);
	}
	nd_steps_reset(steps);
}

/* The figures of the step summary (nd_stepsum) that the deltas use. */
static void
summarise_steps(nd_diff_side *s, const nd_diff_opts *o)
{
	const nd_stepsum_res *r;

	if (s->sum == NULL)
		s->sum = nd_stepsum_new();
	nd_stepsum_finish(s->sum, o->warmup, o->drop_last);
	r = nd_stepsum_result(s->sum);
	s->njob = r->nsteps;
	s->applied = r->applied;
	s->steady = r->steady;
	s->nclass = r->cl.nclass;
	for (int c = 0; c < r->cl.nclass && c < 2; c++) {
		s->cname[c] = r->cl.c[c].name;
		s->cst[c] = r->cl.c[c].st;
	}
	s->bd = r->bd;
	s->bd_total = r->bd_total;
}

static void
add_src(nd_diff_side *s, uint32_t src, const nd_source_info *si)
{
	while (s->nsrc <= src) {
		s->src = nd_xrealloc(s->src, (s->nsrc + 1) * sizeof *s->src);
		memset(&s->src[s->nsrc], 0, sizeof *s->src);
		s->nsrc++;
	}
	if (s->src[src].path == NULL && si != NULL && si->path != NULL)
		s->src[src].path = nd_xstrdup(si->path);
}

/* The key of dimension d of a span (by_value's text stays in r->tmp until
 * the next call). */
static nd_str
dim_value(nd_diff_reader *r, const nd_event *ev, int d)
{
	switch (d) {
	case ND_DIM_NAME:
		return ev->name;
	case ND_DIM_FAMILY:
		return ev->family;
	case ND_DIM_CLASS:
		return ev->cls;
	case ND_DIM_SCOPE:
		return ev->scope;
	case ND_DIM_CAT:
		return ev->cat;
	default:
		return by_value(ev, r->s->by, &r->tmp);
	}
}

/* nd_scan's record: a span it counts gets a slot with its key ids until
 * its exclusive time is final. */
static uint64_t
side_span(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	nd_diff_reader *r = ctx;
	nd_diff_side *s = r->s;
	uint32_t slot;

	(void)si;
	if (s->nfree > 0)
		slot = s->freel[--s->nfree];
	else {
		if (s->npend == s->cappend)
			nd_grow(&s->pend, &s->cappend, s->npend + 1,
			    sizeof *s->pend);
		slot = (uint32_t)s->npend++;
	}
	for (int d = 0; d < s->ndim; d++)
		s->pend[slot].id[d] = key_id(&s->dim[d], dim_value(r, ev, d));
	return slot;
}

void
nd_diff_reader_record(nd_diff_reader *r, const nd_event *ev,
    const nd_source_info *si)
{
	nd_diff_side *s = r->s;
	nd_span_role sr;
	uint32_t src;

	if (r->base < 0)
		r->base = ev->source;
	/* the side's own source ids, from 0 */
	src = (uint32_t)(ev->source - (uint32_t)r->base);
	/* a source begins (nd_diff_reader_end_source ended the one
	 * before) */
	if (r->cur < 0) {
		r->cur = ev->source;
		add_src(s, src, si);
	}
	if (ev->type == ND_EV_META) {
		nd_steps_meta(r->steps, ev);
		free(s->src[src].run_id);
		s->src[src].run_id = nd_jstr_dup(nd_event_get(ev, "run_id"));
	} else if (ev->type == ND_EV_END) {
		free(s->src[src].sha256);
		s->src[src].sha256 = nd_jstr_dup(nd_event_get(ev, "sha256"));
	} else if (ev->type == ND_EV_SPAN && (ev->has & ND_HAS_TS) &&
	    (ev->has & ND_HAS_DUR)) {
		nd_span_role_of(ev, r->o->re, &sr);
		nd_steps_add(r->steps, ev, &sr);
		nd_by_note(r->byk, ev, 0, dim_value(r, ev, r->bydim).p != NULL);
	}
	(void)nd_scan_feed(r->scan, ev, si);
}

void
nd_diff_reader_end_source(nd_diff_reader *r)
{
	if (r->cur >= 0)
		flush_steps(r->s, r->steps);
	nd_scan_end_source(r->scan);
	r->cur = -1;
}

int
nd_diff_reader_end(nd_diff_reader *r)
{
	nd_scan_res res;

	if (r->cur >= 0)
		flush_steps(r->s, r->steps);
	r->cur = -1;
	nd_scan_end_reading(r->scan, &res);
	return nd_scan_again(r->scan);
}

void
nd_diff_reader_restart(nd_diff_reader *r)
{
	nd_diff_side *s = r->s;

	nd_scan_restart(r->scan);
	for (size_t i = 0; i < s->nsrc; i++) {
		free(s->src[i].path);
		free(s->src[i].sha256);
		free(s->src[i].run_id);
	}
	s->nsrc = 0;
	nd_stepsum_free(s->sum);
	s->sum = NULL;
	r->cur = -1;
	r->base = -1;
}

nd_diff_reader *
nd_diff_reader_new(const nd_diff_opts *o)
{
	nd_diff_side *s = nd_xcalloc(1, sizeof *s);
	nd_steps_opts so;
	nd_scan_opts sco;
	const char *bad;
	nd_diff_reader *rp = nd_xcalloc(1, sizeof *rp);
	nd_scan_cb scb = { rp, side_span, nest_done, nest_reset };

	rp->s = s;
	rp->o = o;
	rp->cur = -1;
	rp->base = -1;
	rp->bydim = ND_DIM_BY;
	rp->byk = nd_by_parse(o->by, NULL, 0, &bad);
	if (rp->byk == NULL)
		nd_die(ND_EXIT_ERROR, "--by: no key in '%s'", o->by);
	s->by = o->by;
	s->ndim = ND_DIM_BY;
	for (int d = 0; d < ND_DIM_BY; d++)
		if (strcmp(o->by, dim_names[d]) == 0) {
			s->by = NULL;
			rp->bydim = d;
		}
	if (s->by != NULL)
		s->ndim = ND_NDIM;
	for (int d = 0; d < s->ndim; d++)
		s->dim[d].in = nd_intern_new();
	memset(&so, 0, sizeof so);
	so.re = o->re;
	rp->steps = nd_steps_new(&so);
	/* device ops, else every span */
	memset(&sco, 0, sizeof sco);
	sco.timelines = ND_TL_DEVICE;
	sco.rule = ND_NEST_CLIP;
	sco.type = "span";
	rp->scan = nd_scan_new(&sco, &scb);
	return rp;
}

nd_diff_side *
nd_diff_reader_finish(nd_diff_reader *r, nd_err *err)
{
	nd_diff_side *s = r->s;
	int bad = nd_by_check(r->byk, "--by", err) != 0;

	if (!bad)
		summarise_steps(s, r->o);
	free(s->pend);
	free(s->freel);
	s->pend = NULL;
	s->freel = NULL;
	if (bad)
		return NULL;	/* the side is the reader's to free */
	r->s = NULL;
	return s;
}

void
nd_diff_reader_free(nd_diff_reader *r)
{
	if (r == NULL)
		return;
	nd_by_free(r->byk);
	nd_scan_free(r->scan);
	nd_steps_free(r->steps);
	nd_buf_free(&r->tmp);
	nd_diff_side_free(r->s);
	free(r);
}


void
nd_diff_side_free(nd_diff_side *s)
{
	/* NULL: nothing to free */
	if (s != NULL) {
		nd_stepsum_free(s->sum);
		for (size_t i = 0; i < s->nsrc; i++) {
			nd_diff_src *x = &s->src[i];

			free(x->path);
			free(x->sha256);
			free(x->run_id);
		}
		free(s->src);
		for (int d = 0; d < s->ndim; d++) {
			nd_intern_free(s->dim[d].in);
			free(s->dim[d].self);
			free(s->dim[d].cnt);
		}
		free(s);
	}
}

size_t
nd_diff_side_sources(const nd_diff_side *s, const nd_diff_src **out)
{
	*out = s->src;
	return s->nsrc;
}

uint64_t
nd_diff_side_steps(const nd_diff_side *s)
{
	return s->njob;
}

const nd_stat *
nd_diff_side_steady(const nd_diff_side *s)
{
	return &s->steady;
}

/* ---- deltas ---- */

const char *
nd_diff_status_name(int st)
{
	static const char *const n[] = {
		"unchanged", "regressed", "improved", "new", "vanished"
	};

	return st >= 0 && st <= ND_ST_VANISHED ? n[st] : "unchanged";
}

static double
roundn(double x, double scale)
{
	return isfinite(x) ? round(x * scale) / scale : x;
}

static nd_delta *
new_delta(nd_diff *d, size_t *cap)
{
	nd_delta *x;

	if (d->n == *cap)
		nd_grow(&d->d, cap, d->n + 1, sizeof *d->d);
	x = &d->d[d->n++];
	memset(x, 0, sizeof *x);
	return x;
}

static void
set_values(nd_delta *x, double b, double a, double scale)
{
	x->has_before = x->has_after = 1;
	x->before = b;
	x->after = a;
	x->delta = roundn(a - b, scale);
	if (b != 0) {
		x->has_pct = 1;
		x->pct = roundn(100.0 * (a - b) / b, 1e4);
	}
}

static int64_t
stat_val(const nd_stat *st, int k)
{
	switch (k) {
	case 0: return st->median;
	case 1: return st->p90;
	case 2: return st->mean;
	default: return (int64_t)st->count;
	}
}

static void
step_deltas(nd_diff *d, size_t *cap, const char *cls, const nd_stat *b,
    const nd_stat *a)
{
	char m[64];

	for (int k = 0; k < NSTATS; k++) {
		nd_delta *x = new_delta(d, cap);

		if (strcmp(cls, "all") == 0)
			snprintf(m, sizeof m, "step.%s", step_stats[k]);
		else
			snprintf(m, sizeof m, "step.%s.%s", cls, step_stats[k]);
		x->kind = ND_DK_STEP;
		x->metric = nd_xstrdup(m);
		x->cls = cls;
		x->stat = step_stats[k];
		set_values(x, (double)stat_val(b, k), (double)stat_val(a, k), 1);
	}
}

static int64_t
bd_part(const nd_breakdown *bd, int k)
{
	switch (k) {
	case 0: return bd->compute_ns;
	case 1: return bd->communication_ns;
	case 2: return bd->memory_ns;
	case 3: return bd->host_ns;
	case 4: return bd->idle_ns;
	default: return bd->overlap_ns;
	}
}

static const char *
dim_prefix(int dim, const char *by)
{
	if (dim == ND_DIM_NAME)
		return "op";
	return dim == ND_DIM_BY ? by : dim_names[dim];
}

static int
key_cmp(const void *a, const void *b, void *ctx)
{
	const nd_delta *x = a, *y = b;
	size_t n;
	int c;

	(void)ctx;
	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	if ((x->key == NULL) != (y->key == NULL))
		return x->key == NULL ? 1 : -1;
	if (x->key == NULL)
		return 0;
	n = x->key_len < y->key_len ? x->key_len : y->key_len;
	if ((c = memcmp(x->key, y->key, n)) != 0)
		return c;
	return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static void
key_deltas(nd_diff *d, size_t *cap, const nd_diff_side *b,
    const nd_diff_side *a, int dim, const nd_diff_opts *o)
{
	const struct dimtab *tb = &b->dim[dim], *ta = &a->dim[dim];
	double sb = b->njob > 0 ? (double)b->njob : 1;
	double sa = a->njob > 0 ? (double)a->njob : 1;
	nd_buf m = ND_BUF_INIT;
	size_t first = d->n;

	for (int side = 0; side < 2; side++) {
		const struct dimtab *t = side == 0 ? tb : ta;
		const struct dimtab *u = side == 0 ? ta : tb;
		uint32_t n = nd_intern_count(t->in);

		for (uint32_t id = 0; id < n; id++) {
			size_t len;
			const char *k = nd_intern_str(t->in, id, &len);
			uint32_t uid = nd_intern_find(u->in, k, len);
			uint64_t ct = t->cnt[id];
			uint64_t cu = uid != UINT32_MAX ? u->cnt[uid] : 0;
			int64_t st = t->self[id];
			int64_t su = uid != UINT32_MAX ? u->self[uid] : 0;
			double vb, va, cb, ca;
			nd_delta *x;

			if (ct == 0)
				continue;
			if (side == 1 && cu > 0)
				continue;	/* done from the before side */
			x = new_delta(d, cap);
			x->kind = ND_DK_KEY;
			x->dim = dim;
			if (!(len == 1 && k[0] == '\0')) {
				x->key = nd_xstrndup(k, len);
				x->key_len = len;
			}
			nd_buf_reset(&m);
			nd_buf_adds(&m, dim_prefix(dim, o->by));
			nd_buf_addc(&m, ':');
			if (x->key != NULL)
				nd_buf_add(&m, k, len);
			x->metric = nd_xstrndup(m.p, m.len);
			vb = side == 0 ? (double)st : (double)su;
			va = side == 0 ? (double)su : (double)st;
			cb = side == 0 ? (double)ct : (double)cu;
			ca = side == 0 ? (double)cu : (double)ct;
			set_values(x, round(vb / sb), round(va / sa), 1);
			x->count_before = roundn(cb / sb, 1e4);
			x->count_after = roundn(ca / sa, 1e4);
			if (cb == 0)
				x->status = ND_ST_NEW;
			else if (ca == 0)
				x->status = ND_ST_VANISHED;
			else if (x->delta > 0 && (!x->has_pct ||
			    x->pct >= o->min_pct))
				x->status = ND_ST_REGRESSED;
			else if (x->delta < 0 && -x->pct >= o->min_pct)
				x->status = ND_ST_IMPROVED;
			else
				x->status = ND_ST_UNCHANGED;
		}
	}
	nd_buf_free(&m);
	nd_sort(d->d + first, d->n - first, sizeof *d->d, key_cmp, NULL);
	d->key_first[dim] = first;
	d->key_n[dim] = d->n - first;
}

void
nd_diff_compute(const nd_diff_side *b, const nd_diff_side *a,
    const nd_diff_opts *o, nd_diff *out)
{
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	out->by = o->by;
	out->by_dim = ND_DIM_BY;
	for (int d = 0; d < ND_DIM_BY; d++)
		if (strcmp(o->by, dim_names[d]) == 0)
			out->by_dim = d;
	out->steps_before = b->njob;
	out->steps_after = a->njob;
	out->applied_before = b->applied;
	out->applied_after = a->applied;
	if (b->steady.count > 0 && a->steady.count > 0) {
		step_deltas(out, &cap, "all", &b->steady, &a->steady);
		if (b->nclass == 2 && a->nclass == 2) {
			out->classes = 1;
			for (int c = 0; c < 2; c++)
				step_deltas(out, &cap, b->cname[c], &b->cst[c],
				    &a->cst[c]);
		}
	}
	if (b->bd_total > 0 && a->bd_total > 0)
		for (int k = 0; k < NPARTS; k++) {
			nd_delta *x = new_delta(out, &cap);
			char m[64];

			snprintf(m, sizeof m, "share.%s", share_parts[k]);
			x->kind = ND_DK_SHARE;
			x->metric = nd_xstrdup(m);
			x->part = share_parts[k];
			set_values(x, roundn((double)bd_part(&b->bd, k) /
			    (double)b->bd_total, 1e6), roundn((double)bd_part(
			    &a->bd, k) / (double)a->bd_total, 1e6), 1e6);
		}
	out->nsummary = out->n;
	for (int d = 0; d < b->ndim; d++)
		key_deltas(out, &cap, b, a, d, o);
	for (size_t i = 0; i < out->key_n[out->by_dim]; i++)
		out->nstatus[out->d[out->key_first[out->by_dim] + i].status]++;
}

void
nd_diff_free(nd_diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->d[i].metric);
		free(d->d[i].key);
	}
	free(d->d);
	memset(d, 0, sizeof *d);
}

const nd_delta *
nd_diff_find(const nd_diff *d, const char *metric)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->d[i].metric, metric) == 0)
			return &d->d[i];
	return NULL;
}

/* ---- rules ---- */

static int
in_list(const char *s, size_t n, const char *const *list, size_t nl)
{
	for (size_t i = 0; i < nl; i++)
		if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0)
			return 1;
	return 0;
}

/* Metric kind: ND_DK_* or 0 when unknown. */
static int
metric_kind(const char *m, size_t n)
{
	const char *colon = memchr(m, ':', n);

	if (colon != NULL) {
		for (const char *p = m; p < colon; p++)
			if (!isalnum((unsigned char)*p) && *p != '_' &&
			    *p != '.' && *p != '-')
				return 0;
		return colon > m && colon + 1 < m + n ? ND_DK_KEY : 0;
	}
	if (n > 6 && memcmp(m, "share.", 6) == 0)
		return in_list(m + 6, n - 6, share_parts, NPARTS) ?
		    ND_DK_SHARE : 0;
	if (n > 5 && memcmp(m, "step.", 5) == 0) {
		const char *s = m + 5, *dot = memchr(s, '.', n - 5);
		static const char *const cls[] = { "light", "heavy" };

		if (dot == NULL)
			return in_list(s, n - 5, step_stats, NSTATS) ?
			    ND_DK_STEP : 0;
		if (!in_list(s, (size_t)(dot - s), cls, 2))
			return 0;
		return in_list(dot + 1, (size_t)(m + n - dot - 1), step_stats,
		    NSTATS) ? ND_DK_STEP : 0;
	}
	return 0;
}

/* VALUE: [+-]NUMBER followed by %, or for a duration metric a unit. */
static int
parse_value(const char *v, int kind, int count, nd_rule *r, char *err,
    size_t errlen)
{
	int neg = 0;
	size_t n = strlen(v);
	char *end;
	double x;

	if (*v == '+' || *v == '-') {
		neg = *v == '-';
		v++;
		n--;
	}
	if (n == 0 || !(isdigit((unsigned char)*v) || *v == '.')) {
		snprintf(err, errlen, "missing number after the comparison");
		return -1;
	}
	if (v[n - 1] == '%') {
		x = strtod(v, &end);
		if (end != v + n - 1 || !isfinite(x)) {
			snprintf(err, errlen, "bad percentage");
			return -1;
		}
		r->unit = ND_RU_PCT;
		r->value = neg ? -x : x;
		return 0;
	}
	r->unit = ND_RU_ABS;
	if (kind == ND_DK_SHARE || count) {
		x = strtod(v, &end);
		if (*end != '\0' || !isfinite(x)) {
			snprintf(err, errlen, "bad number (%s take a plain "
			    "number or a percentage)", count ? "counts" :
			    "shares");
			return -1;
		}
		if (kind == ND_DK_SHARE && x > 1) {
			snprintf(err, errlen, "a share change is at most 1");
			return -1;
		}
	} else {
		int64_t ns;

		if (nd_parse_duration(v, &ns) != 0) {
			snprintf(err, errlen, "bad duration (a number with "
			    "ns, us, ms or s, or a percentage)");
			return -1;
		}
		x = (double)ns;
	}
	r->value = neg ? -x : x;
	return 0;
}

int
nd_rule_parse(const char *text, int level, nd_rule *r, char *err,
    size_t errlen)
{
	size_t n = strlen(text), i, ms, me;
	char *val, *q;
	int kind = 0;

	memset(r, 0, sizeof r[0]);
	/* the comparison: the last '>' or '<' (a value never holds one) */
	for (i = n; i > 0; i--)
		if (text[i - 1] == '>' || text[i - 1] == '<')
			break;
	if (i == 0) {
		snprintf(err, errlen, "expected METRIC>VALUE or METRIC<VALUE");
		return -1;
	}
	i--;
	/* the metric, without blanks around it (a key may hold blanks) */
	for (ms = 0; ms < i && isspace((unsigned char)text[ms]); ms++)
		;
	for (me = i; me > ms && isspace((unsigned char)text[me - 1]); me--)
		;
	kind = metric_kind(text + ms, me - ms);
	if (kind == 0) {
		snprintf(err, errlen, "unknown metric '%.*s' (step.median, "
		    "step.p90, step.mean, step.count, step.heavy.STAT, "
		    "share.PART, op:NAME, KEY:VALUE)", (int)(me - ms),
		    text + ms);
		return -1;
	}
	r->gt = text[i] == '>';
	r->metric = nd_xstrndup(text + ms, me - ms);
	/* the value, without any blanks */
	val = q = nd_xmalloc(n - i + 1);
	for (const char *p = text + i + 1; *p; p++)
		if (!isspace((unsigned char)*p))
			*q++ = *p;
	*q = '\0';
	if (parse_value(val, kind, kind == ND_DK_STEP &&
	    strcmp(r->metric + strlen(r->metric) - 5, "count") == 0,
	    r, err, errlen) != 0) {
		free(r->metric);
		r->metric = NULL;
		free(val);
		return -1;
	}
	{
		/* canonical id: METRIC OP VALUE, the sign explicit */
		nd_buf b = ND_BUF_INIT;

		nd_buf_adds(&b, r->metric);
		nd_buf_addc(&b, r->gt ? '>' : '<');
		if (val[0] != '+' && val[0] != '-')
			nd_buf_addc(&b, '+');
		nd_buf_adds(&b, val);
		r->id = nd_xstrndup(b.p, b.len);
		nd_buf_free(&b);
	}
	r->level = level;
	free(val);
	return 0;
}

void
nd_rule_free(nd_rule *r)
{
	free(r->id);
	free(r->metric);
	memset(r, 0, sizeof *r);
}

size_t
nd_rule_defaults(nd_rule *out)
{
	static const struct { const char *t; int level; } def[] = {
		{ "step.median>+5%", ND_RULE_FAIL },
		{ "step.p90>+10%", ND_RULE_FAIL },
		{ "share.communication>+0.05", ND_RULE_WARN },
		{ "share.idle>+0.05", ND_RULE_WARN },
	};
	char err[200];

	for (size_t i = 0; i < 4; i++)
		(void)nd_rule_parse(def[i].t, def[i].level, &out[i], err,
		    sizeof err);
	return 4;
}

const char *
nd_verdict_name(int status)
{
	return status == ND_RULE_FAIL ? "fail" : status == ND_RULE_WARN ?
	    "warn" : "pass";
}

/* Dimension of a key metric prefix, or -1. */
static int
prefix_dim(const nd_diff *d, const char *m, size_t n)
{
	if (n == 2 && memcmp(m, "op", 2) == 0)
		return ND_DIM_NAME;
	for (int k = 0; k < ND_DIM_BY; k++)
		if (strlen(dim_names[k]) == n && memcmp(dim_names[k], m, n) == 0)
			return k;
	if (d->by_dim == ND_DIM_BY && strlen(d->by) == n &&
	    memcmp(d->by, m, n) == 0)
		return ND_DIM_BY;
	return -1;
}

int
nd_diff_verdict(const nd_diff *d, const nd_rule *rules, size_t n,
    nd_verdict *v, char *err, size_t errlen)
{
	memset(v, 0, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		const nd_rule *r = &rules[i];
		const nd_delta *x = nd_diff_find(d, r->metric);
		double meas;
		int inf = 0, fire;

		if (strchr(r->metric, ':') != NULL &&
		    prefix_dim(d, r->metric, (size_t)(strchr(r->metric, ':') -
		    r->metric)) < 0) {
			snprintf(err, errlen, "invalid rule '%s': key '%.*s' is "
			    "not aggregated (op, name, family, class, scope, "
			    "cat, or the --by key)", r->id,
			    (int)(strchr(r->metric, ':') - r->metric), r->metric);
			nd_verdict_free(v);
			return -1;
		}
		if (x == NULL) {
			if (strchr(r->metric, ':') != NULL)
				continue;	/* absent on both sides: no change */
			v->missing = nd_xrealloc(v->missing, (v->nmissing + 1) *
			    sizeof *v->missing);
			v->missing[v->nmissing++] = r->id;
			continue;
		}
		if (r->unit == ND_RU_PCT) {
			if (x->has_pct)
				meas = x->pct;
			else if (x->delta != 0) {
				inf = 1;
				meas = x->delta > 0 ? INFINITY : -INFINITY;
			} else
				meas = 0;
		} else
			meas = x->delta;
		fire = r->gt ? meas > r->value : meas < r->value;
		if (!fire)
			continue;
		v->fired = nd_xrealloc(v->fired, (v->nfired + 1) *
		    sizeof *v->fired);
		v->fired[v->nfired].rule = r;
		v->fired[v->nfired].d = x;
		v->fired[v->nfired].measured = meas;
		v->fired[v->nfired].inf = inf;
		v->nfired++;
		if (r->level > v->status)
			v->status = r->level;
	}
	return 0;
}

void
nd_verdict_free(nd_verdict *v)
{
	free(v->fired);
	free(v->missing);
	memset(v, 0, sizeof *v);
}

/* ---- output ---- */

static void
put_num(nd_jw *w, const char *k, double x, int integer)
{
	nd_jw_key(w, k);
	if (integer)
		nd_jw_int(w, (int64_t)llround(x));
	else
		nd_jw_dbl(w, x);
}

static void
put_values(nd_jw *w, const nd_delta *x)
{
	int ns = x->kind == ND_DK_KEY || (x->kind == ND_DK_STEP &&
	    strcmp(x->stat, "count") != 0);
	int integer = x->kind != ND_DK_SHARE;

	put_num(w, ns ? "before_ns" : "before", x->before, integer);
	put_num(w, ns ? "after_ns" : "after", x->after, integer);
	put_num(w, ns ? "delta_ns" : "delta", x->delta, integer);
	nd_jw_key(w, "pct");
	if (x->has_pct)
		nd_jw_dbl(w, roundn(x->pct, 100));
	else
		nd_jw_null(w);
}

void
nd_diff_write_deltas(nd_buf *b, const nd_diff *d)
{
	nd_jw w;
	size_t first = d->key_first[d->by_dim], nk = d->key_n[d->by_dim];

	for (size_t i = 0; i < d->nsummary; i++) {
		const nd_delta *x = &d->d[i];

		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", "delta");
		nd_jw_kcstr(&w, "metric", x->metric);
		if (x->kind == ND_DK_STEP) {
			nd_jw_kcstr(&w, "kind", "step");
			nd_jw_kcstr(&w, "class", x->cls);
			nd_jw_kcstr(&w, "stat", x->stat);
		} else {
			nd_jw_kcstr(&w, "kind", "share");
			nd_jw_kcstr(&w, "part", x->part);
		}
		put_values(&w, x);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
	}
	for (size_t i = 0; i < nk; i++) {
		const nd_delta *x = &d->d[first + i];

		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", "delta");
		nd_jw_kcstr(&w, "metric", x->metric);
		nd_jw_kcstr(&w, "kind", "key");
		nd_jw_kcstr(&w, "by", d->by);
		nd_jw_key(&w, "key");
		if (x->key != NULL)
			nd_jw_str(&w, x->key, x->key_len);
		else
			nd_jw_null(&w);
		put_values(&w, x);
		nd_jw_kdbl(&w, "count_before", x->count_before);
		nd_jw_kdbl(&w, "count_after", x->count_after);
		nd_jw_kcstr(&w, "status", nd_diff_status_name(x->status));
		nd_jw_kuint(&w, "rank", i + 1);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
	}
}

static void
put_side(nd_jw *w, const nd_diff_side *s)
{
	nd_jw_obj(w);
	nd_jw_key(w, "sources");
	nd_jw_arr(w);
	for (size_t i = 0; i < s->nsrc; i++) {
		nd_jw_obj(w);
		if (s->src[i].path != NULL)
			nd_jw_kcstr(w, "source", s->src[i].path);
		if (s->src[i].sha256 != NULL)
			nd_jw_kcstr(w, "sha256", s->src[i].sha256);
		if (s->src[i].run_id != NULL)
			nd_jw_kcstr(w, "run_id", s->src[i].run_id);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_kuint(w, "steps", s->njob);
	nd_jw_kuint(w, "steady_steps", s->steady.count);
	nd_jw_kbool(w, "warmup_applied", s->applied);
	nd_jw_obj_end(w);
}

void
nd_diff_put_side(nd_jw *w, const nd_diff_side *s)
{
	put_side(w, s);
}

static void
put_fired(nd_jw *w, const nd_fired *f)
{
	const nd_rule *r = f->rule;

	nd_jw_obj(w);
	nd_jw_kcstr(w, "rule", r->id);
	nd_jw_kcstr(w, "level", r->level == ND_RULE_FAIL ? "fail" : "warn");
	nd_jw_kcstr(w, "metric", r->metric);
	nd_jw_key(w, "measured");
	if (f->inf)
		nd_jw_null(w);
	else
		nd_jw_dbl(w, roundn(f->measured, r->unit == ND_RU_PCT ? 100 :
		    1e6));
	nd_jw_kcstr(w, "unit", r->unit == ND_RU_PCT ? "%" :
	    f->d->kind == ND_DK_SHARE ? "share" : (f->d->kind == ND_DK_STEP &&
	    strcmp(f->d->stat, "count") == 0) ? "count" : "ns");
	nd_jw_kdbl(w, "threshold", r->value);
	put_values(w, f->d);
	nd_jw_obj_end(w);
}

void
nd_diff_write_verdict(nd_buf *b, const nd_diff *d, const nd_verdict *v,
    const nd_rule *rules, size_t nrules, const nd_diff_side *before,
    const nd_diff_side *after, char **warnings, size_t nwarn)
{
	nd_jw w;

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "verdict");
	nd_jw_kcstr(&w, "status", nd_verdict_name(v->status));
	nd_jw_kint(&w, "exit", v->status == ND_RULE_FAIL ? 1 : 0);
	nd_jw_key(&w, "fired");
	nd_jw_arr(&w);
	for (size_t i = 0; i < v->nfired; i++)
		put_fired(&w, &v->fired[i]);
	nd_jw_arr_end(&w);
	nd_jw_key(&w, "rules");
	nd_jw_arr(&w);
	for (size_t i = 0; i < nrules; i++) {
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "rule", rules[i].id);
		nd_jw_kcstr(&w, "level", rules[i].level == ND_RULE_FAIL ?
		    "fail" : "warn");
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_key(&w, "missing");
	nd_jw_arr(&w);
	for (size_t i = 0; i < v->nmissing; i++)
		nd_jw_cstr(&w, v->missing[i]);
	nd_jw_arr_end(&w);
	nd_jw_kcstr(&w, "by", d->by);
	nd_jw_key(&w, "keys");
	nd_jw_obj(&w);
	for (int s = 0; s <= ND_ST_VANISHED; s++)
		nd_jw_kuint(&w, nd_diff_status_name(s), d->nstatus[s]);
	nd_jw_obj_end(&w);
	nd_jw_key(&w, "before");
	put_side(&w, before);
	nd_jw_key(&w, "after");
	put_side(&w, after);
	nd_jw_key(&w, "warnings");
	nd_jw_arr(&w);
	for (size_t i = 0; i < nwarn; i++)
		nd_jw_cstr(&w, warnings[i]);
	nd_jw_arr_end(&w);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

/* ---- table ---- */

static void
fmt_pct(char *out, size_t n, const nd_delta *x)
{
	if (x->has_pct)
		snprintf(out, n, "%+.2f%%", x->pct);
	else
		snprintf(out, n, "%s", x->delta > 0 ? "new" : "-");
}

static void
table_row(nd_buf *b, const nd_delta *x, const char *label)
{
	char vb[32], va[32], vd[32], vp[32];
	size_t start;

	if (x->kind == ND_DK_SHARE) {
		snprintf(vb, sizeof vb, "%.4f", x->before);
		snprintf(va, sizeof va, "%.4f", x->after);
		snprintf(vd, sizeof vd, "%+.4f", x->delta);
	} else if (x->kind == ND_DK_STEP && strcmp(x->stat, "count") == 0) {
		snprintf(vb, sizeof vb, "%.0f", x->before);
		snprintf(va, sizeof va, "%.0f", x->after);
		snprintf(vd, sizeof vd, "%+.0f", x->delta);
	} else {
		nd_fmt_dur_f(vb, sizeof vb, x->before, 0);
		nd_fmt_dur_f(va, sizeof va, x->after, 0);
		nd_fmt_dur_f(vd, sizeof vd, x->delta, 1);
	}
	fmt_pct(vp, sizeof vp, x);
	/* the label column is 34 wide: nd_name_short to fit */
	nd_buf_adds(b, "  ");
	start = b->len;
	nd_name_short(label, strlen(label), 34, b);
	for (size_t w = nd_text_width(b->p + start, b->len - start); w < 34;
	    w++)
		nd_buf_addc(b, ' ');
	nd_buf_addf(b, " %12s %12s %12s %9s", vb, va, vd, vp);
	if (x->kind == ND_DK_KEY)
		nd_buf_addf(b, "  %8.2f %8.2f", x->count_before, x->count_after);
	nd_buf_addc(b, '\n');
}

static void
key_list(nd_buf *b, const nd_diff *d, int status, size_t top, int reverse)
{
	size_t first = d->key_first[d->by_dim], nk = d->key_n[d->by_dim];
	size_t shown = 0;

	if (d->nstatus[status] == 0)
		return;
	nd_buf_addf(b, "%s (%llu)\n", nd_diff_status_name(status),
	    (unsigned long long)d->nstatus[status]);
	for (size_t j = 0; j < nk; j++) {
		const nd_delta *x = &d->d[first + (reverse ? nk - 1 - j : j)];

		if (x->status != status)
			continue;
		if (top > 0 && shown == top) {
			nd_buf_addf(b, "  ... %llu more\n", (unsigned long long)
			    (d->nstatus[status] - shown));
			break;
		}
		table_row(b, x, x->key != NULL ? x->key : "(none)");
		shown++;
	}
}

void
nd_diff_write_table(nd_buf *b, const nd_diff *d, const nd_verdict *v,
    size_t top)
{
	nd_buf_addf(b, "%-36s %12s %12s %12s %9s\n", "step time (steady)",
	    "before", "after", "delta", "pct");
	if (d->nsummary == 0)
		nd_buf_adds(b, "  (no steps on one side)\n");
	for (size_t i = 0; i < d->nsummary; i++) {
		const nd_delta *x = &d->d[i];
		char label[64];

		if (x->kind == ND_DK_SHARE && (i == 0 ||
		    d->d[i - 1].kind != ND_DK_SHARE))
			nd_buf_addf(b, "%-36s %12s %12s %12s %9s\n",
			    "time shares (steady)", "before", "after",
			    "points", "pct");
		if (x->kind == ND_DK_STEP)
			snprintf(label, sizeof label, "%s%s%s",
			    strcmp(x->cls, "all") == 0 ? "" : x->cls,
			    strcmp(x->cls, "all") == 0 ? "" : " ", x->stat);
		else
			snprintf(label, sizeof label, "%s", x->part);
		table_row(b, x, label);
	}
	if (d->nsummary > 0 && (!d->applied_before || !d->applied_after))
		nd_buf_addf(b, "  (too few steps %s: every step is steady, "
		    "none left out)\n", !d->applied_before ? (!d->applied_after ?
		    "on both sides" : "before") : "after");
	nd_buf_addf(b, "exclusive time per step by %s (steps: before %llu, "
	    "after %llu); last columns: count per step before, after\n",
	    d->by, (unsigned long long)d->steps_before,
	    (unsigned long long)d->steps_after);
	key_list(b, d, ND_ST_REGRESSED, top, 0);
	key_list(b, d, ND_ST_IMPROVED, top, 1);
	key_list(b, d, ND_ST_NEW, top, 0);
	key_list(b, d, ND_ST_VANISHED, top, 1);
	nd_buf_addf(b, "verdict: %s\n", nd_verdict_name(v->status));
	for (size_t i = 0; i < v->nfired; i++) {
		const nd_fired *f = &v->fired[i];

		if (f->inf)
			nd_buf_addf(b, "  %s %s (new)\n", f->rule->level ==
			    ND_RULE_FAIL ? "FAIL" : "warn", f->rule->id);
		else
			nd_buf_addf(b, "  %s %s (measured %+.2f%s)\n",
			    f->rule->level == ND_RULE_FAIL ? "FAIL" : "warn",
			    f->rule->id, f->measured,
			    f->rule->unit == ND_RU_PCT ? "%" : "");
	}
	for (size_t i = 0; i < v->nmissing; i++)
		nd_buf_addf(b, "  skipped %s (metric not available)\n",
		    v->missing[i]);
}
