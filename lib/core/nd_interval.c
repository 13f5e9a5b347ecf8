#include "nd_interval.h"
#include "nd_sort.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

#define DIRTY_MIN 256		/* unmerged additions tolerated before a sort */

static void
push(nd_ivset *s, int64_t lo, int64_t hi)
{
	if (s->n == s->cap)
		nd_grow(&s->iv, &s->cap, s->n + 1, sizeof *s->iv);
	s->iv[s->n].lo = lo;
	s->iv[s->n].hi = hi;
	s->n++;
}

void
nd_ivset_add(nd_ivset *s, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return;
	if (s->n == s->clean) {
		if (s->n == 0) {
			push(s, lo, hi);
			s->clean = 1;
			return;
		}
		nd_iv *last = &s->iv[s->n - 1];

		if (lo >= last->lo) {
			if (lo <= last->hi) {
				if (hi > last->hi)
					last->hi = hi;
			} else {
				push(s, lo, hi);
				s->clean = s->n;
			}
			return;
		}
	}
	push(s, lo, hi);
	if (s->n - s->clean > DIRTY_MIN && s->n - s->clean > s->clean)
		nd_ivset_norm(s);
}

void
nd_ivset_add_set(nd_ivset *dst, const nd_ivset *src)
{
	for (size_t i = 0; i < src->n; i++)
		nd_ivset_add(dst, src->iv[i].lo, src->iv[i].hi);
}

static int
iv_cmp(const void *a, const void *b, void *ctx)
{
	const nd_iv *x = a, *y = b;

	(void)ctx;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

void
nd_ivset_norm(nd_ivset *s)
{
	size_t w = 0;

	if (s->clean == s->n)
		return;
	nd_sort(s->iv, s->n, sizeof *s->iv, iv_cmp, NULL);
	for (size_t i = 0; i < s->n; i++) {
		if (w > 0 && s->iv[i].lo <= s->iv[w - 1].hi) {
			if (s->iv[i].hi > s->iv[w - 1].hi)
				s->iv[w - 1].hi = s->iv[i].hi;
		} else
			s->iv[w++] = s->iv[i];
	}
	s->n = s->clean = w;
}

void
nd_ivset_clear(nd_ivset *s)
{
	s->n = s->clean = 0;
}

void
nd_ivset_free(nd_ivset *s)
{
	free(s->iv);
	s->iv = NULL;
	s->n = s->cap = s->clean = 0;
}

int64_t
nd_ivset_total(const nd_ivset *s)
{
	int64_t t = 0;

	for (size_t i = 0; i < s->n; i++)
		t += s->iv[i].hi - s->iv[i].lo;
	return t;
}

size_t
nd_ivset_seek(const nd_ivset *s, int64_t t)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->iv[mid].hi <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int64_t
nd_ivset_measure(const nd_ivset *s, int64_t lo, int64_t hi)
{
	int64_t t = 0;

	for (size_t i = nd_ivset_seek(s, lo); i < s->n && s->iv[i].lo < hi;
	    i++) {
		int64_t a = s->iv[i].lo > lo ? s->iv[i].lo : lo;
		int64_t b = s->iv[i].hi < hi ? s->iv[i].hi : hi;

		t += b - a;
	}
	return t;
}

int
nd_ivset_active(const nd_ivset *s, int64_t t)
{
	size_t i = nd_ivset_seek(s, t);

	return i < s->n && s->iv[i].lo <= t;
}

int
nd_ivset_overlaps(const nd_ivset *s, int64_t lo, int64_t hi)
{
	size_t i = nd_ivset_seek(s, lo);

	return lo < hi && i < s->n && s->iv[i].lo < hi;
}

void
nd_iv_breakdown(const nd_ivset *const cat[ND_NCAT], int64_t lo, int64_t hi,
    nd_breakdown *out)
{
	size_t idx[ND_NCAT];
	int64_t t = lo;

	memset(out, 0, sizeof *out);
	for (int k = 0; k < ND_NCAT; k++)
		idx[k] = cat[k] != NULL ? nd_ivset_seek(cat[k], lo) : 0;
	while (t < hi) {
		int on[ND_NCAT];
		int64_t next = hi;

		for (int k = 0; k < ND_NCAT; k++) {
			const nd_ivset *s = cat[k];

			on[k] = 0;
			if (s == NULL)
				continue;
			while (idx[k] < s->n && s->iv[idx[k]].hi <= t)
				idx[k]++;
			if (idx[k] == s->n)
				continue;
			if (s->iv[idx[k]].lo <= t) {
				on[k] = 1;
				if (s->iv[idx[k]].hi < next)
					next = s->iv[idx[k]].hi;
			} else if (s->iv[idx[k]].lo < next)
				next = s->iv[idx[k]].lo;
		}
		nd_breakdown_part(out, on, next - t);
		t = next;
	}
}

void
nd_breakdown_part(nd_breakdown *out, const int on[ND_NCAT], int64_t len)
{
	if (on[ND_CAT_COMPUTE]) {
		out->compute_ns += len;
		if (on[ND_CAT_COMM])
			out->overlap_ns += len;
	} else if (on[ND_CAT_COMM])
		out->communication_ns += len;
	else if (on[ND_CAT_MEMORY])
		out->memory_ns += len;
	else if (on[ND_CAT_HOST])
		out->host_ns += len;
	else
		out->idle_ns += len;
}

void
nd_breakdown_add(nd_breakdown *a, const nd_breakdown *b)
{
	a->compute_ns += b->compute_ns;
	a->communication_ns += b->communication_ns;
	a->memory_ns += b->memory_ns;
	a->host_ns += b->host_ns;
	a->idle_ns += b->idle_ns;
	a->overlap_ns += b->overlap_ns;
}
