/*
 * trace-topk: the ops (or families, classes, scopes, args...) that take the
 * time, by exclusive time, with counts, percentiles and shares; mergeable
 * partial results.  See trace-topk(1).
 */
#include "nd_agg.h"
#include "nd_by.h"
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_hash.h"
#include "nd_hist.h"
#include "nd_json.h"
#include "nd_nest.h"
#include "nd_out.h"
#include "nd_partial.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-topk [-huV] [-b keys] [-k N] [--sort order] [--timelines which] [--type type] [--overrun rule] [--wall] [--table | --csv | --partial] [--merge] [-o file] [file ...]\n"
"  -k, --top N          rows to show before the 'other' row (default 20; 0: all)\n"
"  -b, --by keys        group by these keys: name (default), family, class,\n"
"                       scope, cat, device, thread, rank, step, ... or args.X\n"
"      --sort order     order rows by self (default), total, count, mean, max\n"
"      --timelines which device (default; all when there are no device ops),\n"
"                       host or all\n"
"      --type type      aggregate records of this type (default: the type of\n"
"                       the first record with dur_ns, normally span)\n"
"      --overrun rule   clip (default) a child ending after its parent, or\n"
"                       reparent it as PyTorch's key_averages() does\n"
"  -u, --unordered      buffer every timeline (input in any order, on a pipe)\n"
"      --wall           add each row's share of wall-clock busy device time\n"
"      --table          an aligned table for people\n"
"      --csv            CSV with a header line\n"
"      --partial        partial results for --merge\n"
"      --merge          combine partial results (the output of --partial)\n"
"  -o, --output file    write to file (atomically) instead of stdout\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n";

enum { OPT_BY = 256, OPT_SORT, OPT_TIMELINES, OPT_TYPE, OPT_OVERRUN,
	OPT_UNORDERED, OPT_WALL, OPT_TABLE, OPT_CSV, OPT_PARTIAL, OPT_MERGE };
enum { FMT_JSON, FMT_TABLE, FMT_CSV, FMT_PARTIAL };
enum { SORT_SELF, SORT_TOTAL, SORT_COUNT, SORT_MEAN, SORT_MAX };

/* Output keys of a top row: a --by key may not take one of these names. */
static const char *const row_keys[] = {
	"type", "row", "other", "args", "count", "total_ns", "self_ns",
	"mean_ns", "min_ns", "max_ns", "p50_ns", "p90_ns", "p99_ns", "share",
	"wall_share", "overrun", "of", "example"
};

struct topk {
	nd_by *by;
	size_t nby;		/* nd_by_count(by) */
	int k, sort, fmt, wall, merge;
	nd_scan_opts so;
	nd_agg *agg;
	nd_buf key, tmp;
	/* --wall: busy union per device (source, device) */
	nd_intern *devs;
	nd_union *un;
	char **dev_src, **dev_name;
	int64_t *dev_busy;	/* --merge: busy_ns read from partials */
	unsigned char *dev_fb;	/* --merge: came from a fallback partial */
	size_t ndev, capdev;
	/* what was aggregated */
	char of[64];
	const char *timelines;
	int fallback;
	uint32_t sources;
	/* --merge: headers seen */
	int nheaders, nfallback, headers_wall;
	char *rule;
};

static void
parse_by(struct topk *t, const char *spec)
{
	const char *bad;

	nd_by_free(t->by);
	t->by = nd_by_parse(spec, row_keys, sizeof row_keys / sizeof *row_keys,
	    &bad);
	if (t->by == NULL && *bad == '\0')
		nd_die(ND_EXIT_ERROR, "--by: no key in '%s'", spec);
	if (t->by == NULL)
		nd_die(ND_EXIT_ERROR, "--by %s: '%s' is an output key of top "
		    "rows; it cannot be a group key", spec, bad);
	t->nby = nd_by_count(t->by);
}

static void
build_key(struct topk *t, const nd_event *ev, const nd_source_info *si)
{
	nd_buf_reset(&t->key);
	nd_buf_addc(&t->key, 0);	/* not from a fallback partial */
	nd_by_key(t->by, ev, si, &t->key, &t->tmp);
}

static void
example_json(struct topk *t, const nd_event *ev, const nd_source_info *si)
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
device_of(struct topk *t, uint32_t source, const char *path,
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
wall_add(struct topk *t, const nd_event *ev, const nd_source_info *si)
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
on_record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	struct topk *t = ctx;
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
on_done(void *ctx, const nd_nest_span *s)
{
	struct topk *t = ctx;
	nd_agg_row *r = nd_agg_row_of(t->agg, (uint32_t)s->user);

	r->self_ns += s->self_ns;
	r->overrun += (uint64_t)s->overrun;
}

static void
on_reset(void *ctx)
{
	struct topk *t = ctx;

	nd_agg_reset(t->agg);
	for (size_t i = 0; i < t->ndev; i++)
		nd_union_free(&t->un[i]);
}

/* ---- --merge: read partial results ---- */

static void
merge_header(struct topk *t, nd_stream *st, const nd_event *ev)
{
	const nd_jval *by = nd_stream_need(st, ev, "by", ND_JARR);
	const nd_jval *v;
	nd_jiter it;
	nd_jval e;
	nd_jerr je;
	nd_buf spec = ND_BUF_INIT;
	char *s;

	nd_jaiter_init(&it, by, by->raw);
	while (nd_jaiter_next(&it, &e, &je) == 1) {
		if (e.type != ND_JSTR)
			nd_die(ND_EXIT_ERROR, "%s:%llu: \"by\" must be an "
			    "array of strings", nd_stream_file(st),
			    (unsigned long long)nd_stream_lineno(st));
		if (spec.len > 0)
			nd_buf_addc(&spec, ',');
		nd_json_unescape(&e, &spec);
	}
	if (t->nheaders == 0 && t->nby == 0)
		parse_by(t, spec.p != NULL ? spec.p : "");
	else {
		nd_buf mine = ND_BUF_INIT;

		for (size_t i = 0; i < t->nby; i++) {
			if (i > 0)
				nd_buf_addc(&mine, ',');
			nd_buf_adds(&mine, nd_by_name(t->by, i, NULL));
		}
		if (mine.len != spec.len || (spec.len > 0 &&
		    memcmp(mine.p, spec.p, spec.len) != 0))
			nd_die(ND_EXIT_ERROR, "%s:%llu: partial results by "
			    "'%s' cannot be merged with results by '%s'",
			    nd_stream_file(st),
			    (unsigned long long)nd_stream_lineno(st),
			    spec.p != NULL ? spec.p : "", mine.p);
		nd_buf_free(&mine);
	}
	nd_buf_free(&spec);
	s = nd_jstr_dup(nd_stream_need(st, ev, "of", ND_JSTR));
	if (t->nheaders > 0 && t->of[0] != '\0' && s[0] != '\0' &&
	    strcmp(s, t->of) != 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: partial results of '%s' "
		    "records cannot be merged with results of '%s'",
		    nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), s, t->of);
	if (t->of[0] == '\0')
		snprintf(t->of, sizeof t->of, "%s", s);
	free(s);
	s = nd_jstr_dup(nd_stream_need(st, ev, "hist", ND_JSTR));
	if (strcmp(s, ND_HIST_SCHEME) != 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: histogram scheme '%s' is not "
		    "'%s'", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), s,
		    ND_HIST_SCHEME);
	free(s);
	s = nd_jstr_dup(nd_stream_need(st, ev, "rule", ND_JSTR));
	if (t->rule != NULL && strcmp(s, t->rule) != 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: partial results made with "
		    "--overrun %s and %s cannot be merged", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), s, t->rule);
	free(t->rule);
	t->rule = s;
	s = nd_jstr_dup(nd_stream_need(st, ev, "timelines", ND_JSTR));
	if (t->nheaders > 0 && strcmp(s, t->timelines) != 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: partial results of --timelines "
		    "%s and %s cannot be merged", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), s, t->timelines);
	if (nd_scan_timelines(s) < 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: unknown timelines '%s'",
		    nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), s);
	t->timelines = nd_scan_timelines_name(nd_scan_timelines(s));
	free(s);
	v = nd_event_get(ev, "fallback");
	t->fallback = v != NULL && v->type == ND_JTRUE;
	if (t->fallback)
		t->nfallback++;
	v = nd_event_get(ev, "wall");
	if (v == NULL || v->type != ND_JTRUE)
		t->headers_wall = 0;
	t->sources += (uint32_t)nd_stream_need_int(st, ev, "sources");
	t->nheaders++;
}

static void
merge_group(struct topk *t, nd_stream *st, const nd_event *ev)
{
	const nd_jval *key = nd_stream_need(st, ev, "key", ND_JARR);
	const nd_jval *ex;
	nd_jiter it;
	nd_jval e;
	nd_jerr je;
	size_t n = 0;
	nd_agg_row tmp;
	uint32_t id;

	if (t->nheaders == 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: top_group before its "
		    "top_partial header", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st));
	nd_buf_reset(&t->key);
	nd_buf_addc(&t->key, (char)t->fallback);
	nd_jaiter_init(&it, key, key->raw);
	while (nd_jaiter_next(&it, &e, &je) == 1) {
		nd_by_jval(&t->key, &t->tmp, &e);
		n++;
	}
	if (n != t->nby)
		nd_die(ND_EXIT_ERROR, "%s:%llu: \"key\" has %zu values for "
		    "%zu --by keys", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), n, t->nby);
	memset(&tmp, 0, sizeof tmp);
	tmp.count = (uint64_t)nd_stream_need_int(st, ev, "count");
	tmp.total_ns = nd_stream_need_int(st, ev, "total_ns");
	tmp.self_ns = nd_stream_need_int(st, ev, "self_ns");
	tmp.overrun = (uint64_t)nd_stream_need_int(st, ev, "overrun");
	if (nd_hist_read(&tmp.hist, nd_stream_need(st, ev, "hist", ND_JARR)) != 0 ||
	    tmp.hist.total != tmp.count)
		nd_die(ND_EXIT_ERROR, "%s:%llu: \"hist\" is not a histogram "
		    "of \"count\" values", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st));
	tmp.hist.min = nd_stream_need_int(st, ev, "min_ns");
	tmp.hist.max = nd_stream_need_int(st, ev, "max_ns");
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
merge_busy(struct topk *t, nd_stream *st, const nd_event *ev)
{
	char *src = nd_jstr_dup(nd_stream_need(st, ev, "source", ND_JSTR));
	char *dev = nd_jstr_dup(nd_stream_need(st, ev, "device", ND_JSTR));
	size_t id;

	/* Keep devices of fallback partials apart from the others. */
	id = device_of(t, (uint32_t)t->fallback, src, dev, strlen(dev));
	t->dev_busy[id] += nd_stream_need_int(st, ev, "busy_ns");
	t->dev_fb[id] = (unsigned char)t->fallback;
	free(src);
	free(dev);
}

/* One record of a partial whose framing checked out (nd_partial). */
static void
merge_record(void *ctx, nd_stream *st, const nd_event *ev)
{
	struct topk *t = ctx;

	if (nd_str_eq(ev->type_name, "top_partial"))
		merge_header(t, st, ev);
	else if (nd_str_eq(ev->type_name, "top_group"))
		merge_group(t, st, ev);
	else
		merge_busy(t, st, ev);
}

static void
read_partials(struct topk *t, char **paths, int n)
{
	static const char *const body[] = { "top_group", "top_busy" };

	t->headers_wall = 1;
	nd_partial_read(paths, n, "top_partial", body,
	    sizeof body / sizeof *body, merge_record, t);
	if (t->nheaders == 0)
		nd_die(ND_EXIT_ERROR, "--merge: no top_partial header in the "
		    "input");
	if (t->wall && !t->headers_wall)
		nd_die(ND_EXIT_ERROR, "--merge --wall needs partial results "
		    "made with --wall");
	/* Partials that found device ops win over those that fell back. */
	t->fallback = t->nfallback == t->nheaders;
	if (t->rule == NULL)
		t->rule = nd_xstrdup("clip");
}

/* ---- output ---- */

static struct topk *sort_t;

static int
row_cmp(const void *a, const void *b)
{
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const nd_agg_row *x = nd_agg_row_of(sort_t->agg, ia);
	const nd_agg_row *y = nd_agg_row_of(sort_t->agg, ib);
	const char *kx, *ky;
	size_t nx, ny;
	int c;

	switch (sort_t->sort) {
	case SORT_TOTAL:
		if (x->total_ns != y->total_ns)
			return x->total_ns > y->total_ns ? -1 : 1;
		break;
	case SORT_COUNT:
		if (x->count != y->count)
			return x->count > y->count ? -1 : 1;
		break;
	case SORT_MEAN: {
		__extension__ __int128 l = (__int128)x->total_ns *
		    (__int128)y->count;
		__extension__ __int128 r = (__int128)y->total_ns *
		    (__int128)x->count;

		if (l != r)
			return l > r ? -1 : 1;
		break;
	}
	case SORT_MAX:
		if (x->hist.max != y->hist.max)
			return x->hist.max > y->hist.max ? -1 : 1;
		break;
	}
	if (x->self_ns != y->self_ns)
		return x->self_ns > y->self_ns ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	kx = nd_agg_key(sort_t->agg, ia, &nx);
	ky = nd_agg_key(sort_t->agg, ib, &ny);
	c = memcmp(kx, ky, nx < ny ? nx : ny);
	if (c != 0)
		return c;
	return (nx > ny) - (nx < ny);
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
write_row_json(struct topk *t, nd_buf *b, const nd_agg_row *r,
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
write_partial(struct topk *t, nd_out *o, uint32_t *ids, size_t n)
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
	nd_jw_kcstr(&w, "timelines", t->timelines);
	nd_jw_kbool(&w, "fallback", t->fallback);
	nd_jw_kcstr(&w, "rule", t->rule);
	nd_jw_kcstr(&w, "hist", ND_HIST_SCHEME);
	nd_jw_kbool(&w, "wall", wall);
	nd_jw_kuint(&w, "sources", t->sources);
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
		nd_jw_kuint(&w, "count", r->count);
		nd_jw_kint(&w, "total_ns", r->total_ns);
		nd_jw_kint(&w, "self_ns", r->self_ns);
		nd_jw_kint(&w, "min_ns", r->hist.min);
		nd_jw_kint(&w, "max_ns", r->hist.max);
		nd_jw_kuint(&w, "overrun", r->overrun);
		nd_jw_key(&w, "hist");
		nd_hist_write(&r->hist, &w);
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

			if (t->merge && t->dev_fb[i] != t->fallback)
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
write_table(struct topk *t, nd_out *o, uint32_t *ids, size_t nshow,
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
			size_t pad;

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
			nd_buf_adds(b, "  ");
			nd_buf_add(b, txt.p != NULL ? txt.p : "", txt.len);
			pad = k + 1 < nk ?
			    kw[k] - nd_text_width(txt.p, txt.len) : 0;
			for (size_t j = 0; j < pad; j++)
				nd_buf_addc(b, ' ');
		}
		/* no trailing blanks */
		while (b->len > 0 && b->p[b->len - 1] == ' ')
			b->len--;
		nd_buf_addc(b, '\n');
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
		    t->rule != NULL && strcmp(t->rule, "reparent") == 0 ?
		    "reparented" : "clipped");
	if (t->fallback && nrec > 0 && strcmp(t->of, "span") == 0)
		nd_buf_adds(b, "; no device ops: every timeline counted");
	nd_buf_addc(b, '\n');
	nd_out_commit(o);
	nd_buf_free(&txt);
	free(kw);
}

static void
write_csv(struct topk *t, nd_out *o, uint32_t *ids, size_t nshow,
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

static void
output(struct topk *t, const char *path)
{
	uint32_t n = nd_agg_count(t->agg), *ids;
	size_t m = 0, nshow;
	int64_t total_self = 0, wall_ns = 0;
	uint64_t nrec = 0, overrun = 0;
	nd_agg_row other;
	nd_out *o;
	/* --merge: rows of partials that fell back to every timeline count
	 * only when all did (as in one run over all the inputs). */
	char want = (char)(t->merge && t->fallback);

	ids = nd_xcalloc(n > 0 ? n : 1, sizeof *ids);
	for (uint32_t i = 0; i < n; i++) {
		size_t kl;
		const char *key = nd_agg_key(t->agg, i, &kl);
		const nd_agg_row *r = nd_agg_row_of(t->agg, i);

		if (r->count == 0 || key[0] != want)
			continue;
		ids[m++] = i;
		total_self += r->self_ns;
		nrec += r->count;
		overrun += r->overrun;
	}
	sort_t = t;
	qsort(ids, m, sizeof *ids, row_cmp);
	if (t->wall)
		for (size_t i = 0; i < t->ndev; i++) {
			if (t->merge) {
				if (t->dev_fb[i] == (unsigned char)want)
					wall_ns += t->dev_busy[i];
			} else
				wall_ns += nd_union_total(&t->un[i]);
		}
	o = nd_out_open(path);
	if (t->fmt == FMT_PARTIAL) {
		/* Rows of fallback partials no longer count: drop them. */
		write_partial(t, o, ids, m);
		nd_out_close(o);
		free(ids);
		return;
	}
	nshow = t->k == 0 || (size_t)t->k >= m ? m : (size_t)t->k;
	memset(&other, 0, sizeof other);
	for (size_t i = nshow; i < m; i++)
		nd_agg_merge(&other, nd_agg_row_of(t->agg, ids[i]));
	if (t->fmt == FMT_TABLE)
		write_table(t, o, ids, nshow, m > nshow ? &other : NULL,
		    total_self, wall_ns, nrec, overrun);
	else if (t->fmt == FMT_CSV)
		write_csv(t, o, ids, nshow, m > nshow ? &other : NULL,
		    total_self, wall_ns);
	else {
		nd_buf *b = nd_out_buf(o);

		for (size_t i = 0; i < nshow; i++) {
			size_t kl;
			const char *key = nd_agg_key(t->agg, ids[i], &kl);

			write_row_json(t, b, nd_agg_row_of(t->agg, ids[i]),
			    key, kl, i + 1, 0, total_self, wall_ns);
			nd_out_commit(o);
		}
		if (m > nshow) {
			write_row_json(t, b, &other, NULL, 0, nshow + 1, 1,
			    total_self, wall_ns);
			nd_out_commit(o);
		}
	}
	nd_hist_free(&other.hist);
	nd_agg_ex_free(&other.ex);
	nd_out_close(o);
	free(ids);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'k' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "timelines", required_argument, NULL, OPT_TIMELINES },
		{ "type", required_argument, NULL, OPT_TYPE },
		{ "overrun", required_argument, NULL, OPT_OVERRUN },
		{ "unordered", no_argument, NULL, OPT_UNORDERED },
		{ "wall", no_argument, NULL, OPT_WALL },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct topk t;
	const char *out = NULL, *by = NULL;
	int c, nfmt = 0, scanopt = 0;

	nd_init(argv[0]);
	memset(&t, 0, sizeof t);
	t.k = 20;
	t.so.timelines = ND_TL_DEVICE;
	t.so.rule = ND_NEST_CLIP;
	while ((c = getopt_long(argc, argv, "b:hk:o:uV", opts, NULL)) != -1)
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'k':
			t.k = (int)nd_cli_int("-k", optarg, 0, 100000000);
			break;
		case 'o':
			out = optarg;
			break;
		case 'V':
			nd_cli_version();
		case 'b':
		case OPT_BY:
			by = optarg;
			break;
		case OPT_SORT:
			if (strcmp(optarg, "self") == 0)
				t.sort = SORT_SELF;
			else if (strcmp(optarg, "total") == 0)
				t.sort = SORT_TOTAL;
			else if (strcmp(optarg, "count") == 0)
				t.sort = SORT_COUNT;
			else if (strcmp(optarg, "mean") == 0)
				t.sort = SORT_MEAN;
			else if (strcmp(optarg, "max") == 0)
				t.sort = SORT_MAX;
			else
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--sort: '%s' (self, total, count, mean "
				    "or max)", optarg);
			break;
		case OPT_TIMELINES:
			if ((t.so.timelines = nd_scan_timelines(optarg)) < 0)
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--timelines: '%s' (device, host or all)",
				    optarg);
			scanopt = 1;
			break;
		case OPT_TYPE:
			if (optarg[0] == '\0' || strlen(optarg) >= 64)
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--type: '%s'", optarg);
			t.so.type = optarg;
			scanopt = 1;
			break;
		case OPT_OVERRUN:
			if (strcmp(optarg, "clip") == 0)
				t.so.rule = ND_NEST_CLIP;
			else if (strcmp(optarg, "reparent") == 0)
				t.so.rule = ND_NEST_REPARENT;
			else
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--overrun: '%s' (clip or reparent)",
				    optarg);
			scanopt = 1;
			break;
		case 'u':
		case OPT_UNORDERED:
			t.so.unordered = 1;
			scanopt = 1;
			break;
		case OPT_WALL:
			t.wall = 1;
			break;
		case OPT_TABLE:
			t.fmt = FMT_TABLE;
			nfmt++;
			break;
		case OPT_CSV:
			t.fmt = FMT_CSV;
			nfmt++;
			break;
		case OPT_PARTIAL:
			t.fmt = FMT_PARTIAL;
			nfmt++;
			break;
		case OPT_MERGE:
			t.merge = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;
	if (nfmt > 1)
		nd_die(ND_EXIT_ERROR, "--table, --csv and --partial exclude "
		    "each other");
	if (t.merge && scanopt)
		nd_die(ND_EXIT_ERROR, "--merge takes --timelines, --type, "
		    "--overrun and --unordered from the partial results; do "
		    "not give them again");
	t.agg = nd_agg_new();
	t.devs = nd_intern_new();
	if (by != NULL)
		parse_by(&t, by);
	if (t.merge) {
		read_partials(&t, argv, argc);
	} else {
		nd_scan_cb cb = { &t, on_record, on_done, on_reset };
		nd_scan_res res;

		if (t.nby == 0)
			parse_by(&t, "name");
		nd_scan(argv, argc, &t.so, &cb, &res);
		/* A --by key no span has is a typo; not for the default key,
		 * nor for a partial (another part may have the key). */
		if (by != NULL && t.fmt != FMT_PARTIAL)
			nd_by_check(t.by, "--by");
		/* "" when nothing was aggregated: merges with any type */
		snprintf(t.of, sizeof t.of, "%s", res.type[0] ? res.type :
		    (t.so.type ? t.so.type : ""));
		t.timelines = nd_scan_timelines_name(t.so.timelines);
		t.fallback = res.fallback;
		t.sources = res.sources;
		t.rule = nd_xstrdup(t.so.rule == ND_NEST_REPARENT ?
		    "reparent" : "clip");
	}
	output(&t, out);
	nd_by_free(t.by);
	for (size_t i = 0; i < t.ndev; i++) {
		nd_union_free(&t.un[i]);
		free(t.dev_src[i]);
		free(t.dev_name[i]);
	}
	free(t.un);
	free(t.dev_src);
	free(t.dev_name);
	free(t.dev_busy);
	free(t.dev_fb);
	free(t.rule);
	nd_intern_free(t.devs);
	nd_agg_free(t.agg);
	nd_buf_free(&t.key);
	nd_buf_free(&t.tmp);
	return ND_EXIT_OK;
}
