#include "nd_hist.h"
#include "nd_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUBN (1u << ND_HIST_SUB)

uint32_t
nd_hist_index(int64_t v)
{
	uint64_t u;
	int e;

	if (v < (int64_t)SUBN)
		return v < 0 ? 0 : (uint32_t)v;
	u = (uint64_t)v;
	e = 63 - __builtin_clzll(u);
	return (uint32_t)(e - ND_HIST_SUB + 1) * SUBN +
	    (uint32_t)((u >> (e - ND_HIST_SUB)) - SUBN);
}

int64_t
nd_hist_bucket_lo(uint32_t idx)
{
	int e;

	if (idx < SUBN)
		return idx;
	e = (int)(idx / SUBN) + ND_HIST_SUB - 1;
	return (int64_t)((uint64_t)(SUBN + idx % SUBN) << (e - ND_HIST_SUB));
}

int64_t
nd_hist_bucket_width(uint32_t idx)
{
	if (idx < SUBN)
		return 1;
	return (int64_t)1 << ((int)(idx / SUBN) - 1);
}

static inline uint64_t
get(const nd_hist *h, uint32_t i)
{
	return h->wide ? ((const uint64_t *)h->c)[i] :
	    ((const uint32_t *)h->c)[i];
}

uint64_t
nd_hist_count(const nd_hist *h, uint32_t idx)
{
	if (h->c == NULL || idx < h->lo || idx >= h->lo + h->n)
		return 0;
	return get(h, idx - h->lo);
}

/* Make room for bucket idx in the dense range: start with a small block,
 * then at least double on each growth so that a key's histogram is
 * reallocated a few times at most. */
static void
cover(nd_hist *h, uint32_t idx)
{
	size_t es = h->wide ? 8 : 4;
	uint32_t nlo, nhi, nn, want, shift;
	char *c;

	if (h->c == NULL) {
		/* One octave, aligned: most ops' durations stay inside one or
		 * two, so this is usually the only allocation. */
		h->lo = idx & ~63u;
		h->n = 64;
		h->c = nd_xcalloc(h->n, es);
		return;
	}
	if (idx >= h->lo && idx < h->lo + h->n)
		return;
	nlo = idx < h->lo ? idx : h->lo;
	nhi = idx >= h->lo + h->n ? idx + 1 : h->lo + h->n;
	/* grow by whole octaves (64 buckets), at least by a quarter */
	want = h->n + (h->n / 4 > 16 ? h->n / 4 : 16);
	if (nhi - nlo < want) {
		if (idx < h->lo)
			nlo = nhi > want ? nhi - want : 0;
		else
			nhi = nlo + want;
	}
	nlo &= ~63u;
	nhi = (nhi + 63) & ~63u;
	nn = nhi - nlo;
	shift = h->lo - nlo;
	/* realloc often extends in place */
	c = nd_xrealloc(h->c, (size_t)nn * es);
	if (shift > 0) {
		memmove(c + (size_t)shift * es, c, (size_t)h->n * es);
		memset(c, 0, (size_t)shift * es);
	}
	memset(c + (size_t)(shift + h->n) * es, 0,
	    (size_t)(nn - shift - h->n) * es);
	h->c = c;
	h->lo = nlo;
	h->n = nn;
}

static void
widen(nd_hist *h)
{
	uint64_t *w = nd_xmalloc((size_t)h->n * sizeof *w);

	for (uint32_t i = 0; i < h->n; i++)
		w[i] = ((uint32_t *)h->c)[i];
	free(h->c);
	h->c = w;
	h->wide = 1;
}

void
nd_hist_add_bucket(nd_hist *h, uint32_t idx, uint64_t cnt)
{
	uint32_t i;

	if (cnt == 0)
		return;
	cover(h, idx);
	i = idx - h->lo;
	if (!h->wide && cnt > UINT32_MAX - ((uint32_t *)h->c)[i])
		widen(h);
	if (h->wide)
		((uint64_t *)h->c)[i] += cnt;
	else
		((uint32_t *)h->c)[i] += (uint32_t)cnt;
	h->total += cnt;
}

void
nd_hist_add(nd_hist *h, int64_t v)
{
	uint32_t idx;

	if (v < 0)
		v = 0;
	idx = nd_hist_index(v);
	if (h->total == 0 || v < h->min)
		h->min = v;
	if (h->total == 0 || v > h->max)
		h->max = v;
	if (ND_LIKELY(!h->wide && h->c != NULL && idx - h->lo < h->n)) {
		uint32_t *c = (uint32_t *)h->c + (idx - h->lo);

		if (ND_LIKELY(*c != UINT32_MAX)) {
			(*c)++;
			h->total++;
			return;
		}
	}
	nd_hist_add_bucket(h, idx, 1);
}

void
nd_hist_merge(nd_hist *dst, const nd_hist *src)
{
	if (src->total == 0)
		return;
	if (dst->total == 0 || src->min < dst->min)
		dst->min = src->min;
	if (dst->total == 0 || src->max > dst->max)
		dst->max = src->max;
	for (uint32_t i = 0; i < src->n; i++)
		nd_hist_add_bucket(dst, src->lo + i, get(src, i));
}

int64_t
nd_hist_quantile(const nd_hist *h, double q)
{
	uint64_t rank, seen = 0;
	double r;

	if (h->total == 0)
		return 0;
	if (!(q > 0))
		return h->min;
	if (q >= 1)
		return h->max;
	/* Nearest rank ceil(q n); the tiny shrink keeps 0.9 * 10 at 9. */
	r = ceil(q * (double)h->total * (1 - 1e-12));
	rank = r < 1 ? 1 : (uint64_t)r;
	for (uint32_t i = 0; i < h->n; i++) {
		seen += get(h, i);
		if (seen >= rank) {
			uint32_t idx = h->lo + i;
			int64_t v = nd_hist_bucket_lo(idx) +
			    nd_hist_bucket_width(idx) / 2;

			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}

void
nd_hist_free(nd_hist *h)
{
	free(h->c);
	memset(h, 0, sizeof *h);
}

void
nd_hist_write(const nd_hist *h, nd_jw *w)
{
	nd_jw_arr(w);
	for (uint32_t i = 0; i < h->n; i++)
		if (get(h, i) != 0) {
			nd_jw_uint(w, h->lo + i);
			nd_jw_uint(w, get(h, i));
		}
	nd_jw_arr_end(w);
}

int
nd_hist_read(nd_hist *h, const nd_jval *arr)
{
	nd_jiter it;
	nd_jval v;
	nd_jerr je;
	int64_t pair[2];
	uint64_t sum = 0;
	int k = 0, r;

	if (arr->type != ND_JARR)
		return -1;
	nd_jaiter_init(&it, arr, arr->raw);
	while ((r = nd_jaiter_next(&it, &v, &je)) == 1) {
		if (v.type != ND_JNUM || nd_json_int(&v, &pair[k]) != 0 ||
		    pair[k] < 0)
			return -1;
		if (k == 1) {
			sum += (uint64_t)pair[1];	/* each <= 2^53 */
			if (pair[0] > (int64_t)nd_hist_index(INT64_MAX) ||
			    sum > (uint64_t)ND_JSON_MAX_SAFE_INT)
				return -1;
			nd_hist_add_bucket(h, (uint32_t)pair[0],
			    (uint64_t)pair[1]);
		}
		k ^= 1;
	}
	return r < 0 || k != 0 ? -1 : 0;
}
