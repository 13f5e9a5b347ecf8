#include "nd_ivlog.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

size_t
nd_ivlog_chunk_env(void)
{
	const char *e = getenv("ND_IVLOG_CHUNK");
	char *end;
	unsigned long v;

	if (e == NULL || *e == '\0')
		return ND_IVLOG_CHUNK;
	v = strtoul(e, &end, 10);
	return *end == '\0' && v > 0 && v <= (1ul << 20) ? (size_t)v :
	    ND_IVLOG_CHUNK;
}

void
nd_ivlog_init(nd_ivlog *l, nd_spool *sp, size_t chunk)
{
	memset(l, 0, sizeof *l);
	l->sp = sp;
	l->chunk = chunk > 0 ? chunk : ND_IVLOG_CHUNK;
}

void
nd_ivlog_free(nd_ivlog *l)
{
	free(l->ck);
	free(l->buf);
	nd_ivlog_init(l, l->sp, l->chunk);
}

/* A record at the end: a full chunk goes to the spool first. */
static void
append(nd_ivlog *l, nd_iv v)
{
	if (l->nbuf == l->chunk) {
		nd_ivchunk *c;

		if (l->nck == l->capck)
			nd_grow(&l->ck, &l->capck, l->nck + 1, sizeof *l->ck);
		c = &l->ck[l->nck++];
		c->off = nd_spool_add(l->sp, l->buf, l->nbuf * sizeof *l->buf);
		c->last = l->buf[l->nbuf - 1];
		l->nbuf = 0;
	}
	if (l->nbuf == l->capbuf)
		nd_grow(&l->buf, &l->capbuf, l->nbuf + 1, sizeof *l->buf);
	l->buf[l->nbuf++] = v;
	l->n++;
}

static int64_t
last_lo(const nd_ivlog *l)
{
	if (l->nbuf > 0)
		return l->buf[l->nbuf - 1].lo;
	return l->nck > 0 ? l->ck[l->nck - 1].last.lo : INT64_MIN;
}

int
nd_ivlog_add(nd_ivlog *l, int64_t lo, int64_t hi)
{
	if (lo >= hi)
		return 0;
	if (l->has_open) {
		if (lo < l->open.lo)
			return -1;
		if (lo <= l->open.hi) {
			if (hi > l->open.hi)
				l->open.hi = hi;
			return 0;
		}
		append(l, l->open);
	}
	l->open.lo = lo;
	l->open.hi = hi;
	l->has_open = 1;
	return 0;
}

int
nd_ivlog_push(nd_ivlog *l, int64_t lo, int64_t hi)
{
	nd_iv v = { lo, hi };

	if (lo < last_lo(l))
		return -1;
	append(l, v);
	return 0;
}

void
nd_ivlog_close(nd_ivlog *l)
{
	if (l->has_open)
		append(l, l->open);
	l->has_open = 0;
}

void
nd_ivlog_from_set(nd_ivlog *dst, const nd_ivset *s)
{
	for (size_t i = 0; i < s->n; i++)
		nd_ivlog_add(dst, s->iv[i].lo, s->iv[i].hi);
	nd_ivlog_close(dst);
}

/* ---- cursors ---- */

void
nd_ivcur_init(nd_ivcur *c, const nd_ivlog *l)
{
	c->l = l;
	c->pos = 0;
	c->last = INT64_MIN;
	c->ci = SIZE_MAX;
	c->cbuf = NULL;
}

void
nd_ivcur_free(nd_ivcur *c)
{
	free(c->cbuf);
	c->cbuf = NULL;
	c->ci = SIZE_MAX;
}

nd_iv
nd_ivcur_at(nd_ivcur *c, uint64_t i)
{
	const nd_ivlog *l = c->l;
	size_t ci = (size_t)(i / l->chunk), k = (size_t)(i % l->chunk);

	if (ci >= l->nck)
		return l->buf[k];
	if (ci != c->ci) {
		size_t n = l->chunk * sizeof(nd_iv);

		if (c->cbuf == NULL)
			c->cbuf = nd_xmalloc(n);
		memcpy(c->cbuf, nd_spool_get(l->sp, l->ck[ci].off, n), n);
		c->ci = ci;
	}
	return c->cbuf[k];
}

/* The first record from the cursor's position on whose hi > t (by_lo 0)
 * or lo >= t (by_lo 1); whole chunks that end before it are skipped
 * unread. */
static uint64_t
seek(nd_ivcur *c, int64_t t, int by_lo)
{
	const nd_ivlog *l = c->l;

	if (t < c->last)
		c->pos = 0;
	c->last = t;
	while (c->pos < l->n) {
		size_t ci = (size_t)(c->pos / l->chunk);
		nd_iv r;

		if (ci < l->nck && (by_lo ? l->ck[ci].last.lo < t :
		    l->ck[ci].last.hi <= t)) {
			c->pos = (uint64_t)(ci + 1) * l->chunk;
			continue;
		}
		r = nd_ivcur_at(c, c->pos);
		if (by_lo ? r.lo >= t : r.hi > t)
			break;
		c->pos++;
	}
	return c->pos;
}

uint64_t
nd_ivcur_seek(nd_ivcur *c, int64_t t)
{
	return seek(c, t, 0);
}

uint64_t
nd_ivcur_seek_lo(nd_ivcur *c, int64_t t)
{
	return seek(c, t, 1);
}

int64_t
nd_ivcur_measure(nd_ivcur *c, int64_t lo, int64_t hi)
{
	int64_t t = 0;

	for (uint64_t i = nd_ivcur_seek(c, lo); i < c->l->n; i++) {
		nd_iv v = nd_ivcur_at(c, i);

		if (v.lo >= hi)
			break;
		t += (v.hi < hi ? v.hi : hi) - (v.lo > lo ? v.lo : lo);
	}
	return t;
}

/* The record at idx of cursor k, or none (returns 0). */
static int
head(nd_ivcur *c, uint64_t i, nd_iv *v)
{
	if (c == NULL || i >= c->l->n)
		return 0;
	*v = nd_ivcur_at(c, i);
	return 1;
}

void
nd_ivcur_breakdown(nd_ivcur *const cat[ND_NCAT], int64_t lo, int64_t hi,
    nd_breakdown *out)
{
	uint64_t idx[ND_NCAT];
	nd_iv cur[ND_NCAT];
	int has[ND_NCAT];
	int64_t t = lo;

	/* the sweep of nd_iv_breakdown, on a cached head per category */
	memset(out, 0, sizeof *out);
	for (int k = 0; k < ND_NCAT; k++) {
		idx[k] = cat[k] != NULL ? nd_ivcur_seek(cat[k], lo) : 0;
		has[k] = head(cat[k], idx[k], &cur[k]);
	}
	while (t < hi) {
		int on[ND_NCAT];
		int64_t next = hi;

		for (int k = 0; k < ND_NCAT; k++) {
			on[k] = 0;
			while (has[k] && cur[k].hi <= t)
				has[k] = head(cat[k], ++idx[k], &cur[k]);
			if (!has[k])
				continue;
			if (cur[k].lo <= t) {
				on[k] = 1;
				if (cur[k].hi < next)
					next = cur[k].hi;
			} else if (cur[k].lo < next)
				next = cur[k].lo;
		}
		nd_breakdown_part(out, on, next - t);
		t = next;
	}
}

/* ---- merges ---- */

/* Merge at most ND_IVLOG_FANIN logs into dst: by lo, ties in order of
 * src; union: through nd_ivlog_add, else nd_ivlog_push. */
static void
merge_few(nd_ivlog *dst, nd_ivlog *const *src, size_t n, int uni)
{
	nd_ivcur c[ND_IVLOG_FANIN];
	uint64_t i[ND_IVLOG_FANIN];
	nd_iv h[ND_IVLOG_FANIN];
	int has[ND_IVLOG_FANIN];

	for (size_t k = 0; k < n; k++) {
		nd_ivcur_init(&c[k], src[k]);
		i[k] = 0;
		has[k] = head(&c[k], 0, &h[k]);
	}
	for (;;) {
		int b = -1;

		for (size_t k = 0; k < n; k++)
			if (has[k] && (b < 0 || h[k].lo < h[b].lo))
				b = (int)k;
		if (b < 0)
			break;
		if (uni)
			nd_ivlog_add(dst, h[b].lo, h[b].hi);
		else
			nd_ivlog_push(dst, h[b].lo, h[b].hi);
		has[b] = head(&c[b], ++i[b], &h[b]);
	}
	for (size_t k = 0; k < n; k++)
		nd_ivcur_free(&c[k]);
	nd_ivlog_close(dst);
}

/* Merge in rounds of ND_IVLOG_FANIN logs, so that the spool's read
 * windows follow every log being read. */
static void
merge(nd_ivlog *dst, nd_ivlog *const *src, size_t n, int uni)
{
	nd_ivlog *tmp = NULL, **p = nd_xmalloc((n ? n : 1) * sizeof *p);
	size_t ntmp = 0;

	memcpy(p, src, n * sizeof *p);
	while (n > ND_IVLOG_FANIN) {
		size_t ng = (n + ND_IVLOG_FANIN - 1) / ND_IVLOG_FANIN;
		nd_ivlog *next = nd_xmalloc(ng * sizeof *next);

		for (size_t g = 0; g < ng; g++) {
			size_t a = g * ND_IVLOG_FANIN, m = n - a;

			if (m > ND_IVLOG_FANIN)
				m = ND_IVLOG_FANIN;
			nd_ivlog_init(&next[g], dst->sp, dst->chunk);
			merge_few(&next[g], p + a, m, uni);
		}
		for (size_t g = 0; g < ntmp; g++)
			nd_ivlog_free(&tmp[g]);
		free(tmp);
		tmp = next;
		ntmp = n = ng;
		for (size_t g = 0; g < ng; g++)
			p[g] = &tmp[g];
	}
	merge_few(dst, p, n, uni);
	for (size_t g = 0; g < ntmp; g++)
		nd_ivlog_free(&tmp[g]);
	free(tmp);
	free(p);
}

void
nd_ivlog_union(nd_ivlog *dst, nd_ivlog *const *src, size_t n)
{
	merge(dst, src, n, 1);
}

void
nd_ivlog_merge(nd_ivlog *dst, nd_ivlog *const *src, size_t n)
{
	merge(dst, src, n, 0);
}
