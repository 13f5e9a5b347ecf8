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
	return 0;
}

/* export_memory_timeline_raw: [[time, action, bytes, category], ...] */
static int
parse_raw(struct ctx *c, const nd_jval *top)
{
	nd_jiter it;
	nd_jval ev;
	nd_jerr e;
	nd_memtl_point *p = NULL;

	c->tl->raw = 1;
	nd_jaiter_init(&it, top, c->base);
	while (nd_jaiter_next(&it, &ev, &e) == 1) {
		int64_t f[4];

		if (ints(c, &ev, f, 4, "an event [time, action, bytes, "
		    "category]") != 0)
			return -1;
		if (f[3] < 0 || f[3] >= ND_MEMTL_NCAT)
			return fail(c, ev.raw, "category %" PRId64 " is not "
			    "0 to %d", f[3], ND_MEMTL_NCAT - 1);
		if (p == NULL || f[0] != p->ts_ns)
			p = new_point(c, f[0]);
		if (__builtin_add_overflow(p->bytes[f[3]], f[2],
		    &p->bytes[f[3]]))
			return fail(c, ev.raw, "the bytes of category %s "
			    "overflow", nd_memtl_category[f[3]]);
		c->tl->events++;
	}
	return rebase(c, 1);
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
