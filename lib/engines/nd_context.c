#include "nd_context.h"
#include "nd_hash.h"
#include "nd_nest.h"
#include "nd_sort.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

#define NO_DEV UINT32_MAX
#define NO_SEQ UINT64_MAX

/* A held span.  It lives while the stack, the ring or the output queue of
 * its timeline refers to it, then returns to the free list (keeping the
 * capacity of its line buffer). */
struct ent {
	nd_context_span pub;
	nd_buf line;
	int64_t end;		/* ts + dur */
	int64_t end_e;		/* for overlap tests: end, or ts + 1 if dur 0 */
	uint32_t dev;		/* interned device, NO_DEV */
	unsigned host : 1, in_stack : 1, in_ring : 1, in_outq : 1,
	    claimed : 1;
	/* in the context of a match of its own timeline: its parent,
	 * `before` or `after` span, or the match (before_spans) */
	unsigned own : 1;
	nd_context_rel claim;
	size_t stk_pos;		/* index in its timeline's stk while open */
	struct ent *next_free;
};

/* A deque of entries in seq order (power-of-two ring). */
struct deq {
	struct ent **v;
	size_t head, n, cap;
};

/* A match collecting its `after` spans: those of seq up to `until`. */
struct pend {
	uint64_t match;
	int64_t ts;
	uint64_t until;
};

struct tl {
	int64_t pid, tid;
	int64_t last_ts, last_dur;
	uint64_t nseq;
	/* Open spans, seq ascending; a closed one leaves a NULL until the
	 * array is compacted (when half of it is holes), so that closing
	 * costs no scan.  Every span in stk[0..stk_claimed) is claimed. */
	struct ent **stk;
	size_t nstk, capstk, nopen, stk_claimed;
	struct ent **eheap;	/* the open spans by (end, seq): who closes */
	size_t neheap, capeheap;
	struct ent **closing;	/* scratch: the spans closing now */
	size_t capclosing;
	struct deq ring;	/* the last `keep` ended spans, seq ascending */
	size_t ring_claimed;	/* ring[0..ring_claimed) are claimed */
	int64_t ring_maxlen;	/* longest end_e - ts ever in the ring */
	struct deq outq;	/* claimed, not yet written, seq ascending */
	/* the matches collecting `after` spans, oldest first (a queue:
	 * all count the same spans, so the oldest is done first) */
	struct pend *pend;
	size_t pend_head, npend, cappend;
	int dirty;
};

/* A match as the overlap tests see it. */
struct mdesc {
	int64_t ts, end_e, pid;
	uint64_t match;
	uint32_t tl, dev;
};

/* Overlap windows (overlapping only), kept until their source ends: the
 * matches of one timeline with one device, in timeline order, so by ts
 * ascending and appended only.  up[i] is the window that was innermost
 * open when window i was added (its enclosing chain): the windows that
 * contain a point t are all on the chain of the last window starting
 * before t, so a query costs a binary search, the windows starting inside
 * the span and the depth of the chain -- never a scan of all matches. */
struct wlist {
	uint32_t tl, dev;
	int64_t pid;
	struct win {
		int64_t ts, end_e;
		uint64_t match;
		uint32_t up;
	} *w;
	size_t n, cap;
	uint32_t *stk;		/* open windows while adding */
	size_t nstk, capstk;
};

#define NO_WIN UINT32_MAX

struct nd_context {
	int64_t before, after;
	int overlapping;
	size_t keep;		/* ended spans kept per timeline */
	nd_context_ops ops;
	void *u;

	nd_intern *tlkeys;	/* (pid, tid) -> timeline id */
	struct tl *tls;
	size_t ntl, captl;
	nd_intern *devs;
	int64_t c_pid, c_tid;	/* last timeline looked up */
	uint32_t c_tl;
	int c_valid;

	struct wlist *wl;
	size_t nwl, capwl;
	nd_intern *wlkeys;	/* (timeline, device) -> index in wl */

	uint64_t nmatch;
	/* ids of matches not done, ascending, from live_head on; a done one
	 * in the middle keeps its place with LIVE_DONE set (a removal costs
	 * no move) until the queue is compacted */
	uint64_t *live;
	size_t live_head, nlivev, caplive;
	size_t nlive;		/* not done */

	uint32_t *dirty;
	size_t ndirty, capdirty;

	struct ent *free_ents;
	size_t held, held_max;
};

static const char *const role_names[] = {
	"before", "match", "after", "parent", "overlap"
};

const char *
nd_context_role_name(int role)
{
	return role >= 0 && role <= ND_CTX_OVERLAP ? role_names[role] : "?";
}

/* --- deque --- */

static struct ent *
deq_at(const struct deq *d, size_t i)
{
	return d->v[(d->head + i) & (d->cap - 1)];
}

static void
deq_grow(struct deq *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 8;
	struct ent **v = nd_xmalloc(ncap * sizeof *v);

	for (size_t i = 0; i < d->n; i++)
		v[i] = deq_at(d, i);
	free(d->v);
	d->v = v;
	d->head = 0;
	d->cap = ncap;
}

static struct ent *
deq_pop_front(struct deq *d)
{
	struct ent *e = d->v[d->head];

	d->head = (d->head + 1) & (d->cap - 1);
	d->n--;
	return e;
}

/* Insert keeping seq order; almost always at the back.  Returns the
 * index. */
static size_t
deq_insert(struct deq *d, struct ent *e)
{
	size_t i;

	if (d->n == d->cap)
		deq_grow(d);
	i = d->n;
	while (i > 0 && deq_at(d, i - 1)->pub.seq > e->pub.seq) {
		d->v[(d->head + i) & (d->cap - 1)] = deq_at(d, i - 1);
		i--;
	}
	d->v[(d->head + i) & (d->cap - 1)] = e;
	d->n++;
	return i;
}

/* --- entries --- */

static struct ent *
ent_new(nd_context *c)
{
	struct ent *e = c->free_ents;

	if (e != NULL) {
		c->free_ents = e->next_free;
		nd_buf_reset(&e->line);
	} else {
		e = nd_xcalloc(1, sizeof *e);
	}
	if (++c->held > c->held_max)
		c->held_max = c->held;
	return e;
}

static void
ent_maybe_free(nd_context *c, struct ent *e)
{
	if (e->in_stack || e->in_ring || e->in_outq)
		return;
	e->claimed = 0;
	e->own = 0;
	e->next_free = c->free_ents;
	c->free_ents = e;
	c->held--;
}

/* --- claiming and writing --- */

static void
mark_dirty(nd_context *c, struct tl *t)
{
	if (t->dirty)
		return;
	t->dirty = 1;
	nd_grow(&c->dirty, &c->capdirty, c->ndirty + 1, sizeof *c->dirty);
	c->dirty[c->ndirty++] = (uint32_t)(t - c->tls);
}

/* Claim e for r (write mode): it will be written with that relation. */
static void
claim(nd_context *c, struct ent *e, const nd_context_rel *r)
{
	struct tl *t = &c->tls[e->pub.timeline];

	if (c->ops.write == NULL || e->claimed)
		return;
	e->claimed = 1;
	e->claim = *r;
	e->in_outq = 1;
	deq_insert(&t->outq, e);
	mark_dirty(c, t);
}

static void
relate(nd_context *c, struct ent *e, uint64_t match, int role, int64_t mts,
    int do_claim)
{
	nd_context_rel r;

	r.match = match;
	r.role = role;
	r.offset_ns = e->pub.ts_ns - mts;
	if (c->ops.relate != NULL)
		c->ops.relate(c->u, &e->pub, &r);
	if (do_claim)
		claim(c, e, &r);
}

static void
write_front(nd_context *c, struct tl *t)
{
	struct ent *e = deq_pop_front(&t->outq);

	e->in_outq = 0;
	c->ops.write(c->u, &e->pub, &e->claim);
	ent_maybe_free(c, e);
}

/* Write the claimed spans of t that nothing unclaimed and still held
 * precedes: such a span could still be claimed and would have to come
 * first. */
static void
flush_tl(nd_context *c, struct tl *t)
{
	uint64_t lim = NO_SEQ;

	t->dirty = 0;
	if (t->outq.n == 0)
		return;
	/* The first open span not claimed: stk_claimed only moves on. */
	while (t->stk_claimed < t->nstk && (t->stk[t->stk_claimed] == NULL ||
	    t->stk[t->stk_claimed]->claimed))
		t->stk_claimed++;
	if (t->stk_claimed < t->nstk)
		lim = t->stk[t->stk_claimed]->pub.seq;
	/* Claims only accumulate: skip the prefix known to be claimed. */
	while (t->ring_claimed < t->ring.n &&
	    deq_at(&t->ring, t->ring_claimed)->claimed)
		t->ring_claimed++;
	if (t->ring_claimed < t->ring.n &&
	    deq_at(&t->ring, t->ring_claimed)->pub.seq < lim)
		lim = deq_at(&t->ring, t->ring_claimed)->pub.seq;
	while (t->outq.n > 0 && deq_at(&t->outq, 0)->pub.seq < lim)
		write_front(c, t);
}

static void
flush_dirty(nd_context *c)
{
	for (size_t i = 0; i < c->ndirty; i++)
		flush_tl(c, &c->tls[c->dirty[i]]);
	c->ndirty = 0;
}

/* --- matches --- */

#define LIVE_DONE ((uint64_t)1 << 63)

static void
live_add(nd_context *c, uint64_t id)
{
	/* compact when the done ones are most of the queue */
	if (c->nlivev - c->live_head > 2 * c->nlive + 64) {
		size_t k = 0;

		for (size_t i = c->live_head; i < c->nlivev; i++)
			if (!(c->live[i] & LIVE_DONE))
				c->live[k++] = c->live[i];
		c->live_head = 0;
		c->nlivev = k;
	}
	nd_grow(&c->live, &c->caplive, c->nlivev + 1, sizeof *c->live);
	c->live[c->nlivev++] = id;
	c->nlive++;
}

static void
live_done(nd_context *c, uint64_t id)
{
	size_t lo = c->live_head, hi = c->nlivev;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((c->live[mid] & ~LIVE_DONE) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nlivev || c->live[lo] != id)
		return;		/* none, or done already */
	c->live[lo] |= LIVE_DONE;
	c->nlive--;
	while (c->live_head < c->nlivev &&
	    (c->live[c->live_head] & LIVE_DONE))
		c->live_head++;
	if (c->ops.done != NULL)
		c->ops.done(c->u, id);
}

/* Is s a candidate overlap of the match m (same source: by construction)? */
static int
candidate(const struct ent *s, const struct mdesc *m)
{
	if (s->pub.timeline == m->tl)
		return 0;
	if (s->host)
		return 1;
	if (m->dev != NO_DEV)
		return s->dev == m->dev;
	return s->pub.pid == m->pid;
}

static int
overlaps(const struct ent *s, const struct mdesc *m)
{
	return s->pub.ts_ns < m->end_e && m->ts < s->end_e;
}

static void
win_add(nd_context *c, const struct mdesc *m)
{
	struct wlist *l = NULL;
	struct win *w;
	uint32_t key[2] = { m->tl, m->dev }, i;

	/* by a table: one list per timeline and device, and many timelines */
	i = nd_intern_id(c->wlkeys, (const char *)key, sizeof key);
	if (i < c->nwl)
		l = &c->wl[i];
	else {
		nd_grow(&c->wl, &c->capwl, c->nwl + 1, sizeof *c->wl);
		l = &c->wl[c->nwl++];
		memset(l, 0, sizeof *l);
		l->tl = m->tl;
		l->dev = m->dev;
		l->pid = m->pid;
	}
	while (l->nstk > 0 && l->w[l->stk[l->nstk - 1]].end_e <= m->ts)
		l->nstk--;
	nd_grow(&l->w, &l->cap, l->n + 1, sizeof *l->w);
	w = &l->w[l->n];
	w->ts = m->ts;
	w->end_e = m->end_e;
	w->match = m->match;
	w->up = l->nstk > 0 ? l->stk[l->nstk - 1] : NO_WIN;
	nd_grow(&l->stk, &l->capstk, l->nstk + 1, sizeof *l->stk);
	l->stk[l->nstk++] = (uint32_t)l->n;
	l->n++;
}

/* --- timelines --- */

static struct tl *
tl_get(nd_context *c, int64_t pid, int64_t tid)
{
	int64_t key[2] = { pid, tid };
	uint32_t id, n;

	if (c->c_valid && c->c_pid == pid && c->c_tid == tid)
		return &c->tls[c->c_tl];
	n = nd_intern_count(c->tlkeys);
	id = nd_intern_id(c->tlkeys, (const char *)key, sizeof key);
	if (id == n) {
		struct tl *t;

		nd_grow(&c->tls, &c->captl, (size_t)id + 1, sizeof *c->tls);
		t = &c->tls[id];
		memset(t, 0, sizeof *t);
		t->pid = pid;
		t->tid = tid;
		c->ntl = (size_t)id + 1;
	}
	c->c_pid = pid;
	c->c_tid = tid;
	c->c_tl = id;
	c->c_valid = 1;
	return &c->tls[id];
}

static void
ring_trim(nd_context *c, struct tl *t)
{
	while (t->ring.n > c->keep) {
		struct ent *e = deq_pop_front(&t->ring);

		e->in_ring = 0;
		if (t->ring_claimed > 0)
			t->ring_claimed--;
		ent_maybe_free(c, e);
	}
}

static int
eh_less(const struct ent *a, const struct ent *b)
{
	if (a->end != b->end)
		return a->end < b->end;
	return a->pub.seq < b->pub.seq;
}

static void
eh_push(struct tl *t, struct ent *e)
{
	size_t i;

	nd_grow(&t->eheap, &t->capeheap, t->neheap + 1, sizeof *t->eheap);
	i = t->neheap++;
	while (i > 0 && eh_less(e, t->eheap[(i - 1) / 2])) {
		t->eheap[i] = t->eheap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	t->eheap[i] = e;
}

static struct ent *
eh_pop(struct tl *t)
{
	struct ent *top = t->eheap[0], *x = t->eheap[--t->neheap];
	size_t i = 0, n = t->neheap;

	for (;;) {
		size_t l = 2 * i + 1, m = l;

		if (l >= n)
			break;
		if (l + 1 < n && eh_less(t->eheap[l + 1], t->eheap[l]))
			m = l + 1;
		if (!eh_less(t->eheap[m], x))
			break;
		t->eheap[i] = t->eheap[m];
		i = m;
	}
	if (n > 0)
		t->eheap[i] = x;
	return top;
}

static void
stk_push(struct tl *t, struct ent *e)
{
	e->in_stack = 1;
	nd_grow(&t->stk, &t->capstk, t->nstk + 1, sizeof *t->stk);
	e->stk_pos = t->nstk;
	t->stk[t->nstk++] = e;
	t->nopen++;
	eh_push(t, e);
}

/* Drop the holes of stk: from the top at once, elsewhere when they are
 * half of it (so each hole is moved over a constant number of times). */
static void
stk_compact(struct tl *t)
{
	size_t k = 0, claimed = 0;

	while (t->nstk > 0 && t->stk[t->nstk - 1] == NULL)
		t->nstk--;
	if (t->stk_claimed > t->nstk)
		t->stk_claimed = t->nstk;
	if (t->nopen * 2 >= t->nstk)
		return;
	for (size_t i = 0; i < t->nstk; i++) {
		if (i == t->stk_claimed)
			claimed = k;
		if (t->stk[i] != NULL) {
			t->stk[i]->stk_pos = k;
			t->stk[k++] = t->stk[i];
		}
	}
	t->stk_claimed = t->stk_claimed >= t->nstk ? k : claimed;
	t->nstk = k;
}

static int
seq_cmp(const void *a, const void *b, void *ctx)
{
	uint64_t x = (*(struct ent *const *)a)->pub.seq;
	uint64_t y = (*(struct ent *const *)b)->pub.seq;

	(void)ctx;
	return (x > y) - (x < y);
}

/* Close every open span that ends at or before ts (all of them, not only
 * the innermost: a child that overruns its parent can outlive it).  They
 * come off the heap by end; into the ring go, in seq order, only the last
 * `keep` of them (the others would be trimmed at once). */
static void
close_before(nd_context *c, struct tl *t, int64_t ts)
{
	size_t n = 0, from;

	while (t->neheap > 0 && t->eheap[0]->end <= ts) {
		struct ent *e = eh_pop(t);

		nd_grow(&t->closing, &t->capclosing, n + 1,
		    sizeof *t->closing);
		t->closing[n++] = e;
		t->stk[e->stk_pos] = NULL;
		t->nopen--;
		e->in_stack = 0;
	}
	if (n == 0)
		return;
	stk_compact(t);
	if (n > 1)
		nd_sort(t->closing, n, sizeof *t->closing, seq_cmp, NULL);
	from = n > c->keep ? n - c->keep : 0;
	for (size_t i = 0; i < n; i++) {
		struct ent *e = t->closing[i];

		if (i >= from && c->keep > 0 && (t->ring.n < c->keep ||
		    e->pub.seq > deq_at(&t->ring, 0)->pub.seq)) {
			size_t at = deq_insert(&t->ring, e);

			e->in_ring = 1;
			if (at < t->ring_claimed)
				t->ring_claimed = at;
			if (e->end_e - e->pub.ts_ns > t->ring_maxlen)
				t->ring_maxlen = e->end_e - e->pub.ts_ns;
			ring_trim(c, t);
		} else {
			ent_maybe_free(c, e);
		}
	}
}

/* --- the public interface --- */

nd_context *
nd_context_new(int64_t before, int64_t after, int overlapping, int64_t lookback,
    const nd_context_ops *ops, void *u)
{
	nd_context *c = nd_xcalloc(1, sizeof *c);

	c->before = before < 0 ? 0 : before;
	c->after = after < 0 ? 0 : after;
	c->overlapping = overlapping;
	c->keep = (size_t)c->before;
	if (overlapping && lookback > c->before)
		c->keep = (size_t)lookback;
	c->ops = *ops;
	c->u = u;
	c->tlkeys = nd_intern_new();
	c->devs = nd_intern_new();
	c->wlkeys = nd_intern_new();
	return c;
}

static void
release_source(nd_context *c)
{
	for (size_t i = 0; i < c->ntl; i++) {
		struct tl *t = &c->tls[i];

		for (size_t j = 0; j < t->nstk; j++)
			if (t->stk[j] != NULL) {
				t->stk[j]->in_stack = 0;
				ent_maybe_free(c, t->stk[j]);
			}
		while (t->ring.n > 0) {
			struct ent *e = deq_pop_front(&t->ring);

			e->in_ring = 0;
			ent_maybe_free(c, e);
		}
		while (t->outq.n > 0) {
			struct ent *e = deq_pop_front(&t->outq);

			e->in_outq = 0;
			ent_maybe_free(c, e);
		}
		free(t->stk);
		free(t->eheap);
		free(t->closing);
		free(t->ring.v);
		free(t->outq.v);
		free(t->pend);
	}
	c->ntl = 0;
	c->ndirty = 0;
	for (size_t i = 0; i < c->nwl; i++) {
		free(c->wl[i].w);
		free(c->wl[i].stk);
	}
	c->nwl = 0;
	c->c_valid = 0;
	nd_intern_free(c->tlkeys);
	nd_intern_free(c->devs);
	nd_intern_free(c->wlkeys);
	c->tlkeys = nd_intern_new();
	c->devs = nd_intern_new();
	c->wlkeys = nd_intern_new();
}

void
nd_context_end_source(nd_context *c)
{
	if (c->ops.write != NULL)
		for (size_t i = 0; i < c->ntl; i++) {
			struct tl *t = &c->tls[i];

			while (t->outq.n > 0)
				write_front(c, t);
		}
	/* Every pending match is complete now, in id order. */
	while (c->nlive > 0)
		live_done(c, c->live[c->live_head]);
	release_source(c);
}

void
nd_context_free(nd_context *c)
{
	struct ent *e;

	if (c == NULL)
		return;
	release_source(c);
	while ((e = c->free_ents) != NULL) {
		c->free_ents = e->next_free;
		nd_buf_free(&e->line);
		free(e);
	}
	nd_intern_free(c->tlkeys);
	nd_intern_free(c->devs);
	nd_intern_free(c->wlkeys);
	free(c->tls);
	free(c->wl);
	free(c->live);
	free(c->dirty);
	free(c);
}

/* The held spans of the other timelines that overlap a new match. */
static void
overlap_held(nd_context *c, const struct mdesc *m)
{
	for (size_t i = 0; i < c->ntl; i++) {
		struct tl *t = &c->tls[i];
		size_t lo = 0, hi = t->ring.n;

		if (i == m->tl)
			continue;
		/* The ring is in stream order, so by ts: the spans that start
		 * before the match ends, back to the longest span's reach. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (deq_at(&t->ring, mid)->pub.ts_ns < m->end_e)
				lo = mid + 1;
			else
				hi = mid;
		}
		while (lo > 0) {
			struct ent *e = deq_at(&t->ring, --lo);

			if (e->pub.ts_ns + t->ring_maxlen <= m->ts)
				break;
			if (candidate(e, m) && overlaps(e, m))
				relate(c, e, m->match, ND_CTX_OVERLAP, m->ts, 1);
		}
		for (size_t j = 0; j < t->nstk; j++) {
			struct ent *e = t->stk[j];

			if (e != NULL && candidate(e, m) && overlaps(e, m))
				relate(c, e, m->match, ND_CTX_OVERLAP, m->ts, 1);
		}
	}
}

static void
overlap_one(nd_context *c, struct ent *e, const struct win *w, nd_context_rel *best)
{
	relate(c, e, w->match, ND_CTX_OVERLAP, w->ts, 0);
	if (best->match == 0 || w->match < best->match) {
		best->match = w->match;
		best->role = ND_CTX_OVERLAP;
		best->offset_ns = e->pub.ts_ns - w->ts;
	}
}

/* The windows of earlier matches that a new span overlaps; the best claim
 * (lowest id) is kept in *best. */
static void
overlap_windows(nd_context *c, struct ent *e, nd_context_rel *best)
{
	for (size_t i = 0; i < c->nwl; i++) {
		const struct wlist *l = &c->wl[i];
		size_t lo = 0, hi = l->n;
		uint32_t k;

		if (l->tl == e->pub.timeline)
			continue;
		if (!e->host && (l->dev != NO_DEV ? e->dev != l->dev :
		    e->pub.pid != l->pid))
			continue;
		/* lo: the first window starting at or after e */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (l->w[mid].ts < e->pub.ts_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* windows that start before e and are still open then */
		for (k = lo > 0 ? (uint32_t)(lo - 1) : NO_WIN; k != NO_WIN;
		    k = l->w[k].up)
			if (l->w[k].end_e > e->pub.ts_ns)
				overlap_one(c, e, &l->w[k], best);
		/* windows that start within e */
		for (size_t j = lo; j < l->n && l->w[j].ts < e->end_e; j++)
			overlap_one(c, e, &l->w[j], best);
	}
}

/* The entry of a new span on timeline t. */
static struct ent *
ent_of(nd_context *c, struct tl *t, const nd_event *ev)
{
	struct ent *e;

	e = ent_new(c);
	nd_buf_add(&e->line, ev->line, ev->len);
	e->pub.line = e->line.p;
	e->pub.len = e->line.len;
	e->pub.ts_ns = ev->ts_ns;
	e->pub.dur_ns = ev->dur_ns;
	e->pub.pid = ev->pid;
	e->pub.tid = ev->tid;
	e->pub.seq = t->nseq++;
	e->pub.timeline = (uint32_t)(t - c->tls);
	e->pub.source = ev->source;
	e->end = ev->ts_ns + ev->dur_ns;
	e->end_e = ev->dur_ns > 0 ? e->end : ev->ts_ns + 1;
	e->dev = NO_DEV;
	e->host = 0;
	if (c->overlapping) {
		if (ev->device.p != NULL)
			e->dev = nd_intern_id(c->devs, ev->device.p,
			    ev->device.n);
		e->host = nd_event_kind(ev) == ND_KIND_HOST;
	}

	return e;
}

/* The `before` spans of match id: the last `before` ended spans of t.
 * Without a relate callback only the claims matter, and the walk from the
 * newest stops at the first span in the context of an earlier match of t
 * (own): every older span of the window is in one too (the earlier
 * match's window reached at least as far back, or the span was its
 * parent or `after` span), and so claimed.  So matches cost the spans
 * they claim, not `before` each. */
static void
before_spans(nd_context *c, struct tl *t, uint64_t id, int64_t mts)
{
	size_t lo = t->ring.n > (size_t)c->before ?
	    t->ring.n - (size_t)c->before : 0;

	if (c->ops.relate == NULL) {
		for (size_t i = t->ring.n; i > lo; i--) {
			struct ent *x = deq_at(&t->ring, i - 1);

			if (x->own)
				break;
			x->own = 1;
			relate(c, x, id, ND_CTX_BEFORE, mts, 1);
		}
		return;
	}
	for (size_t i = lo; i < t->ring.n; i++) {
		deq_at(&t->ring, i)->own = 1;
		relate(c, deq_at(&t->ring, i), id, ND_CTX_BEFORE, mts, 1);
	}
}

/* A new match e on timeline t: its id, and its relations to the open
 * spans (parents), the spans before it and itself; it opens its windows
 * (overlapping, after). */
static uint64_t
add_match(nd_context *c, struct tl *t, struct ent *e)
{
	uint64_t id;
	struct mdesc w;

	id = ++c->nmatch;
	live_add(c, id);
	/* Without a relate callback only the claims matter, and the
	 * spans below stk_claimed have theirs: so many identical open
	 * spans cost each match only the new ones. */
	for (size_t i = c->ops.relate != NULL ? 0 : t->stk_claimed;
	    i < t->nstk; i++)
		if (t->stk[i] != NULL) {
			t->stk[i]->own = 1;
			relate(c, t->stk[i], id, ND_CTX_PARENT,
			    e->pub.ts_ns, 1);
		}
	if (c->ops.write != NULL || c->ops.relate == NULL)
		t->stk_claimed = t->nstk;
	before_spans(c, t, id, e->pub.ts_ns);
	e->own = 1;
	relate(c, e, id, ND_CTX_MATCH, e->pub.ts_ns, 1);
	w.ts = e->pub.ts_ns;
	w.end_e = e->end_e;
	w.pid = e->pub.pid;
	w.match = id;
	w.tl = e->pub.timeline;
	w.dev = e->dev;
	if (c->overlapping) {
		overlap_held(c, &w);
		win_add(c, &w);
	}
	if (c->after > 0) {
		struct pend *p;

		if (t->pend_head > 0 && t->pend_head * 2 >= t->npend) {
			memmove(t->pend, t->pend + t->pend_head,
			    (t->npend - t->pend_head) * sizeof *t->pend);
			t->npend -= t->pend_head;
			t->pend_head = 0;
		}
		nd_grow(&t->pend, &t->cappend, t->npend + 1,
		    sizeof *t->pend);
		p = &t->pend[t->npend++];
		p->match = id;
		p->ts = e->pub.ts_ns;
		p->until = e->pub.seq + (uint64_t)c->after;
	}
	return id;
}

int
nd_context_add(nd_context *c, const nd_event *ev, int is_match, uint64_t *idp,
    nd_context_order *oe)
{
	struct tl *t;
	struct ent *e;
	nd_context_rel best = { 0, 0, 0 };
	uint64_t id = 0;

	t = tl_get(c, ev->pid, ev->tid);
	if (t->nseq > 0 && nd_span_order(t->last_ts, t->last_dur, ev->ts_ns,
	    ev->dur_ns) > 0) {
		if (oe != NULL) {
			oe->pid = ev->pid;
			oe->tid = ev->tid;
			oe->ts_ns = ev->ts_ns;
			oe->dur_ns = ev->dur_ns;
			oe->prev_ts_ns = t->last_ts;
			oe->prev_dur_ns = t->last_dur;
		}
		return ND_CTX_ORDER;
	}
	t->last_ts = ev->ts_ns;
	t->last_dur = ev->dur_ns;

	e = ent_of(c, t, ev);
	close_before(c, t, ev->ts_ns);

	/* Relations of the new span to earlier matches: each with a
	 * relate callback, else only the oldest's (the claim); then the
	 * matches this span completes, at the front of the queue. */
	if (t->pend_head < t->npend) {
		const struct pend *p = &t->pend[t->pend_head];

		e->own = 1;
		best.match = p->match;
		best.role = ND_CTX_AFTER;
		best.offset_ns = e->pub.ts_ns - p->ts;
	}
	if (c->ops.relate != NULL)
		for (size_t i = t->pend_head; i < t->npend; i++)
			relate(c, e, t->pend[i].match, ND_CTX_AFTER,
			    t->pend[i].ts, 0);
	while (t->pend_head < t->npend &&
	    t->pend[t->pend_head].until <= e->pub.seq) {
		uint64_t m = t->pend[t->pend_head++].match;

		if (!c->overlapping)
			live_done(c, m);
	}
	if (c->nwl > 0)
		overlap_windows(c, e, &best);

	if (is_match)
		id = add_match(c, t, e);
	else if (best.match != 0)
		claim(c, e, &best);

	/* Every span is a possible parent (or, once it ends, a possible
	 * `before`) of later matches. */
	stk_push(t, e);
	mark_dirty(c, t);
	flush_dirty(c);
	if (is_match && c->after == 0 && !c->overlapping)
		live_done(c, id);
	if (idp != NULL)
		*idp = id;
	return ND_CTX_OK;
}

uint64_t
nd_context_matches(const nd_context *c)
{
	return c->nmatch;
}

size_t
nd_context_pending(const nd_context *c)
{
	return c->nlive;
}

size_t
nd_context_held(const nd_context *c)
{
	return c->held;
}

size_t
nd_context_held_max(const nd_context *c)
{
	return c->held_max;
}
