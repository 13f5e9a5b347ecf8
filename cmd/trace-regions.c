/*
 * trace-regions: time by named-scope region (the `scope` path of each op),
 * as a tree with inclusive and exclusive time, an indented text tree, or
 * folded stacks for flame graphs; mergeable partial results.  See
 * trace-regions(1).
 */
#include "nd_agg.h"
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_nest.h"
#include "nd_out.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-regions [-hV] [--depth N] [--min-share fraction] [--prune] [--by-device] [--ops] [--timelines which] [--overrun rule] [--unordered] [--tree | --folded | --partial] [--merge] [-o file] [file ...]\n"
"      --depth N        show regions down to depth N; deeper time goes to\n"
"                       the region at depth N\n"
"      --min-share fraction  fold regions under this fraction of the total\n"
"                       into their parent (top-level ones into '(other)')\n"
"      --prune          collapse single-child chains that add no time\n"
"      --by-device      one tree per device\n"
"      --ops            add each op's name as a leaf below its scope\n"
"      --timelines which device (default; all when there are no device ops),\n"
"                       host or all\n"
"      --overrun rule   clip (default) a child ending after its parent, or\n"
"                       reparent it as PyTorch's key_averages() does\n"
"      --unordered      buffer every timeline (input in any order, on a pipe)\n"
"      --tree           an indented tree with '#' bars\n"
"      --folded         folded stacks 'a;b;c NS' for flamegraph.pl\n"
"      --partial        partial results for --merge\n"
"      --merge          combine partial results (the output of --partial)\n"
"  -o, --output file    write to file (atomically) instead of stdout\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n";

enum { OPT_DEPTH = 256, OPT_MINSHARE, OPT_PRUNE, OPT_BYDEV, OPT_OPS,
	OPT_TIMELINES, OPT_OVERRUN, OPT_UNORDERED, OPT_TREE, OPT_FOLDED,
	OPT_PARTIAL, OPT_MERGE };
enum { FMT_JSON, FMT_TREE, FMT_FOLDED, FMT_PARTIAL };

#define NONE_SCOPE "(none)"
#define NONE_NAME "(unnamed)"
#define NONE_DEVICE "(unknown)"
#define OTHER "(other)"

/* A region of the full tree: node ids are intern ids of (parent, name). */
struct node {
	uint32_t parent;	/* UINT32_MAX for a device root */
	char *name;
	int depth;		/* 0 for a device root */
	uint64_t self_count, count, overrun, overrun_incl;
	int64_t excl, incl;
	uint32_t *kids;
	size_t nkids, capkids;
};

/* A region as shown, after --depth, --min-share and --prune. */
struct view {
	char *name;		/* "a/b" after --prune */
	char *path;
	struct view **kids;
	size_t nkids;
	uint64_t self_count, count, overrun;
	int64_t excl, incl;
	char **frames;		/* path segments, for --folded */
	size_t nframes;
};

struct regions {
	int fmt, merge, prune, by_device, ops, depth;
	double min_share;
	nd_scan_opts so;
	nd_agg *agg;
	nd_buf key, tmp;
	int full_key;		/* key = (device, scope, name) whatever shown */
	/* provenance */
	const char *timelines;
	char *rule;
	int fallback, nheaders, nfallback;
	uint32_t sources;
	nd_stream *st;
	/* tree */
	nd_intern *ids;
	struct node *nodes;
	size_t nnodes, capnodes;
	int64_t total;
};

/* ---- reading ---- */

static void
key_str(nd_buf *k, nd_str s)
{
	if (s.p != NULL)
		nd_aggkey_str(k, s.p, s.n);
	else
		nd_aggkey_none(k);
}

static uint64_t
on_record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	struct regions *r = ctx;
	uint32_t id;

	(void)si;
	nd_buf_reset(&r->key);
	nd_buf_addc(&r->key, 0);
	if (r->full_key || r->by_device)
		key_str(&r->key, ev->device.p != NULL ? ev->device :
		    ev->process);
	else
		nd_aggkey_none(&r->key);
	key_str(&r->key, ev->scope);
	if (r->full_key || r->ops)
		key_str(&r->key, ev->name);
	else
		nd_aggkey_none(&r->key);
	id = nd_agg_id(r->agg, r->key.p, r->key.len);
	nd_agg_row_of(r->agg, id)->count++;
	return id;
}

static void
on_done(void *ctx, const nd_nest_span *s)
{
	struct regions *r = ctx;
	nd_agg_row *row = nd_agg_row_of(r->agg, (uint32_t)s->user);

	row->self_ns += s->self_ns;
	row->overrun += (uint64_t)s->overrun;
}

static void
on_reset(void *ctx)
{
	nd_agg_reset(((struct regions *)ctx)->agg);
}

/* ---- --merge ---- */

static void
merge_header(struct regions *r, nd_stream *st, const nd_event *ev)
{
	const nd_jval *v;
	char *s = nd_jstr_dup(nd_stream_need(st, ev, "rule", ND_JSTR));

	if (r->rule != NULL && strcmp(s, r->rule) != 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: partial results made with "
		    "--overrun %s and %s cannot be merged", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), s, r->rule);
	free(r->rule);
	r->rule = s;
	s = nd_jstr_dup(nd_stream_need(st, ev, "timelines", ND_JSTR));
	if (nd_scan_timelines(s) < 0 ||
	    (r->nheaders > 0 && strcmp(s, r->timelines) != 0))
		nd_die(ND_EXIT_ERROR, "%s:%llu: partial results of --timelines "
		    "%s cannot be merged here", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), s);
	r->timelines = nd_scan_timelines_name(nd_scan_timelines(s));
	free(s);
	v = nd_event_get(ev, "fallback");
	r->fallback = v != NULL && v->type == ND_JTRUE;
	r->nfallback += r->fallback;
	r->sources += (uint32_t)nd_stream_need_int(st, ev, "sources");
	r->nheaders++;
}

static void
merge_group(struct regions *r, nd_stream *st, const nd_event *ev)
{
	const nd_jval *key = nd_stream_need(st, ev, "key", ND_JARR);
	nd_jiter it;
	nd_jval e;
	nd_jerr je;
	size_t n = 0;
	uint32_t id;
	nd_agg_row *row;

	if (r->nheaders == 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: region_group before its "
		    "region_partial header", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st));
	nd_buf_reset(&r->key);
	nd_buf_addc(&r->key, (char)r->fallback);
	nd_jaiter_init(&it, key, key->raw);
	while (nd_jaiter_next(&it, &e, &je) == 1) {
		int keep = n == 1 || (n == 0 && r->by_device) ||
		    (n == 2 && r->ops);

		if (e.type == ND_JSTR && keep) {
			nd_buf_reset(&r->tmp);
			nd_json_unescape(&e, &r->tmp);
			nd_aggkey_str(&r->key, r->tmp.p, r->tmp.len);
		} else if (e.type == ND_JNULL || e.type == ND_JSTR)
			nd_aggkey_none(&r->key);
		else
			break;
		n++;
	}
	if (n != 3)
		nd_die(ND_EXIT_ERROR, "%s:%llu: \"key\" must be [device, "
		    "scope, name], each a string or null", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st));
	id = nd_agg_id(r->agg, r->key.p, r->key.len);
	row = nd_agg_row_of(r->agg, id);
	row->count += (uint64_t)nd_stream_need_int(st, ev, "count");
	row->self_ns += nd_stream_need_int(st, ev, "exclusive_ns");
	row->overrun += (uint64_t)nd_stream_need_int(st, ev, "overrun");
}

static void
read_partials(struct regions *r, char **paths, int n)
{
	nd_stream *st = nd_stream_open(paths, n);
	nd_event ev;

	/* kept in the struct: reachable for the leak checker if we die */
	r->st = st;
	nd_event_init(&ev);
	while (nd_stream_next(st, &ev)) {
		if (nd_str_eq(ev.type_name, "region_partial"))
			merge_header(r, st, &ev);
		else if (nd_str_eq(ev.type_name, "region_group"))
			merge_group(r, st, &ev);
		else if (ev.type != ND_EV_META && ev.type != ND_EV_END)
			nd_die(ND_EXIT_ERROR, "%s:%llu: --merge reads the output "
			    "of trace-regions --partial, not %.*s records",
			    nd_stream_file(st),
			    (unsigned long long)nd_stream_lineno(st),
			    (int)ev.type_name.n, ev.type_name.p);
	}
	nd_stream_close(st);
	r->st = NULL;
	nd_event_free(&ev);
	if (r->nheaders == 0)
		nd_die(ND_EXIT_ERROR, "--merge: no region_partial header in "
		    "the input");
	r->fallback = r->nfallback == r->nheaders;
	if (r->rule == NULL)
		r->rule = nd_xstrdup("clip");
}

/* ---- the tree ---- */

static uint32_t
child(struct regions *r, uint32_t parent, const char *name, size_t n)
{
	uint32_t id;

	nd_buf_reset(&r->tmp);
	nd_buf_add(&r->tmp, &parent, sizeof parent);
	nd_buf_add(&r->tmp, name, n);
	id = nd_intern_id(r->ids, r->tmp.p, r->tmp.len);
	if (id >= r->nnodes) {
		struct node *nd;

		nd_grow(&r->nodes, &r->capnodes, (size_t)id + 1,
		    sizeof *r->nodes);
		nd = &r->nodes[id];
		memset(nd, 0, sizeof *nd);
		nd->parent = parent;
		nd->name = nd_xstrndup(name, n);
		nd->depth = parent == UINT32_MAX ? 0 :
		    r->nodes[parent].depth + 1;
		r->nnodes = (size_t)id + 1;
		if (parent != UINT32_MAX) {
			struct node *p = &r->nodes[parent];

			nd_grow(&p->kids, &p->capkids, p->nkids + 1,
			    sizeof *p->kids);
			p->kids[p->nkids++] = id;
		}
	}
	return id;
}

/* Field i of a row key (after the flag byte). */
static void
field(const char *key, size_t kl, int i, int *tag, const char **s,
    size_t *n)
{
	const char *p = key + 1, *end = key + kl;

	for (int j = 0; nd_aggkey_next(&p, end, tag, s, n); j++)
		if (j == i)
			return;
	*tag = ND_AGGKEY_NONE;
}

static void
build_tree(struct regions *r)
{
	uint32_t n = nd_agg_count(r->agg);
	char want = (char)(r->merge && r->fallback);

	r->ids = nd_intern_new();
	for (uint32_t i = 0; i < n; i++) {
		size_t kl, sn;
		const char *key = nd_agg_key(r->agg, i, &kl), *s;
		const nd_agg_row *row = nd_agg_row_of(r->agg, i);
		uint32_t cur;
		int tag, any = 0;

		if (row->count == 0 || key[0] != want)
			continue;
		field(key, kl, 0, &tag, &s, &sn);
		if (!r->by_device || tag != ND_AGGKEY_STR) {
			s = r->by_device ? NONE_DEVICE : "";
			sn = strlen(s);
		}
		cur = child(r, UINT32_MAX, s, sn);
		field(key, kl, 1, &tag, &s, &sn);
		if (tag == ND_AGGKEY_STR) {
			size_t a = 0;

			while (a < sn) {
				size_t b = a;

				while (b < sn && s[b] != '/')
					b++;
				if (b > a) {
					cur = child(r, cur, s + a, b - a);
					any = 1;
				}
				a = b + 1;
			}
		}
		if (!any)
			cur = child(r, cur, NONE_SCOPE, strlen(NONE_SCOPE));
		if (r->ops) {
			field(key, kl, 2, &tag, &s, &sn);
			if (tag == ND_AGGKEY_STR && sn > 0)
				cur = child(r, cur, s, sn);
			else
				cur = child(r, cur, NONE_NAME,
				    strlen(NONE_NAME));
		}
		r->nodes[cur].self_count += row->count;
		r->nodes[cur].excl += row->self_ns;
		r->nodes[cur].overrun += row->overrun;
	}
	/* Children come after their parents: sum bottom-up. */
	for (size_t i = r->nnodes; i-- > 0;) {
		struct node *nd = &r->nodes[i];

		nd->incl += nd->excl;
		nd->count += nd->self_count;
		nd->overrun_incl += nd->overrun;
		if (nd->parent != UINT32_MAX) {
			r->nodes[nd->parent].incl += nd->incl;
			r->nodes[nd->parent].count += nd->count;
			r->nodes[nd->parent].overrun_incl += nd->overrun_incl;
		} else
			r->total += nd->incl;
	}
}

static struct regions *sort_r;

static int
node_cmp(const void *a, const void *b)
{
	const struct node *x = &sort_r->nodes[*(const uint32_t *)a];
	const struct node *y = &sort_r->nodes[*(const uint32_t *)b];

	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
view_cmp(const void *a, const void *b)
{
	const struct view *x = *(struct view *const *)a;
	const struct view *y = *(struct view *const *)b;

	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return strcmp(x->name, y->name);
}

static struct view *
view_new(const char *name, const char *path, char **frames, size_t nf)
{
	struct view *v = nd_xcalloc(1, sizeof *v);

	v->name = nd_xstrdup(name);
	v->path = nd_xstrdup(path);
	v->frames = nd_xcalloc(nf > 0 ? nf : 1, sizeof *v->frames);
	for (size_t i = 0; i < nf; i++)
		v->frames[i] = nd_xstrdup(frames[i]);
	v->nframes = nf;
	return v;
}

static void
view_free(struct view *v)
{
	for (size_t i = 0; i < v->nkids; i++)
		view_free(v->kids[i]);
	for (size_t i = 0; i < v->nframes; i++)
		free(v->frames[i]);
	free(v->frames);
	free(v->kids);
	free(v->name);
	free(v->path);
	free(v);
}

static void
view_add_kid(struct view *p, struct view *k)
{
	p->kids = nd_xrealloc(p->kids, (p->nkids + 1) * sizeof *p->kids);
	p->kids[p->nkids++] = k;
}

/* Add node id (and its subtree) to the view as children of parent, folding
 * what --depth and --min-share hide into the region shown above it (or,
 * for a top-level region, into `other`). */
static void
make_view(struct regions *r, uint32_t id, struct view *parent,
    struct view *other, char **frames, size_t nf)
{
	struct node *nd = &r->nodes[id];
	double share = r->total > 0 ? (double)nd->incl / (double)r->total : 0;
	struct view *v;
	nd_buf path = ND_BUF_INIT;
	int leaf = r->depth > 0 && nd->depth >= r->depth;

	if (share < r->min_share) {
		struct view *into = nd->depth == 1 ? other : parent;

		into->excl += nd->incl;
		into->self_count += nd->count;
		into->overrun += nd->overrun_incl;
		if (into == other) {
			into->incl += nd->incl;
			into->count += nd->count;
		}
		return;
	}
	for (size_t i = 0; i < nf; i++) {
		if (i > 0)
			nd_buf_addc(&path, '/');
		nd_buf_adds(&path, frames[i]);
	}
	if (nf > 0)
		nd_buf_addc(&path, '/');
	nd_buf_adds(&path, nd->name);
	frames[nf] = nd->name;
	v = view_new(nd->name, path.p, frames, nf + 1);
	nd_buf_free(&path);
	v->incl = nd->incl;
	v->count = nd->count;
	v->excl = nd->excl;
	v->self_count = nd->self_count;
	v->overrun = nd->overrun;
	view_add_kid(parent, v);
	if (leaf) {
		/* --depth: the whole subtree is this region's own time */
		v->excl = nd->incl;
		v->self_count = nd->count;
		v->overrun = nd->overrun_incl;
		return;
	}
	if (nd->nkids > 1)
		qsort(nd->kids, nd->nkids, sizeof *nd->kids, node_cmp);
	for (size_t i = 0; i < nd->nkids; i++)
		make_view(r, nd->kids[i], v, other, frames, nf + 1);
}

/* --prune: merge a region into its only child when it has no time of its
 * own. */
static void
prune(struct view *v)
{
	for (size_t i = 0; i < v->nkids; i++) {
		struct view *k = v->kids[i];

		while (k->nkids == 1 && k->excl == 0) {
			struct view *c = k->kids[0];
			nd_buf nm = ND_BUF_INIT;

			nd_buf_adds(&nm, k->name);
			nd_buf_addc(&nm, '/');
			nd_buf_adds(&nm, c->name);
			free(c->name);
			c->name = nd_xstrndup(nm.p, nm.len);
			nd_buf_free(&nm);
			c->self_count += k->self_count;
			c->count = k->count;
			c->overrun += k->overrun;
			k->nkids = 0;
			view_free(k);
			v->kids[i] = k = c;
		}
		prune(k);
	}
}

/* ---- output ---- */

struct outctx {
	struct regions *r;
	nd_out *o;
	const char *device;	/* --by-device */
	int64_t root_incl;
	size_t namew;
};

static void
emit_json(struct outctx *c, const struct view *v, int depth)
{
	nd_buf *b = nd_out_buf(c->o);
	nd_jw w;

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "region");
	if (c->device != NULL)
		nd_jw_kcstr(&w, "device", c->device);
	nd_jw_kcstr(&w, "path", v->path);
	nd_jw_kcstr(&w, "name", v->name);
	nd_jw_kint(&w, "depth", depth);
	nd_jw_kuint(&w, "count", v->count);
	nd_jw_kuint(&w, "self_count", v->self_count);
	nd_jw_kint(&w, "inclusive_ns", v->incl);
	nd_jw_kint(&w, "exclusive_ns", v->excl);
	nd_jw_kdbl(&w, "share_root", c->root_incl > 0 ?
	    (double)v->incl / (double)c->root_incl : 0.0);
	nd_jw_kdbl(&w, "share_total", c->r->total > 0 ?
	    (double)v->incl / (double)c->r->total : 0.0);
	nd_jw_kuint(&w, "overrun", v->overrun);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_out_commit(c->o);
}

#define BARW 40

static void
emit_tree(struct outctx *c, const struct view *v, int depth)
{
	nd_buf *b = nd_out_buf(c->o);
	char incl[32], excl[32];
	double share = c->r->total > 0 ? (double)v->incl /
	    (double)c->r->total : 0.0;
	size_t bar = (size_t)llround(share * BARW);
	size_t used = (size_t)(2 * (depth - 1)) +
	    nd_text_width(v->name, strlen(v->name));

	nd_fmt_dur(incl, sizeof incl, v->incl, 0);
	nd_fmt_dur(excl, sizeof excl, v->excl, 0);
	nd_buf_addf(b, "%6.2f%%  %11s  %11s  %8llu  %*s%s", 100.0 * share,
	    incl, excl, (unsigned long long)v->count, 2 * (depth - 1), "",
	    v->name);
	if (bar > 0) {
		for (size_t i = used; i < c->namew + 2; i++)
			nd_buf_addc(b, ' ');
		for (size_t i = 0; i < bar; i++)
			nd_buf_addc(b, '#');
	}
	nd_buf_addc(b, '\n');
	nd_out_commit(c->o);
}

static void
emit_folded(struct outctx *c, const struct view *v)
{
	nd_buf *b = nd_out_buf(c->o);

	if (v->excl <= 0)
		return;
	if (c->device != NULL) {
		for (const char *s = c->device; *s; s++)
			nd_buf_addc(b, *s == ';' ? ':' : *s == '\n' ? ' ' :
			    *s);
		nd_buf_addc(b, ';');
	}
	for (size_t i = 0; i < v->nframes; i++) {
		if (i > 0)
			nd_buf_addc(b, ';');
		for (const char *s = v->frames[i]; *s; s++)
			nd_buf_addc(b, *s == ';' ? ':' : *s == '\n' ? ' ' :
			    *s);
	}
	nd_buf_addf(b, " %lld\n", (long long)v->excl);
	nd_out_commit(c->o);
}

static void
walk(struct outctx *c, const struct view *v, int depth, int fmt)
{
	if (depth == 1)
		c->root_incl = v->incl;
	if (fmt == FMT_JSON)
		emit_json(c, v, depth);
	else if (fmt == FMT_TREE)
		emit_tree(c, v, depth);
	else
		emit_folded(c, v);
	for (size_t i = 0; i < v->nkids; i++)
		walk(c, v->kids[i], depth + 1, fmt);
}

static void
name_width(const struct view *v, int depth, size_t *w)
{
	size_t u = (size_t)(2 * (depth - 1)) +
	    nd_text_width(v->name, strlen(v->name));

	if (u > *w)
		*w = u;
	for (size_t i = 0; i < v->nkids; i++)
		name_width(v->kids[i], depth + 1, w);
}

static void
write_partial(struct regions *r, nd_out *o)
{
	nd_buf *b = nd_out_buf(o);
	uint32_t n = nd_agg_count(r->agg);
	char want = (char)(r->merge && r->fallback);
	nd_jw w;

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "region_partial");
	nd_jw_kcstr(&w, "timelines", r->timelines);
	nd_jw_kbool(&w, "fallback", r->fallback);
	nd_jw_kcstr(&w, "rule", r->rule);
	nd_jw_kuint(&w, "sources", r->sources);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_out_commit(o);
	for (uint32_t i = 0; i < n; i++) {
		size_t kl;
		const char *key = nd_agg_key(r->agg, i, &kl);
		const nd_agg_row *row = nd_agg_row_of(r->agg, i);
		const char *p = key + 1, *end = key + kl, *s;
		size_t sn;
		int tag;

		if (row->count == 0 || key[0] != want)
			continue;
		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", "region_group");
		nd_jw_key(&w, "key");
		nd_jw_arr(&w);
		while (nd_aggkey_next(&p, end, &tag, &s, &sn))
			if (tag == ND_AGGKEY_STR)
				nd_jw_str(&w, s, sn);
			else
				nd_jw_null(&w);
		nd_jw_arr_end(&w);
		nd_jw_kuint(&w, "count", row->count);
		nd_jw_kint(&w, "exclusive_ns", row->self_ns);
		nd_jw_kuint(&w, "overrun", row->overrun);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		nd_out_commit(o);
	}
}

static void
output(struct regions *r, const char *path)
{
	nd_out *o = nd_out_open(path);
	uint32_t *roots = NULL;
	size_t nroots = 0;
	struct outctx c;

	if (r->fmt == FMT_PARTIAL) {
		write_partial(r, o);
		nd_out_close(o);
		return;
	}
	build_tree(r);
	for (size_t i = 0; i < r->nnodes; i++)
		if (r->nodes[i].parent == UINT32_MAX) {
			roots = nd_xrealloc(roots, (nroots + 1) *
			    sizeof *roots);
			roots[nroots++] = (uint32_t)i;
		}
	sort_r = r;
	if (nroots > 1)
		qsort(roots, nroots, sizeof *roots, node_cmp);
	memset(&c, 0, sizeof c);
	c.r = r;
	c.o = o;
	if (r->fmt == FMT_TREE) {
		nd_buf_addf(nd_out_buf(o), "%7s  %11s  %11s  %8s  %s\n",
		    "share", "inclusive", "exclusive", "count", "region");
		nd_out_commit(o);
	}
	for (size_t i = 0; i < nroots; i++) {
		struct node *dev = &r->nodes[roots[i]];
		struct view *top = view_new("", "", NULL, 0);
		struct view *other = view_new(OTHER, OTHER, NULL, 0);
		char **frames = nd_xcalloc((size_t)r->nnodes + 2,
		    sizeof *frames);

		if (dev->nkids > 1)
			qsort(dev->kids, dev->nkids, sizeof *dev->kids,
			    node_cmp);
		for (size_t k = 0; k < dev->nkids; k++)
			make_view(r, dev->kids[k], top, other, frames, 0);
		free(frames);
		if (other->incl > 0 || other->count > 0) {
			free(other->frames[0]);
			other->frames[0] = nd_xstrdup(OTHER);
			other->nframes = 1;
			view_add_kid(top, other);
			qsort(top->kids, top->nkids, sizeof *top->kids,
			    view_cmp);
		} else
			view_free(other);
		if (r->prune && r->fmt != FMT_FOLDED)
			prune(top);
		c.device = r->by_device ? dev->name : NULL;
		if (r->fmt == FMT_TREE) {
			c.namew = 0;
			for (size_t k = 0; k < top->nkids; k++)
				name_width(top->kids[k], 1, &c.namew);
			if (r->by_device) {
				char d[32];

				nd_fmt_dur(d, sizeof d, dev->incl, 0);
				nd_buf_addf(nd_out_buf(o), "%sdevice %s: %s\n",
				    i > 0 ? "\n" : "", dev->name, d);
			}
		}
		for (size_t k = 0; k < top->nkids; k++)
			walk(&c, top->kids[k], 1, r->fmt);
		view_free(top);
	}
	if (r->fmt == FMT_TREE) {
		char d[32];

		nd_fmt_dur(d, sizeof d, r->total, 0);
		nd_buf_addf(nd_out_buf(o), "\ntotal %s%s\n", d,
		    r->fallback && r->total > 0 ?
		    "; no device ops: every timeline counted" : "");
		nd_out_commit(o);
	}
	free(roots);
	nd_out_close(o);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "min-share", required_argument, NULL, OPT_MINSHARE },
		{ "prune", no_argument, NULL, OPT_PRUNE },
		{ "by-device", no_argument, NULL, OPT_BYDEV },
		{ "ops", no_argument, NULL, OPT_OPS },
		{ "timelines", required_argument, NULL, OPT_TIMELINES },
		{ "overrun", required_argument, NULL, OPT_OVERRUN },
		{ "unordered", no_argument, NULL, OPT_UNORDERED },
		{ "tree", no_argument, NULL, OPT_TREE },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct regions r;
	const char *out = NULL;
	int c, nfmt = 0, scanopt = 0;

	nd_init(argv[0]);
	memset(&r, 0, sizeof r);
	r.so.timelines = ND_TL_DEVICE;
	r.so.rule = ND_NEST_CLIP;
	r.so.type = "span";
	while ((c = getopt_long(argc, argv, "ho:V", opts, NULL)) != -1)
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'o':
			out = optarg;
			break;
		case 'V':
			nd_cli_version();
		case OPT_DEPTH:
			r.depth = (int)nd_cli_int("--depth", optarg, 1, 1000000);
			break;
		case OPT_MINSHARE:
			r.min_share = nd_cli_double("--min-share", optarg, 0, 1);
			break;
		case OPT_PRUNE:
			r.prune = 1;
			break;
		case OPT_BYDEV:
			r.by_device = 1;
			break;
		case OPT_OPS:
			r.ops = 1;
			break;
		case OPT_TIMELINES:
			if ((r.so.timelines = nd_scan_timelines(optarg)) < 0)
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--timelines: '%s' (device, host or all)",
				    optarg);
			scanopt = 1;
			break;
		case OPT_OVERRUN:
			if (strcmp(optarg, "clip") == 0)
				r.so.rule = ND_NEST_CLIP;
			else if (strcmp(optarg, "reparent") == 0)
				r.so.rule = ND_NEST_REPARENT;
			else
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--overrun: '%s' (clip or reparent)",
				    optarg);
			scanopt = 1;
			break;
		case OPT_UNORDERED:
			r.so.unordered = 1;
			scanopt = 1;
			break;
		case OPT_TREE:
			r.fmt = FMT_TREE;
			nfmt++;
			break;
		case OPT_FOLDED:
			r.fmt = FMT_FOLDED;
			nfmt++;
			break;
		case OPT_PARTIAL:
			r.fmt = FMT_PARTIAL;
			nfmt++;
			break;
		case OPT_MERGE:
			r.merge = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;
	if (nfmt > 1)
		nd_die(ND_EXIT_ERROR, "--tree, --folded and --partial exclude "
		    "each other");
	if (r.merge && scanopt)
		nd_die(ND_EXIT_ERROR, "--merge takes --timelines, --overrun "
		    "and --unordered from the partial results; do not give "
		    "them again");
	r.agg = nd_agg_new();
	/* Partial results keep (device, scope, name) so that the merge can
	 * show any view of them. */
	r.full_key = r.fmt == FMT_PARTIAL;
	if (r.merge) {
		if (r.fmt == FMT_PARTIAL)
			r.by_device = r.ops = 1;
		read_partials(&r, argv, argc);
	} else {
		nd_scan_cb cb = { &r, on_record, on_done, on_reset };
		nd_scan_res res;

		nd_scan(argv, argc, &r.so, &cb, &res);
		r.timelines = nd_scan_timelines_name(r.so.timelines);
		r.fallback = res.fallback;
		r.sources = res.sources;
		r.rule = nd_xstrdup(r.so.rule == ND_NEST_REPARENT ?
		    "reparent" : "clip");
	}
	output(&r, out);
	for (size_t i = 0; i < r.nnodes; i++) {
		free(r.nodes[i].name);
		free(r.nodes[i].kids);
	}
	free(r.nodes);
	nd_intern_free(r.ids);
	free(r.rule);
	nd_agg_free(r.agg);
	nd_buf_free(&r.key);
	nd_buf_free(&r.tmp);
	return ND_EXIT_OK;
}
