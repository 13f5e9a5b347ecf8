/*
 * nd_report: partial results (nd_report_partial, nd_report_merge).  The
 * state collection leaves for nd_report_finish, written as body records of
 * an nd_partial, in the order the state was built:
 *
 *   rp_src    a source (struct rsrc), in source order
 *   rp_run    the scalars: step marker and source, the longest gap,
 *             line totals, findings' evidence, launch totals,
 *             roofline flags
 *   rp_skip, rp_warn, rp_diff   skipped records, warnings, diff records
 *   rp_dev    a device of the per-device breakdown (struct rdev)
 *   step_rec, step_dev          the step records (nd_stepsum)
 *   gap_sum   the gap totals by cause, payload and scope (nd_gapsum)
 *   rp_line, rp_hw    per-line gaps, devices by model
 *   rp_leaf   a row of the exclusive-time leaf table (nd_agg)
 *   rp_mem    a memory peak record of nd_mem, as it wrote it
 *   rp_launch a row of nd_launch; rp_roof a group of nd_roofline
 *   pipe_partial, then nd_pipe's records (nd_pipe.h): the pipeline
 *             schedule (nd_report_pipe.c)
 *
 * Names are written as strings and interned again on reading; source and
 * device indexes are relative to the partial and shifted on reading (the
 * sources of partial k follow those of partials 0..k-1).  Tables built in
 * the order things were first seen are added to in that order, and every
 * "first seen wins on ties" rule is applied to the partials in order, so a
 * merge builds the state one reading of every input would.  Sums are
 * integers (the roofline's flops and bytes too: nd_roofline.h), so their
 * grouping does not matter.
 */
#include "nd_report_int.h"

#include "nd_partial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RP_HEADER ND_REPORT_PARTIAL_HEADER
#define RP_FORMAT 1		/* the body's format: header key "report" */

/* --- writing --- */

struct pw {
	nd_partial_w pw;
	nd_jw w;
	nd_buf *b;
};

static nd_jw *
rec(struct pw *p, const char *type)
{
	nd_jw_init(&p->w, p->b);
	nd_jw_obj(&p->w);
	nd_jw_kcstr(&p->w, "type", type);
	return &p->w;
}

static void
done(struct pw *p)
{
	nd_jw_obj_end(&p->w);
	nd_buf_addc(p->b, '\n');
	nd_partial_commit(&p->pw);
}

static void
kstr(nd_jw *w, const char *k, const char *s)
{
	nd_jw_key(w, k);
	if (s != NULL)
		nd_jw_cstr(w, s);
	else
		nd_jw_null(w);
}

static void
kname(nd_jw *w, const nd_report *r, const char *k, uint32_t id)
{
	size_t n;
	const char *s = nd_rep_name_ofn(r, id, &n);

	nd_jw_key(w, k);
	if (s != NULL)
		nd_jw_str(w, s, n);
	else
		nd_jw_null(w);
}

static const char *const bd_key[6] = { "compute_ns", "communication_ns",
	"memory_ns", "host_ns", "idle_ns", "overlap_ns" };

static int64_t *
bd_field(nd_breakdown *bd, int i)
{
	int64_t *f[6] = { &bd->compute_ns, &bd->communication_ns,
	    &bd->memory_ns, &bd->host_ns, &bd->idle_ns, &bd->overlap_ns };

	return f[i];
}

/* The collection options, as text ("" when none): partials merge only
 * when theirs are the same. */
static void
collect_desc(const nd_report_opts *o, nd_buf *b)
{
	if (o->step_regex != NULL) {
		nd_buf_adds(b, "--step-regex '");
		nd_buf_adds(b, o->step_regex);
		nd_buf_adds(b, "'");
	}
	if (o->device != NULL) {
		nd_buf_adds(b, b->len ? " --device '" : "--device '");
		nd_buf_adds(b, o->device);
		nd_buf_adds(b, "'");
	}
	if (o->peak_tflops > 0) {
		nd_buf_adds(b, b->len ? " --peak-tflops " : "--peak-tflops ");
		nd_json_put_double(b, o->peak_tflops);
	}
	if (o->peak_gbps > 0) {
		nd_buf_adds(b, b->len ? " --peak-gbps " : "--peak-gbps ");
		nd_json_put_double(b, o->peak_gbps);
	}
}

static void
put_sources(const nd_report *r, struct pw *p)
{
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];
		nd_jw *w = rec(p, "rp_src");

		kstr(w, "path", s->path);
		kstr(w, "format", s->format);
		kstr(w, "host", s->host);
		kstr(w, "producer", s->producer);
		kstr(w, "sha256", s->sha256);
		nd_jw_kint(w, "has_meta", s->has_meta);
		nd_jw_kint(w, "has_rank", s->has_rank);
		nd_jw_kint(w, "has_end", s->has_end);
		nd_jw_kint(w, "trunc", s->trunc);
		nd_jw_kint(w, "has_t", s->has_t);
		nd_jw_kint(w, "rank", s->rank);
		nd_jw_kint(w, "origin", s->origin);
		nd_jw_kint(w, "tmin", s->tmin);
		nd_jw_kint(w, "tmax", s->tmax);
		nd_jw_kint(w, "spans", (int64_t)s->spans);
		nd_jw_kint(w, "instants", (int64_t)s->instants);
		nd_jw_kint(w, "counters", (int64_t)s->counters);
		nd_jw_kint(w, "flows", (int64_t)s->flows);
		nd_jw_kint(w, "others", (int64_t)s->others);
		nd_jw_kint(w, "bad_spans", (int64_t)s->bad_spans);
		nd_jw_kint(w, "end_events", s->end_events);
		nd_jw_kint(w, "end_spans", s->end_spans);
		nd_jw_kint(w, "skipped", (int64_t)s->skipped);
		done(p);
	}
}

static void
put_run(nd_report *r, struct pw *p)
{
	nd_jw *w = rec(p, "rp_run");
	nd_launch_sum ls;

	nd_jw_kint(w, "marker", r->marker);
	nd_jw_kint(w, "step_source", r->step_source);
	kstr(w, "step_what", r->step_what);
	nd_jw_kint(w, "src_spans", (int64_t)r->src_spans);
	nd_jw_kint(w, "has_device", r->has_device);
	nd_jw_kint(w, "has_gap", r->has_gap);
	nd_jw_kint(w, "gap_max", r->gap_max);
	nd_jw_kint(w, "gap_max_ts", r->gap_max_ts);
	/* a name only once a gap was found */
	kname(w, r, "gap_max_dev", r->has_gap ? r->gap_max_dev : UINT32_MAX);
	nd_jw_kint(w, "gap_max_src", r->gap_max_src);
	nd_jw_kint(w, "line_gaps", (int64_t)r->line_gaps);
	nd_jw_kint(w, "line_idle", r->line_idle);
	nd_jw_kint(w, "line_max", r->line_max);
	nd_jw_kint(w, "ndevices", (int64_t)r->ndevices);
	nd_jw_kint(w, "pageable_gap_ns", r->rf.pageable_gap_ns);
	nd_jw_kint(w, "dl_gap_ns", r->rf.dl_gap_ns);
	nd_launch_totals(r->launch, &ls);
	nd_jw_kint(w, "launch_ops", (int64_t)ls.ops);
	nd_jw_kint(w, "launch_ns", ls.ns);
	nd_jw_kint(w, "unmatched_ops", (int64_t)ls.unmatched_ops);
	nd_jw_kint(w, "unmatched_ns", ls.unmatched_ns);
	nd_jw_kint(w, "unplaced", (int64_t)ls.unplaced);
	nd_roofline_state_json(r->roof, w);
	done(p);
	for (size_t i = 0; i < r->nskipped; i++) {
		w = rec(p, "rp_skip");
		kname(w, r, "name", r->skipped[i].id);
		nd_jw_kint(w, "n", (int64_t)r->skipped[i].n);
		done(p);
	}
	for (size_t i = 0; i < r->nwarn; i++) {
		w = rec(p, "rp_warn");
		kstr(w, "text", r->warn[i]);
		done(p);
	}
	for (size_t i = 0; i < r->ndiff; i++) {
		w = rec(p, "rp_diff");
		kstr(w, "line", r->diff[i]);
		done(p);
	}
}

static void
put_steps(nd_report *r, struct pw *p)
{
	for (size_t i = 0; i < r->ndevs; i++) {
		nd_jw *w = rec(p, "rp_dev");

		nd_jw_kint(w, "src", r->devs[i].source);
		kstr(w, "key", r->devs[i].key);
		for (int j = 0; j < 6; j++)
			nd_jw_kint(w, bd_key[j], *bd_field(&r->devs[i].pw_bd,
			    j));
		nd_jw_kint(w, "pw_total", r->devs[i].pw_total);
		done(p);
	}
	if (r->ss != NULL)
		nd_stepsum_write_partial(r->ss, &p->pw);
}

static void
commit(void *ctx)
{
	struct pw *p = ctx;

	nd_partial_commit(&p->pw);
}

static void
put_gaps(const nd_report *r, struct pw *p)
{
	nd_jw *w;

	/* the totals by cause, payload and scope: nd_gapsum's gap_sum */
	nd_gapsum_write_partial(r->gs, p->b, commit, p);
	for (size_t i = 0; i < r->nlines; i++) {
		const struct gline *l = &r->lines[i];

		w = rec(p, "rp_line");
		nd_jw_kint(w, "src", l->source);
		kname(w, r, "label", l->label);
		nd_jw_kint(w, "ops", (int64_t)l->ops);
		nd_jw_kint(w, "gaps", (int64_t)l->gaps);
		nd_jw_kint(w, "idle", l->idle);
		nd_jw_kint(w, "max", l->max);
		nd_jw_kint(w, "active", l->active);
		done(p);
	}
	for (size_t i = 0; i < r->nhw; i++) {
		w = rec(p, "rp_hw");
		nd_jw_kint(w, "src", r->hw[i].source);
		kname(w, r, "model", r->hw[i].model);
		nd_jw_kint(w, "n", (int64_t)r->hw[i].n);
		done(p);
	}
}

static void
put_tables(nd_report *r, struct pw *p)
{
	uint32_t n = nd_agg_count(r->leaf);
	nd_jw *w;

	for (uint32_t i = 0; i < n; i++) {
		const nd_agg_row *row = nd_agg_row_of(r->leaf, i);
		size_t kn;
		const char *k = nd_agg_key(r->leaf, i, &kn);

		if (row->count == 0)
			continue;
		w = rec(p, "rp_leaf");
		nd_jw_key(w, "key");
		nd_aggkey_json(w, k, kn);
		nd_agg_row_json(w, row);
		done(p);
	}
	for (size_t i = 0; i < r->membuf.len;) {
		const char *s = r->membuf.p + i;
		const char *nl = memchr(s, '\n', r->membuf.len - i);
		size_t len = nl ? (size_t)(nl - s) : r->membuf.len - i;

		w = rec(p, "rp_mem");
		nd_jw_key(w, "line");
		nd_jw_raw(w, s, len);
		done(p);
		i += len + 1;
	}
	for (int which = 0; which < 2; which++) {
		const nd_launch_row *row;
		size_t m = nd_launch_rows(r->launch, which, &row);

		for (size_t i = 0; i < m; i++) {
			w = rec(p, "rp_launch");
			nd_jw_kint(w, "which", which);
			kstr(w, "name", row[i].name);
			nd_jw_kint(w, "ops", (int64_t)row[i].ops);
			nd_jw_kint(w, "ns", row[i].ns);
			done(p);
		}
	}
	for (size_t i = 0; i < nd_roofline_groups(r->roof); i++) {
		w = rec(p, "rp_roof");
		nd_roofline_group_json(r->roof, i, w);
		done(p);
	}
}

static void
put_ring(const struct strip *s, const struct sring *g, struct pw *p)
{
	nd_jw *w;

	for (size_t i = 0; i < g->n; i++) {
		w = rec(p, "rp_sop");
		nd_jw_kint(w, "ts", g->v[i].ts);
		nd_jw_kint(w, "dur", g->v[i].dur);
		kstr(w, "name", nd_intern_str(s->names, g->v[i].name, NULL));
		nd_jw_kint(w, "cls", g->v[i].cls);
		done(p);
	}
}

static void
put_ringhead(nd_jw *w, const struct sring *g)
{
	nd_jw_kint(w, "head", (int64_t)g->head);
	nd_jw_kint(w, "lost", g->lost);
	nd_jw_kint(w, "lost_end", g->lost_end);
}

/* The timeline strip (--html): the kept devices, each followed by its
 * ops (the ring as laid out), gaps and windows, then the kept host
 * activity. */
static void
put_strip(const nd_report *r, struct pw *p)
{
	const struct strip *s = r->strip;
	nd_jw *w;

	if (s == NULL)
		return;
	done((rec(p, "rp_strip"), p));
	for (size_t i = 0; i < s->ndev; i++) {
		const struct sdev *d = &s->dev[i];

		w = rec(p, "rp_sdev");
		nd_jw_kint(w, "src", d->source);
		nd_jw_kstr(w, "key", d->key, d->klen);
		put_ringhead(w, &d->ops);
		done(p);
		put_ring(s, &d->ops, p);
		for (size_t j = 0; j < d->ngaps; j++) {
			w = rec(p, "rp_sgap");
			nd_jw_kint(w, "ts", d->gaps[j].ts);
			nd_jw_kint(w, "dur", d->gaps[j].dur);
			kstr(w, "payload", nd_intern_str(s->names,
			    d->gaps[j].payload, NULL));
			kstr(w, "cause", nd_intern_str(s->names,
			    d->gaps[j].cause, NULL));
			done(p);
		}
		for (size_t j = 0; j < d->nwin; j++) {
			w = rec(p, "rp_swin");
			nd_jw_kint(w, "num", d->win[j].num);
			nd_jw_kint(w, "ts", d->win[j].ts);
			nd_jw_kint(w, "dur", d->win[j].dur);
			done(p);
		}
	}
	for (size_t i = 0; i < s->nhost; i++) {
		w = rec(p, "rp_shost");
		nd_jw_kint(w, "src", s->host[i].source);
		put_ringhead(w, &s->host[i].spans);
		done(p);
		put_ring(s, &s->host[i].spans, p);
	}
}

/* A line of nd_pipe's partial, as a record of ours. */
static void
put_pipe_line(void *ctx, nd_buf *line)
{
	struct pw *p = ctx;

	nd_buf_add(p->b, line->p, line->len);
	nd_buf_addc(p->b, '\n');
	nd_partial_commit(&p->pw);
}

void
nd_report_partial(nd_report *r, nd_out *o, uint32_t sources)
{
	struct pw p;
	nd_buf d = ND_BUF_INIT;

	/* what nd_report_finish would do first */
	nd_rep_end_source(r);
	r->cur = -1;
	nd_mem_stream_done(r->mem);
	p.b = nd_out_buf(o);
	nd_partial_begin(&p.pw, o, &p.w, RP_HEADER);
	nd_jw_kint(&p.w, "report", RP_FORMAT);
	collect_desc(&r->o, &d);
	nd_jw_kstr(&p.w, "collect", d.p != NULL ? d.p : "", d.len);
	nd_jw_kuint(&p.w, "sources", sources > r->nsrc ? sources : r->nsrc);
	nd_jw_kbool(&p.w, "strip", r->o.html);
	nd_buf_free(&d);
	done(&p);
	put_sources(r, &p);
	put_run(r, &p);
	put_steps(r, &p);
	put_gaps(r, &p);
	put_tables(r, &p);
	put_strip(r, &p);
	nd_rep_pipe_partial(r, sources > r->nsrc ? sources : (uint32_t)r->nsrc,
	    put_pipe_line, &p);
	nd_partial_end(&p.pw);
}

/* --- reading --- */

struct rd {
	nd_report *r;
	nd_stream *st;
	const nd_event *ev;
	unsigned nheaders;
	char *collect;
	uint32_t base, sources;	/* of the partial being read */
	uint32_t devbase;
	size_t ndevs;		/* devices of the partial read so far */
	nd_agg_row tmp;
	int nostrip;		/* a partial made without the strip */
	/* the strip: the device or host ring the records that follow go
	 * to, NULL when it is not kept */
	struct sdev *sdev;
	struct sring *sring;
};

/* The record is refused: the stream's error (nd_stream_fail), after which
 * the reader returns without using what it read (the getters give 0 or
 * NULL) and the merge stops. */
static void
bad(const struct rd *d, const char *key)
{
	nd_stream_fail(d->st, "%.*s record without a valid \"%s\"",
	    (int)d->ev->type_name.n, d->ev->type_name.p, key);
}

static int
failed(const struct rd *d)
{
	return nd_stream_failed(d->st);
}

/* An integer within +-2^53, as the stream's times and durations (sumi and
 * sumu keep their sums from overflow); gett: an end time (a time plus a
 * duration), within +-2^62. */
static int64_t
geti(const struct rd *d, const char *key)
{
	const nd_jval *v = nd_event_get(d->ev, key);
	int64_t x = 0;

	if (v == NULL || nd_json_int(v, &x) != 0) {
		bad(d, key);
		return 0;
	}
	return x;
}

static int64_t
gett(const struct rd *d, const char *key)
{
	const nd_jval *v = nd_event_get(d->ev, key);
	int64_t x = 0;

	if (v == NULL || nd_json_int64(v, &x) != 0 || x > INT64_MAX / 2 ||
	    x < INT64_MIN / 2) {
		bad(d, key);
		return 0;
	}
	return x;
}

static uint64_t
getu(const struct rd *d, const char *key)
{
	int64_t x = geti(d, key);

	if (x < 0) {
		bad(d, key);
		return 0;
	}
	return (uint64_t)x;
}

/* geti and getu of a figure the merge or the report adds up
 * (nd_partial_sum). */
static int64_t
sumi(const struct rd *d, const char *key)
{
	return nd_partial_sum(key, geti(d, key));
}

static uint64_t
sumu(const struct rd *d, const char *key)
{
	return (uint64_t)nd_partial_sum(key, (int64_t)getu(d, key));
}

/* A string or null (NULL), newly allocated. */
static char *
gets_(const struct rd *d, const char *key)
{
	const nd_jval *v = nd_event_get(d->ev, key);

	if (v == NULL || (v->type != ND_JSTR && v->type != ND_JNULL)) {
		bad(d, key);
		return NULL;
	}
	return nd_rep_jstrdup(v);
}

static uint32_t
getname(const struct rd *d, const char *key)
{
	char *s = gets_(d, key);
	uint32_t id = nd_rep_name_id(d->r, s);

	free(s);
	return id;
}

/* A source index of the partial (KEY), shifted: one of its rp_src
 * records, which come first. */
static uint32_t
getsrc(const struct rd *d, const char *key)
{
	int64_t x = geti(d, key);

	if (x < 0 || x >= d->sources || d->base + (uint64_t)x >= d->r->nsrc) {
		bad(d, key);
		return 0;	/* not used: the merge stops */
	}
	return d->base + (uint32_t)x;
}

static void
read_header(struct rd *d)
{
	nd_report *r = d->r;
	char *c = gets_(d, "collect");
	int64_t fmt = geti(d, "report"), n = geti(d, "sources");
	const nd_jval *v;

	if (failed(d))
		;
	else if (fmt != RP_FORMAT)
		nd_stream_fail(d->st, RP_HEADER " of another format (report "
		    "%lld, not %d): make the partial results again with this "
		    "%s", (long long)fmt, RP_FORMAT, nd_progname);
	else if (c == NULL || n < 0 || n > INT32_MAX - (int64_t)d->base -
	    (int64_t)d->sources)
		bad(d, c == NULL ? "collect" : "sources");
	/* the merge makes room for them: no more than the partial carries,
	 * a pipe_source record each */
	else if ((uint64_t)n > nd_partial_records())
		nd_stream_fail(d->st, RP_HEADER " of %lld sources, more than "
		    "its partial's %llu records (one a source at least): "
		    "partial results of no run (edited, or written by another "
		    "program)", (long long)n,
		    (unsigned long long)nd_partial_records());
	else if (d->nheaders > 0 && strcmp(c, d->collect) != 0)
		nd_stream_fail(d->st, "partial results made with %s cannot be "
		    "merged with partial results made with %s",
		    c[0] ? c : "no collection options",
		    d->collect[0] ? d->collect : "no collection options");
	if (failed(d)) {
		free(c);
		return;
	}
	free(d->collect);
	d->collect = c;
	d->nheaders++;
	v = nd_event_get(d->ev, "strip");
	if (r->o.html && (v == NULL || v->type != ND_JTRUE)) {
		nd_stream_fail(d->st, "partial results made without --html: "
		    "--merge --html needs partials of --partial --html (they "
		    "keep the timeline strip)");
		return;
	}
	d->sdev = NULL;
	d->sring = NULL;
	d->base += d->sources;
	d->sources = (uint32_t)n;
	d->devbase = (uint32_t)r->ndevs;
	d->ndevs = 0;
}

static void
read_src(struct rd *d)
{
	nd_report *r = d->r;
	uint32_t i = d->base + (uint32_t)(r->nsrc > d->base ?
	    r->nsrc - d->base : 0);
	struct rsrc *s;
	const nd_jval *v;

	if (i >= d->base + d->sources) {
		bad(d, "path");
		return;
	}
	nd_grow(&r->src, &r->capsrc, (size_t)i + 1, sizeof *r->src);
	/* sources without records between partials: as nd_report_event
	 * leaves them */
	for (; r->nsrc <= i; r->nsrc++) {
		memset(&r->src[r->nsrc], 0, sizeof *r->src);
		r->src[r->nsrc].end_events = r->src[r->nsrc].end_spans = -1;
	}
	s = &r->src[i];
	s->path = gets_(d, "path");
	s->format = gets_(d, "format");
	s->host = gets_(d, "host");
	s->producer = gets_(d, "producer");
	s->sha256 = gets_(d, "sha256");
	s->has_meta = geti(d, "has_meta") != 0;
	s->has_rank = geti(d, "has_rank") != 0;
	s->has_end = geti(d, "has_end") != 0;
	s->trunc = geti(d, "trunc") != 0;
	s->has_t = geti(d, "has_t") != 0;
	s->rank = geti(d, "rank");
	if ((v = nd_event_get(d->ev, "origin")) == NULL ||
	    nd_json_int64(v, &s->origin) != 0)	/* any epoch clock */
		bad(d, "origin");
	s->tmin = gett(d, "tmin");
	s->tmax = gett(d, "tmax");
	s->spans = sumu(d, "spans");
	s->instants = sumu(d, "instants");
	s->counters = sumu(d, "counters");
	s->flows = sumu(d, "flows");
	s->others = sumu(d, "others");
	s->bad_spans = sumu(d, "bad_spans");
	s->end_events = sumi(d, "end_events");
	s->end_spans = sumi(d, "end_spans");
	s->skipped = sumu(d, "skipped");
}

/* The longest gap: the earliest on ties, the first read on full ties (the
 * rule of the gaps' callback in nd_report_collect.c). */
static void
read_run(struct rd *d)
{
	nd_report *r = d->r;
	int has_gap = geti(d, "has_gap") != 0;
	int64_t gmax = geti(d, "gap_max"), gts = gett(d, "gap_max_ts");
	int64_t lmax = geti(d, "line_max"), v;
	int ss = (int)geti(d, "step_source");
	nd_launch_sum ls;

	v = geti(d, "marker");
	if (r->marker == ND_SM_NONE || v > r->marker)
		r->marker = (int)v;
	if (ss > r->step_source) {
		r->step_source = ss;
		free(r->step_what);
		r->step_what = gets_(d, "step_what");
	}
	r->src_spans += sumu(d, "src_spans");
	r->has_device |= geti(d, "has_device") != 0;
	if (has_gap && (!r->has_gap || gmax > r->gap_max ||
	    (gmax == r->gap_max && gts < r->gap_max_ts))) {
		r->gap_max = gmax;
		r->gap_max_ts = gts;
		r->gap_max_dev = getname(d, "gap_max_dev");
		r->gap_max_src = getsrc(d, "gap_max_src");
	}
	r->has_gap |= has_gap;
	r->line_gaps += sumu(d, "line_gaps");
	r->line_idle += sumi(d, "line_idle");
	if (lmax > r->line_max)
		r->line_max = lmax;
	r->ndevices += sumu(d, "ndevices");
	r->rf.pageable_gap_ns += sumi(d, "pageable_gap_ns");
	r->rf.dl_gap_ns += sumi(d, "dl_gap_ns");
	ls.ops = sumu(d, "launch_ops");
	ls.ns = sumi(d, "launch_ns");
	ls.unmatched_ops = sumu(d, "unmatched_ops");
	ls.unmatched_ns = sumi(d, "unmatched_ns");
	ls.unplaced = sumu(d, "unplaced");
	nd_launch_merge_sum(r->launch, &ls);
	if (nd_roofline_state_read(r->roof, d->ev) != 0)
		bad(d, "roof_sources");
}

/* A trace-diff record, which a comparison writes as it is: one only once
 * checked (nd_partial_record). */
static void
read_diff(struct rd *d)
{
	nd_report *r = d->r;
	const nd_jval *v = nd_event_get(d->ev, "line");
	nd_buf t = ND_BUF_INIT;

	if (v == NULL || v->type != ND_JSTR) {
		bad(d, "line");
		return;
	}
	nd_json_unescape(v, &t);
	nd_buf_addc(&t, '\0');
	/* held by r before the check: reachable for the leak checker */
	nd_grow(&r->diff, &r->capdiff, r->ndiff + 1, sizeof *r->diff);
	r->diff[r->ndiff++] = t.p;
	nd_partial_record("line", t.p, t.len - 1, nd_rep_is_diff,
	    "a trace-diff record (delta, verdict)");
}

static void
read_list(struct rd *d, int type)
{
	nd_report *r = d->r;
	char *s;

	switch (type) {
	case 's':
		nd_rep_cnt_add(&r->skipped, &r->nskipped, &r->capskipped,
		    r->skipped_ix, getname(d, "name"), sumu(d, "n"), 0);
		return;
	case 'w':
		if ((s = gets_(d, "text")) == NULL) {
			bad(d, "text");
			return;
		}
		nd_grow(&r->warn, &r->capwarn, r->nwarn + 1, sizeof *r->warn);
		r->warn[r->nwarn++] = s;
		return;
	default:
		read_diff(d);
		return;
	}
}

static void
read_dev(struct rd *d)
{
	nd_report *r = d->r;
	uint32_t src = getsrc(d, "src"), id;
	char *key = gets_(d, "key");
	struct rdev *dv;

	if (key == NULL)
		bad(d, "key");
	if (failed(d)) {
		free(key);
		return;
	}
	nd_buf_reset(&r->key);
	nd_buf_add(&r->key, &src, sizeof src);
	nd_buf_adds(&r->key, key);
	id = nd_intern_id(r->devids, r->key.p, r->key.len);
	if (id != r->ndevs) {	/* (source, key) once in a partial */
		bad(d, "key");
		free(key);
		return;
	}
	nd_grow(&r->devs, &r->capdevs, r->ndevs + 1, sizeof *r->devs);
	dv = &r->devs[r->ndevs++];
	memset(dv, 0, sizeof *dv);
	dv->source = src;
	dv->key = key;
	for (int j = 0; j < 6; j++)
		*bd_field(&dv->pw_bd, j) = sumi(d, bd_key[j]);
	dv->pw_total = sumi(d, "pw_total");
	d->ndevs++;
}

static void
read_line(struct rd *d)
{
	nd_report *r = d->r;
	struct gline *x;

	nd_grow(&r->lines, &r->caplines, r->nlines + 1, sizeof *r->lines);
	x = &r->lines[r->nlines++];
	x->source = getsrc(d, "src");
	x->label = getname(d, "label");
	x->ops = sumu(d, "ops");
	x->gaps = sumu(d, "gaps");
	x->idle = sumi(d, "idle");
	x->max = geti(d, "max");
	x->active = sumi(d, "active");
	if (x->label == UINT32_MAX)
		bad(d, "label");
}

static void
read_hw(struct rd *d)
{
	nd_report *r = d->r;
	uint32_t src = getsrc(d, "src"), model = getname(d, "model");
	int isnew;
	uint64_t *v;

	if (failed(d))
		return;
	v = nd_map64_put(r->hw_ix, (uint64_t)src << 32 | model, &isnew);
	if (isnew) {
		nd_grow(&r->hw, &r->caphw, r->nhw + 1, sizeof *r->hw);
		*v = r->nhw;
		r->hw[r->nhw].source = src;
		r->hw[r->nhw].model = model;
		r->hw[r->nhw++].n = 0;
	}
	r->hw[*v].n += sumu(d, "n");
}

static void
read_leaf(struct rd *d)
{
	nd_report *r = d->r;
	const char *what = "hist";
	uint32_t id;

	nd_buf_reset(&r->key);
	if (nd_aggkey_read(&r->key, nd_event_get(d->ev, "key")) != 0 ||
	    r->key.len < 6)
		bad(d, "key");
	/* (before the row holds memory) */
	(void)sumu(d, "count");
	(void)sumi(d, "total_ns");
	(void)sumi(d, "self_ns");
	(void)sumu(d, "overrun");
	if (failed(d))
		return;
	memset(&d->tmp, 0, sizeof d->tmp);
	if (nd_agg_row_read(&d->tmp, d->ev, &what) != 0) {
		nd_hist_free(&d->tmp.hist);
		bad(d, what);
		return;
	}
	id = nd_agg_id(r->leaf, r->key.p, r->key.len);
	nd_agg_merge(nd_agg_row_of(r->leaf, id), &d->tmp);
	nd_hist_free(&d->tmp.hist);
}

/* rp_mem (0), rp_launch (1), rp_roof (2) */
static void
read_other(struct rd *d, size_t type)
{
	nd_report *r = d->r;
	const nd_jval *v;
	char *s;

	if (type == 0) {
		v = nd_event_get(d->ev, "line");
		if (v == NULL || v->type != ND_JOBJ) {
			bad(d, "line");
			return;
		}
		nd_buf_add(&r->membuf, v->raw, v->len);
		nd_buf_addc(&r->membuf, '\n');
	} else if (type == 1) {
		int64_t which = geti(d, "which");

		if (which != ND_LAUNCH_INNER && which != ND_LAUNCH_TOP)
			bad(d, "which");
		if (failed(d))
			return;
		s = gets_(d, "name");
		nd_launch_merge_row(r->launch, (int)which, s, sumu(d, "ops"),
		    sumi(d, "ns"));
		free(s);
	} else {
		static const char *const fig[] = { "count", "total_ns",
		    "flops_count", "flops_ns", "bytes_count" };

		for (size_t i = 0; i < sizeof fig / sizeof *fig; i++)
			(void)sumu(d, fig[i]);
		if (nd_roofline_group_read(r->roof, d->ev) != 0)
			bad(d, "key");
	}
}

/* A ring of the strip: its layout, then its spans (rp_sop). */
static void
ring_head(struct rd *d, struct sring *g)
{
	int64_t head = geti(d, "head");

	memset(g, 0, sizeof *g);
	if (head < 0 || head >= STRIP_RING) {
		bad(d, "head");
		return;
	}
	g->head = (size_t)head;
	g->lost = geti(d, "lost") != 0;
	g->lost_end = gett(d, "lost_end");
	d->sring = g;
}

static void
read_sop(struct rd *d, struct strip *s)
{
	struct sring *g = d->sring;
	int64_t cls = geti(d, "cls");
	char *name = gets_(d, "name");
	struct sop *o;

	if (cls < 0 || cls >= ND_SVG_NCLASS || name == NULL ||
	    g->n == STRIP_RING) {
		bad(d, name == NULL ? "name" : "cls");
		free(name);
		return;
	}
	nd_grow(&g->v, &g->cap, g->n + 1, sizeof *g->v);
	o = &g->v[g->n++];
	o->ts = geti(d, "ts");
	o->dur = geti(d, "dur");
	o->cls = (int)cls;
	o->name = nd_intern_id(s->names, name, strlen(name));
	free(name);
}

/* The first STRIP_DEVS devices of the partials in order are the first of
 * the whole stream; a source's host activity is kept when one of its
 * devices is, as nd_rep_strip_end_source does. */
static void
read_strip(struct rd *d, size_t type)
{
	nd_report *r = d->r;
	struct strip *s = r->strip;
	char *k;

	if (type == 0 && r->o.html && s == NULL) {
		s = r->strip = nd_xcalloc(1, sizeof *r->strip);
		s->names = nd_intern_new();
	}
	if (s == NULL)
		return;
	switch (type) {
	case 1: {
		uint32_t src = getsrc(d, "src");
		struct sdev *dv;

		d->sdev = NULL;
		d->sring = NULL;
		if ((k = gets_(d, "key")) == NULL)
			bad(d, "key");
		if (failed(d)) {
			free(k);
			return;
		}
		dv = d->sdev = nd_rep_strip_slot(s, src, k, strlen(k));
		free(k);
		if (dv != NULL)
			ring_head(d, &dv->ops);
		return;
	}
	case 2:
		if (d->sring != NULL)
			read_sop(d, s);
		return;
	case 3:
		if (d->sdev != NULL) {
			struct sdev *dv = d->sdev;
			struct sgap *g;
			char *pay = gets_(d, "payload"), *cause;

			cause = gets_(d, "cause");
			if (pay == NULL || cause == NULL) {
				bad(d, pay == NULL ? "payload" : "cause");
				free(pay);
				free(cause);
				return;
			}
			nd_grow(&dv->gaps, &dv->capgaps, dv->ngaps + 1,
			    sizeof *dv->gaps);
			g = &dv->gaps[dv->ngaps++];
			g->ts = gett(d, "ts");
			g->dur = geti(d, "dur");
			g->payload = nd_intern_id(s->names, pay, strlen(pay));
			g->cause = nd_intern_id(s->names, cause,
			    strlen(cause));
			free(pay);
			free(cause);
		}
		return;
	case 4:
		if (d->sdev != NULL) {
			struct sdev *dv = d->sdev;

			nd_grow(&dv->win, &dv->capwin, dv->nwin + 1,
			    sizeof *dv->win);
			dv->win[dv->nwin].num = geti(d, "num");
			dv->win[dv->nwin].ts = geti(d, "ts");
			dv->win[dv->nwin++].dur = geti(d, "dur");
		}
		return;
	case 5: {
		uint32_t src = getsrc(d, "src");
		int kept = 0;

		d->sdev = NULL;
		d->sring = NULL;
		if (failed(d))
			return;
		for (size_t i = 0; i < s->ndev; i++)
			kept |= s->dev[i].source == src;
		if (kept && s->nhost < STRIP_DEVS) {
			s->host[s->nhost].source = src;
			ring_head(d, &s->host[s->nhost++].spans);
		}
		return;
	}
	}
}

static const char *const body[] = { "rp_src", "rp_run", "rp_skip",
	"rp_warn", "rp_diff", "rp_dev", ND_STEPSUM_REC, ND_STEPSUM_DEV,
	"gap_sum", "rp_line", "rp_hw", "rp_leaf",
	"rp_mem", "rp_launch", "rp_roof",
	/* the strip: read_strip's types 0 .. 5 */
	"rp_strip", "rp_sdev", "rp_sop", "rp_sgap", "rp_swin", "rp_shost" };

static void
merge_record(void *ctx, nd_stream *st, const nd_event *ev)
{
	struct rd *d = ctx;
	nd_report *r = d->r;
	size_t i;

	d->st = st;
	d->ev = ev;
	if (nd_str_eq(ev->type_name, RP_HEADER)) {
		read_header(d);
		return;
	}
	if (nd_rep_pipe_record(r, ev, st))
		return;
	for (i = 0; i < sizeof body / sizeof *body; i++)
		if (nd_str_eq(ev->type_name, body[i]))
			break;
	if (i == 6 || i == 7) {
		int64_t smax = -1, dmax = -1;

		if (r->ss == NULL)
			r->ss = nd_stepsum_new();
		(void)nd_stepsum_read_partial(r->ss, st, ev, d->base,
		    d->devbase, &smax, &dmax);
		if (smax >= 0 && d->base + (uint64_t)smax >= r->nsrc)
			bad(d, "src");
		/* the partial's devices come before its steps */
		if (dmax >= 0 && (uint64_t)dmax >= d->ndevs)
			bad(d, "dev");
		return;
	}
	switch (i) {
	case 0: read_src(d); break;
	case 1: read_run(d); break;
	case 2: read_list(d, 's'); break;
	case 3: read_list(d, 'w'); break;
	case 4: read_list(d, 'd'); break;
	case 5: read_dev(d); break;
	case 8: nd_gapsum_read(r->gs, st, ev); break;
	case 9: read_line(d); break;
	case 10: read_hw(d); break;
	case 11: read_leaf(d); break;
	case 12: case 13: case 14: read_other(d, i - 12); break;
	default: read_strip(d, i - 15); break;
	}
}

struct nd_report_merge {
	struct rd d;
};

nd_report_merge *
nd_report_merge_new(nd_report *r)
{
	nd_report_merge *m = nd_xcalloc(1, sizeof *m);

	m->d.r = r;
	return m;
}

void
nd_report_merge_load(nd_report_merge *m, nd_stream *st, const nd_event *ev)
{
	merge_record(&m->d, st, ev);
}

void
nd_report_merge_free(nd_report_merge *m)
{
	if (m == NULL)
		return;
	free(m->d.collect);
	free(m);
}

/* ours, then the pipeline's */
const char **
nd_report_merge_types(size_t *n)
{
	size_t nb = sizeof body / sizeof *body;
	const char **all = nd_xcalloc(nb + 1 + nd_pipe_partial_ntypes,
	    sizeof *all);

	memcpy(all, body, sizeof body);
	all[nb] = ND_PIPE_PARTIAL;
	memcpy(all + nb + 1, nd_pipe_partial_types, nd_pipe_partial_ntypes *
	    sizeof *all);
	*n = nb + 1 + nd_pipe_partial_ntypes;
	return all;
}
