#include "nd_agg.h"
#include "nd_hash.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys are interned (nd_intern: one slot and the key bytes per lookup).
 * With thousands of keys, each add misses the cache twice, on the row and
 * on its histogram counter, the largest costs of trace-topk (27 %).  So an
 * add is applied ND_AGG_LAG adds later: when queued it prefetches the row,
 * half way the counter (the row has arrived by then, which says where the
 * counter is), and both are in cache when it is applied.  exmin (the
 * time of each row's example, a small array that stays in cache) answers
 * "could this instance be the example?" without touching the row. */
#define ND_AGG_LAG 16		/* a power of two */
#define ABS_MAX ((nd_abstime){ INT64_MAX, UINT64_MAX })

struct nd_agg {
	nd_intern *keys;
	nd_idmemo *memo;	/* nd_agg_memo */
	nd_agg_row *rows;
	nd_abstime *exmin;	/* per row: abs of its example, or max */
	size_t nrows, cap;
	uint32_t lag_id[ND_AGG_LAG];
	int64_t lag_v[ND_AGG_LAG];
	uint64_t nadd;		/* adds queued since the last settle */
};

static void
key_field(nd_buf *k, int tag, const char *s, size_t n)
{
	unsigned char h[5];
	uint32_t l = (uint32_t)n;

	h[0] = (unsigned char)tag;
	memcpy(h + 1, &l, 4);
	nd_buf_add(k, h, 5);
	if (n > 0)
		nd_buf_add(k, s, n);
}

void
nd_aggkey_str(nd_buf *k, const char *s, size_t n)
{
	key_field(k, ND_AGGKEY_STR, s, n);
}

void
nd_aggkey_raw(nd_buf *k, const char *json, size_t n)
{
	key_field(k, ND_AGGKEY_RAW, json, n);
}

void
nd_aggkey_none(nd_buf *k)
{
	key_field(k, ND_AGGKEY_NONE, NULL, 0);
}

int
nd_aggkey_next(const char **p, const char *end, int *tag, const char **s,
    size_t *n)
{
	uint32_t l;

	if (*p + 5 > end)
		return 0;
	*tag = (unsigned char)**p;
	memcpy(&l, *p + 1, 4);
	*s = *p + 5;
	*n = l;
	*p += 5 + l;
	return 1;
}

void
nd_aggkey_json(nd_jw *w, const char *k, size_t n)
{
	const char *p = k, *s;
	size_t len;
	int tag;

	nd_jw_arr(w);
	while (nd_aggkey_next(&p, k + n, &tag, &s, &len))
		if (tag == ND_AGGKEY_STR)
			nd_jw_str(w, s, len);
		else if (tag == ND_AGGKEY_RAW) {
			nd_jw_arr(w);
			nd_jw_str(w, s, len);
			nd_jw_arr_end(w);
		} else
			nd_jw_null(w);
	nd_jw_arr_end(w);
}

int
nd_aggkey_read(nd_buf *k, const nd_jval *arr)
{
	nd_jiter it, ri;
	nd_jval e, x;
	nd_jerr je;
	nd_buf t = ND_BUF_INIT;
	int rc = 0;

	if (arr == NULL || arr->type != ND_JARR)
		return -1;
	nd_jaiter_init(&it, arr, arr->raw);
	while (rc == 0 && nd_jaiter_next(&it, &e, &je) == 1) {
		nd_buf_reset(&t);
		if (e.type == ND_JNULL)
			nd_aggkey_none(k);
		else if (e.type == ND_JSTR) {
			nd_json_unescape(&e, &t);
			nd_aggkey_str(k, t.p ? t.p : "", t.len);
		} else if (e.type == ND_JARR) {
			nd_jaiter_init(&ri, &e, e.raw);
			if (nd_jaiter_next(&ri, &x, &je) != 1 ||
			    x.type != ND_JSTR)
				rc = -1;
			else {
				nd_json_unescape(&x, &t);
				nd_aggkey_raw(k, t.p ? t.p : "", t.len);
			}
		} else
			rc = -1;
	}
	nd_buf_free(&t);
	return rc;
}

void
nd_agg_row_json(nd_jw *w, const nd_agg_row *r)
{
	nd_jw_kuint(w, "count", r->count);
	nd_jw_kint(w, "total_ns", r->total_ns);
	nd_jw_kint(w, "self_ns", r->self_ns);
	nd_jw_kint(w, "min_ns", r->hist.min);
	nd_jw_kint(w, "max_ns", r->hist.max);
	nd_jw_kuint(w, "overrun", r->overrun);
	nd_jw_key(w, "hist");
	nd_hist_write(&r->hist, w);
}

int
nd_agg_row_read(nd_agg_row *r, const nd_event *ev, const char **bad)
{
	static const char *const key[] = { "count", "total_ns", "self_ns",
	    "overrun", "min_ns", "max_ns" };
	int64_t v[6];

	for (int i = 0; i < 6; i++) {
		const nd_jval *x = nd_event_get(ev, key[i]);

		if (x == NULL || nd_json_int(x, &v[i]) != 0 ||
		    (i != 4 && i != 5 && v[i] < 0)) {
			*bad = key[i];
			return -1;
		}
	}
	r->count = (uint64_t)v[0];
	r->total_ns = v[1];
	r->self_ns = v[2];
	r->overrun = (uint64_t)v[3];
	*bad = "hist";
	if (nd_event_get(ev, "hist") == NULL ||
	    nd_hist_read(&r->hist, nd_event_get(ev, "hist")) != 0 ||
	    r->hist.total != r->count)
		return -1;
	r->hist.min = v[4];
	r->hist.max = v[5];
	return 0;
}

nd_agg *
nd_agg_new(void)
{
	nd_agg *a = nd_xcalloc(1, sizeof *a);

	a->keys = nd_intern_new();
	a->memo = nd_idmemo_new();
	return a;
}

static void
row_free(nd_agg_row *r)
{
	nd_hist_free(&r->hist);
	nd_agg_ex_free(&r->ex);
	memset(r, 0, sizeof *r);
}

static inline void
apply(nd_agg *a, unsigned slot)
{
	nd_agg_row *r = &a->rows[a->lag_id[slot]];
	int64_t dur = a->lag_v[slot];

	r->count++;
	r->total_ns += dur;
	nd_hist_add(&r->hist, dur);
}

static void
settle(nd_agg *a)
{
	uint64_t from = a->nadd > ND_AGG_LAG ? a->nadd - ND_AGG_LAG : 0;

	for (uint64_t i = from; i < a->nadd; i++)
		apply(a, (unsigned)(i & (ND_AGG_LAG - 1)));
	a->nadd = 0;
}

void
nd_agg_free(nd_agg *a)
{
	if (a == NULL)
		return;
	for (size_t i = 0; i < a->nrows; i++)
		row_free(&a->rows[i]);
	nd_intern_free(a->keys);
	nd_idmemo_free(a->memo);
	free(a->rows);
	free(a->exmin);
	free(a);
}

nd_idmemo *
nd_agg_memo(nd_agg *a)
{
	return a->memo;
}

uint32_t
nd_agg_id(nd_agg *a, const void *key, size_t n)
{
	uint32_t id = nd_intern_id(a->keys, key, n);

	if (id < a->nrows)
		return id;
	if (a->nrows == a->cap) {
		nd_grow(&a->rows, &a->cap, a->nrows + 1, sizeof *a->rows);
		a->exmin = nd_xrealloc(a->exmin, a->cap * sizeof *a->exmin);
	}
	memset(&a->rows[id], 0, sizeof a->rows[id]);
	a->exmin[id] = ABS_MAX;
	a->nrows++;
	return id;
}

void
nd_agg_add(nd_agg *a, uint32_t id, int64_t dur)
{
	uint64_t n = a->nadd++;
	unsigned slot = (unsigned)(n & (ND_AGG_LAG - 1));
	const char *row = (const char *)&a->rows[id];

	if (n >= ND_AGG_LAG)
		apply(a, slot);
	if (n >= ND_AGG_LAG / 2) {
		unsigned half = (unsigned)((n - ND_AGG_LAG / 2) &
		    (ND_AGG_LAG - 1));
		const nd_hist *h = &a->rows[a->lag_id[half]].hist;
		uint32_t idx = nd_hist_index(a->lag_v[half]);

		if (h->c != NULL && !h->wide && idx - h->lo < h->n)
			__builtin_prefetch((const uint32_t *)h->c +
			    (idx - h->lo), 1);
	}
	a->lag_id[slot] = id;
	a->lag_v[slot] = dur;
	__builtin_prefetch(row, 1);
	__builtin_prefetch(row + 64, 1);
}

int
nd_agg_example_maybe(const nd_agg *a, uint32_t id, nd_abstime abs)
{
	return nd_abstime_cmp(abs, a->exmin[id]) <= 0;
}

void
nd_agg_example_set(nd_agg *a, uint32_t id, nd_abstime abs, int64_t dur_ns,
    const char *src, int64_t pid, int64_t tid, const char *json, size_t n)
{
	nd_agg_ex_set(&a->rows[id].ex, abs, dur_ns, src, pid, tid, json, n);
	a->exmin[id] = abs;
}

uint32_t
nd_agg_count(nd_agg *a)
{
	settle(a);
	return (uint32_t)a->nrows;
}

nd_agg_row *
nd_agg_row_of(nd_agg *a, uint32_t id)
{
	return &a->rows[id];
}

const char *
nd_agg_key(const nd_agg *a, uint32_t id, size_t *n)
{
	return nd_intern_str(a->keys, id, n);
}

void
nd_agg_reset(nd_agg *a)
{
	a->nadd = 0;
	for (size_t i = 0; i < a->nrows; i++)
		a->exmin[i] = ABS_MAX;
	for (size_t i = 0; i < a->nrows; i++)
		row_free(&a->rows[i]);
}

void
nd_agg_self(nd_agg *a, const nd_nest_span *s)
{
	nd_agg_row *r = nd_agg_row_of(a, (uint32_t)s->user);

	r->self_ns += s->self_ns;
	r->overrun += (uint64_t)s->overrun;
}

void
nd_agg_merge(nd_agg_row *dst, const nd_agg_row *src)
{
	dst->count += src->count;
	dst->overrun += src->overrun;
	dst->total_ns += src->total_ns;
	dst->self_ns += src->self_ns;
	nd_hist_merge(&dst->hist, &src->hist);
	if (src->ex.has && nd_agg_ex_better(&dst->ex, src->ex.abs,
	    src->ex.dur_ns, src->ex.src, src->ex.pid, src->ex.tid))
		nd_agg_ex_set(&dst->ex, src->ex.abs, src->ex.dur_ns,
		    src->ex.src, src->ex.pid, src->ex.tid, src->ex.json,
		    src->ex.json_len);
}

int
nd_agg_ex_better(const nd_agg_ex *cur, nd_abstime abs, int64_t dur_ns,
    const char *src, int64_t pid, int64_t tid)
{
	int c;

	if (!cur->has)
		return 1;
	if ((c = nd_abstime_cmp(abs, cur->abs)) != 0)
		return c < 0;
	if (dur_ns != cur->dur_ns)
		return dur_ns > cur->dur_ns;
	c = strcmp(src != NULL ? src : "", cur->src != NULL ? cur->src : "");
	if (c != 0)
		return c < 0;
	if (pid != cur->pid)
		return pid < cur->pid;
	return tid < cur->tid;
}

void
nd_agg_ex_set(nd_agg_ex *ex, nd_abstime abs, int64_t dur_ns,
    const char *src, int64_t pid, int64_t tid, const char *json, size_t n)
{
	char *s = nd_xstrdup(src != NULL ? src : "");
	char *j = nd_xstrndup(json, n);

	nd_agg_ex_free(ex);
	ex->has = 1;
	ex->abs = abs;
	ex->dur_ns = dur_ns;
	ex->pid = pid;
	ex->tid = tid;
	ex->src = s;
	ex->json = j;
	ex->json_len = n;
}

void
nd_agg_ex_free(nd_agg_ex *ex)
{
	free(ex->src);
	free(ex->json);
	memset(ex, 0, sizeof *ex);
}

void
nd_agg_write_partial(nd_agg *a, const char *type, nd_partial_w *pw)
{
	uint32_t n = nd_agg_count(a);
	nd_jw w;

	for (uint32_t i = 0; i < n; i++) {
		const nd_agg_row *row = nd_agg_row_of(a, i);
		size_t kn;
		const char *k = nd_agg_key(a, i, &kn);

		if (row->count == 0)
			continue;
		nd_partial_rec(pw, &w, type);
		nd_jw_key(&w, "key");
		nd_aggkey_json(&w, k, kn);
		nd_agg_row_json(&w, row);
		nd_partial_rec_end(pw, &w);
	}
}

void
nd_agg_read_partial(nd_agg *a, nd_stream *st, const nd_event *ev,
    size_t minkey)
{
	const char *what = "hist";
	nd_buf key = ND_BUF_INIT;
	nd_agg_row tmp;

	if (nd_aggkey_read(&key, nd_event_get(ev, "key")) != 0 ||
	    key.len < minkey)
		nd_partial_bad(st, ev, "key");
	/* the figures count towards the merge's sums (before the row holds
	 * memory) */
	(void)nd_partial_usum(st, ev, "count");
	(void)nd_partial_isum(st, ev, "total_ns");
	(void)nd_partial_isum(st, ev, "self_ns");
	(void)nd_partial_usum(st, ev, "overrun");
	memset(&tmp, 0, sizeof tmp);
	if (!nd_stream_failed(st) && nd_agg_row_read(&tmp, ev, &what) != 0)
		nd_partial_bad(st, ev, what);
	if (!nd_stream_failed(st))
		nd_agg_merge(nd_agg_row_of(a, nd_agg_id(a, key.p, key.len)),
		    &tmp);
	nd_hist_free(&tmp.hist);
	nd_agg_ex_free(&tmp.ex);
	nd_buf_free(&key);
}
