/*
 * nd_report: the timeline strip of the HTML page (struct strip in
 * nd_report_int.h), collected as the stream is read, and its records in a
 * partial result (the strip part of nd_rep_parts).  nd_report_strip.c
 * draws it.
 */
#include "nd_report_int.h"

#include "nd_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The order of kept devices: by source, then the device's name in natural
 * order ("GPU:2" before "GPU:10"). */
int
nd_rep_sdev_cmp(uint32_t src, const char *k, size_t n, const struct sdev *d)
{
	if (src != d->source)
		return src < d->source ? -1 : 1;
	return nd_name_natcmp(k, n, d->key, d->klen);
}

void
nd_rep_sdev_free(struct sdev *d)
{
	free(d->key);
	free(d->ops.v);
	free(d->gaps);
	free(d->win);
}

struct sdev *
nd_rep_strip_slot(struct strip *s, uint32_t src, const char *k, size_t n)
{
	struct sdev *d;
	size_t last = 0;

	if (s->ndev == STRIP_DEVS) {
		for (size_t i = 1; i < s->ndev; i++)
			if (nd_rep_sdev_cmp(s->dev[i].source, s->dev[i].key,
			    s->dev[i].klen, &s->dev[last]) > 0)
				last = i;
		if (nd_rep_sdev_cmp(src, k, n, &s->dev[last]) > 0)
			return NULL;
		d = &s->dev[last];
		nd_rep_sdev_free(d);
	} else
		d = &s->dev[s->ndev++];
	memset(d, 0, sizeof *d);
	d->source = src;
	d->key = nd_xstrndup(k, n);
	d->klen = n;
	return d;
}

/* The kept device of the current source named k[0..n), or NULL; with add,
 * a new one (nd_rep_strip_slot). */
static struct sdev *
strip_dev(nd_report *r, const char *k, size_t n, int add)
{
	struct strip *s = r->strip;

	for (size_t i = 0; i < s->ndev; i++) {
		struct sdev *d = &s->dev[i];

		if (d->source == r->cursrc && d->klen == n &&
		    memcmp(d->key, k, n) == 0)
			return d;
	}
	return add ? nd_rep_strip_slot(s, r->cursrc, k, n) : NULL;
}

static struct strip *
strip_get(nd_report *r)
{
	if (r->strip == NULL) {
		r->strip = nd_xcalloc(1, sizeof *r->strip);
		r->strip->names = nd_intern_new();
	}
	return r->strip;
}

/* The slot of a span [ts, ts + dur) kept last in g, the oldest dropped
 * when g is full; NULL when inside is set and the span lies inside the one
 * kept last (the host lane draws only the union). */
static struct sop *
ring_slot(struct sring *g, int64_t ts, int64_t dur, int inside)
{
	struct sop *o;

	if (inside && g->n > 0) {
		const struct sop *l = &g->v[g->n < STRIP_RING ? g->n - 1 :
		    (g->head + STRIP_RING - 1) % STRIP_RING];

		if (ts >= l->ts && ts + dur <= l->ts + l->dur)
			return NULL;
	}

	if (g->n < STRIP_RING) {
		nd_grow(&g->v, &g->cap, g->n + 1, sizeof *g->v);
		o = &g->v[g->n++];
	} else {
		o = &g->v[g->head];
		if (!g->lost || o->ts + o->dur > g->lost_end)
			g->lost_end = o->ts + o->dur;
		g->lost = 1;
		g->head = (g->head + 1) % STRIP_RING;
	}
	o->ts = ts;
	o->dur = dur;
	return o;
}

static void
ring_remap(struct sring *g, const nd_intern *from, nd_intern *to)
{
	size_t n;

	for (size_t i = 0; i < g->n; i++) {
		const char *p;

		if (g->v[i].name == UINT32_MAX)	/* being named */
			continue;
		p = nd_intern_str(from, g->v[i].name, &n);
		g->v[i].name = nd_intern_id(to, p, n);
	}
}

/* A name for a kept span or gap.  The names no kept span or gap refers to
 * any more (their spans dropped from the rings) are forgotten once the
 * table is twice what was referred to at the last count (at least
 * STRIP_RING): the names stay within twice what the rings and gaps hold,
 * each counted O(1) times on average. */
static uint32_t
strip_name(struct strip *s, const char *p, size_t n)
{
	nd_intern *to;
	size_t k;
	uint32_t id = nd_intern_id(s->names, p, n);

	if (nd_intern_count(s->names) <= 2 * (s->names_live > STRIP_RING ?
	    s->names_live : STRIP_RING))
		return id;
	to = nd_intern_new();
	for (size_t i = 0; i < s->ndev; i++) {
		struct sdev *d = &s->dev[i];

		ring_remap(&d->ops, s->names, to);
		for (size_t j = 0; j < d->ngaps; j++) {
			uint32_t *f[2] = { &d->gaps[j].payload,
			    &d->gaps[j].cause };

			for (int q = 0; q < 2; q++) {
				const char *x;

				if (*f[q] == UINT32_MAX)	/* being named */
					continue;
				x = nd_intern_str(s->names, *f[q], &k);
				*f[q] = nd_intern_id(to, x, k);
			}
		}
	}
	for (size_t i = 0; i < s->nhost; i++)
		ring_remap(&s->host[i].spans, s->names, to);
	ring_remap(&s->cur, s->names, to);
	/* the new name, referred to by its caller */
	id = nd_intern_id(to, p, n);
	nd_intern_free(s->names);
	s->names = to;
	s->names_live = nd_intern_count(to);
	return id;
}

/* 1 when the kept devices are STRIP_DEVS of sources before src. */
static int
strip_full_before(const struct strip *s, uint32_t src)
{
	for (size_t i = 0; i < s->ndev; i++)
		if (s->dev[i].source >= src)
			return 0;
	return 1;
}

void
nd_rep_strip_add(nd_report *r, const nd_event *ev, const nd_span_role *role)
{
	struct strip *s = strip_get(r);
	struct sdev *d;
	struct sop *o;
	const char *k;
	size_t n;
	int cls;

	if (role->role == ND_ROLE_HOST) {
		cls = ND_SVG_HOST;
		o = ring_slot(&s->cur, ev->ts_ns, ev->dur_ns, 1);
	} else {
		/* every device kept, all of earlier sources: nothing to do */
		if (s->ndev == STRIP_DEVS && strip_full_before(s, r->cursrc))
			return;
		nd_span_device_ref(ev, &s->kb, &k, &n);
		if ((d = strip_dev(r, k, n, 1)) == NULL)
			return;
		if (role->cat == ND_CAT_COMM)
			cls = ND_SVG_COMM;
		else if (role->cat == ND_CAT_MEMORY)
			cls = ND_SVG_MEMORY;
		else if (ev->cls.p != NULL && !nd_str_eq(ev->cls, "compute"))
			cls = ND_SVG_OTHER;
		else
			cls = ND_SVG_COMPUTE;
		o = ring_slot(&d->ops, ev->ts_ns, ev->dur_ns, 0);
	}
	if (o == NULL)
		return;
	o->cls = cls;
	o->name = UINT32_MAX;	/* not remapped while it is named */
	o->name = strip_name(s, ev->name.p ? ev->name.p : "?",
	    ev->name.p ? ev->name.n : 1);
}

/* The end of a source: its host activity is kept when it has a kept
 * device, else forgotten. */
void
nd_rep_strip_end_source(nd_report *r)
{
	struct strip *s = r->strip;
	int kept = 0;

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->ndev; i++)
		kept |= s->dev[i].source == r->cursrc;
	if (kept && s->cur.n > 0 && s->nhost < STRIP_DEVS) {
		s->host[s->nhost].source = r->cursrc;
		s->host[s->nhost++].spans = s->cur;
		memset(&s->cur, 0, sizeof s->cur);
		return;
	}
	s->cur.n = s->cur.head = 0;
	s->cur.lost = 0;
}

void
nd_rep_strip_window(nd_report *r, const char *key, const nd_step *st)
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

void
nd_rep_strip_gap(nd_report *r, const nd_gap *g, const nd_gap_where *w)
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
	if (d == NULL || (d->ops.lost && g->ts + g->dur <= d->ops.lost_end))
		return;
	nd_grow(&d->gaps, &d->capgaps, d->ngaps + 1, sizeof *d->gaps);
	d->gaps[d->ngaps].ts = g->ts;
	d->gaps[d->ngaps].dur = g->dur;
	d->gaps[d->ngaps].payload = d->gaps[d->ngaps].cause = UINT32_MAX;
	d->ngaps++;
	/* named once counted: a compaction remaps them */
	d->gaps[d->ngaps - 1].payload = strip_name(s, pay, strlen(pay));
	d->gaps[d->ngaps - 1].cause = strip_name(s, cause, strlen(cause));
}

void
nd_rep_strip_free(nd_report *r)
{
	struct strip *s = r->strip;

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->ndev; i++)
		nd_rep_sdev_free(&s->dev[i]);
	for (size_t i = 0; i < s->nhost; i++)
		free(s->host[i].spans.v);
	free(s->cur.v);
	nd_intern_free(s->names);
	nd_buf_free(&s->kb);
	free(s);
}

/* The timeline strip of the HTML page. */
static void
part_strip(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	(void)si;
	if (r->span_ok && r->o.html && (r->role.role == ND_ROLE_DEVICE ||
	    r->role.role == ND_ROLE_HOST))
		nd_rep_strip_add(r, ev, &r->role);
}

/* --- partial results: the kept devices, each followed by its ops (the
 * ring as laid out), gaps and windows, then the kept host activity --- */

static void
save_ring(const struct strip *s, const struct sring *g, nd_partial_w *pw)
{
	nd_jw w;

	for (size_t i = 0; i < g->n; i++) {
		nd_partial_rec(pw, &w, "rp_sop");
		nd_jw_kint(&w, "ts", g->v[i].ts);
		nd_jw_kint(&w, "dur", g->v[i].dur);
		nd_jw_kcstr(&w, "name", nd_intern_str(s->names, g->v[i].name,
		    NULL));
		nd_jw_kint(&w, "cls", g->v[i].cls);
		nd_partial_rec_end(pw, &w);
	}
}

static void
save_ringhead(nd_jw *w, const struct sring *g)
{
	nd_jw_kint(w, "head", (int64_t)g->head);
	nd_jw_kint(w, "lost", g->lost);
	nd_jw_kint(w, "lost_end", g->lost_end);
}

static void
save_dev(const struct strip *s, const struct sdev *d, nd_partial_w *pw)
{
	nd_jw w;

	nd_partial_rec(pw, &w, "rp_sdev");
	nd_jw_kint(&w, "src", d->source);
	nd_jw_kstr(&w, "key", d->key, d->klen);
	save_ringhead(&w, &d->ops);
	nd_partial_rec_end(pw, &w);
	save_ring(s, &d->ops, pw);
	for (size_t j = 0; j < d->ngaps; j++) {
		nd_partial_rec(pw, &w, "rp_sgap");
		nd_jw_kint(&w, "ts", d->gaps[j].ts);
		nd_jw_kint(&w, "dur", d->gaps[j].dur);
		nd_jw_kcstr(&w, "payload", nd_intern_str(s->names,
		    d->gaps[j].payload, NULL));
		nd_jw_kcstr(&w, "cause", nd_intern_str(s->names,
		    d->gaps[j].cause, NULL));
		nd_partial_rec_end(pw, &w);
	}
	for (size_t j = 0; j < d->nwin; j++) {
		nd_partial_rec(pw, &w, "rp_swin");
		nd_jw_kint(&w, "num", d->win[j].num);
		nd_jw_kint(&w, "ts", d->win[j].ts);
		nd_jw_kint(&w, "dur", d->win[j].dur);
		nd_partial_rec_end(pw, &w);
	}
}

static void
save_strip(nd_report *r, nd_partial_w *pw)
{
	const struct strip *s = r->strip;
	nd_jw w;

	if (s == NULL)
		return;
	nd_partial_rec(pw, &w, "rp_strip");
	nd_partial_rec_end(pw, &w);
	for (size_t i = 0; i < s->ndev; i++)
		save_dev(s, &s->dev[i], pw);
	for (size_t i = 0; i < s->nhost; i++) {
		nd_partial_rec(pw, &w, "rp_shost");
		nd_jw_kint(&w, "src", s->host[i].source);
		save_ringhead(&w, &s->host[i].spans);
		nd_partial_rec_end(pw, &w);
		save_ring(s, &s->host[i].spans, pw);
	}
}

/* A ring of the strip: its layout, then its spans (rp_sop). */
static void
load_ringhead(struct rmerge *m, struct sring *g)
{
	int64_t head = nd_partial_int(m->st, m->ev, "head");

	memset(g, 0, sizeof *g);
	if (head < 0 || head >= STRIP_RING) {
		nd_partial_bad(m->st, m->ev, "head");
		return;
	}
	g->head = (size_t)head;
	g->lost = nd_partial_int(m->st, m->ev, "lost") != 0;
	g->lost_end = nd_partial_time(m->st, m->ev, "lost_end");
	m->sring = g;
}

static void
load_sop(struct rmerge *m, struct strip *s)
{
	struct sring *g = m->sring;
	int64_t cls = nd_partial_int(m->st, m->ev, "cls");
	char *name = nd_partial_str(m->st, m->ev, "name");
	struct sop *o;

	if (cls < 0 || cls >= ND_SVG_NCLASS || name == NULL ||
	    g->n == STRIP_RING) {
		nd_partial_bad(m->st, m->ev, name == NULL ? "name" : "cls");
		free(name);
		return;
	}
	nd_grow(&g->v, &g->cap, g->n + 1, sizeof *g->v);
	o = &g->v[g->n++];
	o->ts = nd_partial_int(m->st, m->ev, "ts");
	o->dur = nd_partial_int(m->st, m->ev, "dur");
	o->cls = (int)cls;
	o->name = nd_intern_id(s->names, name, strlen(name));
	free(name);
}

/* The first STRIP_DEVS devices of the partials, in nd_rep_sdev_cmp's
 * order, are the first of the whole stream. */
static void
load_sdev(struct rmerge *m, struct strip *s)
{
	uint32_t src = nd_rep_m_src(m, "src");
	char *k = nd_partial_str(m->st, m->ev, "key");

	m->sdev = NULL;
	m->sring = NULL;
	if (k == NULL)
		nd_partial_bad(m->st, m->ev, "key");
	if (!nd_stream_failed(m->st) &&
	    (m->sdev = nd_rep_strip_slot(s, src, k, strlen(k))) != NULL)
		load_ringhead(m, &m->sdev->ops);
	free(k);
}

static void
load_sgap(struct rmerge *m, struct sdev *dv, struct strip *s)
{
	struct sgap *g;
	char *pay = nd_partial_str(m->st, m->ev, "payload");
	char *cause = nd_partial_str(m->st, m->ev, "cause");

	if (pay == NULL || cause == NULL) {
		nd_partial_bad(m->st, m->ev, pay == NULL ? "payload" : "cause");
		free(pay);
		free(cause);
		return;
	}
	nd_grow(&dv->gaps, &dv->capgaps, dv->ngaps + 1, sizeof *dv->gaps);
	g = &dv->gaps[dv->ngaps++];
	g->ts = nd_partial_time(m->st, m->ev, "ts");
	g->dur = nd_partial_int(m->st, m->ev, "dur");
	g->payload = nd_intern_id(s->names, pay, strlen(pay));
	g->cause = nd_intern_id(s->names, cause, strlen(cause));
	free(pay);
	free(cause);
}

/* A source's host activity is kept when one of its devices is, as
 * nd_rep_strip_end_source does. */
static void
load_shost(struct rmerge *m, struct strip *s)
{
	uint32_t src = nd_rep_m_src(m, "src");
	int kept = 0;

	m->sdev = NULL;
	m->sring = NULL;
	if (nd_stream_failed(m->st))
		return;
	for (size_t i = 0; i < s->ndev; i++)
		kept |= s->dev[i].source == src;
	if (kept && s->nhost < STRIP_DEVS) {
		s->host[s->nhost].source = src;
		load_ringhead(m, &s->host[s->nhost++].spans);
	}
}

static const char *const strip_types[] = { "rp_strip", "rp_sdev", "rp_sop",
	"rp_sgap", "rp_swin", "rp_shost" };

static void
load_strip(struct rmerge *m, size_t type)
{
	struct strip *s = m->r->strip;
	struct sdev *dv = m->sdev;

	if (type == 0 && m->r->o.html && s == NULL) {
		s = m->r->strip = nd_xcalloc(1, sizeof *s);
		s->names = nd_intern_new();
	}
	if (s == NULL)
		return;
	switch (type) {
	case 1:
		load_sdev(m, s);
		return;
	case 2:
		if (m->sring != NULL)
			load_sop(m, s);
		return;
	case 3:
		if (dv != NULL)
			load_sgap(m, dv, s);
		return;
	case 4:
		if (dv != NULL) {
			nd_grow(&dv->win, &dv->capwin, dv->nwin + 1,
			    sizeof *dv->win);
			dv->win[dv->nwin].num = nd_partial_int(m->st, m->ev,
			    "num");
			dv->win[dv->nwin].ts = nd_partial_int(m->st, m->ev,
			    "ts");
			dv->win[dv->nwin++].dur = nd_partial_int(m->st, m->ev,
			    "dur");
		}
		return;
	case 5:
		load_shost(m, s);
		return;
	}
}

const struct rpart nd_rep_part_strip = {
	.record = part_strip,
	.save = save_strip,
	.types = strip_types,
	.ntypes = sizeof strip_types / sizeof *strip_types,
	.load = load_strip,
};
