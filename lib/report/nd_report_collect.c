/*
 * nd_report: collection, in one pass over the records (nd_report_event):
 * sources and their end records, spans (steps, exclusive time, gaps,
 * memory, roofline) and the timeline strip of the HTML page.
 */
#include "nd_report_int.h"

#include "nd_name.h"
#include "nd_sum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nd_scan's record: the leaf row of a span it counts. */
static uint64_t
scan_record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	nd_report *r = ctx;
	int kind = nd_event_kind(ev);
	/* the key's fields as ids, the name (most values) last */
	uint32_t ids[5] = { kind == ND_KIND_DEVICE,
	    nd_event_sid(ev, ND_SID_FAMILY), nd_event_sid(ev, ND_SID_CLASS),
	    nd_event_sid(ev, ND_SID_SCOPE), nd_event_sid(ev, ND_SID_NAME) };
	uint64_t ik;
	uint32_t id = nd_idmemo_get(nd_agg_memo(r->leaf), ids, 5, &ik);

	(void)si;
	if (kind == ND_KIND_DEVICE)
		r->has_device = 1;
	if (id != UINT32_MAX)
		return id;
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
	nd_idmemo_put(nd_agg_memo(r->leaf), ik, id);
	return id;
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

void
nd_rep_cnt_add(struct cnt **a, size_t *n, size_t *cap, nd_map64 *ix,
    uint32_t id, uint64_t k, int64_t ns)
{
	cnt_add(a, n, cap, ix, id, k, ns);
}

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

static void
strip_add(nd_report *r, const nd_event *ev, const nd_span_role *role)
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

/* --- per source --- */

static void
gap_cb(void *ctx, const nd_gap *g)
{
	nd_report *r = ctx;
	nd_gap_where w;

	nd_gaps_where(r->gaps, g, &w);
	strip_gap(r, g, &w);
	nd_rep_find_gap(r, g);
	nd_gapsum_add(r->gs, g);
	/* the longest, the earliest on ties: the same on any order */
	if (!r->has_gap || g->dur > r->gap_max ||
	    (g->dur == r->gap_max && g->ts < r->gap_max_ts)) {
		r->gap_max = g->dur;
		r->gap_max_ts = g->ts;
		/* labelled when written (nd_rep_src_label): more sources may
		 * follow */
		r->gap_max_src = r->cursrc;
		r->gap_max_dev = nd_rep_name_id(r, w.device ? w.device :
		    w.process ? w.process : "?");
	}
	r->has_gap = 1;
}

/* A timeline of the source just finished: its per-line gap totals. */
static void
line_cb(void *ctx, const nd_gap_line *l)
{
	nd_report *r = ctx;
	struct gline *x;

	nd_buf_reset(&r->key);
	nd_buf_adds(&r->key, l->devkey != NULL ? l->devkey : "?");
	nd_buf_addc(&r->key, ' ');
	if (l->w.thread != NULL)
		nd_buf_adds(&r->key, l->w.thread);
	else
		nd_buf_addf(&r->key, "tid %lld", (long long)l->w.tid);
	nd_grow(&r->lines, &r->caplines, r->nlines + 1, sizeof *r->lines);
	x = &r->lines[r->nlines++];
	x->source = r->cursrc;
	x->label = nd_intern_id(r->names, r->key.p, r->key.len);
	x->ops = l->ops;
	x->gaps = l->gaps;
	x->idle = l->idle_ns;
	x->max = l->max_ns;
	x->active = l->last - l->first;
	r->line_gaps += l->gaps;
	r->line_idle += l->idle_ns;
	if (l->max_ns > r->line_max)
		r->line_max = l->max_ns;
}

/* A device with device ops of the source just finished, by its model. */
static void
hw_cb(void *ctx, const char *key)
{
	nd_report *r = ctx;
	double tf, gb;
	const char *m = nd_devnames_get(r->dn, key, strlen(key), &tf, &gb);
	uint32_t id = nd_rep_name_id(r, m);
	int isnew;
	uint64_t *v = nd_map64_put(r->hw_ix, (uint64_t)r->cursrc << 32 | id,
	    &isnew);

	if (isnew) {
		nd_grow(&r->hw, &r->caphw, r->nhw + 1, sizeof *r->hw);
		*v = r->nhw;
		r->hw[r->nhw].source = r->cursrc;
		r->hw[r->nhw].model = id;
		r->hw[r->nhw++].n = 0;
	}
	r->hw[*v].n++;
	r->ndevices++;
}

/* After nd_gaps_end_source: per-line totals and the devices of the source. */
static void
gaps_source(nd_report *r)
{
	nd_gaps_lines(r->gaps, line_cb, r);
	nd_gaps_devices(r->gaps, hw_cb, r);
}

/* The index in r->devs of device key of the current source, added on
 * first use (by a table, not a scan: many devices with many steps). */
static uint32_t
rep_dev(nd_report *r, const char *key)
{
	uint32_t d;

	nd_buf_reset(&r->key);
	nd_buf_add(&r->key, &r->cursrc, sizeof r->cursrc);
	nd_buf_adds(&r->key, key);
	d = nd_intern_id(r->devids, r->key.p, r->key.len);
	if (d == r->ndevs) {
		nd_grow(&r->devs, &r->capdevs, r->ndevs + 1, sizeof *r->devs);
		memset(&r->devs[d], 0, sizeof r->devs[d]);
		r->devs[d].source = r->cursrc;
		r->devs[d].key = nd_xstrdup(key);
		r->ndevs++;
	}
	return d;
}

int
nd_rep_is_diff(const nd_event *ev)
{
	return nd_str_eq(ev->type_name, "delta") ||
	    nd_str_eq(ev->type_name, "verdict");
}

void
nd_rep_end_source(nd_report *r)
{
	const nd_step *st;
	size_t n;

	if (r->cur < 0)
		return;
	if (r->ss == NULL)
		r->ss = nd_stepsum_new();
	n = nd_steps_end_source(r->st_src, &st);
	for (size_t i = 0; i < n; i++) {
		nd_stepsum_rec x;

		memset(&x, 0, sizeof x);
		x.num = st[i].num;
		x.ts = st[i].ts;
		x.dur = st[i].dur;
		x.wait = st[i].wait_ns;
		x.source = r->cursrc;
		x.bd = st[i].bd;
		x.step_source = st[i].source;
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
		/* the strongest step source; its first source's name */
		if (st[i].source > r->step_source) {
			const char *w = nd_steps_what(r->st_src);

			r->step_source = st[i].source;
			free(r->step_what);
			r->step_what = w != NULL ? nd_xstrdup(w) : NULL;
		}
	}
	n = nd_steps_end_source(r->st_dev, &st);
	for (size_t i = 0; i < n; i++) {
		const char *key = st[i].dev >= 0 ?
		    nd_steps_device(r->st_dev, st[i].dev, NULL, NULL) : "host";
		uint32_t d = rep_dev(r, key);

		if (st[i].dev >= 0)
			strip_window(r, key, &st[i]);
		nd_stepsum_add_dev(r->ss, st[i].num, st[i].dur, d, &st[i].bd);
	}
	/* no steps: the profile window of each device */
	n = n > 0 ? 0 : nd_steps_profile(r->st_dev, &st);
	for (size_t i = 0; i < n; i++) {
		uint32_t d = rep_dev(r, nd_steps_device(r->st_dev, st[i].dev,
		    NULL, NULL));
		struct rdev *dv = &r->devs[d];	/* after rep_dev grew devs */

		nd_breakdown_add(&dv->pw_bd, &st[i].bd);
		dv->pw_total += nd_sum_add("profile window", st[i].dur);
	}
	nd_steps_reset(r->st_src);
	nd_steps_reset(r->st_dev);
	if (r->cursrc < r->nsrc && r->src[r->cursrc].spans > 0 &&
	    !r->gaps_late) {
		nd_gaps_end_source(r->gaps, gap_cb, r);
		gaps_source(r);
	}
	nd_gaps_reset(r->gaps);
	nd_devnames_reset(r->dn);
	nd_rep_strip_end_source(r);
	nd_scan_end_source(r->scan);
	nd_launch_end_source(r->launch);
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

/*
 * The parts of the collection, in the order a record visits them: each
 * takes every record (one call shape) and keeps what it answers from.
 * The source part comes first: it counts the record and, for a span with
 * a start and a duration, finds its role once (r->role, r->span_ok) for
 * the parts after it.  The parts hold engines of their own (nd_steps,
 * nd_gaps, nd_scan, nd_launch, nd_pipe, nd_roofline, nd_mem), so the
 * order among them does not change what any of them finds.
 */
typedef void part_fn(nd_report *r, const nd_event *ev,
    const nd_source_info *si);

/* The source: record counts, its span, producer, end record, and the
 * trace-diff records a comparison report shows. */
static void
part_source(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	struct rsrc *s = source_at(r, ev->source, si);

	r->span_ok = 0;
	switch (ev->type) {
	case ND_EV_SPAN:
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
		nd_span_role_of(ev, r->o.re, &r->role);
		r->span_ok = 1;
		return;
	case ND_EV_META:
		free(s->producer);
		s->producer = nd_rep_jstrdup(nd_event_get(ev, "producer"));
		return;
	case ND_EV_END:
		read_end(r, s, ev);
		return;
	case ND_EV_INSTANT:
		s->instants++;
		return;
	case ND_EV_COUNTER:
		s->counters++;
		return;
	case ND_EV_FLOW:
		s->flows++;
		return;
	default:
		if (nd_rep_is_diff(ev)) {
			nd_grow(&r->diff, &r->capdiff, r->ndiff + 1,
			    sizeof *r->diff);
			r->diff[r->ndiff++] = nd_xstrndup(ev->line, ev->len);
		}
		s->others++;
	}
}

/* Steps, per source and per device (nd_steps). */
static void
part_steps(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	(void)si;
	if (r->span_ok) {
		nd_steps_add(r->st_src, ev, &r->role);
		nd_steps_add(r->st_dev, ev, &r->role);
	} else if (ev->type == ND_EV_META) {
		nd_steps_meta(r->st_src, ev);
		nd_steps_meta(r->st_dev, ev);
	}
}

/* Device idle gaps (nd_gaps); a span out of order asks for a second
 * reading (nd_report_end). */
static void
part_gaps(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	(void)si;
	if (!r->span_ok)
		return;
	/* the leaf row (nd_scan) wants these ids: asked first, they spare
	 * nd_gaps its copies of the strings */
	(void)nd_event_sid(ev, ND_SID_NAME);
	(void)nd_event_sid(ev, ND_SID_SCOPE);
	if (!r->gaps_late && nd_gaps_add(r->gaps, ev, &r->role) != 0)
		r->gaps_late = 1;
}

/* The timeline strip of the HTML page. */
static void
part_strip(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	(void)si;
	if (r->span_ok && r->o.html && (r->role.role == ND_ROLE_DEVICE ||
	    r->role.role == ND_ROLE_HOST))
		strip_add(r, ev, &r->role);
}

/* Data loading, for the findings (nd_report_dl.c). */
static void
part_dl(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	(void)si;
	if (r->span_ok && r->role.role != ND_ROLE_DEVICE &&
	    r->role.marker == ND_SM_NONE)
		nd_rep_find_span(r, ev);
}

/* Exclusive time (nd_scan), device time per launching op (nd_launch). */
static void
part_ops(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	(void)si;
	if (!r->span_ok)
		return;
	(void)nd_scan_feed(r->scan, ev, NULL);
	nd_launch_add(r->launch, ev);
}

/* The pipeline schedule (nd_pipe) and the devices' models. */
static void
part_pipe(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	(void)si;
	if (r->span_ok)
		nd_pipe_add_span(r->pipe, ev, &r->role);
	else if (ev->type == ND_EV_META) {
		nd_devnames_meta(r->dn, ev);
		nd_pipe_add(r->pipe, ev);
	}
}

/* The roofline (every span, and the meta records' device names). */
static void
part_roofline(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	if (ev->type == ND_EV_SPAN || ev->type == ND_EV_META)
		nd_roofline_record(r->roof, ev, si);
}

/* Memory: every record but flows and others; every span, so that nd_mem
 * attributes the peak to the op running at it. */
static void
part_memory(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	switch (ev->type) {
	case ND_EV_SPAN:
	case ND_EV_META:
	case ND_EV_END:
	case ND_EV_INSTANT:
	case ND_EV_COUNTER:
		nd_mem_record(r->mem, ev, si);
		return;
	default:
		return;
	}
}

static part_fn *const parts[] = { part_source, part_steps, part_gaps,
	part_strip, part_dl, part_ops, part_pipe, part_roofline, part_memory };

void
nd_report_end_source(nd_report *r)
{
	nd_rep_end_source(r);
	r->cur = -1;
}

void
nd_report_event(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	/* a source begins (nd_report_end_source ended the one before) */
	if (r->cur < 0) {
		r->cur = ev->source;
		r->cursrc = ev->source;
	}
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
		parts[i](r, ev, si);
}

/* --- the model --- */
