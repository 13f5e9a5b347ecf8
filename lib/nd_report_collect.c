/*
 * nd_report: collection, in one pass over the records (nd_report_event):
 * sources and their end records, spans (steps, exclusive time, gaps,
 * memory, roofline) and the timeline strip of the HTML page.
 */
#include "nd_report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nd_scan's record: the leaf row of a span it counts. */
static uint64_t
scan_record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	nd_report *r = ctx;
	int kind = nd_event_kind(ev);

	(void)si;
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
	return nd_agg_id(r->leaf, r->key.p, r->key.len);
}

static void
scan_done(void *ctx, const nd_nest_span *s)
{
	nd_report *r = ctx;

	nd_agg_add(r->leaf, (uint32_t)s->user, s->dur_ns);
	nd_agg_self(r->leaf, s);
}

static void
scan_reset(void *ctx)
{
	nd_report *r = ctx;

	nd_agg_reset(r->leaf);
}

void
nd_rep_scan_new(nd_report *r)
{
	nd_scan_opts so;
	nd_scan_cb cb = { r, scan_record, scan_done, scan_reset };

	memset(&so, 0, sizeof so);
	so.timelines = ND_TL_DEVICE;
	so.rule = ND_NEST_CLIP;
	so.unordered = r->o.unordered;
	so.type = "span";
	r->scan = nd_scan_new(&so, &cb);
}

int
nd_report_end(nd_report *r)
{
	nd_scan_res res;

	if (!nd_scan_again(r->scan) && !r->gaps_late &&
	    !nd_mem_disordered(r->mem))
		return 0;
	/* the spans still held go to the leaf table about to be freed */
	nd_scan_finish(r->scan, &res);
	nd_rep_fini(r);
	{
		nd_report_opts o = r->o;
		double thr[R_NRULES];
		nd_scanner *scan = r->scan;

		memcpy(thr, r->thr, sizeof thr);
		memset(r, 0, sizeof *r);
		r->o = o;
		memcpy(r->thr, thr, sizeof thr);
		r->scan = scan;
	}
	nd_rep_init(r, 1);
	nd_scan_restart(r->scan);
	return 1;
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

void
nd_rep_strip_free(nd_report *r)
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
	/* the longest, the earliest on ties: the same on any order */
	if (r->ngaps == 1 || g->dur > r->gap_max ||
	    (g->dur == r->gap_max && g->ts < r->gap_max_ts)) {
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
		r->gap_max_dev = nd_rep_name_id(r, lab);
	}
	cnt_add(&r->causes, &r->ncauses, &r->capcauses, NULL,
	    nd_rep_name_id(r, g->cause ? g->cause : "other"), 1, g->dur);
	pid = nd_rep_name_id(r, g->payload.name ? g->payload.name : "?");
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
	}
	if (p->n == 0 || g->dur > p->max ||
	    (g->dur == p->max && g->ts < p->max_ts)) {
		p->max = g->dur;
		p->max_ts = g->ts;
		p->marker = nd_rep_name_id(r, g->marker.name);
		p->region = nd_rep_name_id(r, g->payload.scope);
	}
	p->n++;
	p->total += g->dur;
}

void
nd_rep_finish_source(nd_report *r)
{
	const nd_step *st;
	size_t n;

	if (r->cur < 0)
		return;
	if (r->ss == NULL)
		r->ss = nd_stepsum_new();
	n = nd_steps_finish(r->st_src, &st);
	for (size_t i = 0; i < n; i++) {
		nd_stepsum_rec x;

		memset(&x, 0, sizeof x);
		x.num = st[i].num;
		x.ts = st[i].ts;
		x.dur = st[i].dur;
		x.wait = st[i].wait_ns;
		x.source = r->cursrc;
		x.bd = st[i].bd;
		if (r->cursrc < r->nsrc) {
			const struct rsrc *sx = &r->src[r->cursrc];

			x.has_rank = sx->has_rank;
			x.rank = sx->rank;
			x.has_origin = sx->has_meta && sx->origin != 0;
			x.origin = sx->origin;
		}
		nd_stepsum_add(r->ss, &x);
		if (r->marker == ND_SM_NONE || st[i].marker > r->marker)
			r->marker = st[i].marker;
	}
	n = nd_steps_finish(r->st_dev, &st);
	for (size_t i = 0; i < n; i++) {
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
		nd_stepsum_add_dev(r->ss, st[i].num, st[i].dur, d, &st[i].bd);
	}
	nd_steps_reset(r->st_src);
	nd_steps_reset(r->st_dev);
	if (r->cursrc < r->nsrc && r->src[r->cursrc].spans > 0 &&
	    !r->gaps_late)
		nd_gaps_finish(r->gaps, gap_cb, r);
	nd_gaps_reset(r->gaps);
	nd_scan_end_source(r->scan);
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
		s->sha256 = nd_rep_jstrdup(v);
	if ((v = nd_event_get(ev, "suspected_truncation")) != NULL &&
	    v->type == ND_JTRUE)
		s->trunc = 1;
	if ((v = nd_event_get(ev, "skipped")) != NULL && v->type == ND_JOBJ) {
		nd_jiter_init(&it, v, ev->line);
		while (nd_jiter_next(&it, &k, &val, &e) == 1) {
			char *key = nd_rep_jstrdup(&k);

			if (nd_json_int(&val, &x) == 0 && x > 0)
				s->skipped += (uint64_t)x;
			if (nd_json_int(&val, &x) == 0 && x > 0)
				cnt_add(&r->skipped, &r->nskipped,
				    &r->capskipped, r->skipped_ix,
				    nd_rep_name_id(r, key),
				    (uint64_t)x, 0);
			free(key);
		}
	}
	if ((v = nd_event_get(ev, "warnings")) != NULL && v->type == ND_JARR) {
		nd_jaiter_init(&it, v, ev->line);
		while (nd_jaiter_next(&it, &val, &e) == 1) {
			char *w = nd_rep_jstrdup(&val);
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

static void
add_span(nd_report *r, struct rsrc *s, const nd_event *ev)
{
	nd_span_role role;

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
	/* out of order: the input is read again (nd_report_end) */
	if (!r->gaps_late && nd_gaps_add(r->gaps, ev, &role) != 0)
		r->gaps_late = 1;
	if (role.role == ND_ROLE_DEVICE && r->o.html)
		strip_add(r, ev, &role);
	(void)nd_scan_feed(r->scan, ev, NULL);
}

void
nd_report_event(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	struct rsrc *s;

	if ((int64_t)ev->source != r->cur) {
		if (r->cur >= 0)
			nd_rep_finish_source(r);
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
		s->producer = nd_rep_jstrdup(v);
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
