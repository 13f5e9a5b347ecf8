/*
 * nd_report: the source part of the collection (nd_rep_parts): each
 * source's record counts, time span, producer and end record (what the
 * converter skipped and warned of), and the trace-diff records a
 * comparison report shows; and their records in a partial result.
 */
#include "nd_report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
nd_rep_is_diff(const nd_event *ev)
{
	return nd_str_eq(ev->type_name, "delta") ||
	    nd_str_eq(ev->type_name, "verdict");
}

struct rsrc *
nd_rep_source_at(nd_report *r, uint32_t i, const nd_source_info *si)
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
		s->sha256 = nd_jstr_dup(v);
	if ((v = nd_event_get(ev, "suspected_truncation")) != NULL &&
	    v->type == ND_JTRUE)
		s->trunc = 1;
	if ((v = nd_event_get(ev, "skipped")) != NULL && v->type == ND_JOBJ) {
		nd_jiter_init(&it, v, ev->line);
		while (nd_jiter_next(&it, &k, &val, &e) == 1) {
			char *key = nd_jstr_dup(&k);

			if (nd_json_int(&val, &x) == 0 && x > 0)
				s->skipped += (uint64_t)x;
			if (nd_json_int(&val, &x) == 0 && x > 0)
				nd_rep_cnt_add(&r->skipped, &r->nskipped,
				    &r->capskipped, r->skipped_ix,
				    nd_rep_name_id(r, key),
				    (uint64_t)x, 0);
			free(key);
		}
	}
	if ((v = nd_event_get(ev, "warnings")) != NULL && v->type == ND_JARR) {
		nd_jaiter_init(&it, v, ev->line);
		while (nd_jaiter_next(&it, &val, &e) == 1) {
			char *w = nd_jstr_dup(&val);
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

/* The source: record counts, its span, producer, end record, and the
 * trace-diff records a comparison report shows. */
static void
part_source(nd_report *r, const nd_event *ev, const nd_source_info *si)
{
	struct rsrc *s = nd_rep_source_at(r, ev->source, si);

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
		s->producer = nd_jstr_dup(nd_event_get(ev, "producer"));
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

/* --- partial results --- */

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
save_source(nd_report *r, nd_partial_w *pw)
{
	nd_jw w;

	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_partial_rec(pw, &w, "rp_src");
		kstr(&w, "path", s->path);
		kstr(&w, "format", s->format);
		kstr(&w, "host", s->host);
		kstr(&w, "producer", s->producer);
		kstr(&w, "sha256", s->sha256);
		nd_jw_kint(&w, "has_meta", s->has_meta);
		nd_jw_kint(&w, "has_rank", s->has_rank);
		nd_jw_kint(&w, "has_end", s->has_end);
		nd_jw_kint(&w, "trunc", s->trunc);
		nd_jw_kint(&w, "has_t", s->has_t);
		nd_jw_kint(&w, "rank", s->rank);
		nd_jw_kint(&w, "origin", s->origin);
		nd_jw_kint(&w, "tmin", s->tmin);
		nd_jw_kint(&w, "tmax", s->tmax);
		nd_jw_kint(&w, "spans", (int64_t)s->spans);
		nd_jw_kint(&w, "instants", (int64_t)s->instants);
		nd_jw_kint(&w, "counters", (int64_t)s->counters);
		nd_jw_kint(&w, "flows", (int64_t)s->flows);
		nd_jw_kint(&w, "others", (int64_t)s->others);
		nd_jw_kint(&w, "bad_spans", (int64_t)s->bad_spans);
		nd_jw_kint(&w, "end_events", s->end_events);
		nd_jw_kint(&w, "end_spans", s->end_spans);
		nd_jw_kint(&w, "skipped", (int64_t)s->skipped);
		nd_partial_rec_end(pw, &w);
	}
	for (size_t i = 0; i < r->nskipped; i++) {
		size_t n;
		const char *name = nd_rep_name_ofn(r, r->skipped[i].id, &n);

		nd_partial_rec(pw, &w, "rp_skip");
		nd_jw_key(&w, "name");
		if (name != NULL)
			nd_jw_str(&w, name, n);
		else
			nd_jw_null(&w);
		nd_jw_kint(&w, "n", (int64_t)r->skipped[i].n);
		nd_partial_rec_end(pw, &w);
	}
	for (size_t i = 0; i < r->nwarn; i++) {
		nd_partial_rec(pw, &w, "rp_warn");
		kstr(&w, "text", r->warn[i]);
		nd_partial_rec_end(pw, &w);
	}
	for (size_t i = 0; i < r->ndiff; i++) {
		nd_partial_rec(pw, &w, "rp_diff");
		kstr(&w, "line", r->diff[i]);
		nd_partial_rec_end(pw, &w);
	}
}

/* The next source of the partial: the sources before it that had no
 * record are as nd_report_event leaves them. */
static void
load_src(struct rmerge *m)
{
	nd_report *r = m->r;
	nd_stream *st = m->st;
	const nd_event *ev = m->ev;
	uint32_t i = m->base + (uint32_t)(r->nsrc > m->base ?
	    r->nsrc - m->base : 0);
	struct rsrc *s;
	const nd_jval *v;

	if (i >= m->base + m->sources) {
		nd_partial_bad(st, ev, "path");
		return;
	}
	s = nd_rep_source_at(r, i, NULL);
	s->path = nd_partial_str(st, ev, "path");
	s->format = nd_partial_str(st, ev, "format");
	s->host = nd_partial_str(st, ev, "host");
	s->producer = nd_partial_str(st, ev, "producer");
	s->sha256 = nd_partial_str(st, ev, "sha256");
	s->has_meta = nd_partial_int(st, ev, "has_meta") != 0;
	s->has_rank = nd_partial_int(st, ev, "has_rank") != 0;
	s->has_end = nd_partial_int(st, ev, "has_end") != 0;
	s->trunc = nd_partial_int(st, ev, "trunc") != 0;
	s->has_t = nd_partial_int(st, ev, "has_t") != 0;
	s->rank = nd_partial_int(st, ev, "rank");
	if ((v = nd_event_get(ev, "origin")) == NULL ||
	    nd_json_int64(v, &s->origin) != 0)	/* any epoch clock */
		nd_partial_bad(st, ev, "origin");
	s->tmin = nd_partial_time(st, ev, "tmin");
	s->tmax = nd_partial_time(st, ev, "tmax");
	s->spans = nd_partial_usum(st, ev, "spans");
	r->src_spans += s->spans;
	s->instants = nd_partial_usum(st, ev, "instants");
	s->counters = nd_partial_usum(st, ev, "counters");
	s->flows = nd_partial_usum(st, ev, "flows");
	s->others = nd_partial_usum(st, ev, "others");
	s->bad_spans = nd_partial_usum(st, ev, "bad_spans");
	s->end_events = nd_partial_isum(st, ev, "end_events");
	s->end_spans = nd_partial_isum(st, ev, "end_spans");
	s->skipped = nd_partial_usum(st, ev, "skipped");
}

/* A trace-diff record, which a comparison writes as it is: one only once
 * checked (nd_partial_record). */
static void
load_diff(struct rmerge *m)
{
	nd_report *r = m->r;
	const nd_jval *v = nd_event_get(m->ev, "line");
	nd_buf t = ND_BUF_INIT;

	if (v == NULL || v->type != ND_JSTR) {
		nd_partial_bad(m->st, m->ev, "line");
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

static const char *const source_types[] = { "rp_src", "rp_skip", "rp_warn",
	"rp_diff" };

static void
load_source(struct rmerge *m, size_t type)
{
	nd_report *r = m->r;
	char *s;

	switch (type) {
	case 0:
		load_src(m);
		return;
	case 1:
		nd_rep_cnt_add(&r->skipped, &r->nskipped, &r->capskipped,
		    r->skipped_ix, nd_rep_m_name(m, "name"),
		    nd_partial_usum(m->st, m->ev, "n"), 0);
		return;
	case 2:
		if ((s = nd_partial_str(m->st, m->ev, "text")) == NULL) {
			nd_partial_bad(m->st, m->ev, "text");
			return;
		}
		nd_grow(&r->warn, &r->capwarn, r->nwarn + 1, sizeof *r->warn);
		r->warn[r->nwarn++] = s;
		return;
	default:
		load_diff(m);
	}
}

const struct rpart nd_rep_part_source = {
	.record = part_source,
	.save = save_source,
	.types = source_types,
	.ntypes = sizeof source_types / sizeof *source_types,
	.load = load_source,
};
