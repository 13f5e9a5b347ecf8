#include "nd_sort.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

#define MINRUN 32
#define MAXRUNS 128	/* the run-length invariants keep the stack this small */

struct st {
	char *a;
	size_t size;
	nd_sort_cmp cmp;
	void *ctx;
	char *buf;
	size_t bufcap;		/* bytes */
	char *tmp;		/* one record */
	size_t base[MAXRUNS], len[MAXRUNS];
	size_t nruns;
};

#define AT(s, i) ((s)->a + (size_t)(i) * (s)->size)
#define CMP(s, x, y) ((s)->cmp((x), (y), (s)->ctx))

static void
reverse(struct st *s, size_t lo, size_t hi)
{
	while (hi > lo + 1) {
		hi--;
		memcpy(s->tmp, AT(s, lo), s->size);
		memcpy(AT(s, lo), AT(s, hi), s->size);
		memcpy(AT(s, hi), s->tmp, s->size);
		lo++;
	}
}

/* [lo, start) is sorted; insert start..hi-1 with binary search (stable). */
static void
binsort(struct st *s, size_t lo, size_t start, size_t hi)
{
	for (size_t i = start; i < hi; i++) {
		size_t l = lo, r = i;

		while (l < r) {
			size_t m = l + (r - l) / 2;

			if (CMP(s, AT(s, i), AT(s, m)) < 0)
				r = m;
			else
				l = m + 1;
		}
		if (l < i) {
			memcpy(s->tmp, AT(s, i), s->size);
			memmove(AT(s, l + 1), AT(s, l), (i - l) * s->size);
			memcpy(AT(s, l), s->tmp, s->size);
		}
	}
}

/* Length of the run starting at lo; a strictly descending run is reversed
 * (strictly, so that reversing keeps equal records in order). */
static size_t
count_run(struct st *s, size_t lo, size_t hi)
{
	size_t i = lo + 1;

	if (i >= hi)
		return 1;
	if (CMP(s, AT(s, i), AT(s, lo)) < 0) {
		while (i + 1 < hi && CMP(s, AT(s, i + 1), AT(s, i)) < 0)
			i++;
		i++;
		reverse(s, lo, i);
	} else {
		while (i + 1 < hi && CMP(s, AT(s, i + 1), AT(s, i)) >= 0)
			i++;
		i++;
	}
	return i - lo;
}

static void
need_buf(struct st *s, size_t bytes)
{
	if (bytes > s->bufcap) {
		free(s->buf);
		s->buf = nd_xmalloc(bytes);
		s->bufcap = bytes;
	}
}

/* Merge the adjacent sorted ranges [lo, mid) and [mid, hi). */
static void
merge(struct st *s, size_t lo, size_t mid, size_t hi)
{
	size_t l, r, na, nb, sz = s->size;

	if (CMP(s, AT(s, mid - 1), AT(s, mid)) <= 0)
		return;
	/* Records of A not greater than B[0] are in place already. */
	l = lo;
	r = mid;
	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (CMP(s, AT(s, mid), AT(s, m)) < 0)
			r = m;
		else
			l = m + 1;
	}
	lo = l;
	/* So are records of B not less than A's last. */
	l = mid;
	r = hi;
	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (CMP(s, AT(s, m), AT(s, mid - 1)) < 0)
			l = m + 1;
		else
			r = m;
	}
	hi = l;
	na = mid - lo;
	nb = hi - mid;
	if (na <= nb) {
		char *pa, *ea;
		size_t j = mid, o = lo;

		need_buf(s, na * sz);
		memcpy(s->buf, AT(s, lo), na * sz);
		pa = s->buf;
		ea = s->buf + na * sz;
		while (pa < ea && j < hi) {
			if (CMP(s, AT(s, j), pa) < 0)
				memcpy(AT(s, o), AT(s, j++), sz);
			else {
				memcpy(AT(s, o), pa, sz);
				pa += sz;
			}
			o++;
		}
		if (pa < ea)
			memcpy(AT(s, o), pa, (size_t)(ea - pa));
	} else {
		char *pb;
		size_t i = mid, o = hi;

		need_buf(s, nb * sz);
		memcpy(s->buf, AT(s, mid), nb * sz);
		pb = s->buf + nb * sz;
		while (pb > s->buf && i > lo) {
			o--;
			if (CMP(s, pb - sz, AT(s, i - 1)) < 0) {
				i--;
				memcpy(AT(s, o), AT(s, i), sz);
			} else {
				pb -= sz;
				memcpy(AT(s, o), pb, sz);
			}
		}
		if (pb > s->buf)
			memcpy(AT(s, lo), s->buf, (size_t)(pb - s->buf));
	}
}

static void
merge_at(struct st *s, size_t k)
{
	merge(s, s->base[k], s->base[k + 1], s->base[k + 1] + s->len[k + 1]);
	s->len[k] += s->len[k + 1];
	if (k + 2 < s->nruns) {
		s->base[k + 1] = s->base[k + 2];
		s->len[k + 1] = s->len[k + 2];
	}
	s->nruns--;
}

/* Keep run lengths decreasing like Fibonacci numbers (the corrected
 * TimSort invariant), so merges stay balanced and the stack small. */
static void
collapse(struct st *s)
{
	while (s->nruns > 1) {
		size_t k = s->nruns - 2;

		if ((k > 0 && s->len[k - 1] <= s->len[k] + s->len[k + 1]) ||
		    (k > 1 && s->len[k - 2] <= s->len[k - 1] + s->len[k])) {
			if (s->len[k - 1] < s->len[k + 1])
				k--;
		} else if (s->len[k] > s->len[k + 1])
			break;
		merge_at(s, k);
	}
}

int
nd_sorted(const void *base, size_t n, size_t size, nd_sort_cmp cmp,
    void *ctx)
{
	const char *a = base;

	for (size_t i = 1; i < n; i++)
		if (cmp(a + i * size, a + (i - 1) * size, ctx) < 0)
			return 0;
	return 1;
}

/* A few records out of place in an ordered array (Kineto writes each
 * annotation after the ops it holds): take out those smaller than the
 * last one kept, sort them apart and merge them back, in O(n + k log k)
 * moves.  Stable: a record taken out is strictly smaller than a record
 * before it, so on equal keys the kept record (earlier) goes first.
 * 0 (nothing done) when more than n/16 are out of place. */
static int
few_out_of_place(struct st *s, size_t n)
{
	size_t k = 0, w = 1, j, i, o;
	const char *last = AT(s, 0);
	char *side;

	for (i = 1; i < n; i++) {
		if (CMP(s, AT(s, i), last) < 0) {
			if (++k > n / 16)
				return 0;
		} else
			last = AT(s, i);
	}
	need_buf(s, k * s->size);
	side = s->buf;
	for (i = 1, j = 0; i < n; i++) {
		if (CMP(s, AT(s, i), AT(s, w - 1)) < 0)
			memcpy(side + j++ * s->size, AT(s, i), s->size);
		else {
			if (w != i)
				memcpy(AT(s, w), AT(s, i), s->size);
			w++;
		}
	}
	nd_sort(side, k, s->size, s->cmp, s->ctx);
	for (i = w, j = k, o = n; j > 0;) {
		o--;
		if (i > 0 && CMP(s, AT(s, i - 1), side + (j - 1) * s->size) > 0) {
			i--;
			memcpy(AT(s, o), AT(s, i), s->size);
		} else {
			j--;
			memcpy(AT(s, o), side + j * s->size, s->size);
		}
	}
	return 1;
}

void
nd_sort(void *base, size_t n, size_t size, nd_sort_cmp cmp, void *ctx)
{
	struct st s;
	size_t lo = 0;

	if (n < 2 || nd_sorted(base, n, size, cmp, ctx))
		return;
	memset(&s, 0, sizeof s);
	s.a = base;
	s.size = size;
	s.cmp = cmp;
	s.ctx = ctx;
	if (n >= 64 && few_out_of_place(&s, n)) {
		free(s.buf);
		return;
	}
	s.tmp = nd_xmalloc(size);
	while (lo < n) {
		size_t run = count_run(&s, lo, n);

		if (run < MINRUN && lo + run < n) {
			size_t force = n - lo < MINRUN ? n - lo : MINRUN;

			binsort(&s, lo, lo + run, lo + force);
			run = force;
		}
		if (s.nruns == MAXRUNS)
			nd_die(ND_EXIT_ERROR, "internal error: sort run stack");
		s.base[s.nruns] = lo;
		s.len[s.nruns] = run;
		s.nruns++;
		collapse(&s);
		lo += run;
	}
	while (s.nruns > 1) {
		size_t k = s.nruns - 2;

		if (k > 0 && s.len[k - 1] < s.len[k + 1])
			k--;
		merge_at(&s, k);
	}
	free(s.buf);
	free(s.tmp);
}

size_t
nd_lower_bound(const void *base, size_t n, size_t size, size_t off,
    int64_t key)
{
	const char *b = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t k;

		memcpy(&k, b + mid * size + off, sizeof k);
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
