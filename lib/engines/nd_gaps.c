#include "nd_gaps.h"
#include "nd_hash.h"
#include "nd_interval.h"
#include "nd_json.h"
#include "nd_name.h"
#include "nd_nest.h"
#include "nd_sort.h"
#include "nd_spool.h"
#include "nd_sum.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define LAZY (UINT32_MAX - 1)	/* name/scope not interned yet */

/* An op as the gap rules need it (48 bytes). */
struct op {
	int64_t ts, end;
	int64_t step, corr;
	uint32_t name, scope;	/* interned; scope NONE when absent */
	uint32_t tl;
	uint8_t has_step, has_corr, light, comm;
};

/* A gap of a timeline (72 bytes, no padding: it is also the header of a
 * spooled gap, followed by its nla look-ahead ops). */
struct tgap {
	int64_t lo, hi;
	struct op before;
	uint32_t la, nla;	/* look-ahead: pool[la .. la + nla) */
};

/* Gaps of a timeline moved to the spool, in order. */
struct chunk {
	uint64_t off;
	size_t n;
};

/* Closed gaps stay in memory until there are this many, then go to the
 * spool: memory per timeline stays bounded whatever the number of gaps. */
#define SPILL_AT 256

struct tl {
	int64_t pid, tid;
	uint32_t process, thread, device;	/* interned, NONE if absent */
	uint32_t dev;
	int host;
	int started;
	int64_t first, hi, last_ts;
	uint64_t nops, lgaps;	/* per-line totals (nd_gaps_lines) */
	int64_t lidle, lmax;
	struct op bop;		/* the op with the latest end so far */
	nd_buf bstr;		/* its name, then its scope, while bop.name
				 * is LAZY */
	size_t bnamen, bscopen;
	struct tgap *gaps;
	size_t ngaps, capgaps;
	struct op *pool;
	size_t npool, cappool;
	struct chunk *chunks;	/* earlier gaps, on the spool */
	size_t nchunks, capchunks;
	struct op head[ND_GAP_LOOKAHEAD];	/* the ops from the first */
	uint32_t nhead;
	int32_t open[ND_GAP_LOOKAHEAD + 1];	/* -1: the head */
	int nopen;
	struct op *buf;		/* unordered mode */
	size_t nbuf, capbuf;
};

#define TL_CACHE 64

struct hspan {
	int64_t ts, end;
	uint32_t name, thread;
};

struct nd_gaps {
	nd_gaps_opts o;
	int64_t thr;
	uint32_t empty;		/* the id of "" (an op without a name) */
	nd_intern *tlkeys;	/* (pid, tid, host) -> timeline */
	struct tl *tls;
	size_t ntls, captls;
	uint32_t tcache[TL_CACHE];	/* hash -> timeline + 1 */
	nd_intern *devkeys;
	nd_buf kb;
	int seen_device, fallback;
	int has_rank;
	int64_t rank;
	/* evidence */
	nd_map64 *launch;	/* correlation -> earliest host start */
	nd_ivset sync, hostcomm;
	struct hspan *hs;
	size_t nhs, caphs;
	nd_steps *steps;	/* within-steps windows */
	nd_gap_where *dw;	/* device level: where each device is */
	size_t ndw, capdw;
	const nd_step *win;	/* the source's windows (at finish) */
	size_t nwin;
	uint32_t *windev;	/* window -> device id here, NONE: every */
	size_t capwindev;
	/* results */
	nd_gap *out;
	size_t nout, capout;
	struct op *tmp;
	size_t ntmp, captmp;
	nd_spool *spool;	/* closed gaps of every timeline */
	nd_buf ser;
	nd_gap_fn fn;		/* while finishing */
	void *fnctx;
	size_t delivered;
};

nd_gaps *
nd_gaps_new(const nd_gaps_opts *o)
{
	nd_gaps *g = nd_xcalloc(1, sizeof *g);

	g->o = *o;
	g->thr = o->min_ns > 1 ? o->min_ns : 1;
	g->empty = nd_sid_intern("", 0);
	g->tlkeys = nd_intern_new();
	g->devkeys = nd_intern_new();
	g->launch = nd_map64_new();
	if (o->within_steps) {
		nd_steps_opts so;

		memset(&so, 0, sizeof so);
		so.re = o->re;
		so.markers_only = 1;
		g->steps = nd_steps_new(&so);
	}
	return g;
}

static void
free_tl(struct tl *t)
{
	nd_buf_free(&t->bstr);
	free(t->gaps);
	free(t->pool);
	free(t->chunks);
	free(t->buf);
	memset(t, 0, sizeof *t);
}

void
nd_gaps_reset(nd_gaps *g)
{
	for (size_t i = 0; i < g->ntls; i++)
		free_tl(&g->tls[i]);
	g->ntls = 0;
	memset(g->tcache, 0, sizeof g->tcache);
	nd_intern_free(g->tlkeys);
	g->tlkeys = nd_intern_new();
	nd_intern_free(g->devkeys);
	g->devkeys = nd_intern_new();
	g->seen_device = g->fallback = g->has_rank = 0;
	nd_map64_free(g->launch);
	g->launch = nd_map64_new();
	nd_ivset_free(&g->sync);
	nd_ivset_free(&g->hostcomm);
	g->nhs = 0;
	g->nout = 0;
	nd_spool_free(g->spool);
	g->spool = NULL;
	if (g->steps != NULL)
		nd_steps_reset(g->steps);
}

void
nd_gaps_free(nd_gaps *g)
{
	if (g == NULL)
		return;
	nd_gaps_reset(g);
	nd_intern_free(g->tlkeys);
	nd_intern_free(g->devkeys);
	nd_map64_free(g->launch);
	free(g->tls);
	free(g->hs);
	free(g->out);
	free(g->tmp);
	free(g->windev);
	free(g->dw);
	nd_steps_free(g->steps);
	nd_buf_free(&g->kb);
	nd_buf_free(&g->ser);
	free(g);
}

/* Strings by the program's ids (nd_event_sid): an event's name and scope
 * cost nothing when another analysis asked for them. */
static uint32_t
intern(nd_gaps *g, nd_str s)
{
	(void)g;
	if (s.p == NULL)
		return NONE;
	return nd_sid_intern(s.p, s.n);
}

static const char *
istr(const nd_gaps *g, uint32_t id)
{
	(void)g;
	return id == NONE ? NULL : nd_sid_str(id, NULL);
}

/* The same with its length (a name may hold NUL); 0 for NONE. */
static const char *
istrn(const nd_gaps *g, uint32_t id, size_t *n)
{
	(void)g;
	*n = 0;
	return id == NONE ? NULL : nd_sid_str(id, n);
}

/* Intern the copied strings of a timeline's latest-ending op. */
static void
bop_intern(struct tl *t)
{
	if (t->bop.name != LAZY)
		return;
	t->bop.name = nd_sid_intern(t->bstr.p, t->bnamen);
	if (t->bop.scope != NONE)
		t->bop.scope = nd_sid_intern(t->bstr.p + t->bnamen,
		    t->bscopen);
}

static struct tl *
tl_of(nd_gaps *g, const nd_event *ev, int host)
{
	int64_t key[3];
	uint32_t id, slot;
	struct tl *t;

	slot = (uint32_t)nd_hash_u64((uint64_t)ev->pid * 0x9e3779b97f4a7c15ULL ^
	    (uint64_t)ev->tid ^ (uint64_t)host << 63) & (TL_CACHE - 1);
	if (g->tcache[slot] > 0) {
		t = &g->tls[g->tcache[slot] - 1];
		if (t->pid == ev->pid && t->tid == ev->tid && t->host == host)
			return t;
	}
	key[0] = ev->pid;
	key[1] = ev->tid;
	key[2] = host;
	id = nd_intern_id(g->tlkeys, (const char *)key, sizeof key);
	g->tcache[slot] = id + 1;
	if (id < g->ntls)
		return &g->tls[id];
	if (g->ntls == g->captls)
		nd_grow(&g->tls, &g->captls, g->ntls + 1, sizeof *g->tls);
	t = &g->tls[g->ntls++];
	memset(t, 0, sizeof *t);
	t->pid = ev->pid;
	t->tid = ev->tid;
	t->host = host;
	t->process = intern(g, ev->process);
	t->thread = intern(g, ev->thread);
	t->device = intern(g, ev->device);
	nd_span_device_key(ev, &g->kb);
	t->dev = nd_intern_id(g->devkeys, g->kb.p, g->kb.len);
	return t;
}

static void
open_window(struct tl *t, int32_t w)
{
	if (w < 0)
		t->nhead = 0;
	else {
		t->gaps[w].la = (uint32_t)t->npool;
		t->gaps[w].nla = 0;
	}
	t->open[t->nopen++] = w;
}

static void
append(struct tl *t, const struct op *op)
{
	int k = 0;

	if (t->npool == t->cappool)
		nd_grow(&t->pool, &t->cappool, t->npool + 1, sizeof *t->pool);
	t->pool[t->npool++] = *op;
	for (int i = 0; i < t->nopen; i++) {
		int32_t w = t->open[i];
		uint32_t *nla;

		if (w < 0) {
			t->head[t->nhead] = *op;
			nla = &t->nhead;
		} else
			nla = &t->gaps[w].nla;
		(*nla)++;
		if (op->light && *nla < ND_GAP_LOOKAHEAD)
			t->open[k++] = w;
	}
	t->nopen = k;
}

/* Move the gaps of t whose look-ahead is closed (all but the last few) to
 * the spool, with their look-ahead ops, and drop what only they used. */
static void
spill(nd_gaps *g, struct tl *t)
{
	size_t m = t->ngaps, base;

	for (int i = 0; i < t->nopen; i++)
		if (t->open[i] >= 0 && (size_t)t->open[i] < m)
			m = (size_t)t->open[i];
	if (m < SPILL_AT / 2)
		return;
	nd_buf_reset(&g->ser);
	for (size_t i = 0; i < m; i++) {
		const struct tgap *gp = &t->gaps[i];

		nd_buf_add(&g->ser, gp, sizeof *gp);
		if (gp->nla > 0)
			nd_buf_add(&g->ser, t->pool + gp->la,
			    gp->nla * sizeof *t->pool);
	}
	if (g->spool == NULL)
		g->spool = nd_spool_new();
	if (t->nchunks == t->capchunks)
		nd_grow(&t->chunks, &t->capchunks, t->nchunks + 1,
		    sizeof *t->chunks);
	t->chunks[t->nchunks].off = nd_spool_add(g->spool, g->ser.p,
	    g->ser.len);
	t->chunks[t->nchunks++].n = m;
	/* the open windows' ops start at the first kept gap's look-ahead */
	base = m < t->ngaps ? t->gaps[m].la : t->npool;
	memmove(t->pool, t->pool + base, (t->npool - base) * sizeof *t->pool);
	t->npool -= base;
	memmove(t->gaps, t->gaps + m, (t->ngaps - m) * sizeof *t->gaps);
	t->ngaps -= m;
	for (size_t i = 0; i < t->ngaps; i++)
		t->gaps[i].la -= (uint32_t)base;
	for (int i = 0; i < t->nopen; i++)
		if (t->open[i] >= 0)
			t->open[i] -= (int32_t)m;
}

/* Intern the strings of an op that has them lazily (name.p != NULL). */
static void
op_intern(nd_gaps *g, struct op *op, nd_str name, nd_str scope)
{
	(void)g;
	if (op->name == LAZY) {
		op->name = nd_sid_intern(name.p, name.n);
		op->scope = scope.p == NULL ? NONE :
		    nd_sid_intern(scope.p, scope.n);
	}
}

/* The op becomes the timeline's latest-ending op.  Its strings are copied
 * rather than interned: most such ops never end before a gap. */
static void
set_bop(struct tl *t, const struct op *op, nd_str name, nd_str scope)
{
	t->bop = *op;
	if (op->name != LAZY)
		return;
	/* the copy runs for nearly every op: no calls but memcpy */
	t->bstr.len = 0;
	if (name.n + scope.n >= t->bstr.cap)
		nd_buf_reserve(&t->bstr, name.n + scope.n);
	memcpy(t->bstr.p, name.p, name.n);
	t->bnamen = name.n;
	if (scope.p == NULL)
		t->bop.scope = NONE;
	else {
		memcpy(t->bstr.p + name.n, scope.p, scope.n);
		t->bscopen = scope.n;
	}
}

/* One op of a timeline, in start order.  When op->name is LAZY, name and
 * scope are its strings (interned only when needed); when ev is not NULL,
 * the op's correlation id is still to be read from it (only ops kept for a
 * look-ahead need it). */
static void
tl_add(nd_gaps *g, struct tl *t, struct op *op, nd_str name, nd_str scope,
    const nd_event *ev)
{
	if (!t->started) {
		t->started = 1;
		t->first = op->ts;
		t->hi = op->end;
		set_bop(t, op, name, scope);
		open_window(t, -1);
	} else if (op->ts > t->hi) {
		if (op->ts - t->hi >= g->thr) {
			struct tgap *gp;

			if (op->ts - t->hi >= g->o.min_ns) {
				t->lgaps++;
				t->lidle += nd_sum_add("idle stretch",
				    op->ts - t->hi);
				if (op->ts - t->hi > t->lmax)
					t->lmax = op->ts - t->hi;
			}

			if (t->ngaps == t->capgaps)
				nd_grow(&t->gaps, &t->capgaps, t->ngaps + 1,
				    sizeof *t->gaps);
			gp = &t->gaps[t->ngaps++];
			gp->lo = t->hi;
			gp->hi = op->ts;
			bop_intern(t);
			gp->before = t->bop;
			gp->la = (uint32_t)t->npool;
			gp->nla = 0;
			if (t->nopen <= ND_GAP_LOOKAHEAD)
				open_window(t, (int32_t)(t->ngaps - 1));
		}
		t->hi = op->end;
		set_bop(t, op, name, scope);
	} else if (op->end >= t->hi) {
		t->hi = op->end;
		set_bop(t, op, name, scope);
	}
	t->nops++;
	if (t->nopen > 0) {
		op_intern(g, op, name, scope);
		if (ev != NULL && nd_event_corr(ev, &op->corr))
			op->has_corr = 1;
		append(t, op);
	}
	if (t->ngaps >= SPILL_AT)
		spill(g, t);
	t->last_ts = op->ts;
}

/* Drop what a timeline holds (its identity stays). */
static void
tl_forget(struct tl *t)
{
	free(t->gaps);
	free(t->pool);
	free(t->chunks);
	free(t->buf);
	t->gaps = NULL;
	t->pool = t->buf = NULL;
	t->chunks = NULL;
	t->ngaps = t->capgaps = t->npool = t->cappool = 0;
	t->nchunks = t->capchunks = 0;
	t->nbuf = t->capbuf = 0;
	t->nopen = t->nhead = 0;
}

static void
add_hspan(nd_gaps *g, const nd_event *ev)
{
	struct hspan *h;

	if (g->nhs == g->caphs)
		nd_grow(&g->hs, &g->caphs, g->nhs + 1, sizeof *g->hs);
	h = &g->hs[g->nhs++];
	h->ts = ev->ts_ns;
	h->end = ev->ts_ns + ev->dur_ns;
	h->name = intern(g, ev->name);
	h->thread = intern(g, ev->thread);
}

int
nd_gaps_add(nd_gaps *g, const nd_event *ev, const nd_span_role *r)
{
	struct tl *t;
	struct op op;
	int host;

	if (!g->has_rank && (ev->has & ND_HAS_RANK)) {
		g->has_rank = 1;
		g->rank = ev->rank;
	}
	if (g->steps != NULL && (r->marker != ND_SM_NONE ||
	    (r->role == ND_ROLE_DEVICE && (ev->has & ND_HAS_STEP))))
		nd_steps_add(g->steps, ev, r);
	if (r->sync)
		nd_ivset_add(&g->sync, ev->ts_ns, ev->ts_ns + ev->dur_ns);
	if (r->role == ND_ROLE_HOST) {
		int64_t corr;

		if (nd_event_corr(ev, &corr)) {
			int isnew;
			uint64_t *v = nd_map64_put(g->launch, (uint64_t)corr,
			    &isnew);

			if (isnew || (int64_t)*v > ev->ts_ns)
				*v = (uint64_t)ev->ts_ns;
		}
		if (r->comm)
			nd_ivset_add(&g->hostcomm, ev->ts_ns,
			    ev->ts_ns + ev->dur_ns);
		if (g->o.host_context > 0)
			add_hspan(g, ev);
		if (g->seen_device)
			return 0;
		host = 1;
	} else if (r->role == ND_ROLE_DEVICE) {
		if (!g->seen_device) {
			/* host timelines were only a fallback */
			g->seen_device = 1;
			for (size_t i = 0; i < g->ntls; i++)
				if (g->tls[i].host)
					tl_forget(&g->tls[i]);
		}
		host = 0;
	} else
		return 0;
	t = tl_of(g, ev, host);
	op.ts = ev->ts_ns;
	op.end = ev->ts_ns + ev->dur_ns;
	op.has_step = (ev->has & ND_HAS_STEP) != 0;
	op.step = op.has_step ? ev->step : 0;
	op.has_corr = 0;
	op.corr = 0;
	op.name = LAZY;
	op.scope = LAZY;
	if (nd_event_sid_known(ev, ND_SID_NAME, &op.name) &&
	    nd_event_sid_known(ev, ND_SID_SCOPE, &op.scope)) {
		/* ids at hand: no copies, no lazy interning */
		if (op.name == ND_SID_NONE)
			op.name = g->empty;
	} else
		op.name = op.scope = LAZY;
	op.tl = (uint32_t)(t - g->tls);
	op.light = ev->name.p != NULL && nd_op_is_light(ev->name.p, ev->name.n);
	op.comm = r->role == ND_ROLE_DEVICE && r->cat == ND_CAT_COMM;
	if (g->o.unordered) {
		if (nd_event_corr(ev, &op.corr))
			op.has_corr = 1;
		op_intern(g, &op, ev->name.p != NULL ? ev->name : ND_STR(""),
		    ev->scope);
		if (t->nbuf == t->capbuf)
			nd_grow(&t->buf, &t->capbuf, t->nbuf + 1, sizeof *t->buf);
		t->buf[t->nbuf++] = op;
		return 0;
	}
	if (t->started && op.ts < t->last_ts)
		return -1;
	tl_add(g, t, &op, ev->name.p != NULL ? ev->name : ND_STR(""),
	    ev->scope, ev);
	return 0;
}

/* ---- finishing ---- */

static int
op_cmp(const void *a, const void *b, void *ctx)
{
	const struct op *x = a, *y = b;
	int c = nd_span_order(x->ts, x->end - x->ts, y->ts, y->end - y->ts);

	(void)ctx;
	if (c != 0)
		return c;
	return (x->tl > y->tl) - (x->tl < y->tl);
}

static void
fill_op(const nd_gaps *g, nd_gap_op *o, const struct op *op)
{
	o->name = istrn(g, op->name, &o->name_n);
	if (o->name == NULL)
		o->name = "";
	o->scope = istrn(g, op->scope, &o->scope_n);
	o->has_step = op->has_step;
	o->step = op->step;
	o->ts = op->ts;
	o->dur = op->end - op->ts;
}

/* Marker and payload among la[0..n), ordered by start. */
static size_t
payload_of(const nd_gaps *g, const struct op *la, size_t n)
{
	int64_t runmax;

	if (n == 0)
		return 0;
	runmax = la[0].end;
	for (size_t i = 0; i < n && i < ND_GAP_LOOKAHEAD; i++) {
		if (i > 0) {
			if (la[i].ts - runmax >= g->thr)
				break;
			if (la[i].end > runmax)
				runmax = la[i].end;
		}
		if (!la[i].light)
			return i;
	}
	return 0;
}

static const char *
cause_of(nd_gaps *g, int64_t a, int64_t b, const struct op *marker,
    const struct op *payload)
{
	uint64_t *v;

	if (nd_ivset_overlaps(&g->sync, a, b))
		return "sync";
	if (marker->has_corr &&
	    (v = nd_map64_get(g->launch, (uint64_t)marker->corr)) != NULL &&
	    (int64_t)*v >= a)
		return "host_wait";
	if (b - a < g->o.kernel_wait_ns)
		return "kernel_wait";
	if (payload->comm || nd_ivset_overlaps(&g->hostcomm, a, b))
		return "collective_wait";
	return "other";
}

static nd_gap *
new_gap(nd_gaps *g)
{
	nd_gap *o;

	if (g->nout == g->capout)
		nd_grow(&g->out, &g->capout, g->nout + 1, sizeof *g->out);
	o = &g->out[g->nout++];
	memset(o, 0, sizeof *o);
	return o;
}

static void
emit(nd_gaps *g, int64_t a, int64_t b, int tl, uint32_t dev,
    const struct op *before, const struct op *la, size_t nla)
{
	size_t p = payload_of(g, la, nla);
	const char *cause;
	nd_gap base;

	if (nla == 0)
		return;		/* cannot happen: a gap ends at an op */
	memset(&base, 0, sizeof base);
	base.tl = tl;
	base.dev = (int)dev;
	fill_op(g, &base.before, before);
	fill_op(g, &base.marker, &la[0]);
	fill_op(g, &base.payload, &la[p]);
	base.payload_index = (int)p;
	cause = cause_of(g, a, b, &la[0], &la[p]);
	base.cause = cause;
	if (g->steps == NULL) {
		if (b - a >= g->o.min_ns) {
			nd_gap *o = new_gap(g);

			*o = base;
			o->ts = a;
			/* a timeline's gaps passed nd_sum_add as t->lidle */
			o->dur = tl >= 0 ? b - a : nd_sum_add("gap", b - a);
		}
		return;
	}
	/* --within-steps: the parts inside step windows */
	{
		const nd_step *w = g->win;

		for (size_t i = 0; i < g->nwin; i++) {
			int64_t lo = w[i].ts, hi = w[i].ts + w[i].dur;
			nd_gap *o;

			if (w[i].dev >= 0 && g->windev[i] != dev)
				continue;
			if (lo < a)
				lo = a;
			if (hi > b)
				hi = b;
			if (hi - lo < g->thr || hi - lo < g->o.min_ns)
				continue;
			o = new_gap(g);
			*o = base;
			o->ts = lo;
			o->dur = nd_sum_add("gap", hi - lo);
			o->has_wstep = 1;
			o->wstep = w[i].num;
		}
	}
}

static void
tmp_reset(nd_gaps *g)
{
	g->ntmp = 0;
}

static void
tmp_add(nd_gaps *g, const struct op *pool, size_t at, size_t n)
{
	if (n == 0)
		return;
	if (g->ntmp + n > g->captmp)
		nd_grow(&g->tmp, &g->captmp, g->ntmp + n, sizeof *g->tmp);
	memcpy(g->tmp + g->ntmp, pool + at, n * sizeof *pool);
	g->ntmp += n;
}

/* Reads the gaps of one timeline in order: the spooled chunks, then the
 * ones still in memory.  Each gap is copied out, so that several cursors
 * can read the spool at once. */
struct gcur {
	const struct tl *t;
	size_t chunk, left, mem;
	uint64_t pos;
	struct tgap gap;
	struct op la[ND_GAP_LOOKAHEAD];
};

static void
gcur_init(struct gcur *c, const struct tl *t)
{
	memset(c, 0, sizeof *c);
	c->t = t;
}

static int
gcur_next(nd_gaps *g, struct gcur *c)
{
	const struct tl *t = c->t;
	size_t n;

	while (c->left == 0 && c->chunk < t->nchunks) {
		c->pos = t->chunks[c->chunk].off;
		c->left = t->chunks[c->chunk++].n;
	}
	if (c->left > 0) {
		memcpy(&c->gap, nd_spool_get(g->spool, c->pos, sizeof c->gap),
		    sizeof c->gap);
		c->pos += sizeof c->gap;
		n = c->gap.nla * sizeof *c->la;
		if (n > 0)
			memcpy(c->la, nd_spool_get(g->spool, c->pos, n), n);
		c->pos += n;
		c->left--;
		return 1;
	}
	if (c->mem < t->ngaps) {
		c->gap = t->gaps[c->mem++];
		if (c->gap.nla > 0)
			memcpy(c->la, t->pool + c->gap.la,
			    c->gap.nla * sizeof *c->la);
		return 1;
	}
	return 0;
}

/* Hand the gaps found so far to the caller once there are enough of them
 * (unless host context needs all of them first). */
static void
deliver(nd_gaps *g, int all)
{
	if (g->o.host_context > 0 && !all)
		return;
	for (size_t i = 0; i < g->nout; i++)
		g->fn(g->fnctx, &g->out[i]);
	g->delivered += g->nout;
	g->nout = 0;
}

#define DELIVER_AT 1024

static void
finish_timeline(nd_gaps *g, struct tl *t, int tl)
{
	struct gcur c;

	gcur_init(&c, t);
	while (gcur_next(g, &c)) {
		if (c.gap.nla > 0)
			emit(g, c.gap.lo, c.gap.hi, tl, t->dev, &c.gap.before,
			    c.la, c.gap.nla);
		if (g->nout >= DELIVER_AT)
			deliver(g, 0);
	}
}

/*
 * A timeline in the sweep over a device: its busy stretches are the
 * complement of its gaps within [first, hi).  `next` is the gap after the
 * next busy stretch [ns, ne); `pend` the gap after the stretch consumed
 * last, which holds the device's current idle time.  `la` is what follows
 * the device's idle time on this timeline (the head before the first
 * stretch, else pend's look-ahead), all starting at or after ns; end0 is
 * the longest end of its ops that start at ns, so (ns, -end0, index) is
 * the op_cmp order of its first op.
 */
enum { DC_HEAD, DC_GAP, DC_DONE };

struct dcur {
	const struct tl *t;
	int state, has_next;
	int64_t ns, ne, end0;
	const struct op *la;
	uint32_t nla, idx;
	struct gcur next;
	struct tgap pend;
	struct op pla[ND_GAP_LOOKAHEAD];
};

static void
dcur_la(struct dcur *d, const struct op *la, uint32_t n)
{
	d->la = la;
	d->nla = n;
	d->end0 = INT64_MIN;
	for (uint32_t i = 0; i < n; i++)
		if (la[i].ts == d->ns && la[i].end > d->end0)
			d->end0 = la[i].end;
}

static void
dcur_init(nd_gaps *g, struct dcur *d, const struct tl *t, uint32_t idx)
{
	d->t = t;
	d->idx = idx;
	d->state = DC_HEAD;
	gcur_init(&d->next, t);
	d->has_next = gcur_next(g, &d->next);
	d->ns = t->first;
	d->ne = d->has_next ? d->next.gap.lo : t->hi;
	dcur_la(d, t->head, t->nhead);
}

static void
dcur_consume(nd_gaps *g, struct dcur *d)
{
	if (!d->has_next) {
		d->state = DC_DONE;
		return;
	}
	d->state = DC_GAP;
	d->pend = d->next.gap;
	memcpy(d->pla, d->next.la, d->pend.nla * sizeof *d->pla);
	d->has_next = gcur_next(g, &d->next);
	d->ns = d->pend.hi;
	d->ne = d->has_next ? d->next.gap.lo : d->t->hi;
	dcur_la(d, d->pla, d->pend.nla);
}

/* The sweep's heap of the timelines not done, by their first op. */
static int
dc_less(const struct dcur *a, const struct dcur *b)
{
	if (a->ns != b->ns)
		return a->ns < b->ns;
	if (a->end0 != b->end0)
		return a->end0 > b->end0;
	return a->idx < b->idx;
}

static void
dheap_down(struct dcur **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct dcur *x;

		if (l < n && dc_less(h[l], h[m]))
			m = l;
		if (l + 1 < n && dc_less(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static int
dcp_idx_cmp(const void *a, const void *b, void *ctx)
{
	uint32_t x = (*(struct dcur *const *)a)->idx;
	uint32_t y = (*(struct dcur *const *)b)->idx;

	(void)ctx;
	return (x > y) - (x < y);
}

/* The device is idle in [a, b): before is the op with the latest end
 * before it.  Marker and payload are among the first ND_GAP_LOOKAHEAD ops
 * after it in op_cmp order, and those come from the ND_GAP_LOOKAHEAD
 * timelines whose first op comes first (an op of any other timeline comes
 * after that timeline's first op): a best-first walk down the heap finds
 * them without looking at the other timelines. */
static void
device_gap(nd_gaps *g, uint32_t dev, struct dcur **h, size_t n, int64_t a,
    int64_t b, const struct op *before)
{
	size_t front[ND_GAP_LOOKAHEAD + 2], nfront = 0;
	struct dcur *pick[ND_GAP_LOOKAHEAD];
	size_t npick = 0;

	if (before == NULL || n == 0)
		return;
	front[nfront++] = 0;
	while (nfront > 0 && npick < ND_GAP_LOOKAHEAD) {
		size_t best = 0, i;

		for (size_t k = 1; k < nfront; k++)
			if (dc_less(h[front[k]], h[front[best]]))
				best = k;
		i = front[best];
		front[best] = front[--nfront];
		pick[npick++] = h[i];
		if (2 * i + 1 < n)
			front[nfront++] = 2 * i + 1;
		if (2 * i + 2 < n)
			front[nfront++] = 2 * i + 2;
	}
	/* in timeline order, as the stable sort of every look-ahead had */
	nd_sort(pick, npick, sizeof *pick, dcp_idx_cmp, NULL);
	tmp_reset(g);
	for (size_t k = 0; k < npick; k++)
		tmp_add(g, pick[k]->la, 0, pick[k]->nla);
	if (g->ntmp == 0)
		return;
	nd_sort(g->tmp, g->ntmp, sizeof *g->tmp, op_cmp, NULL);
	emit(g, a, b, -1, dev, before, g->tmp, g->ntmp);
}

/* Device level: a sweep over the busy stretches of the device's timelines
 * (tls[ids[0..nids)]) by start; where the next one starts after every
 * earlier one ended, the device is idle.  The timelines wait in a heap by
 * their next stretch; `before` follows the op with the latest end so far
 * (the later start on ties, then the later timeline). */
static void
finish_device(nd_gaps *g, uint32_t dev, const uint32_t *ids, size_t nids)
{
	struct dcur *dc, **h;
	const struct op *before = NULL;
	uint32_t bidx = 0;
	size_t n = 0;
	int started = 0;
	int64_t hi = 0;

	if (nids == 0)
		return;
	dc = nd_xmalloc(nids * sizeof *dc);
	h = nd_xmalloc(nids * sizeof *h);
	for (size_t i = 0; i < nids; i++) {
		dcur_init(g, &dc[n], &g->tls[ids[i]], (uint32_t)n);
		h[n] = &dc[n];
		n++;
	}
	for (size_t i = n / 2; i-- > 0;)
		dheap_down(h, n, i);
	while (n > 0) {
		struct dcur *m = h[0];
		const struct op *bop;
		int64_t ne = m->ne;

		if (started && m->ns > hi && m->ns - hi >= g->thr) {
			device_gap(g, dev, h, n, hi, m->ns, before);
			if (g->nout >= DELIVER_AT)
				deliver(g, 0);
		}
		dcur_consume(g, m);
		bop = m->state == DC_DONE ? &m->t->bop : &m->pend.before;
		if (!started || ne > hi) {
			hi = ne;
			before = bop;
			bidx = m->idx;
		} else if (ne == hi && (bop->ts > before->ts ||
		    (bop->ts == before->ts && m->idx > bidx))) {
			before = bop;
			bidx = m->idx;
		}
		started = 1;
		if (m->state == DC_DONE)
			h[0] = h[--n];
		dheap_down(h, n, 0);
	}
	free(h);
	free(dc);
}

static int
hs_cmp(const void *a, const void *b, void *ctx)
{
	const struct hspan *x = a, *y = b;

	(void)ctx;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int
gapidx_cmp(const void *a, const void *b, void *ctx)
{
	const nd_gap *o = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (o[x].ts > o[y].ts) - (o[x].ts < o[y].ts);
}

/* The host spans that overlap each gap most (ties: the shorter, then the
 * earlier): a sweep over gaps by start and host spans by start. */
static void
host_context(nd_gaps *g)
{
	size_t *ord, *act = NULL, nact = 0, capact = 0, next = 0;

	if (g->nout == 0 || g->nhs == 0)
		return;
	nd_sort(g->hs, g->nhs, sizeof *g->hs, hs_cmp, NULL);
	ord = nd_xmalloc(g->nout * sizeof *ord);
	for (size_t i = 0; i < g->nout; i++)
		ord[i] = i;
	nd_sort(ord, g->nout, sizeof *ord, gapidx_cmp, g->out);
	for (size_t oi = 0; oi < g->nout; oi++) {
		nd_gap *o = &g->out[ord[oi]];
		int64_t a = o->ts, b = o->ts + o->dur;
		size_t k = 0;

		/* drop spans that end before this gap (gaps come by start) */
		for (size_t i = 0; i < nact; i++)
			if (g->hs[act[i]].end > a)
				act[k++] = act[i];
		nact = k;
		while (next < g->nhs && g->hs[next].ts < b) {
			if (g->hs[next].end > a) {
				if (nact == capact)
					nd_grow(&act, &capact, nact + 1,
					    sizeof *act);
				act[nact++] = next;
			}
			next++;
		}
		o->nctx = 0;
		for (size_t i = 0; i < nact; i++) {
			const struct hspan *h = &g->hs[act[i]];
			int64_t lo = h->ts > a ? h->ts : a;
			int64_t hi = h->end < b ? h->end : b;
			nd_gap_ctx c;
			int pos;

			if (h->ts >= b || hi <= lo)
				continue;
			c.name = istrn(g, h->name, &c.name_n);
			c.thread = istrn(g, h->thread, &c.thread_n);
			c.ts = h->ts;
			c.dur = h->end - h->ts;
			c.overlap = hi - lo;
			/* insertion into the top list */
			pos = o->nctx;
			while (pos > 0) {
				const nd_gap_ctx *p = &o->ctx[pos - 1];

				if (p->overlap > c.overlap ||
				    (p->overlap == c.overlap && (p->dur < c.dur ||
				    (p->dur == c.dur && p->ts <= c.ts))))
					break;
				pos--;
			}
			if (pos >= g->o.host_context || pos >= ND_GAP_MAX_CTX)
				continue;
			if (o->nctx < g->o.host_context &&
			    o->nctx < ND_GAP_MAX_CTX)
				o->nctx++;
			memmove(&o->ctx[pos + 1], &o->ctx[pos],
			    (size_t)(o->nctx - 1 - pos) * sizeof c);
			o->ctx[pos] = c;
		}
	}
	free(act);
	free(ord);
}

/* For each device: pid, process and device when all its timelines agree. */
static void
device_where(nd_gaps *g, int host)
{
	uint32_t ndev = nd_intern_count(g->devkeys);
	char *seen;

	if (ndev > g->capdw)
		nd_grow(&g->dw, &g->capdw, ndev, sizeof *g->dw);
	g->ndw = ndev;
	if (ndev > 0)
		memset(g->dw, 0, ndev * sizeof *g->dw);
	seen = nd_xcalloc(ndev ? ndev : 1, 1);
	for (size_t i = 0; i < g->ntls; i++) {
		const struct tl *t = &g->tls[i];
		nd_gap_where *w = &g->dw[t->dev];
		const char *proc = istr(g, t->process), *dv = istr(g, t->device);

		if (t->host != host)
			continue;
		if (!seen[t->dev]) {
			seen[t->dev] = 1;
			w->has_pid = 1;
			w->pid = t->pid;
			w->process = proc;
			w->device = dv;
			continue;
		}
		if (w->has_pid && w->pid != t->pid)
			w->has_pid = 0;
		if (w->process != proc)
			w->process = NULL;
		if (w->device != dv)
			w->device = NULL;
	}
	free(seen);
}

static int
tl_cmp(const void *a, const void *b, void *ctx)
{
	const nd_gaps *g = ctx;
	const struct tl *x = &g->tls[*(const uint32_t *)a];
	const struct tl *y = &g->tls[*(const uint32_t *)b];
	const uint32_t xs[] = { x->device, x->process, x->thread };
	const uint32_t ys[] = { y->device, y->process, y->thread };

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	for (int i = 0; i < 3; i++) {
		size_t nx, ny;
		const char *sx = istrn(g, xs[i], &nx), *sy = istrn(g, ys[i], &ny);
		int c;

		if (xs[i] == ys[i])
			continue;
		if ((sx == NULL) != (sy == NULL))
			return sx == NULL ? -1 : 1;
		if ((c = nd_bytes_cmp(sx, nx, sy, ny)) != 0)
			return c;
	}
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The started timelines of the side answered (host or device) by pid,
 * tid and names: the order of the records of a source, whatever the
 * order its spans came in. */
static uint32_t *
tl_order(const nd_gaps *g, int host, size_t *n)
{
	uint32_t *ids = nd_xmalloc((g->ntls ? g->ntls : 1) * sizeof *ids);

	*n = 0;
	for (size_t i = 0; i < g->ntls; i++)
		if (g->tls[i].host == host && g->tls[i].started)
			ids[(*n)++] = (uint32_t)i;
	nd_sort(ids, *n, sizeof *ids, tl_cmp, (void *)g);
	return ids;
}

/* The timelines of each device, grouped: devices in the order of their
 * first timeline (tl_order). */
static void
finish_devices(nd_gaps *g, int host)
{
	uint32_t ndev = nd_intern_count(g->devkeys), nd = 0;
	size_t n, *at = nd_xcalloc((size_t)ndev + 1, sizeof *at);
	uint32_t *ids = tl_order(g, host, &n), *grouped, *devs, *rank;

	grouped = nd_xmalloc((n ? n : 1) * sizeof *grouped);
	devs = nd_xmalloc((ndev ? ndev : 1) * sizeof *devs);
	rank = nd_xmalloc((ndev ? ndev : 1) * sizeof *rank);
	for (uint32_t d = 0; d < ndev; d++)
		rank[d] = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		uint32_t d = g->tls[ids[i]].dev;

		if (rank[d] == UINT32_MAX) {
			rank[d] = nd;
			devs[nd++] = d;
		}
		at[rank[d] + 1]++;
	}
	for (uint32_t k = 0; k < nd; k++)
		at[k + 1] += at[k];
	for (size_t i = 0; i < n; i++)
		grouped[at[rank[g->tls[ids[i]].dev]]++] = ids[i];
	/* at[k] is now the end of the k-th device's ids */
	for (uint32_t k = 0; k < nd; k++) {
		size_t lo = k > 0 ? at[k - 1] : 0;

		finish_device(g, devs[k], grouped + lo, at[k] - lo);
	}
	free(rank);
	free(devs);
	free(grouped);
	free(ids);
	free(at);
}

size_t
nd_gaps_end_source(nd_gaps *g, nd_gap_fn fn, void *ctx)
{
	int host = !g->seen_device;

	g->fn = fn;
	g->fnctx = ctx;
	g->delivered = 0;
	g->fallback = host && g->ntls > 0;
	if (g->steps != NULL) {
		g->nwin = nd_steps_windows(g->steps, &g->win);
		if (g->nwin > g->capwindev)
			nd_grow(&g->windev, &g->capwindev, g->nwin,
			    sizeof *g->windev);
		for (size_t i = 0; i < g->nwin; i++) {
			const char *k = nd_steps_device(g->steps, g->win[i].dev,
			    NULL, NULL);

			g->windev[i] = k == NULL ? NONE :
			    nd_intern_find(g->devkeys, k, strlen(k));
		}
	}
	nd_ivset_norm(&g->sync);
	nd_ivset_norm(&g->hostcomm);
	if (g->o.unordered)
		for (size_t i = 0; i < g->ntls; i++) {
			struct tl *t = &g->tls[i];

			if (t->host != host)
				continue;
			nd_sort(t->buf, t->nbuf, sizeof *t->buf, op_cmp, NULL);
			for (size_t j = 0; j < t->nbuf; j++)
				tl_add(g, t, &t->buf[j], ND_STR_NONE,
				    ND_STR_NONE, NULL);
		}
	for (size_t i = 0; i < g->ntls; i++) {
		struct tl *t = &g->tls[i];

		if (t->started)
			bop_intern(t);
	}
	if (g->o.level == ND_GAP_DEVICE)
		device_where(g, host);
	if (g->o.level == ND_GAP_TIMELINE) {
		size_t n;
		uint32_t *ids = tl_order(g, host, &n);

		for (size_t i = 0; i < n; i++)
			finish_timeline(g, &g->tls[ids[i]], (int)ids[i]);
		free(ids);
	} else
		finish_devices(g, host);
	if (g->o.host_context > 0)
		host_context(g);
	deliver(g, 1);
	return g->delivered;
}

static void
tl_where(const nd_gaps *g, const struct tl *t, nd_gap_where *w)
{
	w->has_pid = w->has_tid = 1;
	w->pid = t->pid;
	w->tid = t->tid;
	w->process = istr(g, t->process);
	w->thread = istr(g, t->thread);
	w->device = istr(g, t->device);
}

void
nd_gaps_where(const nd_gaps *g, const nd_gap *gap, nd_gap_where *w)
{
	memset(w, 0, sizeof *w);
	if (gap->tl >= 0) {
		tl_where(g, &g->tls[gap->tl], w);
		return;
	}
	if (gap->dev >= 0 && (size_t)gap->dev < g->ndw)
		*w = g->dw[gap->dev];
}

size_t
nd_gaps_lines(const nd_gaps *g, nd_gap_line_fn fn, void *ctx)
{
	size_t n;
	uint32_t *ids = tl_order(g, !g->seen_device, &n);

	for (size_t i = 0; i < n; i++) {
		const struct tl *t = &g->tls[ids[i]];
		nd_gap_line l;

		memset(&l, 0, sizeof l);
		tl_where(g, t, &l.w);
		l.devkey = nd_intern_str(g->devkeys, t->dev, NULL);
		l.ops = t->nops;
		l.gaps = t->lgaps;
		l.idle_ns = t->lidle;
		l.max_ns = t->lmax;
		l.first = t->first;
		l.last = t->hi;
		fn(ctx, &l);
	}
	free(ids);
	return n;
}

size_t
nd_gaps_devices(const nd_gaps *g, void (*fn)(void *ctx, const char *key),
    void *ctx)
{
	uint32_t ndev = nd_intern_count(g->devkeys), *ids;
	char *seen;
	size_t n = 0, nids;

	if (!g->seen_device)
		return 0;
	seen = nd_xcalloc(ndev ? ndev : 1, 1);
	ids = tl_order(g, 0, &nids);
	for (size_t i = 0; i < nids; i++) {
		const struct tl *t = &g->tls[ids[i]];

		if (seen[t->dev])
			continue;
		seen[t->dev] = 1;
		fn(ctx, nd_intern_str(g->devkeys, t->dev, NULL));
		n++;
	}
	free(ids);
	free(seen);
	return n;
}

int
nd_gaps_fallback(const nd_gaps *g)
{
	return g->fallback;
}

int
nd_gaps_rank(const nd_gaps *g, int64_t *rank)
{
	if (g->has_rank)
		*rank = g->rank;
	return g->has_rank;
}
