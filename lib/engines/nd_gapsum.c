#include "nd_gapsum.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_partial.h"
#include "nd_sort.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

enum { BY_CAUSE, BY_PAYLOAD, BY_SCOPE, NBY };

static const char *const by_name[NBY] = { "cause", "payload", "scope" };
static const char *const by_array[NBY] = { "by_cause", "by_payload",
	"by_scope" };

/* The longest gap of a row: the earliest on ties (the same on any order
 * of the gaps); of a payload row, its marker and scope too (JSON text in
 * s->names, UINT32_MAX: none). */
typedef struct row {
	uint64_t count;
	int64_t total, max, max_ts;
	uint32_t marker, scope;
} row;

/*
 * Keys are held as they are written (JSON string text, quotes included):
 * two names that differ only in bytes the writer replaces (invalid UTF-8)
 * are one row, in a run as after a merge, and the order of rows is that of
 * the written text.
 */
typedef struct table {
	nd_intern *keys;
	row *rows;
	size_t cap;
	int has_none;		/* scope: gaps whose payload has none */
	row none;
} table;

struct nd_gapsum {
	table t[NBY];
	nd_intern *names;	/* markers and scopes of the longest gaps */
	nd_buf scratch;
	nd_gapsum_row *out;	/* nd_gapsum_rows */
	nd_buf dec;		/* their decoded strings */
};

nd_gapsum *
nd_gapsum_new(void)
{
	nd_gapsum *s = nd_xcalloc(1, sizeof *s);

	for (int i = 0; i < NBY; i++)
		s->t[i].keys = nd_intern_new();
	s->names = nd_intern_new();
	return s;
}

void
nd_gapsum_free(nd_gapsum *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < NBY; i++) {
		nd_intern_free(s->t[i].keys);
		free(s->t[i].rows);
	}
	nd_intern_free(s->names);
	nd_buf_free(&s->scratch);
	free(s->out);
	nd_buf_free(&s->dec);
	free(s);
}

static uint64_t
add_u64_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Add count gaps of total ns whose longest (max ns) starts at max_ts,
 * with marker and scope (ids in s->names). */
static void
row_add(row *r, uint64_t count, int64_t total, int64_t max, int64_t max_ts,
    uint32_t marker, uint32_t scope)
{
	if (r->count == 0 || max > r->max ||
	    (max == r->max && max_ts < r->max_ts)) {
		r->max = max;
		r->max_ts = max_ts;
		r->marker = marker;
		r->scope = scope;
	}
	r->count = add_u64_sat(r->count, count);
	r->total = nd_add_sat(r->total, total);
}

/* The id in s->names of the JSON text of str (n bytes), UINT32_MAX for
 * NULL. */
static uint32_t
name_id(nd_gapsum *s, const char *str, size_t n)
{
	if (str == NULL)
		return UINT32_MAX;
	nd_buf_reset(&s->scratch);
	nd_json_put_str(&s->scratch, str, n);
	return nd_intern_id(s->names, s->scratch.p, s->scratch.len);
}

/* The row of key (JSON text, quotes included; NULL: no scope). */
static row *
row_of(table *t, const char *key, size_t n)
{
	uint32_t id;

	if (key == NULL) {
		t->has_none = 1;
		return &t->none;
	}
	id = nd_intern_id(t->keys, key, n);
	if (id >= t->cap) {
		size_t old = t->cap;

		nd_grow(&t->rows, &t->cap, (size_t)id + 1, sizeof *t->rows);
		memset(t->rows + old, 0, (t->cap - old) * sizeof *t->rows);
	}
	return &t->rows[id];
}

static void
add_str(nd_gapsum *s, int by, const char *str, size_t n, const nd_gap *gap,
    uint32_t marker, uint32_t scope)
{
	row *r;

	if (str == NULL)
		r = row_of(&s->t[by], NULL, 0);
	else {
		nd_buf_reset(&s->scratch);
		nd_json_put_str(&s->scratch, str, n);
		r = row_of(&s->t[by], s->scratch.p, s->scratch.len);
	}
	row_add(r, 1, gap->dur, gap->dur, gap->ts, marker, scope);
}

void
nd_gapsum_add(nd_gapsum *s, const nd_gap *gap)
{
	uint32_t marker = name_id(s, gap->marker.name, gap->marker.name_n);
	uint32_t scope = name_id(s, gap->payload.scope, gap->payload.scope_n);

	add_str(s, BY_CAUSE, gap->cause, gap->cause != NULL ?
	    strlen(gap->cause) : 0, gap, UINT32_MAX, UINT32_MAX);
	add_str(s, BY_PAYLOAD, gap->payload.name, gap->payload.name_n, gap,
	    marker, scope);
	add_str(s, BY_SCOPE, gap->payload.scope, gap->payload.scope_n, gap,
	    UINT32_MAX, UINT32_MAX);
}

/* ---- ordered rows ---- */

typedef struct ent {
	const char *key;	/* JSON text; NULL: no scope */
	size_t len;
	size_t doff, dlen;	/* the decoded key in the sort buffer */
	const row *r;
} ent;

/* By total descending, then by the decoded key's bytes (code points, as
 * jq orders strings), no scope first. */
static int
ent_cmp(const void *pa, const void *pb, void *ctx)
{
	const ent *a = pa, *b = pb;
	const char *dec = ctx;
	size_t n;
	int c;

	if (a->r->total != b->r->total)
		return a->r->total > b->r->total ? -1 : 1;
	if (a->key == NULL || b->key == NULL)
		return (a->key != NULL) - (b->key != NULL);
	n = a->dlen < b->dlen ? a->dlen : b->dlen;
	if (n > 0 && (c = memcmp(dec + a->doff, dec + b->doff, n)) != 0)
		return c;
	return (a->dlen > b->dlen) - (a->dlen < b->dlen);
}

/* The rows of t in output order (caller frees). */
static ent *
ordered(const table *t, size_t *np)
{
	uint32_t n = nd_intern_count(t->keys);
	ent *e = nd_xcalloc((size_t)n + 1, sizeof *e);
	nd_buf dec = ND_BUF_INIT;
	size_t m = 0;

	for (uint32_t id = 0; id < n; id++) {
		nd_jval v;

		e[m].key = nd_intern_str(t->keys, id, &e[m].len);
		v.type = ND_JSTR;
		v.raw = e[m].key;
		v.len = e[m].len;
		v.esc = memchr(v.raw, '\\', v.len) != NULL;
		e[m].doff = dec.len;
		nd_json_unescape(&v, &dec);
		e[m].dlen = dec.len - e[m].doff;
		e[m++].r = &t->rows[id];
	}
	if (t->has_none) {
		e[m].key = NULL;
		e[m++].r = &t->none;
	}
	nd_sort(e, m, sizeof *e, ent_cmp, dec.p);
	nd_buf_free(&dec);
	*np = m;
	return e;
}

/* JSON text t[0..n) decoded at the end of b: its offset, *len its
 * length. */
static size_t
decode(nd_buf *b, const char *t, size_t n, size_t *len)
{
	nd_jval v;
	size_t off = b->len;

	v.type = ND_JSTR;
	v.raw = t;
	v.len = n;
	v.esc = memchr(t, '\\', n) != NULL;
	nd_json_unescape(&v, b);
	*len = b->len - off;
	return off;
}

/* Name id decoded: an offset in s->dec (SIZE_MAX: none). */
static size_t
decode_id(nd_gapsum *s, uint32_t id, size_t *len)
{
	size_t n;
	const char *t;

	*len = 0;
	if (id == UINT32_MAX)
		return SIZE_MAX;
	t = nd_intern_str(s->names, id, &n);
	return decode(&s->dec, t, n, len);
}

size_t
nd_gapsum_rows(nd_gapsum *s, int by, const nd_gapsum_row **out)
{
	size_t n;
	ent *e = ordered(&s->t[by], &n);
	size_t (*off)[3] = nd_xcalloc(n + 1, sizeof *off);

	free(s->out);
	s->out = nd_xcalloc(n + 1, sizeof *s->out);
	nd_buf_reset(&s->dec);
	for (size_t i = 0; i < n; i++) {
		nd_gapsum_row *x = &s->out[i];

		x->count = e[i].r->count;
		x->total_ns = e[i].r->total;
		x->max_ns = e[i].r->max;
		x->max_ts = e[i].r->max_ts;
		off[i][0] = e[i].key == NULL ? SIZE_MAX :
		    decode(&s->dec, e[i].key, e[i].len, &x->keylen);
		off[i][1] = decode_id(s, e[i].r->marker, &x->marker_len);
		off[i][2] = decode_id(s, e[i].r->scope, &x->scope_len);
	}
	/* pointers once the buffer no longer moves */
	for (size_t i = 0; i < n; i++) {
		s->out[i].key = off[i][0] == SIZE_MAX ? NULL : s->dec.p ?
		    s->dec.p + off[i][0] : "";
		s->out[i].marker = off[i][1] == SIZE_MAX ? NULL : s->dec.p ?
		    s->dec.p + off[i][1] : "";
		s->out[i].scope = off[i][2] == SIZE_MAX ? NULL : s->dec.p ?
		    s->dec.p + off[i][2] : "";
	}
	free(off);
	free(e);
	*out = s->out;
	return n;
}

static void
put_totals(nd_jw *w, const row *r)
{
	nd_jw_kuint(w, "count", r->count);
	nd_jw_kint(w, "total_ns", r->total);
	nd_jw_kint(w, "max_ns", r->max);
}

static void
put_key(nd_jw *w, const char *name, const ent *e)
{
	nd_jw_key(w, name);
	if (e->key == NULL)
		nd_jw_null(w);
	else
		nd_jw_raw(w, e->key, e->len);
}

void
nd_gapsum_write(const nd_gapsum *s, nd_buf *b)
{
	row all;
	const table *causes = &s->t[BY_CAUSE];
	nd_jw w;

	memset(&all, 0, sizeof all);
	/* every gap has one cause: the causes add up to the whole */
	for (uint32_t id = 0; id < nd_intern_count(causes->keys); id++)
		row_add(&all, causes->rows[id].count, causes->rows[id].total,
		    causes->rows[id].max, causes->rows[id].max_ts, UINT32_MAX,
		    UINT32_MAX);
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "gap_summary");
	put_totals(&w, &all);
	for (int by = 0; by < NBY; by++) {
		size_t n;
		ent *e = ordered(&s->t[by], &n);

		nd_jw_key(&w, by_array[by]);
		nd_jw_arr(&w);
		for (size_t i = 0; i < n; i++) {
			nd_jw_obj(&w);
			put_key(&w, by_name[by], &e[i]);
			put_totals(&w, e[i].r);
			nd_jw_obj_end(&w);
		}
		nd_jw_arr_end(&w);
		free(e);
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

/* Member k: the JSON text of name id, or null. */
static void
put_name(nd_jw *w, const nd_gapsum *s, const char *k, uint32_t id)
{
	size_t n;
	const char *t;

	nd_jw_key(w, k);
	if (id == UINT32_MAX) {
		nd_jw_null(w);
		return;
	}
	t = nd_intern_str(s->names, id, &n);
	nd_jw_raw(w, t, n);
}

void
nd_gapsum_write_partial(const nd_gapsum *s, nd_buf *b,
    void (*fn)(void *ctx), void *ctx)
{
	for (int by = 0; by < NBY; by++) {
		size_t n;
		ent *e = ordered(&s->t[by], &n);

		for (size_t i = 0; i < n; i++) {
			nd_jw w;

			nd_jw_init(&w, b);
			nd_jw_obj(&w);
			nd_jw_kcstr(&w, "type", "gap_sum");
			nd_jw_kcstr(&w, "by", by_name[by]);
			put_key(&w, "key", &e[i]);
			put_totals(&w, e[i].r);
			nd_jw_kint(&w, "max_ts_ns", e[i].r->max_ts);
			if (by == BY_PAYLOAD) {
				put_name(&w, s, "marker", e[i].r->marker);
				put_name(&w, s, "scope", e[i].r->scope);
			}
			nd_jw_obj_end(&w);
			nd_buf_addc(b, '\n');
			fn(ctx);
		}
		free(e);
	}
}

/* ---- merge ---- */

static int64_t
need_i64(nd_stream *st, const nd_event *ev, const char *key)
{
	const nd_jval *v = nd_stream_need(st, ev, key, ND_JNUM);
	int64_t x;

	if (nd_json_int64(v, &x) != 0 || x < 0) {
		nd_stream_fail(st, "\"%s\" must be an integer >= 0", key);
		return 0;
	}
	return x;
}

/* A time (the start of a gap): an integer within +-2^62. */
static int64_t
need_ts(nd_stream *st, const nd_event *ev, const char *key)
{
	const nd_jval *v = nd_stream_need(st, ev, key, ND_JNUM);
	int64_t x;

	if (nd_json_int64(v, &x) != 0 || x > ((int64_t)1 << 62) ||
	    x < -((int64_t)1 << 62)) {
		nd_stream_fail(st, "\"%s\" must be an integer within +-2^62",
		    key);
		return 0;
	}
	return x;
}

/* The JSON text the writer gives string v, in s->scratch. */
static void
canon(nd_gapsum *s, const nd_jval *v)
{
	nd_buf dec = ND_BUF_INIT;

	nd_json_unescape(v, &dec);
	nd_buf_reset(&s->scratch);
	nd_json_put_str(&s->scratch, dec.p != NULL ? dec.p : "", dec.len);
	nd_buf_free(&dec);
}

/* Member key of a payload row: a string (its id in s->names) or null. */
static uint32_t
read_name(nd_gapsum *s, nd_stream *st, const nd_event *ev, const char *key)
{
	const nd_jval *v = nd_event_get(ev, key);

	if (v == NULL || (v->type != ND_JSTR && v->type != ND_JNULL)) {
		nd_stream_fail(st, "\"%s\" must be a string or null", key);
		return UINT32_MAX;
	}
	if (v->type == ND_JNULL)
		return UINT32_MAX;
	canon(s, v);
	return nd_intern_id(s->names, s->scratch.p, s->scratch.len);
}

void
nd_gapsum_read(nd_gapsum *s, nd_stream *st, const nd_event *ev)
{
	const nd_jval *by = nd_stream_need(st, ev, "by", ND_JSTR);
	const nd_jval *key = nd_event_get(ev, "key");
	int64_t count, total, max, ts;
	uint32_t marker = UINT32_MAX, scope = UINT32_MAX;
	int i;

	for (i = 0; i < NBY; i++)
		if (nd_jstr_eq(by, by_name[i]))
			break;
	if (i == NBY)
		nd_stream_fail(st, "\"by\" must be \"cause\", \"payload\" "
		    "or \"scope\"");
	else if (key == NULL || !(key->type == ND_JSTR ||
	    (key->type == ND_JNULL && i == BY_SCOPE)))
		nd_stream_fail(st, "\"key\" must be a string%s",
		    i == BY_SCOPE ? " or null" : "");
	if (nd_stream_failed(st))
		return;
	/* the figures the merge adds (nd_partial_sum) */
	count = nd_partial_sum("count", need_i64(st, ev, "count"));
	total = nd_partial_sum("total_ns", need_i64(st, ev, "total_ns"));
	max = need_i64(st, ev, "max_ns");
	if (!nd_stream_failed(st) && (count == 0 || max > total))
		nd_stream_fail(st, "gap_sum totals that no gaps add up to "
		    "(count 0, or max_ns above total_ns)");
	ts = need_ts(st, ev, "max_ts_ns");
	if (i == BY_PAYLOAD) {
		marker = read_name(s, st, ev, "marker");
		scope = read_name(s, st, ev, "scope");
	}
	if (nd_stream_failed(st))
		return;
	if (key->type == ND_JNULL) {
		row_add(row_of(&s->t[i], NULL, 0), (uint64_t)count, total, max,
		    ts, marker, scope);
		return;
	}
	/* the text the writer gives the decoded string: one row per key */
	canon(s, key);
	row_add(row_of(&s->t[i], s->scratch.p, s->scratch.len),
	    (uint64_t)count, total, max, ts, marker, scope);
}
