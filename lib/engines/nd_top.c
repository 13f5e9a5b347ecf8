/*
 * nd_top: the top-k engine (see nd_top.h).
 */
#include "nd_top.h"

#include "nd_by.h"
#include "nd_cli.h"
#include "nd_hash.h"
#include "nd_hist.h"
#include "nd_json.h"
#include "nd_nest.h"
#include "nd_partial.h"
#include "nd_prov.h"
#include "nd_sort.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const row_keys[] = {
	"type", "row", "other", "args", "count", "total_ns", "self_ns",
	"mean_ns", "min_ns", "max_ns", "p50_ns", "p90_ns", "p99_ns", "share",
	"wall_share", "overrun", "of", "example"
};

struct nd_top {
	nd_scan *sc;		/* first: the reading's (nd_scan_eng_*) */
	nd_err err;		/* no answer (eng_error) */
	nd_by *by;
	size_t nby;		/* nd_by_count(by) */
	int sort, wall, merge;
	nd_agg *agg;
	nd_buf key, tmp;
	/* --wall: busy union per device (source, device) */
	nd_intern *devs;
	nd_union *un;
	char **dev_src, **dev_name;
	int64_t *dev_busy;	/* merge: busy_ns read from partials */
	unsigned char *dev_fb;	/* merge: came from a fallback partial */
	size_t ndev, capdev;
	/* what was aggregated */
	char of[64];
	nd_prov prov;
	/* merge: every header had "wall" */
	int headers_wall;
	/* as an engine (nd_top_engine) */
	nd_scan_opts so;
	int fmt, k, check_by;
};

/* The group keys of spec: 0, or -1 with the message in msg. */
static int
parse_by(nd_top *t, const char *spec, char *msg, size_t n)
{
	const char *bad;

	nd_by_free(t->by);
	t->by = nd_by_parse(spec, row_keys, sizeof row_keys / sizeof *row_keys,
	    &bad);
	t->nby = 0;
	if (t->by == NULL && *bad == '\0')
		snprintf(msg, n, "--by: no key in '%s'", spec);
	else if (t->by == NULL)
		snprintf(msg, n, "--by %s: '%s' is an output key of top rows; "
		    "it cannot be a group key", spec, bad);
	else
		t->nby = nd_by_count(t->by);
	return t->by == NULL ? -1 : 0;
}

/* The same for keys the user gave. */
static void
parse_by_arg(nd_top *t, const char *spec)
{
	char msg[512];

	if (parse_by(t, spec, msg, sizeof msg) != 0)
		nd_die(ND_EXIT_ERROR, "%s", msg);
}

nd_top *
nd_top_new(int sort, int wall)
{
	nd_top *t = nd_xcalloc(1, sizeof *t);

	t->sort = sort;
	t->wall = wall;
	t->agg = nd_agg_new();
	t->devs = nd_intern_new();
	return t;
}

void
nd_top_free(nd_top *t)
{
	if (t == NULL)
		return;
	nd_by_free(t->by);
	for (size_t i = 0; i < t->ndev; i++) {
		nd_union_free(&t->un[i]);
		free(t->dev_src[i]);
		free(t->dev_name[i]);
	}
	{
		void *per_dev[] = { t->un, t->dev_src, t->dev_name,
		    t->dev_busy, t->dev_fb };

		for (size_t i = 0; i < sizeof per_dev / sizeof *per_dev; i++)
			free(per_dev[i]);
	}
	nd_scan_free(t->sc);
	nd_prov_free(&t->prov);
	nd_intern_free(t->devs);
	nd_agg_free(t->agg);
	nd_buf_free(&t->key);
	nd_buf_free(&t->tmp);
	free(t);
}

int
nd_top_sort_of(const char *s)
{
	static const char *const names[] = { "self", "total", "count",
	    "mean", "max" };

	for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

void
nd_top_by(nd_top *t, const char *spec)
{
	parse_by_arg(t, spec);
}

void
nd_top_add_row(nd_top *t, const char *key, size_t n, const nd_agg_row *r)
{
	uint32_t id;

	nd_buf_reset(&t->key);
	nd_buf_addc(&t->key, 0);	/* not from a fallback partial */
	nd_buf_add(&t->key, key, n);
	id = nd_agg_id(t->agg, t->key.p, t->key.len);
	nd_agg_merge(nd_agg_row_of(t->agg, id), r);
}

void
nd_top_add_figures(nd_top *t, const char *key, size_t n,
    const nd_agg_row *r)
{
	nd_agg_row *d;

	if (r->count == 0)
		return;
	nd_buf_reset(&t->key);
	nd_buf_addc(&t->key, 0);
	nd_buf_add(&t->key, key, n);
	d = nd_agg_row_of(t->agg, nd_agg_id(t->agg, t->key.p, t->key.len));
	if (d->count == 0 || r->hist.max > d->hist.max)
		d->hist.max = r->hist.max;
	d->count += r->count;
	d->overrun += r->overrun;
	d->total_ns += r->total_ns;
	d->self_ns += r->self_ns;
}

const nd_agg_row *
nd_top_row(nd_top *t, uint32_t id)
{
	return nd_agg_row_of(t->agg, id);
}

int
nd_top_field(nd_top *t, uint32_t id, size_t i, int *tag, const char **s,
    size_t *len)
{
	size_t kl;
	const char *key = nd_agg_key(t->agg, id, &kl);

	return nd_by_field(key + 1, kl - 1, i, tag, s, len);
}

int
nd_top_row_order(const nd_top_fig *x, const nd_top_fig *y, int sort)
{
	int c;

	switch (sort) {
	case ND_TOP_TOTAL:
		if (x->total_ns != y->total_ns)
			return x->total_ns > y->total_ns ? -1 : 1;
		break;
	case ND_TOP_COUNT:
		if (x->count != y->count)
			return x->count > y->count ? -1 : 1;
		break;
	case ND_TOP_MEAN: {
		__extension__ __int128 l = (__int128)x->total_ns *
		    (__int128)y->count;
		__extension__ __int128 r = (__int128)y->total_ns *
		    (__int128)x->count;

		if (l != r)
			return l > r ? -1 : 1;
		break;
	}
	case ND_TOP_MAX:
		if (x->max_ns != y->max_ns)
			return x->max_ns > y->max_ns ? -1 : 1;
		break;
	}
	if (x->self_ns != y->self_ns)
		return x->self_ns > y->self_ns ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	c = memcmp(x->key, y->key, x->keylen < y->keylen ? x->keylen :
	    y->keylen);
	if (c != 0)
		return c;
	return (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

static void
build_key(nd_top *t, const nd_event *ev, const nd_source_info *si)
{
	nd_buf_reset(&t->key);
	nd_buf_addc(&t->key, 0);	/* not from a fallback partial */
	nd_by_key(t->by, ev, si, &t->key, &t->tmp);
}

static void
example_json(nd_top *t, const nd_event *ev, const nd_source_info *si)
{
	nd_jw w;

	nd_buf_reset(&t->tmp);
	nd_jw_init(&w, &t->tmp);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "source", si != NULL ? si->path : "-");
	if (ev->has & ND_HAS_RANK)
		nd_jw_kint(&w, "rank", ev->rank);
	else if (si != NULL && si->has_rank)
		nd_jw_kint(&w, "rank", si->rank);
	if (ev->has & ND_HAS_PID)
		nd_jw_kint(&w, "pid", ev->pid);
	if (ev->has & ND_HAS_TID)
		nd_jw_kint(&w, "tid", ev->tid);
	nd_jw_kint(&w, "origin_ns", si != NULL ? si->origin_ns : 0);
	nd_jw_kint(&w, "ts_ns", (ev->has & ND_HAS_TS) ? ev->ts_ns : 0);
	nd_jw_kint(&w, "dur_ns", ev->dur_ns);
	if (ev->name.p != NULL)
		nd_jw_kstr(&w, "name", ev->name.p, ev->name.n);
	nd_jw_obj_end(&w);
}

static size_t
device_of(nd_top *t, uint32_t source, const char *path,
    const char *name, size_t n)
{
	uint32_t id;

	nd_buf_reset(&t->tmp);
	nd_buf_add(&t->tmp, &source, sizeof source);
	nd_buf_add(&t->tmp, name, n);
	id = nd_intern_id(t->devs, t->tmp.p, t->tmp.len);
	if (id >= t->ndev) {
		if (id >= t->capdev) {
			size_t nc = t->capdev ? t->capdev * 2 : 16;

			while (nc <= id)
				nc *= 2;
			t->un = nd_xrealloc(t->un, nc * sizeof *t->un);
			t->dev_src = nd_xrealloc(t->dev_src,
			    nc * sizeof *t->dev_src);
			t->dev_name = nd_xrealloc(t->dev_name,
			    nc * sizeof *t->dev_name);
			t->dev_busy = nd_xrealloc(t->dev_busy,
			    nc * sizeof *t->dev_busy);
			t->dev_fb = nd_xrealloc(t->dev_fb,
			    nc * sizeof *t->dev_fb);
			t->capdev = nc;
		}
		memset(&t->un[id], 0, sizeof *t->un);
		t->dev_src[id] = nd_xstrdup(path);
		t->dev_name[id] = nd_xstrndup(name, n);
		t->dev_busy[id] = 0;
		t->dev_fb[id] = 0;
		t->ndev = (size_t)id + 1;
	}
	return id;
}

static void
wall_add(nd_top *t, const nd_event *ev, const nd_source_info *si)
{
	char pidname[32];
	const char *name;
	size_t n, id;

	if (!(ev->has & ND_HAS_TS))
		return;
	if (ev->device.p != NULL) {
		name = ev->device.p;
		n = ev->device.n;
	} else if (ev->process.p != NULL) {
		name = ev->process.p;
		n = ev->process.n;
	} else {
		n = (size_t)snprintf(pidname, sizeof pidname, "pid %lld",
		    (long long)((ev->has & ND_HAS_PID) ? ev->pid : 0));
		name = pidname;
	}
	id = device_of(t, ev->source, si ? si->path : "-", name, n);
	nd_union_add(&t->un[id], ev->ts_ns, ev->ts_ns + ev->dur_ns);
}

static uint64_t
scan_record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	nd_top *t = ctx;
	uint32_t id;
	nd_abstime abs;
	int64_t pid = (ev->has & ND_HAS_PID) ? ev->pid : 0;
	int64_t tid = (ev->has & ND_HAS_TID) ? ev->tid : 0;

	build_key(t, ev, si);
	id = nd_agg_id(t->agg, t->key.p, t->key.len);
	nd_agg_add(t->agg, id, ev->dur_ns);
	abs = nd_abstime_of(si != NULL ? si->origin_ns : 0,
	    (ev->has & ND_HAS_TS) ? ev->ts_ns : 0);
	if (nd_agg_example_maybe(t->agg, id, abs) &&
	    nd_agg_ex_better(&nd_agg_row_of(t->agg, id)->ex, abs, ev->dur_ns,
	    si ? si->path : "-", pid, tid)) {
		example_json(t, ev, si);
		nd_agg_example_set(t->agg, id, abs, ev->dur_ns,
		    si ? si->path : "-", pid, tid, t->tmp.p, t->tmp.len);
	}
	if (t->wall)
		wall_add(t, ev, si);
	return id;
}

static void
scan_done(void *ctx, const nd_nest_span *s)
{
	nd_agg_self(((nd_top *)ctx)->agg, s);
}

static void
scan_reset(void *ctx)
{
	nd_top *t = ctx;

	nd_agg_reset(t->agg);
	nd_by_reset(t->by);
	for (size_t i = 0; i < t->ndev; i++)
		nd_union_free(&t->un[i]);
}

/* After the scan: the record type, timelines and rule aggregated. */
static void
scanned(nd_top *t, const nd_scan_opts *so, const nd_scan_res *res,
    int check_by)
{
	if (check_by && nd_by_check(t->by, "--by", &t->err) != 0)
		return;
	/* "" when nothing was aggregated: merges with any type */
	snprintf(t->of, sizeof t->of, "%s", res->type[0] ? res->type :
	    (so->type ? so->type : ""));
	nd_prov_scanned(&t->prov, so, res);
}

/* ---- --merge: read partial results ---- */

static void
merge_header(nd_top *t, nd_stream *st, const nd_event *ev)
{
	const nd_jval *by = nd_stream_need(st, ev, "by", ND_JARR);
	const nd_jval *v;
	nd_jiter it;
	nd_jval e;
	nd_jerr je;
	nd_buf spec = ND_BUF_INIT;
	char *s;

	nd_jaiter_init(&it, by, by->raw);
	while (!nd_stream_failed(st) && nd_jaiter_next(&it, &e, &je) == 1) {
		if (e.type != ND_JSTR)
			nd_stream_fail(st, "\"by\" must be an array of "
			    "strings");
		if (spec.len > 0)
			nd_buf_addc(&spec, ',');
		nd_json_unescape(&e, &spec);
	}
	if (nd_stream_failed(st)) {
		nd_buf_free(&spec);
		return;
	}
	if (t->prov.nheaders == 0 && t->nby == 0) {
		char msg[512];

		/* the partial's keys: refused as the user's would be */
		if (parse_by(t, spec.p != NULL ? spec.p : "", msg,
		    sizeof msg) != 0) {
			nd_stream_fail(st, "%s", msg);
			nd_buf_free(&spec);
			return;
		}
	} else {
		nd_buf mine = ND_BUF_INIT;

		for (size_t i = 0; i < t->nby; i++) {
			if (i > 0)
				nd_buf_addc(&mine, ',');
			nd_buf_adds(&mine, nd_by_name(t->by, i, NULL));
		}
		if (mine.len != spec.len || (spec.len > 0 &&
		    memcmp(mine.p, spec.p, spec.len) != 0))
			nd_stream_fail(st, "partial results by '%s' cannot be "
			    "merged with results by '%s'",
			    spec.p != NULL ? spec.p : "", mine.p);
		nd_buf_free(&mine);
	}
	nd_buf_free(&spec);
	s = nd_jstr_dup(nd_stream_need(st, ev, "of", ND_JSTR));
	if (t->prov.nheaders > 0 && t->of[0] != '\0' && s[0] != '\0' &&
	    strcmp(s, t->of) != 0)
		nd_stream_fail(st, "partial results of '%s' records cannot be "
		    "merged with results of '%s'", s, t->of);
	if (t->of[0] == '\0')
		snprintf(t->of, sizeof t->of, "%s", s);
	free(s);
	s = nd_jstr_dup(nd_stream_need(st, ev, "hist", ND_JSTR));
	if (strcmp(s, ND_HIST_SCHEME) != 0)
		nd_stream_fail(st, "histogram scheme '%s' is not '%s'", s,
		    ND_HIST_SCHEME);
	free(s);
	if (nd_stream_failed(st))
		return;
	v = nd_event_get(ev, "wall");
	if (v == NULL || v->type != ND_JTRUE)
		t->headers_wall = 0;
	nd_prov_header(&t->prov, st, ev);
}

static void
merge_group(nd_top *t, nd_stream *st, const nd_event *ev)
{
	const nd_jval *key = nd_stream_need(st, ev, "key", ND_JARR);
	const nd_jval *ex;
	nd_jiter it;
	nd_jval e;
	nd_jerr je;
	size_t n = 0;
	nd_agg_row tmp;
	uint32_t id;

	if (t->prov.nheaders == 0)
		nd_stream_fail(st, "top_group before its top_partial header");
	if (nd_stream_failed(st))
		return;
	nd_buf_reset(&t->key);
	nd_buf_addc(&t->key, (char)t->prov.fallback);
	nd_jaiter_init(&it, key, key->raw);
	while (nd_jaiter_next(&it, &e, &je) == 1) {
		nd_by_jval(&t->key, &t->tmp, &e);
		n++;
	}
	if (n != t->nby) {
		nd_stream_fail(st, "\"key\" has %zu values for %zu --by keys",
		    n, t->nby);
		return;
	}
	memset(&tmp, 0, sizeof tmp);
	/* the figures the merge adds (nd_partial_sum) */
	tmp.count = (uint64_t)nd_partial_sum("count",
	    nd_stream_need_int(st, ev, "count"));
	tmp.total_ns = nd_partial_sum("total_ns",
	    nd_stream_need_int(st, ev, "total_ns"));
	tmp.self_ns = nd_partial_sum("self_ns",
	    nd_stream_need_int(st, ev, "self_ns"));
	tmp.overrun = (uint64_t)nd_partial_sum("overrun",
	    nd_stream_need_int(st, ev, "overrun"));
	if (nd_hist_read(&tmp.hist, nd_stream_need(st, ev, "hist", ND_JARR)) != 0 ||
	    tmp.hist.total != tmp.count)
		nd_stream_fail(st, "\"hist\" is not a histogram of "
		    "\"count\" values");
	tmp.hist.min = nd_stream_need_int(st, ev, "min_ns");
	tmp.hist.max = nd_stream_need_int(st, ev, "max_ns");
	if (nd_stream_failed(st)) {
		nd_hist_free(&tmp.hist);
		return;
	}
	ex = nd_event_get(ev, "example");
	if (ex != NULL && ex->type == ND_JOBJ) {
		nd_jiter ei;
		nd_jval k, v;
		int64_t origin = 0, ts = 0, dur = 0, pid = 0, tid = 0;
		char *src = NULL;

		nd_jiter_init(&ei, ex, ex->raw);
		while (nd_jiter_next(&ei, &k, &v, &je) == 1) {
			int64_t *dst = nd_jstr_eq(&k, "origin_ns") ? &origin :
			    nd_jstr_eq(&k, "ts_ns") ? &ts :
			    nd_jstr_eq(&k, "dur_ns") ? &dur :
			    nd_jstr_eq(&k, "pid") ? &pid :
			    nd_jstr_eq(&k, "tid") ? &tid : NULL;

			if (dst != NULL && v.type == ND_JNUM)
				(void)nd_json_int64(&v, dst);
			else if (nd_jstr_eq(&k, "source") &&
			    v.type == ND_JSTR) {
				free(src);
				src = nd_jstr_dup(&v);
			}
		}
		nd_agg_ex_set(&tmp.ex, nd_abstime_of(origin, ts), dur, src,
		    pid, tid, ex->raw, ex->len);
		free(src);
	}
	id = nd_agg_id(t->agg, t->key.p, t->key.len);
	nd_agg_merge(nd_agg_row_of(t->agg, id), &tmp);
	nd_hist_free(&tmp.hist);
	nd_agg_ex_free(&tmp.ex);
}

static void
merge_busy(nd_top *t, nd_stream *st, const nd_event *ev)
{
	char *src = nd_jstr_dup(nd_stream_need(st, ev, "source", ND_JSTR));
	char *dev = nd_jstr_dup(nd_stream_need(st, ev, "device", ND_JSTR));
	size_t id;

	if (nd_stream_failed(st)) {
		free(src);
		free(dev);
		return;
	}
	/* Keep devices of fallback partials apart from the others. */
	id = device_of(t, (uint32_t)t->prov.fallback, src, dev, strlen(dev));
	t->dev_busy[id] += nd_partial_sum("busy_ns",
	    nd_stream_need_int(st, ev, "busy_ns"));
	t->dev_fb[id] = (unsigned char)t->prov.fallback;
	free(src);
	free(dev);
}

/* One record of a partial whose framing checked out (nd_partial). */
static void
merge_record(void *ctx, nd_stream *st, const nd_event *ev)
{
	nd_top *t = ctx;

	if (nd_str_eq(ev->type_name, "top_partial"))
		merge_header(t, st, ev);
	else if (nd_str_eq(ev->type_name, "top_group"))
		merge_group(t, st, ev);
	else
		merge_busy(t, st, ev);
}

static int64_t
mean_of(const nd_agg_row *r)
{
	if (r->count == 0)
		return 0;
	return (r->total_ns + (int64_t)(r->count / 2)) / (int64_t)r->count;
}

/* Key field i of a key (skipping the flag byte); tag ND_AGGKEY_NONE when
 * absent. */
static void
key_field(const char *key, size_t n, size_t i, int *tag, const char **s,
    size_t *len)
{
	nd_by_field(key + 1, n - 1, i, tag, s, len);
}

static void
jw_keyval(nd_jw *w, int tag, const char *s, size_t n)
{
	if (tag == ND_AGGKEY_STR)
		nd_jw_str(w, s, n);
	else if (tag == ND_AGGKEY_RAW)
		nd_jw_raw(w, s, n);
	else
		nd_jw_null(w);
}

static void
write_row_json(nd_top *t, nd_buf *b, const nd_agg_row *r,
    const char *key, size_t keylen, size_t rowno, int other,
    int64_t total_self, int64_t wall_ns)
{
	nd_jw w;

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "top");
	nd_jw_kuint(&w, "row", rowno);
	if (other)
		nd_jw_kbool(&w, "other", 1);
	else
		nd_by_json(t->by, &w, key + 1, keylen - 1);
	nd_jw_kuint(&w, "count", r->count);
	nd_jw_kint(&w, "total_ns", r->total_ns);
	nd_jw_kint(&w, "self_ns", r->self_ns);
	nd_jw_kint(&w, "mean_ns", mean_of(r));
	nd_jw_kint(&w, "min_ns", r->hist.min);
	nd_jw_kint(&w, "max_ns", r->hist.max);
	nd_jw_kint(&w, "p50_ns", nd_hist_quantile(&r->hist, 0.50));
	nd_jw_kint(&w, "p90_ns", nd_hist_quantile(&r->hist, 0.90));
	nd_jw_kint(&w, "p99_ns", nd_hist_quantile(&r->hist, 0.99));
	nd_jw_kdbl(&w, "share", total_self > 0 ?
	    (double)r->self_ns / (double)total_self : 0.0);
	if (t->wall)
		nd_jw_kdbl(&w, "wall_share", wall_ns > 0 ?
		    (double)r->self_ns / (double)wall_ns : 0.0);
	nd_jw_kuint(&w, "overrun", r->overrun);
	nd_jw_kcstr(&w, "of", t->of);
	if (r->ex.has) {
		nd_jw_key(&w, "example");
		nd_jw_raw(&w, r->ex.json, r->ex.json_len);
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

static void
write_partial(nd_top *t, nd_out *o, uint32_t *ids, size_t n)
{
	nd_buf *b = nd_out_buf(o);
	/* a merge keeps the busy times its partial results all have */
	int wall = t->merge ? t->headers_wall : t->wall;
	nd_jw w;
	nd_partial_w pw;

	nd_partial_begin(&pw, o, &w, "top_partial");
	nd_jw_key(&w, "by");
	nd_jw_arr(&w);
	for (size_t i = 0; i < t->nby; i++)
		nd_jw_cstr(&w, nd_by_name(t->by, i, NULL));
	nd_jw_arr_end(&w);
	nd_jw_kcstr(&w, "of", t->of);
	nd_jw_kcstr(&w, "timelines", t->prov.timelines);
	nd_jw_kbool(&w, "fallback", t->prov.fallback);
	nd_jw_kcstr(&w, "rule", t->prov.rule);
	nd_jw_kcstr(&w, "hist", ND_HIST_SCHEME);
	nd_jw_kbool(&w, "wall", wall);
	nd_jw_kuint(&w, "sources", t->prov.sources);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_partial_commit(&pw);
	for (size_t i = 0; i < n; i++) {
		const nd_agg_row *r = nd_agg_row_of(t->agg, ids[i]);
		size_t kl;
		const char *key = nd_agg_key(t->agg, ids[i], &kl);

		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", "top_group");
		nd_jw_key(&w, "key");
		nd_jw_arr(&w);
		for (size_t j = 0; j < t->nby; j++) {
			int tag;
			const char *s;
			size_t len;

			key_field(key, kl, j, &tag, &s, &len);
			jw_keyval(&w, tag, s, len);
		}
		nd_jw_arr_end(&w);
		nd_agg_row_json(&w, r);
		if (r->ex.has) {
			nd_jw_key(&w, "example");
			nd_jw_raw(&w, r->ex.json, r->ex.json_len);
		}
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		nd_partial_commit(&pw);
	}
	if (wall)
		for (size_t i = 0; i < t->ndev; i++) {
			int64_t busy = t->merge ? t->dev_busy[i] :
			    nd_union_total(&t->un[i]);

			if (t->merge && t->dev_fb[i] != t->prov.fallback)
				continue;
			nd_jw_init(&w, b);
			nd_jw_obj(&w);
			nd_jw_kcstr(&w, "type", "top_busy");
			nd_jw_kcstr(&w, "source", t->dev_src[i]);
			nd_jw_kcstr(&w, "device", t->dev_name[i]);
			nd_jw_kint(&w, "busy_ns", busy);
			nd_jw_obj_end(&w);
			nd_buf_addc(b, '\n');
			nd_partial_commit(&pw);
		}
	nd_partial_end(&pw);
}

#define NCOL 11

static void
cells_of(const nd_agg_row *r, int64_t total_self,
    int64_t wall_ns, char cell[NCOL][32])
{
	snprintf(cell[0], 32, "%.2f%%", total_self > 0 ?
	    100.0 * (double)r->self_ns / (double)total_self : 0.0);
	nd_fmt_dur(cell[1], 32, r->self_ns, 0);
	nd_fmt_dur(cell[2], 32, r->total_ns, 0);
	snprintf(cell[3], 32, "%llu", (unsigned long long)r->count);
	nd_fmt_dur(cell[4], 32, mean_of(r), 0);
	nd_fmt_dur(cell[5], 32, r->hist.min, 0);
	nd_fmt_dur(cell[6], 32, r->hist.max, 0);
	nd_fmt_dur(cell[7], 32, nd_hist_quantile(&r->hist, 0.50), 0);
	nd_fmt_dur(cell[8], 32, nd_hist_quantile(&r->hist, 0.90), 0);
	nd_fmt_dur(cell[9], 32, nd_hist_quantile(&r->hist, 0.99), 0);
	snprintf(cell[10], 32, "%.2f%%", wall_ns > 0 ?
	    100.0 * (double)r->self_ns / (double)wall_ns : 0.0);
}

/* Text of key field i for the table ("(none)" when absent). */
static void
key_text(nd_buf *out, const char *key, size_t kl, size_t i)
{
	nd_by_text(key + 1, kl - 1, i, out);
}

static void
write_table(nd_top *t, nd_out *o, uint32_t *ids, size_t nshow,
    const nd_agg_row *other, int64_t total_self, int64_t wall_ns,
    uint64_t nrec, uint64_t overrun)
{
	static const char *const head[NCOL] = { "Self %", "Self", "Total",
	    "Count", "Mean", "Min", "Max", "p50", "p90", "p99", "Wall %" };
	size_t ncol = t->wall ? NCOL : NCOL - 1;
	size_t wd[NCOL], nk = t->nby, *kw;
	char cell[NCOL][32];
	size_t nrows = nshow + (other != NULL);
	nd_buf *b = nd_out_buf(o), txt = ND_BUF_INIT;
	char d1[32];

	kw = nd_xcalloc(nk, sizeof *kw);
	for (size_t c = 0; c < ncol; c++)
		wd[c] = strlen(head[c]);
	for (size_t k = 0; k < nk; k++)
		kw[k] = nd_text_width(nd_by_name(t->by, k, NULL),
		    strlen(nd_by_name(t->by, k, NULL)));
	for (size_t i = 0; i < nrows; i++) {
		const nd_agg_row *r = i < nshow ?
		    nd_agg_row_of(t->agg, ids[i]) : other;

		cells_of(r, total_self, wall_ns, cell);
		for (size_t c = 0; c < ncol; c++)
			if (strlen(cell[c]) > wd[c])
				wd[c] = strlen(cell[c]);
		for (size_t k = 0; k < nk && i < nshow; k++) {
			size_t kl;
			const char *key = nd_agg_key(t->agg, ids[i], &kl);

			key_text(&txt, key, kl, k);
			if (nd_text_width(txt.p, txt.len) > kw[k])
				kw[k] = nd_text_width(txt.p, txt.len);
		}
	}
	if (other != NULL && kw[0] < 7)
		kw[0] = 7;
	/* header */
	nd_by_table_head(t->by, b, head, wd, ncol, kw);
	for (size_t i = 0; i < nrows; i++) {
		const nd_agg_row *r = i < nshow ?
		    nd_agg_row_of(t->agg, ids[i]) : other;

		cells_of(r, total_self, wall_ns, cell);
		for (size_t c = 0; c < ncol; c++)
			nd_buf_addf(b, "%s%*s", c ? "  " : "", (int)wd[c],
			    cell[c]);
		for (size_t k = 0; k < nk; k++) {
			if (i < nshow) {
				size_t kl;
				const char *key = nd_agg_key(t->agg, ids[i],
				    &kl);

				key_text(&txt, key, kl, k);
			} else {
				nd_buf_reset(&txt);
				if (k == 0)
					nd_buf_adds(&txt, "(other)");
			}
			nd_by_table_key(b, txt.p, txt.len, k, nk, kw);
		}
		nd_by_table_eol(b);
		nd_out_commit(o);
	}
	nd_fmt_dur(d1, sizeof d1, total_self, 0);
	nd_buf_addf(b, "\nself time %s in %llu %s%s", d1,
	    (unsigned long long)nrec, t->of[0] ? t->of : "record",
	    nrec == 1 ? "" : "s");
	if (t->wall) {
		nd_fmt_dur(d1, sizeof d1, wall_ns, 0);
		nd_buf_addf(b, "; device busy (wall) %s", d1);
	}
	if (overrun > 0)
		nd_buf_addf(b, "; %llu ended after their parent (%s)",
		    (unsigned long long)overrun,
		    t->prov.rule != NULL && strcmp(t->prov.rule, "reparent") == 0 ?
		    "reparented" : "clipped");
	if (t->prov.fallback && nrec > 0 && strcmp(t->of, "span") == 0)
		nd_buf_adds(b, "; no device ops: every timeline counted");
	nd_buf_addc(b, '\n');
	nd_out_commit(o);
	nd_buf_free(&txt);
	free(kw);
}

static void
write_csv(nd_top *t, nd_out *o, uint32_t *ids, size_t nshow,
    const nd_agg_row *other, int64_t total_self, int64_t wall_ns)
{
	nd_buf *b = nd_out_buf(o);
	size_t nrows = nshow + (other != NULL);

	for (size_t k = 0; k < t->nby; k++) {
		nd_csv_field(b, nd_by_name(t->by, k, NULL),
		    strlen(nd_by_name(t->by, k, NULL)));
		nd_buf_addc(b, ',');
	}
	nd_buf_adds(b, "count,total_ns,self_ns,mean_ns,min_ns,max_ns,"
	    "p50_ns,p90_ns,p99_ns,share");
	if (t->wall)
		nd_buf_adds(b, ",wall_share");
	nd_buf_adds(b, ",overrun,other\n");
	for (size_t i = 0; i < nrows; i++) {
		const nd_agg_row *r = i < nshow ?
		    nd_agg_row_of(t->agg, ids[i]) : other;

		for (size_t k = 0; k < t->nby; k++) {
			if (i < nshow) {
				int tag;
				const char *s;
				size_t n, kl;
				const char *key = nd_agg_key(t->agg, ids[i],
				    &kl);

				key_field(key, kl, k, &tag, &s, &n);
				if (tag != ND_AGGKEY_NONE)
					nd_csv_field(b, s, n);
			}
			nd_buf_addc(b, ',');
		}
		nd_buf_addf(b, "%llu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,",
		    (unsigned long long)r->count, (long long)r->total_ns,
		    (long long)r->self_ns, (long long)mean_of(r),
		    (long long)r->hist.min, (long long)r->hist.max,
		    (long long)nd_hist_quantile(&r->hist, 0.50),
		    (long long)nd_hist_quantile(&r->hist, 0.90),
		    (long long)nd_hist_quantile(&r->hist, 0.99));
		nd_json_put_double(b, total_self > 0 ?
		    (double)r->self_ns / (double)total_self : 0.0);
		if (t->wall) {
			nd_buf_addc(b, ',');
			nd_json_put_double(b, wall_ns > 0 ?
			    (double)r->self_ns / (double)wall_ns : 0.0);
		}
		nd_buf_addf(b, ",%llu,%d\n", (unsigned long long)r->overrun,
		    i >= nshow);
		nd_out_commit(o);
	}
}

/* The sums over the rows that count. */
struct tot {
	int64_t self, wall;
	uint64_t nrec, overrun;
};

static int
rank_cmp(const void *a, const void *b, void *ctx)
{
	nd_top *t = ctx;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const nd_agg_row *x = nd_agg_row_of(t->agg, ia);
	const nd_agg_row *y = nd_agg_row_of(t->agg, ib);
	nd_top_fig fx = { x->count, x->self_ns, x->total_ns, x->hist.max,
	    NULL, 0 };
	nd_top_fig fy = { y->count, y->self_ns, y->total_ns, y->hist.max,
	    NULL, 0 };

	fx.key = nd_agg_key(t->agg, ia, &fx.keylen);
	fy.key = nd_agg_key(t->agg, ib, &fy.keylen);
	return nd_top_row_order(&fx, &fy, t->sort);
}

static size_t
ranked(nd_top *t, uint32_t **idsp, struct tot *tot)
{
	uint32_t n = nd_agg_count(t->agg), *ids;
	size_t m = 0;
	/* merge: rows of partials that fell back to every timeline count
	 * only when all did (as in one run over all the inputs). */
	char want = (char)(t->merge && t->prov.fallback);

	memset(tot, 0, sizeof *tot);
	ids = nd_xcalloc(n > 0 ? n : 1, sizeof *ids);
	for (uint32_t i = 0; i < n; i++) {
		size_t kl;
		const char *key = nd_agg_key(t->agg, i, &kl);
		const nd_agg_row *r = nd_agg_row_of(t->agg, i);

		if (r->count == 0 || key[0] != want)
			continue;
		ids[m++] = i;
		tot->self += r->self_ns;
		tot->nrec += r->count;
		tot->overrun += r->overrun;
	}
	nd_sort(ids, m, sizeof *ids, rank_cmp, t);
	if (t->wall)
		for (size_t i = 0; i < t->ndev; i++) {
			if (t->merge) {
				if (t->dev_fb[i] == (unsigned char)want)
					tot->wall += t->dev_busy[i];
			} else
				tot->wall += nd_union_total(&t->un[i]);
		}
	*idsp = ids;
	return m;
}

size_t
nd_top_rank(nd_top *t, uint32_t **ids)
{
	struct tot tot;

	return ranked(t, ids, &tot);
}

static void
write_json(nd_top *t, nd_out *o, const uint32_t *ids, size_t nshow,
    const nd_agg_row *other, const struct tot *tot)
{
	nd_buf *b = nd_out_buf(o);

	for (size_t i = 0; i < nshow; i++) {
		size_t kl;
		const char *key = nd_agg_key(t->agg, ids[i], &kl);

		write_row_json(t, b, nd_agg_row_of(t->agg, ids[i]), key, kl,
		    i + 1, 0, tot->self, tot->wall);
		nd_out_commit(o);
	}
	if (other != NULL) {
		write_row_json(t, b, other, NULL, 0, nshow + 1, 1, tot->self,
		    tot->wall);
		nd_out_commit(o);
	}
}

void
nd_top_write(nd_top *t, nd_out *o, int fmt, int k)
{
	uint32_t *ids;
	struct tot tot;
	size_t m = ranked(t, &ids, &tot), nshow;
	nd_agg_row other;

	if (fmt == ND_TOP_PARTIAL) {
		/* Rows of fallback partials no longer count: drop them. */
		write_partial(t, o, ids, m);
		free(ids);
		return;
	}
	nshow = k <= 0 || (size_t)k >= m ? m : (size_t)k;
	memset(&other, 0, sizeof other);
	for (size_t i = nshow; i < m; i++)
		nd_agg_merge(&other, nd_agg_row_of(t->agg, ids[i]));
	if (fmt == ND_TOP_TABLE)
		write_table(t, o, ids, nshow, m > nshow ? &other : NULL,
		    tot.self, tot.wall, tot.nrec, tot.overrun);
	else if (fmt == ND_TOP_CSV)
		write_csv(t, o, ids, nshow, m > nshow ? &other : NULL,
		    tot.self, tot.wall);
	else
		write_json(t, o, ids, nshow, m > nshow ? &other : NULL, &tot);
	nd_hist_free(&other.hist);
	nd_agg_ex_free(&other.ex);
	free(ids);
}

/* ---- the engine (nd_engine.h) ---- */

static const char *const partial_body[] = { "top_group", "top_busy" };

static void
eng_load(void *self, nd_stream *st, const nd_event *ev)
{
	merge_record(self, st, ev);
}

static void
eng_finish(void *self, const nd_run_res *rr)
{
	nd_top *t = self;
	nd_scan_res res;

	if (rr->merged) {
		if (t->wall && !t->headers_wall) {
			nd_err_set(&t->err, NULL, ND_ERR_NONE, ND_ERR_NONE,
			    "--merge --wall needs partial results made with "
			    "--wall");
			return;
		}
		nd_prov_merged(&t->prov);
		return;
	}
	nd_scan_result(t->sc, rr, &res);
	scanned(t, &t->so, &res, t->check_by);
}

static const nd_err *
eng_error(void *self)
{
	nd_top *t = self;

	return t->err.code != 0 ? &t->err : NULL;
}

static void
eng_write(void *self, nd_out *o)
{
	nd_top *t = self;

	nd_top_write(t, o, t->fmt, t->k);
}

nd_engine
nd_top_engine(nd_top *t, const nd_scan_opts *opts, int merge, int fmt,
    int k, int check_by)
{
	nd_engine e = {
		.name = "top",
		.self = t,
		.partial_type = "top_partial",
		.partial_body = partial_body,
		.npartial_body = sizeof partial_body / sizeof *partial_body,
		/* the reading is nd_scan's (sc first in the state) */
		.record = nd_scan_eng_record,
		.end_source = nd_scan_eng_end_source,
		.end_input = nd_scan_eng_end_input,
		.restart = nd_scan_eng_restart,
		.load = eng_load,
		.finish = eng_finish,
		.write = eng_write,
		.error = eng_error,
	};

	t->fmt = fmt;
	t->k = k;
	t->check_by = check_by;
	if (merge) {
		t->merge = 1;
		t->headers_wall = 1;
	} else {
		nd_scan_cb cb = { t, scan_record, scan_done, scan_reset };

		if (t->nby == 0)
			parse_by_arg(t, "name");
		t->so = *opts;
		t->sc = nd_scan_new(&t->so, &cb);
	}
	return e;
}
