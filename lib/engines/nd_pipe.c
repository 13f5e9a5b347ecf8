/*
 * nd_pipe: see nd_pipe.h; trace-pipeline(1) states every rule.
 *
 * Collecting keeps per source its rank, clock origin, step markers and the
 * unions of its device work and of its P2P spans; and every block.  All
 * the analysis runs once, in nd_pipe_finish: nested blocks dropped per
 * timeline, then per step and rank over the blocks sorted once.
 */
#include "nd_pipe.h"

#include "nd_cli.h"
#include "nd_hash.h"
#include "nd_rx.h"
#include "nd_sort.h"
#include "nd_steps.h"
#include "nd_sum.h"
#include "nd_util.h"

#include <math.h>
#include <stddef.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a span name is; phase = class - CLS_F. */
enum { CLS_NONE = 0, CLS_F, CLS_B, CLS_W, CLS_P2P };
#define MEMO_NONE UINT64_MAX
/* The rules in the order they are tried. */
enum { RE_W = 0, RE_B, RE_F, RE_P2P, RE_N };
static const int re_cls[RE_N] = { CLS_W, CLS_B, CLS_F, CLS_P2P };
static const char *const re_opt[RE_N] = {
	"--wgrad", "--backward", "--forward", "--p2p"
};

struct src {
	int has_rank, has_origin, dev;
	int64_t rank, origin;
	int64_t shift;		/* finish: origin - the earliest (nd_sum.h) */
	nd_ivset work, p2p;	/* the source's own clock */
};

struct blk {
	uint32_t src, name;	/* name: nd_sid id */
	int phase, has_mb, drop;
	int64_t mb, pid, tid, step, ts, dur;
	uint64_t seq;
	size_t ri;		/* finish: rank index */
	int64_t t;		/* finish: ts + shift */
};

struct mark {
	uint32_t src;
	size_t ri;
	int64_t step, ts, t;
};

struct prank {
	int64_t rank;
	int dev;
	nd_ivset work, p2p;	/* ts + shift */
};

/* Where a result's arrays start in the pools (pointers are set last). */
struct fix {
	size_t blk, idle, p2p;
};

/* A rank of the step being built: its blocks b[a..e) and clock shift. */
struct grp {
	size_t a, e;
	int64_t off;
	int gpipe;		/* every F starts before the first B */
	int64_t v;		/* most F blocks of one micro-batch */
	int has_w;
};

struct nd_pipe {
	regex_t re[RE_N];
	int nre;
	char *rules;
	uint64_t *memo;		/* by name id: class, number; MEMO_NONE */
	size_t capmemo;
	struct src *src;
	size_t nsrc, capsrc;
	struct blk *blk;
	size_t nblk, capblk;
	struct mark *mk;
	size_t nmk, capmk;
	uint64_t seq;
	uint32_t base;		/* partial being read: its first source */
	uint32_t psrc;		/* and its pipe_source records so far */
	const char *pfile;	/* partial being read: where, for messages */
	uint64_t pline;
	nd_err *perr;		/* and its error (nd_pipe_partial_add) */
	int done, abs;
	/* finish */
	struct prank *rk;
	size_t nrk;
	struct blk **ord;
	nd_pipe_step *steps;
	size_t nsteps, capsteps;
	size_t *sfix;		/* first rank of each step */
	nd_pipe_rank *ranks;
	struct fix *rfix;
	size_t nranks, capranks, caprfix;
	nd_pipe_block *ob;
	size_t nob, capob;
	nd_iv *iv;
	size_t niv, capiv;
	struct grp *g;
	size_t capg;
	int64_t *tmp;
	size_t captmp;
	nd_buf line;
};

const char *
nd_pipe_phase_name(int phase)
{
	return phase == ND_PIPE_B ? "B" : phase == ND_PIPE_W ? "W" : "F";
}

const char *
nd_pipe_schedule_name(int s)
{
	static const char *const n[] = { "none", "gpipe", "1f1b",
	    "interleaved", "zero_bubble" };
	return s >= 0 && s <= ND_PIPE_ZERO_BUBBLE ? n[s] : "none";
}

const char *
nd_pipe_clock_name(int c)
{
	return c == ND_PIPE_CLOCK_MARKER ? "step_marker" :
	    c == ND_PIPE_CLOCK_FIRST_BLOCK ? "first_block" : "absolute";
}

nd_pipe *
nd_pipe_new(const nd_pipe_opts *o, char *err, size_t errlen)
{
	static const nd_pipe_opts none;
	const char *rx[RE_N];
	nd_pipe *p = nd_xcalloc(1, sizeof *p);
	nd_buf b = ND_BUF_INIT;

	if (o == NULL)
		o = &none;
	rx[RE_W] = o->wgrad != NULL ? o->wgrad : ND_PIPE_DEFAULT_WGRAD;
	rx[RE_B] = o->backward != NULL ? o->backward :
	    ND_PIPE_DEFAULT_BACKWARD;
	rx[RE_F] = o->forward != NULL ? o->forward : ND_PIPE_DEFAULT_FORWARD;
	rx[RE_P2P] = o->p2p != NULL ? o->p2p : ND_PIPE_DEFAULT_P2P;
	for (int i = 0; i < RE_N; i++) {
		int rc = regcomp(&p->re[i], rx[i], REG_EXTENDED | REG_ICASE);

		if (rc != 0) {
			char msg[256];

			regerror(rc, &p->re[i], msg, sizeof msg);
			snprintf(err, errlen, "invalid %s '%s': %s", re_opt[i],
			    rx[i], msg);
			nd_pipe_free(p);
			nd_buf_free(&b);
			return NULL;
		}
		p->nre++;
	}
	/* in the order of the options' listing */
	for (int k = RE_F; k >= 0; k--) {
		nd_buf_adds(&b, re_opt[k]);
		nd_buf_addc(&b, ' ');
		nd_buf_adds(&b, rx[k]);
		nd_buf_addc(&b, ' ');
	}
	nd_buf_adds(&b, re_opt[RE_P2P]);
	nd_buf_addc(&b, ' ');
	nd_buf_adds(&b, rx[RE_P2P]);
	nd_buf_addc(&b, '\0');
	p->rules = nd_xstrdup(b.p);
	nd_buf_free(&b);
	return p;
}

static void
free_results(nd_pipe *p)
{
	for (size_t i = 0; i < p->nrk; i++) {
		nd_ivset_free(&p->rk[i].work);
		nd_ivset_free(&p->rk[i].p2p);
	}
	free(p->rk);
	free(p->ord);
	free(p->steps);
	free(p->sfix);
	free(p->ranks);
	free(p->rfix);
	free(p->ob);
	free(p->iv);
	free(p->g);
	free(p->tmp);
}

void
nd_pipe_free(nd_pipe *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < p->nre; i++)
		regfree(&p->re[i]);
	for (size_t i = 0; i < p->nsrc; i++) {
		nd_ivset_free(&p->src[i].work);
		nd_ivset_free(&p->src[i].p2p);
	}
	free(p->src);
	free(p->blk);
	free(p->mk);
	free(p->rules);
	free(p->memo);
	free_results(p);
	nd_buf_free(&p->line);
	free(p);
}

const char *
nd_pipe_rules(const nd_pipe *p)
{
	return p->rules;
}

static struct src *
source(nd_pipe *p, uint64_t i)
{
	if (i >= UINT32_MAX)
		nd_die(ND_EXIT_ERROR, "trace-pipeline: too many sources");
	if (i >= p->nsrc) {
		nd_grow(&p->src, &p->capsrc, i + 1, sizeof *p->src);
		memset(p->src + p->nsrc, 0, (i + 1 - p->nsrc) * sizeof *p->src);
		p->nsrc = i + 1;
	}
	return &p->src[i];
}

void
nd_pipe_sources(nd_pipe *p, uint32_t n)
{
	if (n > 0)
		(void)source(p, (uint64_t)n - 1);
}

/* The micro-batch number of a match: the first group that is all digits. */
static int
match_mb(const char *s, const regmatch_t *m, size_t nm, int64_t *mb)
{
	for (size_t g = 1; g < nm; g++) {
		regoff_t a = m[g].rm_so, e = m[g].rm_eo;
		int64_t v = 0;

		if (a < 0 || e <= a || e - a > 18)
			continue;
		for (regoff_t i = a; i < e && v >= 0; i++)
			v = s[i] >= '0' && s[i] <= '9' ? v * 10 + (s[i] - '0') :
			    -1;
		if (v >= 0) {
			*mb = v;
			return 1;
		}
	}
	return 0;
}

/* The class of a name, once per distinct name: packed as
 * class | has_mb << 3 | mb << 4.  The memo is an array by name id (ids
 * are dense): most spans cost one load, as in every other analysis. */
static uint64_t
classify(nd_pipe *p, const nd_event *ev)
{
	regmatch_t m[10];
	uint32_t id = nd_event_sid(ev, ND_SID_NAME);
	uint64_t *v;
	int64_t mb = 0;

	if (id >= p->capmemo) {
		size_t old = p->capmemo;

		nd_grow(&p->memo, &p->capmemo, (size_t)id + 1, sizeof *p->memo);
		for (size_t i = old; i < p->capmemo; i++)
			p->memo[i] = MEMO_NONE;
	}
	v = &p->memo[id];
	if (*v != MEMO_NONE)
		return *v;
	*v = CLS_NONE;
	for (int i = 0; i < RE_N; i++) {
		if (nd_rx_exec(&p->re[i], ev->name.p, ev->name.n, 10, m) != 0)
			continue;
		*v = (uint64_t)re_cls[i];
		if (re_cls[i] != CLS_P2P && match_mb(ev->name.p, m, 10, &mb))
			*v |= 1u << 3 | (uint64_t)mb << 4;
		break;
	}
	return *v;
}

static void
add_block(nd_pipe *p, uint32_t src, int phase, int has_mb, int64_t mb,
    const nd_event *ev, uint32_t name)
{
	struct blk *b;

	nd_grow(&p->blk, &p->capblk, p->nblk + 1, sizeof *p->blk);
	b = &p->blk[p->nblk++];
	memset(b, 0, sizeof *b);
	b->src = src;
	b->name = name;
	b->phase = phase;
	b->has_mb = has_mb;
	b->mb = mb;
	b->pid = ev->has & ND_HAS_PID ? ev->pid : INT64_MIN;
	b->tid = ev->has & ND_HAS_TID ? ev->tid : INT64_MIN;
	b->step = ev->has & ND_HAS_STEP ? ev->step : 0;
	b->ts = ev->ts_ns;
	b->dur = ev->dur_ns;
	b->seq = p->seq++;
}

static void
add_mark(nd_pipe *p, uint32_t src, int64_t step, int64_t ts)
{
	struct mark *k;

	/* a marker repeats on several threads: keep the earliest of the
	 * last few (a bounded look, so many steps stay linear; the sort at
	 * the end takes the earliest of any left) */
	for (size_t i = p->nmk; i-- > 0 && i + 8 >= p->nmk &&
	    p->mk[i].src == src;)
		if (p->mk[i].step == step) {
			if (ts < p->mk[i].ts)
				p->mk[i].ts = ts;
			return;
		}
	nd_grow(&p->mk, &p->capmk, p->nmk + 1, sizeof *p->mk);
	k = &p->mk[p->nmk++];
	memset(k, 0, sizeof *k);
	k->src = src;
	k->step = step;
	k->ts = ts;
}

static void
span(nd_pipe *p, uint32_t si, const nd_event *ev, const nd_span_role *role)
{
	struct src *s = &p->src[si];
	int kind = nd_event_kind(ev);
	int devop = kind == ND_KIND_DEVICE && ev->dur_ns > 0;
	uint64_t c = ev->name.p != NULL ? classify(p, ev) : CLS_NONE;
	int cls = (int)(c & 7);
	int64_t end = nd_add_sat(ev->ts_ns, ev->dur_ns);
	nd_span_role r;

	if (cls >= CLS_F && cls <= CLS_W) {
		/* a device annotation repeats a host range on the GPU */
		if (kind == ND_KIND_ANNOT)
			return;
		add_block(p, si, cls - CLS_F, (c >> 3) & 1,
		    (int64_t)(c >> 4), ev, nd_event_sid(ev, ND_SID_NAME));
	} else if (cls == CLS_P2P) {
		nd_ivset_add(&s->p2p, ev->ts_ns, end);
		s->dev |= devop;
		return;
	}
	if (devop) {
		s->dev = 1;
		nd_ivset_add(&s->work, ev->ts_ns, end);
		return;
	}
	if (cls != CLS_NONE || kind == ND_KIND_DEVICE)
		return;
	if (role == NULL) {
		nd_span_role_of(ev, NULL, &r);
		role = &r;
	}
	if (role->marker != ND_SM_NONE && role->has_num)
		add_mark(p, si, role->num, ev->ts_ns);
}

void
nd_pipe_add(nd_pipe *p, const nd_event *ev)
{
	nd_pipe_add_span(p, ev, NULL);
}

void
nd_pipe_add_span(nd_pipe *p, const nd_event *ev, const nd_span_role *role)
{
	struct src *s = source(p, ev->source);

	p->done = 0;
	if (ev->type == ND_EV_META) {
		s->has_rank = (ev->has & ND_HAS_RANK) != 0;
		s->rank = ev->rank;
		s->has_origin = (ev->has & ND_HAS_ORIGIN) && ev->origin_ns != 0;
		s->origin = s->has_origin ? ev->origin_ns : 0;
		return;
	}
	if (ev->type != ND_EV_SPAN || !(ev->has & ND_HAS_TS) ||
	    !(ev->has & ND_HAS_DUR))
		return;
	span(p, ev->source, ev, role);
}

/* ---- the analysis ---- */

static int
cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* By timeline, start, longest first: an outer block before its nested. */
static int
cmp_timeline(const void *x, const void *y, void *ctx)
{
	const struct blk *a = *(struct blk *const *)x;
	const struct blk *b = *(struct blk *const *)y;
	int c;

	(void)ctx;
	if ((c = cmp_i64(a->src, b->src)) || (c = cmp_i64(a->pid, b->pid)) ||
	    (c = cmp_i64(a->tid, b->tid)) || (c = cmp_i64(a->ts, b->ts)) ||
	    (c = cmp_i64(b->dur, a->dur)))
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* By step, rank, start in the common raw clock. */
static int
cmp_step(const void *x, const void *y, void *ctx)
{
	const struct blk *a = *(struct blk *const *)x;
	const struct blk *b = *(struct blk *const *)y;
	int c;

	(void)ctx;
	if ((c = cmp_i64(a->step, b->step)) ||
	    (c = cmp_i64((int64_t)a->ri, (int64_t)b->ri)) ||
	    (c = cmp_i64(a->t, b->t)))
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int
cmp_mark(const void *x, const void *y, void *ctx)
{
	const struct mark *a = x, *b = y;
	int c;

	(void)ctx;
	if ((c = cmp_i64((int64_t)a->ri, (int64_t)b->ri)) ||
	    (c = cmp_i64(a->step, b->step)))
		return c;
	return cmp_i64(a->t, b->t);
}

static int
cmp_rank(const void *x, const void *y, void *ctx)
{
	(void)ctx;
	return cmp_i64(*(const int64_t *)x, *(const int64_t *)y);
}

/* A block that lies wholly inside an earlier block of its timeline is a
 * part of that one (a recv inside "Forward i"), not a block of its own.
 * Not nd_nest_holds: a block that starts inside another and ends after it
 * is two blocks' work, not a child. */
static void
drop_nested(nd_pipe *p)
{
	const struct blk *prev = NULL;
	int64_t end = 0;

	for (size_t i = 0; i < p->nblk; i++)
		p->ord[i] = &p->blk[i];
	nd_sort(p->ord, p->nblk, sizeof *p->ord, cmp_timeline, NULL);
	for (size_t i = 0; i < p->nblk; i++) {
		struct blk *b = p->ord[i];
		int64_t e = nd_add_sat(b->ts, b->dur);

		b->drop = 0;
		if (prev != NULL && prev->src == b->src &&
		    prev->pid == b->pid && prev->tid == b->tid && e <= end) {
			b->drop = 1;
			continue;
		}
		if (prev == NULL || prev->src != b->src ||
		    prev->pid != b->pid || prev->tid != b->tid || e > end)
			end = e;
		prev = b;
	}
}

static size_t
rank_index(const nd_pipe *p, uint32_t si)
{
	const struct src *s = &p->src[si];
	int64_t r = s->has_rank ? s->rank : (int64_t)si;

	return nd_lower_bound(p->rk, p->nrk, sizeof *p->rk,
	    offsetof(struct prank, rank), r);
}

static void
add_shifted(nd_ivset *dst, nd_ivset *src, int64_t off)
{
	nd_ivset_norm(src);
	for (size_t i = 0; i < src->n; i++)
		nd_ivset_add(dst, src->iv[i].lo + off, src->iv[i].hi + off);
}

/* Each source's clock onto that of the earliest origin: origin_ns may be
 * any int64, the shifts are at most 2^61 (nd_sum_apart). */
static void
shift_clocks(nd_pipe *p)
{
	int64_t base = 0;
	int any = 0;

	for (size_t i = 0; i < p->nsrc; i++)
		if (p->src[i].has_origin && (!any || p->src[i].origin < base)) {
			base = p->src[i].origin;
			any = 1;
		}
	for (size_t i = 0; i < p->nsrc; i++)
		p->src[i].shift = p->src[i].has_origin ?
		    nd_sum_apart("origin_ns", p->src[i].origin, 0, base, 0) :
		    0;
}

/* The ranks: sorted distinct, each with its work and P2P unions. */
static void
make_ranks(nd_pipe *p)
{
	int64_t *r = nd_xcalloc(p->nsrc + 1, sizeof *r);
	size_t n = 0;

	p->abs = p->nsrc > 0;
	for (size_t i = 0; i < p->nsrc; i++) {
		r[i] = p->src[i].has_rank ? p->src[i].rank : (int64_t)i;
		p->abs &= p->src[i].has_origin;
	}
	nd_sort(r, p->nsrc, sizeof *r, cmp_rank, NULL);
	shift_clocks(p);
	p->rk = nd_xcalloc(p->nsrc + 1, sizeof *p->rk);
	for (size_t i = 0; i < p->nsrc; i++)
		if (n == 0 || r[i] != p->rk[n - 1].rank)
			p->rk[n++].rank = r[i];
	p->nrk = n;
	free(r);
	for (uint32_t i = 0; i < p->nsrc; i++)
		p->rk[rank_index(p, i)].dev |= p->src[i].dev;
	for (uint32_t i = 0; i < p->nsrc; i++) {
		struct prank *k = &p->rk[rank_index(p, i)];
		struct src *s = &p->src[i];

		if (k->dev)
			add_shifted(&k->work, &s->work, s->shift);
		add_shifted(&k->p2p, &s->p2p, s->shift);
	}
	for (size_t i = 0; i < p->nblk; i++) {
		struct blk *b = &p->blk[i];

		b->ri = rank_index(p, b->src);
		b->t = b->ts + p->src[b->src].shift;
		if (!p->rk[b->ri].dev)
			nd_ivset_add(&p->rk[b->ri].work, b->t,
			    nd_add_sat(b->t, b->dur));
	}
	for (size_t i = 0; i < p->nrk; i++) {
		nd_ivset_norm(&p->rk[i].work);
		nd_ivset_norm(&p->rk[i].p2p);
	}
	for (size_t i = 0; i < p->nmk; i++) {
		p->mk[i].ri = rank_index(p, p->mk[i].src);
		p->mk[i].t = p->mk[i].ts + p->src[p->mk[i].src].shift;
	}
	nd_sort(p->mk, p->nmk, sizeof *p->mk, cmp_mark, NULL);
}

/* The earliest marker of step on rank ri: 1 with *t. */
static int
find_mark(const nd_pipe *p, size_t ri, int64_t step, int64_t *t)
{
	size_t lo = 0, hi = p->nmk;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mark *k = &p->mk[mid];

		if (k->ri < ri || (k->ri == ri && k->step < step))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nmk && p->mk[lo].ri == ri && p->mk[lo].step == step) {
		*t = p->mk[lo].t;
		return 1;
	}
	return 0;
}

static void
push_iv(nd_pipe *p, int64_t lo, int64_t hi)
{
	nd_grow(&p->iv, &p->capiv, p->niv + 1, sizeof *p->iv);
	p->iv[p->niv].lo = lo;
	p->iv[p->niv++].hi = hi;
}

static int64_t
round_div(int64_t a, int64_t b)
{
	return b > 0 ? (2 * a + b) / (2 * b) : 0;
}

/* Idle stretches, P2P wait, warm-up and cool-down of rank r (blocks
 * b[g->a..g->e)) in the window [lo, hi) of its raw clock. */
static void
rank_idle(nd_pipe *p, nd_pipe_rank *r, const struct grp *g,
    struct blk **b, int64_t lo, int64_t hi)
{
	const struct prank *k = &p->rk[b[g->a]->ri];
	const nd_ivset *w = &k->work;
	int64_t cur = lo, fs = b[g->a]->t, le = fs;

	for (size_t i = g->a; i < g->e; i++)
		if (nd_add_sat(b[i]->t, b[i]->dur) > le)
			le = nd_add_sat(b[i]->t, b[i]->dur);
	r->busy = nd_ivset_measure(w, lo, hi);
	r->bubble = hi - lo - r->busy;
	r->bubble_frac = hi > lo ? (double)r->bubble / (double)(hi - lo) : 0;
	r->warmup = fs - lo - nd_ivset_measure(w, lo, fs);
	r->cooldown = hi - le - nd_ivset_measure(w, le, hi);
	r->steady = r->bubble - r->warmup - r->cooldown;
	r->p2p_wait = 0;
	for (size_t i = nd_ivset_seek(w, lo); i <= w->n; i++) {
		int64_t e = i < w->n && w->iv[i].lo < hi ? w->iv[i].lo : hi;

		if (e > cur) {
			push_iv(p, cur - lo, e - lo);
			r->p2p_wait += nd_ivset_measure(&k->p2p, cur, e);
		}
		if (e == hi)
			break;
		if (w->iv[i].hi > cur)
			cur = w->iv[i].hi;
	}
}

/* Micro-batches of the rank: distinct numbers of its F blocks (else B);
 * and the most F blocks of one number (model chunks). */
static void
rank_mb(nd_pipe *p, nd_pipe_rank *r, struct grp *g)
{
	const nd_pipe_block *ob = p->ob + (p->nob - r->nblocks);
	int phase = ND_PIPE_F;
	size_t n = 0;
	int64_t run = 0;

	for (int pass = 0; pass < 2 && n == 0; pass++) {
		phase = pass == 0 ? ND_PIPE_F : ND_PIPE_B;
		for (size_t i = 0; i < r->nblocks; i++)
			if (ob[i].phase == phase) {
				nd_grow(&p->tmp, &p->captmp, n + 1,
				    sizeof *p->tmp);
				p->tmp[n++] = ob[i].mb;
			}
	}
	nd_sort(p->tmp, n, sizeof *p->tmp, cmp_rank, NULL);
	r->mb = 0;
	g->v = 0;
	for (size_t i = 0; i < n; i++) {
		run = i > 0 && p->tmp[i] == p->tmp[i - 1] ? run + 1 : 1;
		r->mb += run == 1;
		if (phase == ND_PIPE_F && run > g->v)
			g->v = run;
	}
	r->fb_per_mb = round_div(r->phase_ns[ND_PIPE_F] +
	    r->phase_ns[ND_PIPE_B] + r->phase_ns[ND_PIPE_W], r->mb);
}

/* One rank of the step: its blocks to the pool and its figures. */
static void
rank_figures(nd_pipe *p, struct grp *g, struct blk **b, int stage,
    int64_t w0, int64_t w1)
{
	nd_pipe_rank *r;
	struct fix *f;
	int64_t ord[ND_PIPE_NPHASE] = { 0 }, first_b = INT64_MAX,
	    last_f = INT64_MIN;

	nd_grow(&p->ranks, &p->capranks, p->nranks + 1, sizeof *p->ranks);
	nd_grow(&p->rfix, &p->caprfix, p->nranks + 1, sizeof *p->rfix);
	r = &p->ranks[p->nranks];
	f = &p->rfix[p->nranks++];
	memset(r, 0, sizeof *r);
	r->rank = p->rk[b[g->a]->ri].rank;
	r->stage = stage;
	f->blk = p->nob;
	f->idle = p->niv;
	rank_idle(p, r, g, b, w0 - g->off, w1 - g->off);
	r->nidle = p->niv - f->idle;
	f->p2p = p->niv;
	{
		const nd_ivset *q = &p->rk[b[g->a]->ri].p2p;
		int64_t lo = w0 - g->off, hi = w1 - g->off;

		for (size_t i = nd_ivset_seek(q, lo);
		    i < q->n && q->iv[i].lo < hi; i++)
			push_iv(p, (q->iv[i].lo > lo ? q->iv[i].lo : lo) - lo,
			    (q->iv[i].hi < hi ? q->iv[i].hi : hi) - lo);
	}
	r->np2p = p->niv - f->p2p;
	g->has_w = 0;
	for (size_t i = g->a; i < g->e; i++) {
		const struct blk *x = b[i];
		nd_pipe_block *o;

		nd_grow(&p->ob, &p->capob, p->nob + 1, sizeof *p->ob);
		o = &p->ob[p->nob++];
		o->phase = x->phase;
		o->mb = x->has_mb ? x->mb : ord[x->phase];
		ord[x->phase]++;
		o->at = x->t + g->off - w0;
		o->ts = x->ts;
		o->dur = x->dur;
		o->name = nd_sid_str(x->name, NULL);
		r->phase_ns[x->phase] += x->dur;
		g->has_w |= x->phase == ND_PIPE_W;
		if (x->phase == ND_PIPE_B && x->t < first_b)
			first_b = x->t;
		if (x->phase == ND_PIPE_F && x->t > last_f)
			last_f = x->t;
	}
	r->nblocks = p->nob - f->blk;
	g->gpipe = last_f < first_b;
	rank_mb(p, r, g);
}

/* The step's figures from its ranks ranks[0..n). */
static void
step_figures(nd_pipe_step *st, nd_pipe_rank *rk, size_t n,
    const struct grp *g)
{
	int gpipe = 1, inter = 0, zb = 0;
	int64_t v = 1;

	st->stages = (int)n;
	st->slow = -1;
	for (size_t i = 0; i < n; i++) {
		st->busy += rk[i].busy;
		st->bubble += rk[i].bubble;
		if (rk[i].mb > st->microbatches)
			st->microbatches = rk[i].mb;
		if (st->slow < 0 || rk[i].fb_per_mb > rk[st->slow].fb_per_mb)
			st->slow = (int)i;
		gpipe &= g[i].gpipe;
		inter |= g[i].v > 1;
		zb |= g[i].has_w;
		if (g[i].v > v)
			v = g[i].v;
	}
	st->bubble_frac = st->window > 0 ? (double)st->bubble /
	    ((double)n * (double)st->window) : 0;
	st->schedule = n < 2 ? ND_PIPE_NONE : zb ? ND_PIPE_ZERO_BUBBLE :
	    inter ? ND_PIPE_INTERLEAVED : gpipe ? ND_PIPE_GPIPE : ND_PIPE_1F1B;
	if (st->schedule != ND_PIPE_NONE &&
	    st->schedule != ND_PIPE_ZERO_BUBBLE) {
		int64_t m = st->microbatches;

		if (st->schedule == ND_PIPE_INTERLEAVED)
			m *= v;
		st->has_ideal = 1;
		st->ideal_bubble_frac = (double)(n - 1) / (double)(m +
		    (int64_t)n - 1);
	}
	for (size_t i = 0; i < n; i++) {
		nd_pipe_rank *r = &rk[i];
		int64_t e;

		/* a count times a time: past int64 it is past the bubble */
		if (__builtin_mul_overflow(r->mb, rk[st->slow].fb_per_mb -
		    r->fb_per_mb, &e))
			e = INT64_MAX;
		r->explained = (int)i == st->slow || e < 0 ? 0 :
		    e < r->bubble ? e : r->bubble;
		r->explained_frac = r->bubble > 0 ? (double)r->explained /
		    (double)r->bubble : 0;
	}
}

/* Step num from the blocks b[0..n) (sorted by rank, then start). */
static void
build_step(nd_pipe *p, struct blk **b, size_t n, int64_t num)
{
	nd_pipe_step *st;
	size_t ng = 0, r0 = p->nranks;
	int64_t w0 = INT64_MAX, w1 = INT64_MIN, t;
	int clock = p->abs ? ND_PIPE_CLOCK_ABSOLUTE : ND_PIPE_CLOCK_MARKER;

	for (size_t a = 0, e; a < n; a = e) {
		int fb = 0;

		for (e = a; e < n && b[e]->ri == b[a]->ri; e++)
			fb |= b[e]->phase != ND_PIPE_W;
		if (!fb)
			continue;	/* only W blocks: no stage */
		nd_grow(&p->g, &p->capg, ng + 1, sizeof *p->g);
		memset(&p->g[ng], 0, sizeof p->g[ng]);
		p->g[ng].a = a;
		p->g[ng].e = e;
		if (p->abs)
			p->g[ng].off = 0;
		else if (find_mark(p, b[a]->ri, num, &t))
			p->g[ng].off = -t;
		else {
			p->g[ng].off = -b[a]->t;
			clock = ND_PIPE_CLOCK_FIRST_BLOCK;
		}
		for (size_t i = a; i < e; i++) {
			int64_t s = b[i]->t + p->g[ng].off;

			if (s < w0)
				w0 = s;
			if (nd_add_sat(s, b[i]->dur) > w1)
				w1 = nd_add_sat(s, b[i]->dur);
		}
		ng++;
	}
	if (ng == 0)
		return;
	for (size_t i = 0; i < ng; i++) {
		/* each rank's figures are parts of the window (nd_sum.h) */
		nd_sum_add("pipeline window", w1 - w0);
		rank_figures(p, &p->g[i], b, (int)i, w0, w1);
	}
	nd_grow(&p->steps, &p->capsteps, p->nsteps + 1, sizeof *p->steps);
	p->sfix = nd_xrealloc(p->sfix, p->capsteps * sizeof *p->sfix);
	p->sfix[p->nsteps] = r0;
	st = &p->steps[p->nsteps++];
	memset(st, 0, sizeof *st);
	st->num = num;
	st->clock = clock;
	st->window = w1 - w0;
	st->nranks = ng;
	step_figures(st, p->ranks + r0, ng, p->g);
}

static void
analyse(nd_pipe *p)
{
	size_t n = 0;

	free_results(p);
	p->rk = NULL;
	p->nrk = 0;
	p->steps = NULL;
	p->nsteps = p->capsteps = 0;
	p->sfix = NULL;
	p->ranks = NULL;
	p->rfix = NULL;
	p->nranks = p->capranks = p->caprfix = 0;
	p->ob = NULL;
	p->nob = p->capob = 0;
	p->iv = NULL;
	p->niv = p->capiv = 0;
	p->g = NULL;
	p->capg = 0;
	p->tmp = NULL;
	p->captmp = 0;
	p->ord = nd_xcalloc(p->nblk + 1, sizeof *p->ord);
	drop_nested(p);
	make_ranks(p);
	for (size_t i = 0; i < p->nblk; i++)
		if (!p->blk[i].drop)
			p->ord[n++] = &p->blk[i];
	nd_sort(p->ord, n, sizeof *p->ord, cmp_step, NULL);
	for (size_t a = 0, e; a < n; a = e) {
		for (e = a; e < n && p->ord[e]->step == p->ord[a]->step; e++)
			;
		build_step(p, p->ord + a, e - a, p->ord[a]->step);
	}
	for (size_t i = 0; i < p->nranks; i++) {
		p->ranks[i].blocks = p->ob + p->rfix[i].blk;
		/* no stretch at all leaves the pool unallocated */
		p->ranks[i].idle = p->ranks[i].nidle > 0 ?
		    p->iv + p->rfix[i].idle : NULL;
		p->ranks[i].p2p = p->ranks[i].np2p > 0 ?
		    p->iv + p->rfix[i].p2p : NULL;
	}
	for (size_t i = 0; i < p->nsteps; i++)
		p->steps[i].ranks = p->ranks + p->sfix[i];
}

size_t
nd_pipe_finish(nd_pipe *p, const nd_pipe_step **out)
{
	if (!p->done) {
		analyse(p);
		p->done = 1;
	}
	*out = p->steps;
	return p->nsteps;
}

static int
cmp_window(const void *x, const void *y, void *ctx)
{
	const nd_pipe_step *a = *(const nd_pipe_step *const *)x;
	const nd_pipe_step *b = *(const nd_pipe_step *const *)y;
	int c;

	(void)ctx;
	if ((c = cmp_i64(a->window, b->window)))
		return c;
	return cmp_i64(a->num, b->num);
}

const nd_pipe_step *
nd_pipe_typical(const nd_pipe_step *st, size_t n)
{
	const nd_pipe_step **v, *r;

	if (n == 0)
		return NULL;
	v = nd_xcalloc(n, sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = &st[i];
	nd_sort(v, n, sizeof *v, cmp_window, NULL);
	r = v[(n - 1) / 2];
	free(v);
	return r;
}

/* ---- writing ---- */

static double
round4(double x)
{
	return isfinite(x) ? round(x * 1e4) / 1e4 : 0;
}

/* The rank's blocks as "F0 F1 B0 ...". */
static void
put_order(nd_buf *b, const nd_pipe_rank *r)
{
	for (size_t i = 0; i < r->nblocks; i++) {
		if (i > 0)
			nd_buf_addc(b, ' ');
		nd_buf_adds(b, nd_pipe_phase_name(r->blocks[i].phase));
		nd_json_put_i64(b, r->blocks[i].mb);
	}
}

static void
write_mb(nd_buf *out, const nd_pipe_step *st, const nd_pipe_rank *r,
    const nd_pipe_block *k)
{
	nd_jw w;

	nd_jw_init(&w, out);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "pipe_mb");
	nd_jw_kint(&w, "step", st->num);
	nd_jw_kint(&w, "rank", r->rank);
	nd_jw_kint(&w, "stage", r->stage);
	nd_jw_kcstr(&w, "phase", nd_pipe_phase_name(k->phase));
	nd_jw_kint(&w, "mb", k->mb);
	nd_jw_kint(&w, "at_ns", k->at);
	nd_jw_kint(&w, "ts_ns", k->ts);
	nd_jw_kint(&w, "dur_ns", k->dur);
	nd_jw_kcstr(&w, "name", k->name != NULL ? k->name : "");
	nd_jw_obj_end(&w);
	nd_buf_addc(out, '\n');
}

static void
write_rank(nd_buf *out, nd_buf *tmp, const nd_pipe_step *st,
    const nd_pipe_rank *r)
{
	nd_jw w;

	nd_jw_init(&w, out);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "pipe_rank");
	nd_jw_kint(&w, "step", st->num);
	nd_jw_kint(&w, "rank", r->rank);
	nd_jw_kint(&w, "stage", r->stage);
	nd_jw_kint(&w, "window_ns", st->window);
	nd_jw_kint(&w, "busy_ns", r->busy);
	nd_jw_kint(&w, "bubble_ns", r->bubble);
	nd_jw_kdbl(&w, "bubble_frac", round4(r->bubble_frac));
	nd_jw_kint(&w, "warmup_ns", r->warmup);
	nd_jw_kint(&w, "cooldown_ns", r->cooldown);
	nd_jw_kint(&w, "steady_ns", r->steady);
	nd_jw_kint(&w, "p2p_wait_ns", r->p2p_wait);
	nd_jw_kint(&w, "mb", r->mb);
	nd_jw_kint(&w, "f_ns", r->phase_ns[ND_PIPE_F]);
	nd_jw_kint(&w, "b_ns", r->phase_ns[ND_PIPE_B]);
	nd_jw_kint(&w, "w_ns", r->phase_ns[ND_PIPE_W]);
	nd_jw_kint(&w, "fb_per_mb_ns", r->fb_per_mb);
	nd_jw_kint(&w, "explained_ns", r->explained);
	nd_jw_kdbl(&w, "explained_frac", round4(r->explained_frac));
	nd_buf_reset(tmp);
	put_order(tmp, r);
	nd_jw_kstr(&w, "order", tmp->p != NULL ? tmp->p : "", tmp->len);
	nd_jw_obj_end(&w);
	nd_buf_addc(out, '\n');
}

void
nd_pipe_write_step(nd_buf *out, const nd_pipe_step *st)
{
	nd_buf tmp = ND_BUF_INIT;
	nd_jw w;

	for (size_t i = 0; i < st->nranks; i++)
		for (size_t j = 0; j < st->ranks[i].nblocks; j++)
			write_mb(out, st, &st->ranks[i],
			    &st->ranks[i].blocks[j]);
	for (size_t i = 0; i < st->nranks; i++)
		write_rank(out, &tmp, st, &st->ranks[i]);
	nd_buf_free(&tmp);
	nd_jw_init(&w, out);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "pipe_step");
	nd_jw_kint(&w, "step", st->num);
	nd_jw_kint(&w, "stages", st->stages);
	nd_jw_kint(&w, "microbatches", st->microbatches);
	nd_jw_kcstr(&w, "schedule", nd_pipe_schedule_name(st->schedule));
	nd_jw_kcstr(&w, "clock", nd_pipe_clock_name(st->clock));
	nd_jw_kint(&w, "window_ns", st->window);
	nd_jw_kint(&w, "busy_ns", st->busy);
	nd_jw_kint(&w, "bubble_ns", st->bubble);
	nd_jw_kdbl(&w, "bubble_frac", round4(st->bubble_frac));
	if (st->has_ideal)
		nd_jw_kdbl(&w, "ideal_bubble_frac",
		    round4(st->ideal_bubble_frac));
	if (st->slow >= 0) {
		const nd_pipe_rank *s = &st->ranks[st->slow];

		nd_jw_kint(&w, "slow_rank", s->rank);
		nd_jw_kint(&w, "slow_stage", s->stage);
		nd_jw_kint(&w, "slow_fb_per_mb_ns", s->fb_per_mb);
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(out, '\n');
}

static void
cell_dur(nd_buf *b, int width, int64_t ns)
{
	char s[40], t[48];

	nd_fmt_dur(s, sizeof s, ns, 0);
	snprintf(t, sizeof t, "%*s", width, s);
	nd_buf_adds(b, t);
}

static void
cell_pct(nd_buf *b, int width, double f)
{
	char t[48];

	snprintf(t, sizeof t, "%*.1f%%", width - 1, 100 * f);
	nd_buf_adds(b, t);
}

void
nd_pipe_table_step(nd_buf *out, const nd_pipe_step *st)
{
	char t[256], d[40];

	nd_fmt_dur(d, sizeof d, st->window, 0);
	snprintf(t, sizeof t, "step %lld: %d stages, %lld micro-batches, "
	    "schedule %s, clock %s, window %s, bubble %.1f%%",
	    (long long)st->num, st->stages, (long long)st->microbatches,
	    nd_pipe_schedule_name(st->schedule), nd_pipe_clock_name(st->clock),
	    d, 100 * round4(st->bubble_frac));
	nd_buf_adds(out, t);
	if (st->has_ideal) {
		snprintf(t, sizeof t, " (ideal %.1f%%)",
		    100 * round4(st->ideal_bubble_frac));
		nd_buf_adds(out, t);
	}
	if (st->slow >= 0) {
		nd_fmt_dur(d, sizeof d, st->ranks[st->slow].fb_per_mb, 0);
		snprintf(t, sizeof t, ", slow stage %d (rank %lld, %s per "
		    "micro-batch)", st->ranks[st->slow].stage,
		    (long long)st->ranks[st->slow].rank, d);
		nd_buf_adds(out, t);
	}
	nd_buf_adds(out, "\nstage     rank       busy     bubble  bubble%"
	    "     warm-up   cool-down      steady    p2p wait    mb"
	    "  F+B+W/mb   explained  order\n");
	for (size_t i = 0; i < st->nranks; i++) {
		const nd_pipe_rank *r = &st->ranks[i];

		snprintf(t, sizeof t, "%5d %8lld ", r->stage,
		    (long long)r->rank);
		nd_buf_adds(out, t);
		cell_dur(out, 10, r->busy);
		cell_dur(out, 11, r->bubble);
		cell_pct(out, 9, round4(r->bubble_frac));
		cell_dur(out, 12, r->warmup);
		cell_dur(out, 12, r->cooldown);
		cell_dur(out, 12, r->steady);
		cell_dur(out, 12, r->p2p_wait);
		snprintf(t, sizeof t, "%6lld", (long long)r->mb);
		nd_buf_adds(out, t);
		cell_dur(out, 11, r->fb_per_mb);
		cell_dur(out, 12, r->explained);
		nd_buf_adds(out, "  ");
		put_order(out, r);
		nd_buf_addc(out, '\n');
	}
}

/* ---- partials ----
 *
 * What the engine holds, in the sources' own clocks, so that the merge
 * redoes the whole analysis:
 *   {"type":"pipe_source","src":0,"rank":3,"origin_ns":..,"devops":true}
 *   {"type":"pipe_mark","src":0,"step":5,"ts_ns":..}
 *   {"type":"pipe_work","src":0,"lo":..,"hi":..}   device work stretch
 *   {"type":"pipe_p2p","src":0,"lo":..,"hi":..}    P2P stretch
 *   {"type":"pipe_block","src":0,"pid":..,"tid":..,"step":5,"phase":"F",
 *    "mb":3,"ts_ns":..,"dur_ns":..,"name":"forward_step#3"}
 * "src" counts within the partial; a merge numbers the sources of each
 * partial after those of the partials before it (the header starts one).
 * Absent pid, tid, rank, origin_ns, mb: the record has no such key.
 */
const char *const nd_pipe_partial_types[] = {
	"pipe_source", "pipe_mark", "pipe_work", "pipe_p2p", "pipe_block"
};
const size_t nd_pipe_partial_ntypes = 5;

static void
part_begin(nd_jw *w, nd_buf *b, const char *type, uint32_t src)
{
	nd_buf_reset(b);
	nd_jw_init(w, b);
	nd_jw_obj(w);
	nd_jw_kcstr(w, "type", type);
	nd_jw_kint(w, "src", src);
}

static void
part_ivs(nd_pipe *p, nd_ivset *s, uint32_t src, const char *type,
    nd_pipe_line_fn *fn, void *ctx)
{
	nd_jw w;

	nd_ivset_norm(s);
	for (size_t i = 0; i < s->n; i++) {
		part_begin(&w, &p->line, type, src);
		nd_jw_kint(&w, "lo", s->iv[i].lo);
		nd_jw_kint(&w, "hi", s->iv[i].hi);
		nd_jw_obj_end(&w);
		fn(ctx, &p->line);
	}
}

static void
part_block(nd_pipe *p, const struct blk *b, nd_pipe_line_fn *fn, void *ctx)
{
	size_t n;
	const char *name = nd_sid_str(b->name, &n);
	nd_jw w;

	part_begin(&w, &p->line, "pipe_block", b->src);
	if (b->pid != INT64_MIN)
		nd_jw_kint(&w, "pid", b->pid);
	if (b->tid != INT64_MIN)
		nd_jw_kint(&w, "tid", b->tid);
	nd_jw_kint(&w, "step", b->step);
	nd_jw_kcstr(&w, "phase", nd_pipe_phase_name(b->phase));
	if (b->has_mb)
		nd_jw_kint(&w, "mb", b->mb);
	nd_jw_kint(&w, "ts_ns", b->ts);
	nd_jw_kint(&w, "dur_ns", b->dur);
	nd_jw_kstr(&w, "name", name, n);
	nd_jw_obj_end(&w);
	fn(ctx, &p->line);
}

void
nd_pipe_partial_write(nd_pipe *p, nd_pipe_line_fn *fn, void *ctx)
{
	nd_jw w;

	for (uint32_t i = 0; i < p->nsrc; i++) {
		struct src *s = &p->src[i];

		part_begin(&w, &p->line, "pipe_source", i);
		if (s->has_rank)
			nd_jw_kint(&w, "rank", s->rank);
		if (s->has_origin)
			nd_jw_kint(&w, "origin_ns", s->origin);
		nd_jw_kbool(&w, "devops", s->dev);
		nd_jw_obj_end(&w);
		fn(ctx, &p->line);
	}
	for (size_t i = 0; i < p->nmk; i++) {
		part_begin(&w, &p->line, "pipe_mark", p->mk[i].src);
		nd_jw_kint(&w, "step", p->mk[i].step);
		nd_jw_kint(&w, "ts_ns", p->mk[i].ts);
		nd_jw_obj_end(&w);
		fn(ctx, &p->line);
	}
	for (uint32_t i = 0; i < p->nsrc; i++) {
		part_ivs(p, &p->src[i].work, i, "pipe_work", fn, ctx);
		part_ivs(p, &p->src[i].p2p, i, "pipe_p2p", fn, ctx);
	}
	for (size_t i = 0; i < p->nblk; i++)
		part_block(p, &p->blk[i], fn, ctx);
}

/* A partial record that cannot be read (its framing checked out, so it was
 * written by another program or edited): its error, naming it and where it
 * is; what was read of it is not used. */
static void
part_fail(const nd_pipe *p, const nd_event *ev, const char *key)
{
	nd_err_line(p->perr, p->pfile != NULL ? p->pfile : "-", p->pline,
	    "%.*s record without a valid \"%s\"", (int)ev->type_name.n,
	    ev->type_name.p, key);
}

static int
part_failed(const nd_pipe *p)
{
	return p->perr->code != 0;
}

/* An integer member of a partial record; absent: 0 with *has 0. */
static int64_t
part_int(const nd_pipe *p, const nd_event *ev, const char *key, int need,
    int *has)
{
	const nd_jval *v = nd_event_get(ev, key);
	int64_t x = 0;

	if (v == NULL || nd_json_int64(v, &x) != 0) {
		if (need)
			part_fail(p, ev, key);
		x = 0;
		v = NULL;
	}
	if (has != NULL)
		*has = v != NULL;
	return x;
}

/* The partial's source numbered after the sources of those before it.
 * Its pipe_source records come first, numbered from 0 (as written), and
 * the others name one of them: a source costs a record, so memory is
 * bounded by the partial's size, whatever "src" says. */
static uint32_t
part_source(nd_pipe *p, const nd_event *ev)
{
	int64_t s = part_int(p, ev, "src", 1, NULL);
	int decl = nd_str_eq(ev->type_name, "pipe_source");

	if (part_failed(p))
		return UINT32_MAX;
	if (decl ? s != p->psrc : s < 0 || s >= p->psrc) {
		nd_err_line(p->perr, p->pfile != NULL ? p->pfile : "-",
		    p->pline, "%.*s record of \"src\" %lld: %s %lu "
		    "pipe_source records before it", (int)ev->type_name.n,
		    ev->type_name.p, (long long)s, decl ? "the sources of a "
		    "partial are numbered in order, and it has" :
		    "not a source of its partial, which has",
		    (unsigned long)p->psrc);
		return UINT32_MAX;
	}
	if (decl)
		p->psrc++;
	(void)source(p, (uint64_t)p->base + (uint64_t)s);
	return p->base + (uint32_t)s;
}

static void
part_add_block(nd_pipe *p, const nd_event *ev, uint32_t si)
{
	const nd_jval *v = nd_event_get(ev, "phase"), *nm;
	nd_event x;
	int has, phase = -1;
	int64_t mb;
	nd_buf name = ND_BUF_INIT;

	for (int i = 0; i < ND_PIPE_NPHASE && v != NULL; i++)
		if (nd_jstr_eq(v, nd_pipe_phase_name(i)))
			phase = i;
	nm = nd_event_get(ev, "name");
	if (phase < 0 || nm == NULL || nm->type != ND_JSTR) {
		part_fail(p, ev, phase < 0 ? "phase" : "name");
		return;
	}
	memset(&x, 0, sizeof x);
	x.pid = part_int(p, ev, "pid", 0, &has);
	x.has |= has ? ND_HAS_PID : 0;
	x.tid = part_int(p, ev, "tid", 0, &has);
	x.has |= has ? ND_HAS_TID : 0;
	x.step = part_int(p, ev, "step", 1, NULL);
	x.has |= ND_HAS_STEP;
	x.ts_ns = part_int(p, ev, "ts_ns", 1, NULL);
	x.dur_ns = part_int(p, ev, "dur_ns", 1, NULL);
	mb = part_int(p, ev, "mb", 0, &has);
	if (part_failed(p))
		return;
	nd_json_unescape(nm, &name);
	add_block(p, si, phase, has, mb, &x, nd_sid_intern(name.p != NULL ?
	    name.p : "", name.len));
	nd_buf_free(&name);
}

int
nd_pipe_partial_add(nd_pipe *p, const nd_event *ev, const char *file,
    uint64_t line, nd_err *err)
{
	uint32_t si;
	int has;
	struct src *s;
	int64_t a, b;

	p->done = 0;
	p->pfile = file;
	p->pline = line;
	p->perr = err;
	if (nd_str_eq(ev->type_name, ND_PIPE_PARTIAL)) {
		p->base = (uint32_t)p->nsrc;
		p->psrc = 0;
		return 0;
	}
	if (!nd_str_eq(ev->type_name, "pipe_source") &&
	    !nd_str_eq(ev->type_name, "pipe_mark") &&
	    !nd_str_eq(ev->type_name, "pipe_work") &&
	    !nd_str_eq(ev->type_name, "pipe_p2p") &&
	    !nd_str_eq(ev->type_name, "pipe_block"))
		return 0;
	if ((si = part_source(p, ev)) == UINT32_MAX)
		return -1;
	s = &p->src[si];
	if (nd_str_eq(ev->type_name, "pipe_source")) {
		const nd_jval *v = nd_event_get(ev, "devops");

		s->rank = part_int(p, ev, "rank", 0, &s->has_rank);
		s->origin = part_int(p, ev, "origin_ns", 0, &has);
		s->has_origin = has && s->origin != 0;
		s->dev = v != NULL && v->type == ND_JTRUE;
	} else if (nd_str_eq(ev->type_name, "pipe_block"))
		part_add_block(p, ev, si);
	else {
		int mark = nd_str_eq(ev->type_name, "pipe_mark");

		a = part_int(p, ev, mark ? "step" : "lo", 1, NULL);
		b = part_int(p, ev, mark ? "ts_ns" : "hi", 1, NULL);
		if (part_failed(p))
			return -1;
		if (mark)
			add_mark(p, si, a, b);
		else
			nd_ivset_add(nd_str_eq(ev->type_name, "pipe_work") ?
			    &s->work : &s->p2p, a, b);
	}
	return part_failed(p) ? -1 : 0;
}
