#include "nd_nest.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

/* An open or buffered span.  self and reach carry what is already known
 * when a span moves from the stack into a buffer: self has lost the time of
 * its reported descendants, reach is the furthest end in its subtree. */
struct ent {
	int64_t ts, end, reach, self;
	uint64_t user, seq;
	int overrun;
};

struct tl {
	struct ent *stk;
	size_t nstk, capstk;
	struct ent *buf;
	size_t nbuf, capbuf;
	int64_t last_ts, last_dur;	/* last span added (streaming order) */
	int64_t wm;			/* max end of the reported spans */
	unsigned has_last : 1, has_wm : 1, buffered : 1, sticky : 1,
	    active : 1;
};

struct nd_nest {
	nd_nest_rule rule;
	nd_nest_fn fn;
	void *ctx;
	struct tl *tl;
	size_t ntl;
	uint64_t seq;
	int buffer_all;
	size_t held, held_max, reordered;
	uint32_t *active;	/* timelines holding spans, for flush_all */
	size_t nactive, capactive;
};

nd_nest *
nd_nest_new(nd_nest_rule rule, nd_nest_fn fn, void *ctx)
{
	nd_nest *n = nd_xcalloc(1, sizeof *n);

	n->rule = rule;
	n->fn = fn;
	n->ctx = ctx;
	return n;
}

void
nd_nest_free(nd_nest *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->ntl; i++) {
		free(n->tl[i].stk);
		free(n->tl[i].buf);
	}
	free(n->tl);
	free(n->active);
	free(n);
}

static struct tl *
get_tl(nd_nest *n, uint32_t t)
{
	if (ND_UNLIKELY(t >= n->ntl)) {
		size_t old = n->ntl, cap = n->ntl;

		nd_grow(&n->tl, &cap, (size_t)t + 1, sizeof *n->tl);
		memset(n->tl + old, 0, (cap - old) * sizeof *n->tl);
		n->ntl = cap;
		if (n->buffer_all)
			for (size_t i = old; i < cap; i++)
				n->tl[i].buffered = n->tl[i].sticky = 1;
	}
	return &n->tl[t];
}

void
nd_nest_buffer_all(nd_nest *n)
{
	n->buffer_all = 1;
	for (size_t i = 0; i < n->ntl; i++)
		n->tl[i].buffered = n->tl[i].sticky = 1;
}

void
nd_nest_set_buffered(nd_nest *n, uint32_t t)
{
	struct tl *l = get_tl(n, t);

	l->buffered = l->sticky = 1;
}

/* Report the top of the stack and give its time to its parent. */
static void
pop(nd_nest *n, struct tl *l, uint32_t t, int64_t trig)
{
	struct ent *c = &l->stk[--l->nstk];
	nd_nest_span s;

	if (l->nstk > 0) {
		struct ent *p = &l->stk[l->nstk - 1];

		if (n->rule == ND_NEST_CLIP) {
			int64_t hi = c->reach < p->end ? c->reach : p->end;

			if (hi > c->ts)
				p->self -= hi - c->ts;
			if (c->reach > p->reach)
				p->reach = c->reach;
		} else
			p->self -= c->end - c->ts;
	}
	/* Watermark: a late span starting at or after it cannot change what
	 * was reported.  A span closed early by an overrunning span at trig
	 * (ND_NEST_REPARENT) bounds it at trig + 1 rather than its end. */
	{
		int64_t w = trig < c->end ? trig + 1 : c->end;

		if (!l->has_wm || w > l->wm)
			l->wm = w;
		l->has_wm = 1;
	}
	n->held--;
	s.ts_ns = c->ts;
	s.dur_ns = c->end - c->ts;
	s.self_ns = c->self;
	s.user = c->user;
	s.timeline = t;
	s.depth = (uint32_t)l->nstk;
	s.overrun = c->overrun;
	n->fn(n->ctx, &s);
}

/* The stack step: close what e does not start inside, then open e. */
static void
push(nd_nest *n, struct tl *l, uint32_t t, const struct ent *e)
{
	struct ent *d;
	int over = 0;

	if (n->rule == ND_NEST_CLIP) {
		while (l->nstk > 0 &&
		    !nd_nest_holds(l->stk[l->nstk - 1].end, e->ts))
			pop(n, l, t, e->ts);
		if (l->nstk > 0 && e->end > l->stk[l->nstk - 1].end)
			over = 1;
	} else {
		while (l->nstk > 0 &&
		    (!nd_nest_holds(l->stk[l->nstk - 1].end, e->ts) ||
		    e->end > l->stk[l->nstk - 1].end)) {
			if (nd_nest_holds(l->stk[l->nstk - 1].end, e->ts))
				over = 1;
			pop(n, l, t, e->ts);
		}
	}
	if (ND_UNLIKELY(l->nstk == l->capstk))
		nd_grow(&l->stk, &l->capstk, l->nstk + 1, sizeof *l->stk);
	d = &l->stk[l->nstk++];
	*d = *e;
	d->overrun = over;
}

static void
buf_add(struct tl *l, const struct ent *e)
{
	if (l->nbuf == l->capbuf)
		nd_grow(&l->buf, &l->capbuf, l->nbuf + 1, sizeof *l->buf);
	l->buf[l->nbuf++] = *e;
}

int
nd_nest_add(nd_nest *n, uint32_t t, int64_t ts, int64_t dur, uint64_t user)
{
	struct tl *l = get_tl(n, t);
	struct ent e;
	int inorder;

	if (dur < 0)
		dur = 0;
	e.ts = ts;
	e.end = ts + dur;
	e.reach = e.end;
	e.self = dur;
	e.user = user;
	e.seq = n->seq++;
	e.overrun = 0;
	inorder = !l->has_last ||
	    nd_span_order(l->last_ts, l->last_dur, ts, dur) <= 0;
	/* Spans in order on a streaming timeline are always placeable. */
	if ((!inorder || l->buffered || !l->has_last) && l->has_wm &&
	    ts < l->wm)
		return ND_NEST_LATE;
	if (!l->buffered && !inorder) {
		/* Out of order but after everything reported: buffer the
		 * open spans and what follows, sort them at the flush. */
		l->buffered = 1;
		n->reordered++;
		for (size_t i = 0; i < l->nstk; i++)
			buf_add(l, &l->stk[i]);
		l->nstk = 0;
	}
	if (!l->active) {
		l->active = 1;
		nd_grow(&n->active, &n->capactive, n->nactive + 1,
		    sizeof *n->active);
		n->active[n->nactive++] = t;
	}
	l->has_last = 1;
	l->last_ts = ts;
	l->last_dur = dur;
	if (++n->held > n->held_max)
		n->held_max = n->held;
	if (l->buffered)
		buf_add(l, &e);
	else
		push(n, l, t, &e);
	return ND_NEST_OK;
}

static int
ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int64_t dx = x->end - x->ts, dy = y->end - y->ts;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
nd_nest_flush(nd_nest *n, uint32_t t)
{
	struct tl *l;

	if (t >= n->ntl)
		return;
	l = &n->tl[t];
	if (l->nbuf > 0) {
		qsort(l->buf, l->nbuf, sizeof *l->buf, ent_cmp);
		for (size_t i = 0; i < l->nbuf; i++) {
			/* push() keeps self/reach of spans that were open
			 * when the timeline started buffering. */
			push(n, l, t, &l->buf[i]);
		}
		l->nbuf = 0;
	}
	while (l->nstk > 0)
		pop(n, l, t, INT64_MAX);
	if (!l->sticky)
		l->buffered = 0;
	l->active = 0;
	/* A new run on this timeline is ordered from here on. */
	l->has_last = 0;
	free(l->stk);
	free(l->buf);
	l->stk = l->buf = NULL;
	l->capstk = l->capbuf = 0;
}

void
nd_nest_flush_all(nd_nest *n)
{
	/* in the order the timelines first received spans */
	for (size_t i = 0; i < n->nactive; i++)
		if (n->tl[n->active[i]].active)
			nd_nest_flush(n, n->active[i]);
	n->nactive = 0;
}

size_t
nd_nest_held(const nd_nest *n)
{
	return n->held;
}

size_t
nd_nest_held_max(const nd_nest *n)
{
	return n->held_max;
}

size_t
nd_nest_reordered(const nd_nest *n)
{
	return n->reordered;
}

/* ---- union of intervals ---- */

static int
iv_cmp(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

static void
compact(nd_union *u)
{
	size_t w = 0;

	if (u->clean == u->n)
		return;
	qsort(u->iv, u->n, sizeof *u->iv, iv_cmp);
	for (size_t i = 0; i < u->n; i++) {
		if (w > 0 && u->iv[i][0] <= u->iv[w - 1][1]) {
			if (u->iv[i][1] > u->iv[w - 1][1])
				u->iv[w - 1][1] = u->iv[i][1];
		} else {
			u->iv[w][0] = u->iv[i][0];
			u->iv[w][1] = u->iv[i][1];
			w++;
		}
	}
	u->n = u->clean = w;
}

void
nd_union_add(nd_union *u, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return;
	if (u->n > 0 && u->clean == u->n) {
		int64_t *last = u->iv[u->n - 1];

		if (lo >= last[0] && lo <= last[1]) {
			if (hi > last[1])
				last[1] = hi;
			return;
		}
	}
	if (u->n == u->cap) {
		/* Merge before growing when many came out of order. */
		if (u->n - u->clean > u->clean + 1024) {
			compact(u);
			if (u->n < u->cap)
				goto append;
		}
		nd_grow(&u->iv, &u->cap, u->n + 1, sizeof *u->iv);
	}
append:
	if (u->clean == u->n && (u->n == 0 || lo > u->iv[u->n - 1][1]))
		u->clean++;
	u->iv[u->n][0] = lo;
	u->iv[u->n][1] = hi;
	u->n++;
}

int64_t
nd_union_total(nd_union *u)
{
	int64_t s = 0;

	compact(u);
	for (size_t i = 0; i < u->n; i++)
		s += u->iv[i][1] - u->iv[i][0];
	return s;
}

void
nd_union_free(nd_union *u)
{
	free(u->iv);
	memset(u, 0, sizeof *u);
}
