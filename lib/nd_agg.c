#include "nd_agg.h"
#include "nd_hash.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

nd_agg *
nd_agg_new(void)
{
	nd_agg *a = nd_xcalloc(1, sizeof *a);

	a->keys = nd_intern_new();
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
	free(a->rows);
	free(a->exmin);
	free(a);
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

/* ---- nd_scan ---- */

struct scan {
	const nd_scan_opts *o;
	const nd_scan_cb *cb;
	nd_nest *nest;
	nd_intern *tls;		/* (source, pid, tid) -> timeline id */
	uint32_t *late;
	size_t nlate, caplate;
	int device_seen;
	int rewindable;
	off_t stdin_off;
	nd_scan_res *res;
	nd_stream *st;		/* kept here: reachable if we die reading */
	/* a small direct-mapped cache in front of tls */
	struct tlc {
		uint32_t src, id1;
		unsigned has;
		int64_t pid, tid;
	} tlc[64];
};

int
nd_scan_timelines(const char *s)
{
	if (strcmp(s, "device") == 0)
		return ND_TL_DEVICE;
	if (strcmp(s, "host") == 0)
		return ND_TL_HOST;
	if (strcmp(s, "all") == 0)
		return ND_TL_ALL;
	return -1;
}

const char *
nd_scan_timelines_name(int tl)
{
	return tl == ND_TL_HOST ? "host" : tl == ND_TL_ALL ? "all" : "device";
}

static int
can_reread(char **paths, int n, off_t *stdin_off)
{
	struct stat sb;

	*stdin_off = -1;
	if (n == 0)
		n = -1;
	for (int i = 0; i < (n < 0 ? 1 : n); i++) {
		const char *p = n < 0 ? "-" : paths[i];

		if (strcmp(p, "-") == 0) {
			if (fstat(STDIN_FILENO, &sb) != 0 || !S_ISREG(sb.st_mode))
				return 0;
			*stdin_off = lseek(STDIN_FILENO, 0, SEEK_CUR);
			if (*stdin_off < 0)
				return 0;
		} else if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode))
			return 0;
	}
	return 1;
}

static uint32_t
timeline_id(struct scan *s, const nd_event *ev)
{
	unsigned char k[1 + 4 + 16];
	uint32_t src = ev->source;
	int64_t pid = (ev->has & ND_HAS_PID) ? ev->pid : 0;
	int64_t tid = (ev->has & ND_HAS_TID) ? ev->tid : 0;

	unsigned has = ev->has & (ND_HAS_PID | ND_HAS_TID);
	struct tlc *c = &s->tlc[(nd_hash_u64((uint64_t)pid * 31 +
	    (uint64_t)tid + ((uint64_t)src << 40)) >> 58) & 63];

	if (c->id1 != 0 && c->src == src && c->pid == pid && c->tid == tid &&
	    c->has == has)
		return c->id1 - 1;
	k[0] = (unsigned char)has;
	memcpy(k + 1, &src, 4);
	memcpy(k + 5, &pid, 8);
	memcpy(k + 13, &tid, 8);
	c->src = src;
	c->pid = pid;
	c->tid = tid;
	c->has = has;
	c->id1 = nd_intern_id(s->tls, (const char *)k, sizeof k) + 1;
	return c->id1 - 1;
}

static void
new_nest(struct scan *s)
{
	nd_nest_free(s->nest);
	s->nest = nd_nest_new(s->o->rule, s->cb->done, s->cb->ctx);
	if (s->o->unordered)
		nd_nest_buffer_all(s->nest);
	for (size_t i = 0; i < s->nlate; i++)
		nd_nest_set_buffered(s->nest, s->late[i]);
}

static void
end_nest(struct scan *s)
{
	nd_nest_flush_all(s->nest);
	if (nd_nest_held_max(s->nest) > s->res->held_max)
		s->res->held_max = nd_nest_held_max(s->nest);
	s->res->reordered += nd_nest_reordered(s->nest);
}

static void
late(struct scan *s, nd_stream *st, const nd_event *ev, uint32_t tl)
{
	if (!s->rewindable)
		nd_die(ND_EXIT_ERROR, "%s:%llu: span out of order on timeline "
		    "(source %u, pid %lld, tid %lld): ts_ns %lld starts before "
		    "the end of spans already finished; read the stream from a "
		    "file (it is then read twice) or use --unordered",
		    nd_stream_file(st), (unsigned long long)nd_stream_lineno(st),
		    ev->source, (long long)ev->pid, (long long)ev->tid,
		    (long long)ev->ts_ns);
	for (size_t i = 0; i < s->nlate; i++)
		if (s->late[i] == tl)
			return;
	nd_grow(&s->late, &s->caplate, s->nlate + 1, sizeof *s->late);
	s->late[s->nlate++] = tl;
}

/* One pass over the input; returns the number of late timelines found. */
static size_t
pass(struct scan *s, char **paths, int npaths)
{
	const nd_scan_opts *o = s->o;
	nd_stream *st;
	nd_event ev;
	uint32_t src = UINT32_MAX;
	size_t nlate0 = s->nlate;
	char *type = s->res->type;
	size_t tlen = 0;

	if (s->stdin_off >= 0 &&
	    lseek(STDIN_FILENO, s->stdin_off, SEEK_SET) < 0)
		nd_die_errno(ND_EXIT_ERROR, "<stdin>: cannot read it again");
	s->device_seen = 0;
	s->res->records = 0;
	new_nest(s);
	nd_event_init(&ev);
	st = s->st = nd_stream_open(paths, npaths);
	while (nd_stream_next(st, &ev)) {
		int is_span;
		uint64_t user;

		if (ev.source != src) {
			nd_nest_flush_all(s->nest);
			src = ev.source;
		}
		if (ev.type == ND_EV_META || ev.type == ND_EV_END ||
		    !(ev.has & ND_HAS_DUR))
			continue;
		if (type[0] == '\0') {
			if (o->type != NULL)
				snprintf(type, sizeof s->res->type, "%s", o->type);
			else
				snprintf(type, sizeof s->res->type, "%.*s",
				    (int)ev.type_name.n, ev.type_name.p);
		}
		if (tlen == 0)
			tlen = strlen(type);
		if (ev.type_name.n != tlen ||
		    memcmp(ev.type_name.p, type, tlen) != 0)
			continue;
		is_span = ev.type == ND_EV_SPAN;
		if (is_span) {
			int kind;

			if (!(ev.has & ND_HAS_TS))
				continue;
			kind = nd_span_kind(&ev);
			if (o->timelines == ND_TL_HOST && kind != ND_KIND_HOST)
				continue;
			if (o->timelines == ND_TL_DEVICE) {
				if (kind == ND_KIND_DEVICE && !s->device_seen) {
					s->device_seen = 1;
					if (s->res->records > 0 ||
					    nd_nest_held(s->nest) > 0) {
						s->cb->reset(s->cb->ctx);
						s->nlate = nlate0;
						new_nest(s);
						s->res->records = 0;
					}
				} else if (kind != ND_KIND_DEVICE &&
				    s->device_seen)
					continue;
			}
		}
		user = s->cb->record(s->cb->ctx, &ev,
		    nd_stream_meta(st, ev.source));
		if (user == ND_SCAN_SKIP)
			continue;
		s->res->records++;
		if (is_span) {
			uint32_t tl = timeline_id(s, &ev);

			if (nd_nest_add(s->nest, tl, ev.ts_ns, ev.dur_ns,
			    user) == ND_NEST_LATE)
				late(s, st, &ev, tl);
		} else {
			nd_nest_span d;

			memset(&d, 0, sizeof d);
			d.ts_ns = ev.ts_ns;
			d.dur_ns = ev.dur_ns;
			d.self_ns = ev.dur_ns;
			d.user = user;
			d.timeline = UINT32_MAX;
			s->cb->done(s->cb->ctx, &d);
		}
	}
	end_nest(s);
	s->res->sources = nd_stream_nsources(st);
	s->res->fallback = o->timelines == ND_TL_DEVICE && !s->device_seen;
	nd_stream_close(st);
	s->st = NULL;
	nd_event_free(&ev);
	return s->nlate - nlate0;
}

void
nd_scan(char **paths, int npaths, const nd_scan_opts *opts,
    const nd_scan_cb *cb, nd_scan_res *res)
{
	struct scan s;

	memset(&s, 0, sizeof s);
	memset(res, 0, sizeof *res);
	s.o = opts;
	s.cb = cb;
	s.res = res;
	s.tls = nd_intern_new();
	s.rewindable = !opts->unordered &&
	    can_reread(paths, npaths, &s.stdin_off);
	if (!s.rewindable)
		s.stdin_off = -1;
	res->passes = 1;
	if (pass(&s, paths, npaths) > 0) {
		cb->reset(cb->ctx);
		res->passes = 2;
		res->type[0] = '\0';
		pass(&s, paths, npaths);
	}
	nd_nest_free(s.nest);
	nd_intern_free(s.tls);
	free(s.late);
}
