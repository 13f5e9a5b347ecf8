/*
 * nd_contextout: a trace-context run (nd_contextout.h).  The window logic
 * is nd_context.c; this file matches, holds, orders, writes and prints.
 */
#include "nd_contextout.h"

#include "nd_cli.h"
#include "nd_context.h"
#include "nd_drive.h"
#include "nd_engine.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_rx.h"
#include "nd_sort.h"
#include "nd_spool.h"
#include "nd_util.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A line of the --table listing. */
struct row {
	uint64_t seq;
	int64_t ts, dur, pid, tid;
	uint32_t tl;
	int role;
	char *name;
	char *where;		/* "process thread" of the timeline, or NULL */
};

struct group {
	int done;
	struct row *rows;
	size_t nrows, caprows;
	struct row m;		/* the match (a copy of its row) */
	uint32_t source;
};

/* A span of a source held whole for the second reading. */
struct hspan {
	int64_t ts, dur, pid, tid;
	uint64_t off, seq;	/* its line in the spool, its stream order */
	size_t len;
};

struct nd_contextout {
	nd_err err;		/* the first error of the input (run_error) */
	/* matching */
	const char *pattern;
	size_t patlen;
	int use_re;
	regex_t re;
	const char *key;	/* NULL: name */
	const char *arg;	/* --key args.X: X */
	nd_buf val;		/* decoded value / NUL-terminated copy */
	int64_t max;

	nd_out *o;
	int table;
	nd_context *ctx;
	nd_context_ops ops;
	int64_t before, after, lookback;
	int overlapping;

	/* the order policy */
	int again;		/* the second reading */
	int64_t late;		/* the first source out of order, or -1 */
	uint64_t base;		/* matches written before it */
	uint64_t src_base;	/* matches before the current source */
	nd_spool *held_out;	/* the current source's output (first
				 * reading) */
	nd_spool *held_in;	/* its spans (second reading) */
	struct hspan *hs;
	size_t nhs, caphs;
	nd_buf endrec;		/* its end record, second reading */
	int has_last;		/* last: the latest match (every span with
				 * --overlapping) of the first reading */
	struct hspan last;
	int disordered;		/* one came before last */
	int matched;		/* the source has a match */

	/* the current source */
	int has_src;
	uint32_t src;
	nd_buf meta;		/* its meta record, empty if none */
	int meta_written;
	uint64_t src_spans;	/* spans written for it */

	/* writing */
	nd_buf ob;		/* the record being made */
	nd_event fev;		/* a held span decoded again */
	nd_buf fscratch;
	nd_event wev;
	nd_buf wscratch, extra;

	/* --table */
	struct group **groups;	/* by match id - 1 */
	size_t ngroups, capgroups, gfirst;	/* gfirst: next to print */
	int printed_any;
	int printed_src;		/* printed_any when the source began */
};

/* The record made in p->ob goes out, or to the source's hold. */
static void
emit(struct nd_contextout *p)
{
	if (p->ob.len == 0)
		return;
	if (p->held_out != NULL)
		(void)nd_spool_add(p->held_out, p->ob.p, p->ob.len);
	else {
		nd_buf_add(nd_out_buf(p->o), p->ob.p, p->ob.len);
		nd_out_commit(p->o);
	}
	nd_buf_reset(&p->ob);
}

static int
value_matches(struct nd_contextout *p, const char *s, size_t n)
{
	if (!p->use_re)
		return n == p->patlen && memcmp(s, p->pattern, n) == 0;
	return nd_rx_exec(&p->re, s, n, 0, NULL) == 0;
}

/* The text of a JSON value for matching: a string's contents, any other
 * value's JSON text; null counts as absent. */
static int
jval_matches(struct nd_contextout *p, const nd_jval *v)
{
	if (v->type == ND_JNULL)
		return 0;
	if (v->type != ND_JSTR)
		return value_matches(p, v->raw, v->len);
	if (!v->esc)
		return value_matches(p, nd_jstr_ptr(v), nd_jstr_len(v));
	nd_buf_reset(&p->val);
	nd_json_unescape(v, &p->val);
	return value_matches(p, p->val.p != NULL ? p->val.p : "", p->val.len);
}

static int
span_matches(struct nd_contextout *p, const nd_event *ev)
{
	const nd_jval *v;
	nd_jval av;

	if (p->key == NULL)
		return ev->name.p != NULL &&
		    value_matches(p, ev->name.p, ev->name.n);
	if (p->arg != NULL)
		return nd_event_arg(ev, p->arg, &av) && jval_matches(p, &av);
	v = nd_event_get(ev, p->key);
	return v != NULL && jval_matches(p, v);
}

/* --- the stream --- */

static void
drop_member(nd_event *ev, const char *key)
{
	size_t k = 0;

	for (size_t i = 0; i < ev->nmembers; i++)
		if (!nd_jstr_eq(&ev->members[i].key, key))
			ev->members[k++] = ev->members[i];
	ev->nmembers = k;
}

static void
decode_held(struct nd_contextout *p, const nd_context_span *s)
{
	nd_everr err;

	/* It was decoded once already: this cannot fail. */
	if (nd_event_decode(&p->wev, s->line, s->len, &p->wscratch, &err) != 0)
		nd_die(ND_EXIT_ERROR, "internal error: %s", err.msg);
}

static void
on_write(void *u, const nd_context_span *s, const nd_context_rel *r)
{
	struct nd_contextout *p = u;
	nd_buf *b = &p->ob;

	if (!p->meta_written && p->meta.len > 0) {
		nd_buf_add(b, p->meta.p, p->meta.len);
		nd_buf_addc(b, '\n');
	}
	p->meta_written = 1;
	p->src_spans++;
	decode_held(p, s);
	/* Our own output read back: the new context replaces the old. */
	drop_member(&p->wev, "context");
	nd_buf_reset(&p->extra);
	nd_buf_addf(&p->extra, ",\"context\":{\"match\":%llu,\"role\":\"%s\","
	    "\"offset_ns\":%lld}", (unsigned long long)(p->base + r->match),
	    nd_context_role_name(r->role), (long long)r->offset_ns);
	p->wev.extra = p->extra.p;
	p->wev.extra_len = p->extra.len;
	nd_event_write(b, &p->wev);
	emit(p);
}

/* The end record of a source we wrote spans of, with the counts of what we
 * wrote; everything else (events read, skipped, sha256, warnings) still
 * describes the input and is kept. */
static void
write_end(struct nd_contextout *p, const nd_event *ev)
{
	nd_buf *b = &p->ob;

	nd_buf_addc(b, '{');
	for (size_t i = 0; i < ev->nmembers; i++) {
		const nd_member *m = &ev->members[i];

		if (i > 0)
			nd_buf_addc(b, ',');
		nd_buf_add(b, m->key.raw, m->key.len);
		nd_buf_addc(b, ':');
		if (nd_jstr_eq(&m->key, "spans"))
			nd_json_put_u64(b, p->src_spans);
		else if (nd_jstr_eq(&m->key, "instants") ||
		    nd_jstr_eq(&m->key, "counters") ||
		    nd_jstr_eq(&m->key, "flows"))
			nd_buf_addc(b, '0');
		else
			nd_buf_add(b, m->val.raw, m->val.len);
	}
	nd_buf_add(b, "}\n", 2);
	emit(p);
}

/* --- the table --- */

static char *
clean_dup(nd_str s)
{
	char *r;

	if (s.p == NULL)
		return NULL;
	r = nd_xstrndup(s.p, s.n);
	for (size_t i = 0; i < s.n; i++)
		if (r[i] == '\n' || r[i] == '\t' || r[i] == '\r' || r[i] == '\0')
			r[i] = ' ';
	return r;
}

static void
row_fill(struct nd_contextout *p, struct row *w, const nd_context_span *s, int role)
{
	nd_buf txt = ND_BUF_INIT;

	decode_held(p, s);
	w->seq = s->seq;
	w->ts = s->ts_ns;
	w->dur = s->dur_ns;
	w->pid = s->pid;
	w->tid = s->tid;
	w->tl = s->timeline;
	w->role = role;
	w->name = clean_dup(p->wev.name.p != NULL ? p->wev.name :
	    ND_STR("(no name)"));
	if (p->wev.process.p != NULL)
		nd_buf_add(&txt, p->wev.process.p, p->wev.process.n);
	if (p->wev.thread.p != NULL) {
		if (txt.len > 0)
			nd_buf_addc(&txt, ' ');
		nd_buf_add(&txt, p->wev.thread.p, p->wev.thread.n);
	}
	w->where = txt.len > 0 ? clean_dup((nd_str){ txt.p, txt.len }) : NULL;
	if (w->where != NULL) {
		size_t n = strlen(w->where);

		while (n > 0 && w->where[n - 1] == ' ')
			w->where[--n] = '\0';
		if (n == 0) {
			free(w->where);
			w->where = NULL;
		}
	}
	nd_buf_free(&txt);
}

static struct group *
group_of(struct nd_contextout *p, uint64_t id)
{
	size_t i = (size_t)(id - 1);

	if (i >= p->ngroups) {
		nd_grow(&p->groups, &p->capgroups, i + 1, sizeof *p->groups);
		for (size_t j = p->ngroups; j <= i; j++)
			p->groups[j] = nd_xcalloc(1, sizeof **p->groups);
		p->ngroups = i + 1;
	}
	return p->groups[i];
}

static void
on_relate(void *u, const nd_context_span *s, const nd_context_rel *r)
{
	struct nd_contextout *p = u;
	struct group *g = group_of(p, r->match);
	struct row *w;

	nd_grow(&g->rows, &g->caprows, g->nrows + 1, sizeof *g->rows);
	w = &g->rows[g->nrows++];
	row_fill(p, w, s, r->role);
	if (r->role == ND_CTX_MATCH) {
		g->m = *w;
		g->source = s->source;
	}
}

/* Own timeline first (parents, then the rest), then the others by pid and
 * tid; stream order within each. */
static uint32_t sort_tl;

static int
row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int xo = x->tl == sort_tl, yo = y->tl == sort_tl;

	if (xo != yo)
		return yo - xo;
	if (!xo && (x->pid != y->pid || x->tid != y->tid)) {
		if (x->pid != y->pid)
			return x->pid < y->pid ? -1 : 1;
		return x->tid < y->tid ? -1 : 1;
	}
	if (xo && (x->role == ND_CTX_PARENT) != (y->role == ND_CTX_PARENT))
		return x->role == ND_CTX_PARENT ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
put_row(nd_buf *b, const char *role, const char *start, int ws,
    const char *dur, int wd, const char *name)
{
	nd_buf_addf(b, "  %-7s  %*s  %*s", role, ws, start, wd, dur);
	if (name != NULL && *name != '\0')
		nd_buf_addf(b, "  %s", name);
	nd_buf_addc(b, '\n');
}

static void
print_group(struct nd_contextout *p, uint64_t id, struct group *g)
{
	nd_buf *b = &p->ob;
	char st[40], du[40];
	int ws = 5, wd = 3;	/* "start", "dur" */
	int64_t reach = 0;
	int have_reach = 0;
	uint32_t cur_tl = UINT32_MAX;

	sort_tl = g->m.tl;
	qsort(g->rows, g->nrows, sizeof *g->rows, row_cmp);
	/* Column widths, gaps included (a gap is never longer than the
	 * window it lies in, so the widest start/dur is a row's). */
	for (size_t i = 0; i < g->nrows; i++) {
		nd_fmt_dur(st, sizeof st, g->rows[i].ts - g->m.ts, 1);
		nd_fmt_dur(du, sizeof du, g->rows[i].dur, 0);
		if ((int)strlen(st) > ws)
			ws = (int)strlen(st);
		if ((int)strlen(du) > wd)
			wd = (int)strlen(du);
	}
	if (p->printed_any)
		nd_buf_addc(b, '\n');
	p->printed_any = 1;
	nd_buf_addf(b, "match %llu: %s (pid %lld tid %lld",
	    (unsigned long long)(p->base + id),
	    g->m.name, (long long)g->m.pid, (long long)g->m.tid);
	if (g->m.where != NULL)
		nd_buf_addf(b, ", %s", g->m.where);
	nd_buf_addf(b, ", source %u) at ts_ns %lld\n", g->source,
	    (long long)g->m.ts);
	put_row(b, "role", "start", ws, "dur", wd, "name");
	for (size_t i = 0; i < g->nrows; i++) {
		const struct row *w = &g->rows[i];

		if (w->tl != cur_tl) {
			cur_tl = w->tl;
			have_reach = 0;
			if (w->tl != g->m.tl) {
				nd_buf_addf(b, "  -- pid %lld tid %lld",
				    (long long)w->pid, (long long)w->tid);
				if (w->where != NULL)
					nd_buf_addf(b, ", %s", w->where);
				nd_buf_addc(b, '\n');
			}
		}
		if (w->role != ND_CTX_PARENT) {
			/* idle time since the spans listed before on this
			 * timeline ended */
			if (have_reach && w->ts > reach) {
				nd_fmt_dur(st, sizeof st, reach - g->m.ts, 1);
				nd_fmt_dur(du, sizeof du, w->ts - reach, 0);
				put_row(b, "(gap)", st, ws, du, wd, NULL);
			}
			if (!have_reach || w->ts + w->dur > reach)
				reach = w->ts + w->dur;
			have_reach = 1;
		}
		nd_fmt_dur(st, sizeof st, w->ts - g->m.ts, 1);
		nd_fmt_dur(du, sizeof du, w->dur, 0);
		put_row(b, nd_context_role_name(w->role), st, ws, du, wd, w->name);
		emit(p);
	}
}

static void
group_free(struct group *g)
{
	for (size_t i = 0; i < g->nrows; i++) {
		free(g->rows[i].name);
		free(g->rows[i].where);
	}
	free(g->rows);
	free(g);
}

static void
on_done(void *u, uint64_t id)
{
	struct nd_contextout *p = u;

	group_of(p, id)->done = 1;
	while (p->gfirst < p->ngroups && p->groups[p->gfirst]->done) {
		print_group(p, p->gfirst + 1, p->groups[p->gfirst]);
		group_free(p->groups[p->gfirst]);
		p->groups[p->gfirst] = NULL;
		p->gfirst++;
	}
}

/* --- the order policy and the run --- */

/* A span without one of the keys the context needs is the run's error
 * (run_error): 0 when ev has them all. */
static int
need_ints(struct nd_contextout *p, const nd_event *ev)
{
	static const struct {
		unsigned bit;
		const char *key;
	} need[] = { { ND_HAS_TS, "ts_ns" }, { ND_HAS_DUR, "dur_ns" },
	    { ND_HAS_PID, "pid" }, { ND_HAS_TID, "tid" } };
	nd_stream *st = nd_drive_stream();

	for (size_t i = 0; i < sizeof need / sizeof *need; i++)
		if (!(ev->has & need[i].bit))
			return nd_err_line(&p->err, nd_stream_file(st),
			    nd_stream_lineno(st), "span record lacks \"%s\" "
			    "(an integer)", need[i].key);
	return 0;
}

static uint64_t
matches(const struct nd_contextout *p)
{
	return p->base + nd_context_matches(p->ctx);
}

/* --max is reached and every match has its context. */
static int
max_done(const struct nd_contextout *p)
{
	return p->max > 0 && matches(p) >= (uint64_t)p->max &&
	    nd_context_pending(p->ctx) == 0;
}

/* Give a span to the context engine, matched or not: 0, or -1 when it is
 * out of order on its timeline. */
/* Time order across the timelines of a source: by start, the longer
 * first, then by timeline (pid, tid) so that no tie depends on the order
 * the stream gave them in; within a timeline, stream order (the one
 * thing that says which of two spans alike is the outer). */
static int
time_cmp(const struct hspan *x, const struct hspan *y)
{
	int c = nd_span_order(x->ts, x->dur, y->ts, y->dur);

	if (c != 0)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int
hspan_cmp(const void *a, const void *b, void *ctx)
{
	const struct hspan *x = a, *y = b;
	int c = time_cmp(x, y);

	(void)ctx;
	if (c != 0)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* First reading: 0 when ev keeps the source in the order the answer is
 * of.  Matches are numbered and written in time order, so a match before
 * the one before it (timelines one after another, as xplane2ndjson writes
 * them) sends the source to the second reading; with --overlapping every
 * span counts, since the other timelines' spans a match sees are those
 * read before it.  A source with no match answers nothing in any order:
 * it is not read again.  Not with --max, which stops reading at its last
 * match: it selects the first matches in stream order. */
static int
first_out_of_order(struct nd_contextout *p, const nd_event *ev, int match)
{
	struct hspan h = { .ts = ev->ts_ns, .dur = ev->dur_ns,
	    .pid = ev->pid, .tid = ev->tid };

	if ((!match && !p->overlapping) || p->max != 0)
		return 0;	/* --max: the first M the stream gives */
	if (p->has_last && time_cmp(&h, &p->last) < 0)
		p->disordered = 1;
	else {
		p->last = h;
		p->has_last = 1;
	}
	p->matched |= match;
	/* a source without a match answers nothing in any order */
	return p->disordered && p->matched;
}

/* -1 when ev is out of order (on its timeline, or for the first
 * reading's time order). */
static int
add_span(struct nd_contextout *p, const nd_event *ev)
{
	int m = (p->max == 0 || matches(p) < (uint64_t)p->max) &&
	    span_matches(p, ev);

	if (!p->again && first_out_of_order(p, ev, m))
		return -1;
	return nd_context_add(p->ctx, ev, m, NULL, NULL) == ND_CTX_OK ? 0 : -1;
}

/* Second reading: the held spans of the source, in time order.  1 when
 * --max stopped it: the first reading would not have read on to the
 * source's end record. */
static int
feed_held(struct nd_contextout *p)
{
	nd_everr err;

	nd_sort(p->hs, p->nhs, sizeof *p->hs, hspan_cmp, NULL);
	for (size_t i = 0; i < p->nhs && !max_done(p); i++) {
		const struct hspan *h = &p->hs[i];
		const char *line = nd_spool_get(p->held_in, h->off, h->len);

		/* It was decoded once already: this cannot fail. */
		if (nd_event_decode(&p->fev, line, h->len, &p->fscratch,
		    &err) != 0)
			nd_die(ND_EXIT_ERROR, "internal error: %s", err.msg);
		p->fev.source = p->src;
		if (add_span(p, &p->fev) != 0)
			nd_die(ND_EXIT_ERROR, "internal error: sorted spans "
			    "out of order");
	}
	p->nhs = 0;
	nd_spool_free(p->held_in);
	p->held_in = NULL;
	return max_done(p);
}

/* The held output of a source that ended goes out. */
static void
flush_out(struct nd_contextout *p)
{
	uint64_t size;

	if (p->held_out == NULL)
		return;
	size = nd_spool_size(p->held_out);
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off > ND_SPOOL_WINDOW ? ND_SPOOL_WINDOW :
		    (size_t)(size - off);

		nd_buf_add(nd_out_buf(p->o), nd_spool_get(p->held_out, off, n),
		    n);
		nd_out_commit(p->o);
		off += n;
	}
	nd_spool_free(p->held_out);
	p->held_out = NULL;
}

static void
source_begin(struct nd_contextout *p, uint32_t src)
{
	p->has_src = 1;
	p->src = src;
	nd_buf_reset(&p->meta);
	p->meta_written = 0;
	p->src_spans = 0;
	p->src_base = matches(p);
	p->has_last = p->disordered = p->matched = 0;
	p->printed_src = p->printed_any;
	if (p->again) {
		p->held_in = nd_spool_new();
		nd_buf_reset(&p->endrec);
	} else
		p->held_out = nd_spool_new();
}

static void
source_end(struct nd_contextout *p)
{
	int stopped;

	if (!p->has_src)
		return;
	p->has_src = 0;
	stopped = p->again && feed_held(p);
	nd_context_end_source(p->ctx);
	if (p->again && !stopped && p->endrec.len > 0 && p->meta_written) {
		nd_everr err;

		if (nd_event_decode(&p->fev, p->endrec.p, p->endrec.len,
		    &p->fscratch, &err) != 0)
			nd_die(ND_EXIT_ERROR, "internal error: %s", err.msg);
		write_end(p, &p->fev);
	}
	flush_out(p);
}

/* The source of ev is out of order: what it wrote is dropped, and it and
 * every later source wait for the second reading. */
static void
source_late(struct nd_contextout *p, const nd_event *ev)
{
	p->late = ev->source;
	p->has_src = 0;
	p->printed_any = p->printed_src;	/* what it printed is dropped */
	nd_spool_free(p->held_out);
	p->held_out = NULL;
}

static void
run_record(void *u, const nd_event *ev, const nd_source_info *si)
{
	struct nd_contextout *p = u;

	(void)si;
	/* written by the first reading, or waiting for the second */
	if (p->again ? (int64_t)ev->source < p->late :
	    p->late >= 0 && (int64_t)ev->source >= p->late)
		return;
	/* a source begins (run_end_source ended the one before) */
	if (!p->has_src)
		source_begin(p, ev->source);
	switch (ev->type) {
	case ND_EV_META:
		nd_buf_add(&p->meta, ev->line, ev->len);
		break;
	case ND_EV_END:
		if (p->again) {
			nd_buf_reset(&p->endrec);
			nd_buf_add(&p->endrec, ev->line, ev->len);
			break;
		}
		nd_context_end_source(p->ctx);
		if (p->meta_written)
			write_end(p, ev);
		break;
	case ND_EV_SPAN:
		if (need_ints(p, ev) != 0)
			return;
		if (p->again) {
			struct hspan *h;

			nd_grow(&p->hs, &p->caphs, p->nhs + 1, sizeof *p->hs);
			h = &p->hs[p->nhs];
			h->ts = ev->ts_ns;
			h->dur = ev->dur_ns;
			h->pid = ev->pid;
			h->tid = ev->tid;
			h->seq = p->nhs++;
			h->len = ev->len;
			h->off = nd_spool_add(p->held_in, ev->line, ev->len);
		} else if (add_span(p, ev) != 0)
			source_late(p, ev);
		break;
	default:
		/* instants, counters, flows and other records are not
		 * context: not written */
		break;
	}
}

static void
context_new(struct nd_contextout *p)
{
	p->ctx = nd_context_new(p->before, p->after, p->overlapping,
	    p->lookback, &p->ops, p);
}

static void
run_end_source(void *u)
{
	source_end(u);
}

static int
run_end(void *u)
{
	struct nd_contextout *p = u;

	if (p->late < 0 || p->again) {
		source_end(p);
		return ND_ENGINE_OK;
	}
	return ND_ENGINE_AGAIN;
}

/* The second reading: every match before the late source is written,
 * and it numbers on from there. */
static void
run_restart(void *u)
{
	struct nd_contextout *p = u;

	p->base = p->src_base;
	nd_context_free(p->ctx);
	context_new(p);
	for (size_t i = p->gfirst; i < p->ngroups; i++)
		if (p->groups[i] != NULL)
			group_free(p->groups[i]);
	p->ngroups = p->gfirst = 0;
	p->again = 1;
}

static void
run_start(void *u, nd_out *o)
{
	((struct nd_contextout *)u)->o = o;
}

static int
run_done(void *u)
{
	struct nd_contextout *p = u;

	return (p->late < 0 || p->again) && max_done(p);
}

static void
prog_free(struct nd_contextout *p)
{
	nd_context_free(p->ctx);
	nd_spool_free(p->held_out);
	nd_spool_free(p->held_in);
	free(p->hs);
	nd_event_free(&p->wev);
	nd_event_free(&p->fev);
	nd_buf_free(&p->ob);
	nd_buf_free(&p->wscratch);
	nd_buf_free(&p->fscratch);
	nd_buf_free(&p->extra);
	nd_buf_free(&p->meta);
	nd_buf_free(&p->endrec);
	nd_buf_free(&p->val);
	for (size_t i = p->gfirst; i < p->ngroups; i++)
		if (p->groups[i] != NULL)
			group_free(p->groups[i]);
	free(p->groups);
	if (p->use_re)
		regfree(&p->re);
}

static void
prog_init(struct nd_contextout *p, const nd_contextout_opts *o)
{
	memset(p, 0, sizeof *p);
	p->pattern = o->pattern;
	p->patlen = strlen(o->pattern);
	p->use_re = o->use_re;
	if (o->key != NULL && strcmp(o->key, "name") != 0) {
		p->key = o->key;
		if (strncmp(o->key, "args.", 5) == 0)
			p->arg = o->key + 5;
	}
	p->max = o->max;
	p->table = o->table;
	p->before = o->before;
	p->after = o->after;
	p->lookback = o->lookback;
	p->overlapping = o->overlapping;
	p->late = -1;
	if (p->table) {
		p->ops.relate = on_relate;
		p->ops.done = on_done;
	} else
		p->ops.write = on_write;
	if (p->use_re) {
		int rc = regcomp(&p->re, p->pattern, REG_EXTENDED | REG_NOSUB);

		if (rc != 0) {
			char msg[256];

			regerror(rc, &p->re, msg, sizeof msg);
			p->use_re = 0;
			nd_die(ND_EXIT_ERROR, "--regex '%s': %s", p->pattern,
			    msg);
		}
	}
	nd_event_init(&p->wev);
	nd_event_init(&p->fev);
}

nd_contextout *
nd_contextout_new(const nd_contextout_opts *o)
{
	struct nd_contextout *p = nd_xmalloc(sizeof *p);

	prog_init(p, o);
	context_new(p);
	return p;
}

static const nd_err *
run_error(void *u)
{
	struct nd_contextout *p = u;

	return p->err.code != 0 ? &p->err : NULL;
}

nd_engine
nd_contextout_engine(nd_contextout *p)
{
	nd_engine e = {
		.name = "context",
		.self = p,
		.record = run_record,
		.end_source = run_end_source,
		.end_input = run_end,
		.restart = run_restart,
		.start = run_start,
		.done = run_done,
		.error = run_error,
	};

	return e;
}

int
nd_contextout_end(nd_contextout *p)
{
	uint64_t found = matches(p);

	if (getenv("ND_CONTEXT_STATS") != NULL)
		fprintf(stderr, "%s: %llu matches, at most %zu spans held\n",
		    nd_progname, (unsigned long long)found,
		    nd_context_held_max(p->ctx));
	prog_free(p);
	free(p);
	return found > 0 ? ND_EXIT_OK : ND_EXIT_FINDING;
}
