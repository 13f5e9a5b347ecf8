/*
 * nd_report: collection, in one pass over the records (nd_report_event),
 * by the parts of nd_rep_parts (struct rpart): the sources
 * (nd_report_source.c), steps, gaps, the timeline strip
 * (nd_report_stripcol.c), data loading, exclusive time and launches, the
 * pipeline schedule, the roofline and memory; and each part's records in a
 * partial result.
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

/* --- per source --- */

static void
gap_cb(void *ctx, const nd_gap *g)
{
	nd_report *r = ctx;
	nd_gap_where w;

	nd_gaps_where(r->gaps, g, &w);
	nd_rep_strip_gap(r, g, &w);
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
			nd_rep_strip_window(r, key, &st[i]);
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
	nd_mem_end_source(r->mem);
}

/*
 * The parts of the collection, in the order a record visits them: each
 * takes every record (one call shape) and keeps what it answers from, and
 * saves and loads it in a partial result (struct rpart).
 * The source part comes first: it counts the record and, for a span with
 * a start and a duration, finds its role once (r->role, r->span_ok) for
 * the parts after it.  The parts hold engines of their own (nd_steps,
 * nd_gaps, nd_scan, nd_launch, nd_pipe, nd_roofline, nd_mem), so the
 * order among them does not change what any of them finds.
 */

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

/* --- the parts in a partial result (struct rpart) --- */

static void
commit(void *ctx)
{
	nd_partial_commit(ctx);
}

static void
save_steps(nd_report *r, nd_partial_w *pw)
{
	nd_jw w;

	nd_partial_rec(pw, &w, "rp_steps");
	nd_jw_kint(&w, "marker", r->marker);
	nd_jw_kint(&w, "step_source", r->step_source);
	nd_jw_key(&w, "step_what");
	if (r->step_what != NULL)
		nd_jw_cstr(&w, r->step_what);
	else
		nd_jw_null(&w);
	nd_partial_rec_end(pw, &w);
	for (size_t i = 0; i < r->ndevs; i++) {
		const nd_breakdown *bd = &r->devs[i].pw_bd;

		nd_partial_rec(pw, &w, "rp_dev");
		nd_jw_kint(&w, "src", r->devs[i].source);
		nd_jw_kcstr(&w, "key", r->devs[i].key);
		nd_jw_kint(&w, "compute_ns", bd->compute_ns);
		nd_jw_kint(&w, "communication_ns", bd->communication_ns);
		nd_jw_kint(&w, "memory_ns", bd->memory_ns);
		nd_jw_kint(&w, "host_ns", bd->host_ns);
		nd_jw_kint(&w, "idle_ns", bd->idle_ns);
		nd_jw_kint(&w, "overlap_ns", bd->overlap_ns);
		nd_jw_kint(&w, "pw_total", r->devs[i].pw_total);
		nd_partial_rec_end(pw, &w);
	}
	if (r->ss != NULL)
		nd_stepsum_write_partial(r->ss, pw);
}

/* A device of the partial: (source, key) once in it. */
static void
load_dev(struct rmerge *m)
{
	nd_report *r = m->r;
	nd_stream *st = m->st;
	const nd_event *ev = m->ev;
	uint32_t src = nd_rep_m_src(m, "src"), id;
	char *key = nd_partial_str(st, ev, "key");
	struct rdev *dv;

	if (key == NULL)
		nd_partial_bad(st, ev, "key");
	if (nd_stream_failed(st)) {
		free(key);
		return;
	}
	nd_buf_reset(&r->key);
	nd_buf_add(&r->key, &src, sizeof src);
	nd_buf_adds(&r->key, key);
	id = nd_intern_id(r->devids, r->key.p, r->key.len);
	if (id != r->ndevs) {
		nd_partial_bad(st, ev, "key");
		free(key);
		return;
	}
	nd_grow(&r->devs, &r->capdevs, r->ndevs + 1, sizeof *r->devs);
	dv = &r->devs[r->ndevs++];
	memset(dv, 0, sizeof *dv);
	dv->source = src;
	dv->key = key;
	dv->pw_bd.compute_ns = nd_partial_isum(st, ev, "compute_ns");
	dv->pw_bd.communication_ns = nd_partial_isum(st, ev,
	    "communication_ns");
	dv->pw_bd.memory_ns = nd_partial_isum(st, ev, "memory_ns");
	dv->pw_bd.host_ns = nd_partial_isum(st, ev, "host_ns");
	dv->pw_bd.idle_ns = nd_partial_isum(st, ev, "idle_ns");
	dv->pw_bd.overlap_ns = nd_partial_isum(st, ev, "overlap_ns");
	dv->pw_total = nd_partial_isum(st, ev, "pw_total");
	m->ndevs++;
}

static const char *const steps_types[] = { "rp_steps", "rp_dev",
	ND_STEPSUM_REC, ND_STEPSUM_DEV };

static void
load_steps(struct rmerge *m, size_t type)
{
	nd_report *r = m->r;
	int64_t smax = -1, dmax = -1, v;
	int ss;

	switch (type) {
	case 0:
		v = nd_partial_int(m->st, m->ev, "marker");
		if (r->marker == ND_SM_NONE || v > r->marker)
			r->marker = (int)v;
		ss = (int)nd_partial_int(m->st, m->ev, "step_source");
		if (ss > r->step_source) {
			r->step_source = ss;
			free(r->step_what);
			r->step_what = nd_partial_str(m->st, m->ev,
			    "step_what");
		}
		return;
	case 1:
		load_dev(m);
		return;
	}
	if (r->ss == NULL)
		r->ss = nd_stepsum_new();
	(void)nd_stepsum_read_partial(r->ss, m->st, m->ev, m->base,
	    m->devbase, &smax, &dmax);
	if (smax >= 0 && m->base + (uint64_t)smax >= r->nsrc)
		nd_partial_bad(m->st, m->ev, "src");
	/* the partial's devices come before its steps */
	if (dmax >= 0 && (uint64_t)dmax >= m->ndevs)
		nd_partial_bad(m->st, m->ev, "dev");
}

/* The longest gap (when there was one), the totals by cause, payload and
 * scope (nd_gapsum), the per-line totals and the devices by model; the
 * sums over lines and devices are added up again as they are read. */
static void
save_gaps(nd_report *r, nd_partial_w *pw)
{
	nd_jw w;
	size_t n;
	const char *s;

	if (r->has_gap) {
		nd_partial_rec(pw, &w, "rp_gapmax");
		nd_jw_kint(&w, "gap_max", r->gap_max);
		nd_jw_kint(&w, "gap_max_ts", r->gap_max_ts);
		s = nd_rep_name_ofn(r, r->gap_max_dev, &n);
		nd_jw_kstr(&w, "gap_max_dev", s != NULL ? s : "?",
		    s != NULL ? n : 1);
		nd_jw_kint(&w, "gap_max_src", r->gap_max_src);
		nd_partial_rec_end(pw, &w);
	}
	nd_gapsum_write_partial(r->gs, nd_out_buf(pw->o), commit, pw);
	for (size_t i = 0; i < r->nlines; i++) {
		const struct gline *l = &r->lines[i];

		nd_partial_rec(pw, &w, "rp_line");
		nd_jw_kint(&w, "src", l->source);
		s = nd_rep_name_ofn(r, l->label, &n);
		nd_jw_kstr(&w, "label", s, n);
		nd_jw_kint(&w, "ops", (int64_t)l->ops);
		nd_jw_kint(&w, "gaps", (int64_t)l->gaps);
		nd_jw_kint(&w, "idle", l->idle);
		nd_jw_kint(&w, "max", l->max);
		nd_jw_kint(&w, "active", l->active);
		nd_partial_rec_end(pw, &w);
	}
	for (size_t i = 0; i < r->nhw; i++) {
		nd_partial_rec(pw, &w, "rp_hw");
		nd_jw_kint(&w, "src", r->hw[i].source);
		nd_jw_key(&w, "model");
		if ((s = nd_rep_name_ofn(r, r->hw[i].model, &n)) != NULL)
			nd_jw_str(&w, s, n);
		else
			nd_jw_null(&w);
		nd_jw_kint(&w, "n", (int64_t)r->hw[i].n);
		nd_partial_rec_end(pw, &w);
	}
}

/* The longest gap: the earliest on ties, the first read on full ties (the
 * rule of gap_cb). */
static void
load_gapmax(struct rmerge *m)
{
	nd_report *r = m->r;
	int64_t gmax = nd_partial_int(m->st, m->ev, "gap_max");
	int64_t gts = nd_partial_time(m->st, m->ev, "gap_max_ts");
	uint32_t dev = nd_rep_m_name(m, "gap_max_dev");
	uint32_t src = nd_rep_m_src(m, "gap_max_src");

	if (dev == UINT32_MAX)
		nd_partial_bad(m->st, m->ev, "gap_max_dev");
	if (nd_stream_failed(m->st))
		return;
	if (!r->has_gap || gmax > r->gap_max ||
	    (gmax == r->gap_max && gts < r->gap_max_ts)) {
		r->gap_max = gmax;
		r->gap_max_ts = gts;
		r->gap_max_dev = dev;
		r->gap_max_src = src;
	}
	r->has_gap = 1;
}

static void
load_line(struct rmerge *m)
{
	nd_report *r = m->r;
	struct gline *x;

	nd_grow(&r->lines, &r->caplines, r->nlines + 1, sizeof *r->lines);
	x = &r->lines[r->nlines++];
	x->source = nd_rep_m_src(m, "src");
	x->label = nd_rep_m_name(m, "label");
	x->ops = nd_partial_usum(m->st, m->ev, "ops");
	x->gaps = nd_partial_usum(m->st, m->ev, "gaps");
	x->idle = nd_partial_isum(m->st, m->ev, "idle");
	x->max = nd_partial_int(m->st, m->ev, "max");
	x->active = nd_partial_isum(m->st, m->ev, "active");
	if (x->label == UINT32_MAX)
		nd_partial_bad(m->st, m->ev, "label");
	/* the totals line_cb keeps */
	r->line_gaps += x->gaps;
	r->line_idle += x->idle;
	if (x->max > r->line_max)
		r->line_max = x->max;
}

static void
load_hw(struct rmerge *m)
{
	nd_report *r = m->r;
	uint32_t src = nd_rep_m_src(m, "src");
	uint32_t model = nd_rep_m_name(m, "model");
	uint64_t n = nd_partial_usum(m->st, m->ev, "n"), *v;
	int isnew;

	if (nd_stream_failed(m->st))
		return;
	v = nd_map64_put(r->hw_ix, (uint64_t)src << 32 | model, &isnew);
	if (isnew) {
		nd_grow(&r->hw, &r->caphw, r->nhw + 1, sizeof *r->hw);
		*v = r->nhw;
		r->hw[r->nhw].source = src;
		r->hw[r->nhw].model = model;
		r->hw[r->nhw++].n = 0;
	}
	r->hw[*v].n += n;
	r->ndevices += n;	/* as hw_cb counts them */
}

static const char *const gaps_types[] = { "rp_gapmax", "gap_sum", "rp_line",
	"rp_hw" };

static void
load_gaps(struct rmerge *m, size_t type)
{
	switch (type) {
	case 0:
		load_gapmax(m);
		return;
	case 1:
		nd_gapsum_read(m->r->gs, m->st, m->ev);
		return;
	case 2:
		load_line(m);
		return;
	default:
		load_hw(m);
	}
}

/* The gap time of data loading and before pageable copies (the findings'
 * evidence, nd_report_dl.c). */
static void
save_dl(nd_report *r, nd_partial_w *pw)
{
	nd_jw w;

	nd_partial_rec(pw, &w, "rp_dl");
	nd_jw_kint(&w, "pageable_gap_ns", r->rf.pageable_gap_ns);
	nd_jw_kint(&w, "dl_gap_ns", r->rf.dl_gap_ns);
	nd_partial_rec_end(pw, &w);
}

static const char *const dl_types[] = { "rp_dl" };

static void
load_dl(struct rmerge *m, size_t type)
{
	(void)type;
	m->r->rf.pageable_gap_ns += nd_partial_isum(m->st, m->ev,
	    "pageable_gap_ns");
	m->r->rf.dl_gap_ns += nd_partial_isum(m->st, m->ev, "dl_gap_ns");
}

/* Whether there were device ops, the leaf table (nd_agg) and the device
 * time per launching op (nd_launch). */
static void
save_ops(nd_report *r, nd_partial_w *pw)
{
	nd_jw w;

	nd_partial_rec(pw, &w, "rp_ops");
	nd_jw_kint(&w, "has_device", r->has_device);
	nd_partial_rec_end(pw, &w);
	nd_agg_write_partial(r->leaf, "rp_leaf", pw);
	nd_launch_write_partial(r->launch, pw);
}

static const char *const ops_types[] = { "rp_ops", "rp_leaf" };

static void
load_ops(struct rmerge *m, size_t type)
{
	switch (type) {
	case 0:
		m->r->has_device |= nd_partial_int(m->st, m->ev,
		    "has_device") != 0;
		return;
	case 1:
		/* the kind and four fields at least (scan_record) */
		nd_agg_read_partial(m->r->leaf, m->st, m->ev, 6);
		return;
	default:
		(void)nd_launch_read_partial(m->r->launch, m->st, m->ev);
	}
}


struct ppart {
	nd_pipe_line_fn *fn;
	void *ctx;
	nd_buf held;		/* the lines, until a block is seen */
	int blocks;
};

static void
part_line(void *ctx, nd_buf *line)
{
	struct ppart *q = ctx;

	if (line->len > 0 && line->p[line->len - 1] == '\n')
		line->len--;
	nd_buf_add(&q->held, line->p, line->len);
	nd_buf_addc(&q->held, '\n');
	if (memmem(line->p, line->len, "\"type\":\"pipe_block\"", 19) != NULL)
		q->blocks = 1;
}

/* The engine's figures after a "pipe_partial" record: every line when
 * the input had a block, else only its sources (a merge numbers the
 * sources and learns their clocks from them), so that a partial of an
 * input that is no pipeline job stays small. */
static void
pipe_partial(nd_report *r, uint32_t sources, nd_pipe_line_fn *fn, void *ctx)
{
	struct ppart q;
	nd_buf line = ND_BUF_INIT;
	nd_jw w;
	static const char src[] = "{\"type\":\"pipe_source\"";

	if (r->pipe == NULL)
		return;
	memset(&q, 0, sizeof q);
	nd_pipe_sources(r->pipe, sources);
	nd_jw_init(&w, &line);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", ND_PIPE_PARTIAL);
	nd_jw_kcstr(&w, "rules", nd_pipe_rules(r->pipe));
	nd_jw_obj_end(&w);
	fn(ctx, &line);
	nd_pipe_partial_write(r->pipe, part_line, &q);
	for (size_t i = 0; i < q.held.len;) {
		const char *s = q.held.p + i;
		const char *nl = memchr(s, '\n', q.held.len - i);
		size_t n = (size_t)(nl - s);

		i += n + 1;
		if (!q.blocks && (n < sizeof src - 1 ||
		    memcmp(s, src, sizeof src - 1) != 0))
			continue;
		nd_buf_reset(&line);
		nd_buf_add(&line, s, n);
		fn(ctx, &line);
	}
	nd_buf_free(&q.held);
	nd_buf_free(&line);
}

/* Its header and records, to the engine. */
static void
load_pipe(struct rmerge *m, size_t type)
{
	nd_report *r = m->r;
	nd_stream *st = m->st;
	const nd_event *ev = m->ev;

	(void)type;
	if (r->pipe != NULL) {
		nd_err e;

		nd_err_clear(&e);
		if (nd_pipe_partial_add(r->pipe, ev, nd_stream_file(st),
		    nd_stream_lineno(st), &e) != 0)
			nd_stream_fail_with(st, &e);
	}
}

/* A line of nd_pipe's partial, as a record of ours. */
static void
save_pipe_line(void *ctx, nd_buf *line)
{
	nd_partial_w *pw = ctx;
	nd_buf *b = nd_out_buf(pw->o);

	nd_buf_add(b, line->p, line->len);
	nd_buf_addc(b, '\n');
	nd_partial_commit(pw);
}

static void
save_pipe(nd_report *r, nd_partial_w *pw)
{
	pipe_partial(r, r->sources, save_pipe_line, pw);
}

static const char *const pipe_types[] = { ND_PIPE_PARTIAL };

static void
save_roofline(nd_report *r, nd_partial_w *pw)
{
	nd_roofline_write_partial(r->roof, pw);
}

static void
load_roofline(struct rmerge *m, size_t type)
{
	(void)type;
	(void)nd_roofline_read_partial(m->r->roof, m->st, m->ev);
}

/* The peak records nd_mem wrote, as they are. */
static void
save_memory(nd_report *r, nd_partial_w *pw)
{
	nd_jw w;

	for (size_t i = 0; i < r->membuf.len;) {
		const char *s = r->membuf.p + i;
		const char *nl = memchr(s, '\n', r->membuf.len - i);
		size_t len = nl ? (size_t)(nl - s) : r->membuf.len - i;

		nd_partial_rec(pw, &w, "rp_mem");
		nd_jw_key(&w, "line");
		nd_jw_raw(&w, s, len);
		nd_partial_rec_end(pw, &w);
		i += len + 1;
	}
}

static const char *const memory_types[] = { "rp_mem" };

static void
load_memory(struct rmerge *m, size_t type)
{
	const nd_jval *v = nd_event_get(m->ev, "line");

	(void)type;
	if (v == NULL || v->type != ND_JOBJ) {
		nd_partial_bad(m->st, m->ev, "line");
		return;
	}
	nd_buf_add(&m->r->membuf, v->raw, v->len);
	nd_buf_addc(&m->r->membuf, '\n');
}

#define NTYPES(a) (sizeof a / sizeof *a)

static const struct rpart part_steps_ = {
	.record = part_steps, .save = save_steps, .load = load_steps,
	.types = steps_types, .ntypes = NTYPES(steps_types),
};
static const struct rpart part_gaps_ = {
	.record = part_gaps, .save = save_gaps, .load = load_gaps,
	.types = gaps_types, .ntypes = NTYPES(gaps_types),
};
static const struct rpart part_dl_ = {
	.record = part_dl, .save = save_dl, .load = load_dl,
	.types = dl_types, .ntypes = NTYPES(dl_types),
};
static const struct rpart part_ops_ = {
	.record = part_ops, .save = save_ops, .load = load_ops,
	.types = ops_types, .ntypes = NTYPES(ops_types),
	.etypes = nd_launch_partial_types, .netypes = &nd_launch_partial_ntypes,
};
static const struct rpart part_pipe_ = {
	.record = part_pipe, .save = save_pipe, .load = load_pipe,
	.types = pipe_types, .ntypes = NTYPES(pipe_types),
	.etypes = nd_pipe_partial_types, .netypes = &nd_pipe_partial_ntypes,
};
static const struct rpart part_roofline_ = {
	.record = part_roofline, .save = save_roofline, .load = load_roofline,
	.etypes = nd_roofline_partial_types,
	.netypes = &nd_roofline_partial_ntypes,
};
static const struct rpart part_memory_ = {
	.record = part_memory, .save = save_memory, .load = load_memory,
	.types = memory_types, .ntypes = NTYPES(memory_types),
};

const struct rpart *const nd_rep_parts[] = { &nd_rep_part_source,
	&part_steps_, &part_gaps_, &nd_rep_part_strip, &part_dl_, &part_ops_,
	&part_pipe_, &part_roofline_, &part_memory_ };
const size_t nd_rep_nparts = sizeof nd_rep_parts / sizeof *nd_rep_parts;

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
	for (size_t i = 0; i < nd_rep_nparts; i++)
		nd_rep_parts[i]->record(r, ev, si);
}

/* --- the model --- */
