/*
 * nd_memtl: PyTorch memory timeline exports (nd_memtl.h).
 */
#include "nd_memtl.h"
#include "nd_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const nd_memtl_category[ND_MEMTL_NCAT] = {
	"parameter", "optimizer_state", "input", "temporary", "activation",
	"gradient", "autograd_detail", "unknown"
};

struct ctx {
	const char *base;
	char *msg;
	size_t msgsz;
	uint64_t *off;
	nd_memtl *tl;
	size_t cap;
};

static int
fail(struct ctx *c, const char *at, const char *fmt, ...) ND_PRINTF(3, 4);

static int
fail(struct ctx *c, const char *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, c->msgsz, fmt, ap);
	va_end(ap);
	*c->off = (uint64_t)(at - c->base);
	return -1;
}

static nd_memtl_point *
new_point(struct ctx *c, int64_t t)
{
	nd_memtl *tl = c->tl;
	nd_memtl_point *p;

	nd_grow(&tl->pt, &c->cap, tl->npt + 1, sizeof *tl->pt);
	p = &tl->pt[tl->npt];
	if (tl->npt > 0)
		memcpy(p->bytes, tl->pt[tl->npt - 1].bytes, sizeof p->bytes);
	else
		memset(p->bytes, 0, sizeof p->bytes);
	p->ts_ns = t;
	tl->npt++;
	return p;
}

/* The integers of array v into out[0..n): exactly n of them. */
static int
ints(struct ctx *c, const nd_jval *v, int64_t *out, size_t n,
    const char *what)
{
	nd_jiter it;
	nd_jval x;
	nd_jerr e;
	size_t k = 0;

	if (v->type != ND_JARR)
		return fail(c, v->raw, "%s is not an array", what);
	nd_jaiter_init(&it, v, c->base);
	while (nd_jaiter_next(&it, &x, &e) == 1) {
		if (k == n)
			return fail(c, x.raw, "%s has more than %zu elements",
			    what, n);
		if (x.type != ND_JNUM || nd_json_int64(&x, &out[k]) != 0)
			return fail(c, x.raw, "%s holds something other than "
			    "integers", what);
		k++;
	}
	if (k != n)
		return fail(c, v->raw, "%s has %zu elements, not %zu", what,
		    k, n);
	return 0;
}

/* Points in time order, one per time: a stable sort (the input order
 * decides among equal times) and, of the points of one time, the last,
 * which holds the bytes after all of them.  The pre-existing tensors'
 * point and the earliest one both fall at 0 and become one too. */
struct tskey {
	int64_t ts;
	size_t ix;
};

static int
tskey_cmp(const void *a, const void *b)
{
	const struct tskey *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ix < y->ix ? -1 : x->ix > y->ix;
}

static void
order_points(nd_memtl *tl)
{
	size_t n = tl->npt, k = 0;
	int sorted = 1;

	for (size_t i = 1; i < n && sorted; i++)
		sorted = tl->pt[i - 1].ts_ns <= tl->pt[i].ts_ns;
	if (!sorted) {
		struct tskey *key = nd_xmalloc(n * sizeof *key);
		nd_memtl_point *pt = nd_xmalloc(n * sizeof *pt);

		for (size_t i = 0; i < n; i++)
			key[i] = (struct tskey){ tl->pt[i].ts_ns, i };
		qsort(key, n, sizeof *key, tskey_cmp);
		for (size_t i = 0; i < n; i++)
			pt[i] = tl->pt[key[i].ix];
		free(tl->pt);
		free(key);
		tl->pt = pt;
	}
	for (size_t i = 0; i < n; i++) {
		if (k > 0 && tl->pt[k - 1].ts_ns == tl->pt[i].ts_ns)
			k--;
		tl->pt[k++] = tl->pt[i];
	}
	tl->npt = k;
}

/* Times: ns from the earliest non-negative one; negative (pre-existing)
 * ones at 0.  Totals, checked here so that readers may add freely. */
static int
rebase(struct ctx *c, int64_t scale)
{
	nd_memtl *tl = c->tl;
	int have = 0;
	int64_t o = 0;

	for (size_t i = 0; i < tl->npt; i++)
		if (tl->pt[i].ts_ns >= 0 && (!have || tl->pt[i].ts_ns < o)) {
			o = tl->pt[i].ts_ns;
			have = 1;
		}
	for (size_t i = 0; i < tl->npt; i++) {
		int64_t t = tl->pt[i].ts_ns;

		t = t < 0 ? 0 : t - o;
		if (__builtin_mul_overflow(t, scale, &tl->pt[i].ts_ns))
			return fail(c, c->base, "a time beyond 2^63 ns");
		tl->pt[i].total = 0;
		for (int k = 0; k < ND_MEMTL_NCAT; k++)
			if (__builtin_add_overflow(tl->pt[i].total,
			    tl->pt[i].bytes[k], &tl->pt[i].total))
				return fail(c, c->base, "the total bytes "
				    "overflow");
	}
	if (__builtin_mul_overflow(o, scale, &tl->origin_ns))
		return fail(c, c->base, "a time beyond 2^63 ns");
	order_points(tl);
	return 0;
}

/* One raw event, kept until the events are in time order. */
struct rawev {
	int64_t ts, bytes;
	uint64_t seq;		/* input order: ties keep it */
	int cat;
};

static int
rawev_cmp(const void *a, const void *b)
{
	const struct rawev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* export_memory_timeline_raw: [[time, action, bytes, category], ...].
 * Events need not come in time order (a hand-merged or concatenated
 * export does not): they are sorted by time, input order kept among
 * equal times, before their bytes are added up. */
static int
parse_raw(struct ctx *c, const nd_jval *top)
{
	nd_jiter it;
	nd_jval ev;
	nd_jerr e;
	nd_memtl_point *p = NULL;
	struct rawev *rv = NULL;
	size_t nrv = 0, cap = 0;

	c->tl->raw = 1;
	nd_jaiter_init(&it, top, c->base);
	while (nd_jaiter_next(&it, &ev, &e) == 1) {
		int64_t f[4];

		if (ints(c, &ev, f, 4, "an event [time, action, bytes, "
		    "category]") != 0)
			goto fail;
		if (f[3] < 0 || f[3] >= ND_MEMTL_NCAT) {
			fail(c, ev.raw, "category %" PRId64 " is not 0 to %d",
			    f[3], ND_MEMTL_NCAT - 1);
			goto fail;
		}
		nd_grow(&rv, &cap, nrv + 1, sizeof *rv);
		rv[nrv] = (struct rawev){ f[0], f[2], nrv, (int)f[3] };
		nrv++;
	}
	qsort(rv, nrv, sizeof *rv, rawev_cmp);
	for (size_t i = 0; i < nrv; i++) {
		if (p == NULL || rv[i].ts != p->ts_ns)
			p = new_point(c, rv[i].ts);
		if (__builtin_add_overflow(p->bytes[rv[i].cat], rv[i].bytes,
		    &p->bytes[rv[i].cat])) {
			fail(c, c->base, "the bytes of category %s overflow",
			    nd_memtl_category[rv[i].cat]);
			goto fail;
		}
		c->tl->events++;
	}
	free(rv);
	return rebase(c, 1);
fail:
	free(rv);
	return -1;
}

/* export_memory_timeline: [[times in us], [[0, bytes by category], ...]] */
static int
parse_sizes(struct ctx *c, const nd_jval *top)
{
	nd_jiter it, ti, si;
	nd_jval times, sizes, t, s, extra;
	nd_jerr e;

	nd_jaiter_init(&it, top, c->base);
	if (nd_jaiter_next(&it, &times, &e) != 1 ||
	    nd_jaiter_next(&it, &sizes, &e) != 1 ||
	    sizes.type != ND_JARR)
		return fail(c, top->raw, "not [[times], [sizes]]");
	if (nd_jaiter_next(&it, &extra, &e) == 1)
		return fail(c, extra.raw, "more than [[times], [sizes]]");
	nd_jaiter_init(&ti, &times, c->base);
	nd_jaiter_init(&si, &sizes, c->base);
	for (;;) {
		int rt = nd_jaiter_next(&ti, &t, &e);
		int rs = nd_jaiter_next(&si, &s, &e);
		int64_t v[1 + ND_MEMTL_NCAT], ts;
		nd_memtl_point *p;

		if (rt != 1 || rs != 1) {
			if (rt == rs)
				break;
			return fail(c, top->raw, "fewer %s than %s",
			    rt != 1 ? "times" : "sizes",
			    rt != 1 ? "sizes" : "times");
		}
		if (t.type != ND_JNUM || nd_json_int64(&t, &ts) != 0)
			return fail(c, t.raw, "a time is not an integer");
		if (ints(c, &s, v, 1 + ND_MEMTL_NCAT, "a sizes entry") != 0)
			return -1;
		p = new_point(c, ts);
		memcpy(p->bytes, v + 1, sizeof p->bytes);
		c->tl->events++;
	}
	return rebase(c, 1000);
}

int
nd_memtl_parse(const char *data, size_t len, nd_memtl *tl, char *msg,
    size_t msgsz, uint64_t *off)
{
	struct ctx c = { data, msg, msgsz, off, tl, 0 };
	const char *p = data, *end = data + len;
	nd_jval top, first, second, third;
	nd_jiter it;
	nd_jerr e;
	int rc, sizes = 0;

	memset(tl, 0, sizeof *tl);
	if (nd_json_value(&p, data, end, &top, &e) != 0)
		return fail(&c, data + e.off, "invalid JSON: %s", e.msg);
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' ||
	    *p == '\r'))
		p++;
	if (p < end)
		return fail(&c, p, "trailing data after the JSON value");
	if (top.type != ND_JARR)
		return fail(&c, top.raw, "not a memory timeline: not a JSON "
		    "array");
	/* [[times], [[0, sizes...], ...]]: two arrays, the second of arrays;
	 * anything else is read as raw events (and errors say why not) */
	nd_jaiter_init(&it, &top, data);
	if (nd_jaiter_next(&it, &first, &e) == 1 && first.type == ND_JARR &&
	    nd_jaiter_next(&it, &second, &e) == 1 && second.type == ND_JARR &&
	    nd_jaiter_next(&it, &third, &e) != 1) {
		nd_jiter si;

		nd_jaiter_init(&si, &second, data);
		if (nd_jaiter_next(&si, &third, &e) == 1 &&
		    third.type == ND_JARR)
			sizes = 1;
	}
	rc = sizes ? parse_sizes(&c, &top) : parse_raw(&c, &top);
	if (rc != 0) {
		nd_memtl_free(tl);
		return -1;
	}
	return 0;
}

void
nd_memtl_free(nd_memtl *tl)
{
	free(tl->pt);
	memset(tl, 0, sizeof *tl);
}

const char *
nd_memtl_what(const nd_jval *first, char *buf, size_t n)
{
	static const char *const kind[] = { "nothing", "nulls", "booleans",
	    "booleans", "numbers", "strings", "arrays", "objects" };
	nd_jiter it;
	nd_jval x;
	nd_jerr e;
	size_t k = 0, nums = 0;

	if (first->type != ND_JARR) {
		snprintf(buf, n, "a JSON array of %s", kind[first->type]);
		return buf;
	}
	nd_jaiter_init(&it, first, first->raw);
	while (nd_jaiter_next(&it, &x, &e) == 1) {
		k++;
		nums += x.type == ND_JNUM;
	}
	if (k == 4 && nums == 4)
		snprintf(buf, n, "a JSON array of arrays of 4 numbers (an HTA "
		    "memory timeline? trace-mem reads it)");
	else if (k > 0 && nums == k)
		snprintf(buf, n, "a JSON array of arrays of numbers (a PyTorch "
		    "memory timeline? trace-mem reads it)");
	else
		snprintf(buf, n, "a JSON array of arrays");
	return buf;
}
