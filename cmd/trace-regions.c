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
#include "nd_partial.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-regions [-huV] [--depth N] [--min-share fraction] [--prune] [--by-device] [--ops] [--timelines which] [--overrun rule] [--tree | --folded | --partial] [--merge] [-o file] [file ...]\n"
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
"  -u, --unordered      buffer every timeline (input in any order, on a pipe)\n"
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
	struct view **kids;
	size_t nkids, capkids;
	uint64_t self_count, count, overrun;
	int64_t excl, incl;
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

/* One record of a partial whose framing checked out (nd_partial). */
static void
merge_record(void *ctx, nd_stream *st, const nd_event *ev)
{
	struct regions *r = ctx;

	if (nd_str_eq(ev->type_name, "region_partial"))
		merge_header(r, st, ev);
	else
		merge_group(r, st, ev);
}

static void
read_partials(struct regions *r, char **paths, int n)
{
	static const char *const body[] = { "region_group" };

	nd_partial_read(paths, n, "region_partial", body, 1, merge_record, r);
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

/* Views form a tree as deep as the deepest scope (one region per
 * segment): every walk over it below keeps its own stack instead of
 * recursing, and a view stores only its name -- the path and the frames
 * of a region are built while walking, so memory stays linear in the
 * segments of the input. */
static struct view *
view_new(const char *name)
{
	struct view *v = nd_xcalloc(1, sizeof *v);

	v->name = nd_xstrdup(name);
	return v;
}

/* A growing stack of pointers for the walks. */
struct vstack {
	void **p;
	size_t n, cap;
};

static void
vs_push(struct vstack *s, void *x)
{
	nd_grow(&s->p, &s->cap, s->n + 1, sizeof *s->p);
	s->p[s->n++] = x;
}

static void
view_free(struct view *top)
{
	struct vstack s = { NULL, 0, 0 };

	vs_push(&s, top);
	while (s.n > 0) {
		struct view *v = s.p[--s.n];

		for (size_t i = 0; i < v->nkids; i++)
			vs_push(&s, v->kids[i]);
		free(v->kids);
		free(v->name);
		free(v);
	}
	free(s.p);
}

static void
view_add_kid(struct view *p, struct view *k)
{
	nd_grow(&p->kids, &p->capkids, p->nkids + 1, sizeof *p->kids);
	p->kids[p->nkids++] = k;
}

/* A node to turn into a view below `parent` (make_view's work list). */
struct mv {
	uint32_t id;
	struct view *parent;
};

/* Add node id (and its subtree) to the view as children of parent, folding
 * what --depth and --min-share hide into the region shown above it (or,
 * for a top-level region, into `other`).  Children are taken in sorted
 * order: they are pushed in reverse. */
static void
make_view(struct regions *r, uint32_t top, struct view *parent,
    struct view *other)
{
	struct mv *st = NULL;
	size_t n = 0, cap = 0;

	nd_grow(&st, &cap, 1, sizeof *st);
	st[n].id = top;
	st[n++].parent = parent;
	while (n > 0) {
		struct mv it = st[--n];
		struct node *nd = &r->nodes[it.id];
		double share = r->total > 0 ? (double)nd->incl /
		    (double)r->total : 0;
		struct view *v;

		if (share < r->min_share) {
			struct view *into = nd->depth == 1 ? other : it.parent;

			into->excl += nd->incl;
			into->self_count += nd->count;
			into->overrun += nd->overrun_incl;
			if (into == other) {
				into->incl += nd->incl;
				into->count += nd->count;
			}
			continue;
		}
		v = view_new(nd->name);
		v->incl = nd->incl;
		v->count = nd->count;
		v->excl = nd->excl;
		v->self_count = nd->self_count;
		v->overrun = nd->overrun;
		view_add_kid(it.parent, v);
		if (r->depth > 0 && nd->depth >= r->depth) {
			/* --depth: the whole subtree is this region's own
			 * time */
			v->excl = nd->incl;
			v->self_count = nd->count;
			v->overrun = nd->overrun_incl;
			continue;
		}
		if (nd->nkids > 1)
			qsort(nd->kids, nd->nkids, sizeof *nd->kids, node_cmp);
		nd_grow(&st, &cap, n + nd->nkids, sizeof *st);
		for (size_t i = nd->nkids; i-- > 0;) {
			st[n].id = nd->kids[i];
			st[n++].parent = v;
		}
	}
	free(st);
}

/* --prune: merge a region into its only child when it has no time of its
 * own.  A chain of such regions is merged at once (its names joined
 * once, not once per link). */
static void
prune(struct view *top)
{
	struct vstack s = { NULL, 0, 0 };
	nd_buf nm = ND_BUF_INIT;

	vs_push(&s, top);
	while (s.n > 0) {
		struct view *v = s.p[--s.n];

		for (size_t i = 0; i < v->nkids; i++) {
			struct view *k = v->kids[i], *c;
			uint64_t self_count = 0, overrun = 0, count = k->count;

			if (k->nkids != 1 || k->excl != 0) {
				vs_push(&s, k);
				continue;
			}
			nd_buf_reset(&nm);
			while (k->nkids == 1 && k->excl == 0) {
				c = k->kids[0];
				nd_buf_adds(&nm, k->name);
				nd_buf_addc(&nm, '/');
				self_count += k->self_count;
				overrun += k->overrun;
				k->nkids = 0;
				view_free(k);
				k = c;
			}
			nd_buf_adds(&nm, k->name);
			free(k->name);
			k->name = nd_xstrndup(nm.p, nm.len);
			k->self_count += self_count;
			k->count = count;
			k->overrun += overrun;
			v->kids[i] = k;
			vs_push(&s, k);
		}
	}
	nd_buf_free(&nm);
	free(s.p);
}

/* ---- output ---- */

struct outctx {
	struct regions *r;
	nd_out *o;
	const char *device;	/* --by-device */
	int64_t root_incl;
	size_t namew;
	/* the walk: the views from depth 1 down to the current one, and the
	 * length of the path at each depth */
	const struct view **anc;
	size_t *plen, capanc, capplen;
	nd_buf path;
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
	nd_jw_kstr(&w, "path", c->path.p != NULL ? c->path.p : "",
	    c->path.len);
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
/* --tree stays linear in the regions however deep the tree: indentation
 * stops at TREE_LEVELS levels (deeper names start with their level in
 * brackets) and the bars at column TREE_BARCOL (a longer name gets two
 * spaces). */
#define TREE_LEVELS 32
#define TREE_BARCOL 80

/* Columns before the name and the prefix of a deeper one. */
static size_t
tree_indent(int depth, char *pre, size_t npre)
{
	pre[0] = '\0';
	if (depth <= TREE_LEVELS)
		return (size_t)(2 * (depth - 1));
	snprintf(pre, npre, "[%d] ", depth);
	return (size_t)(2 * (TREE_LEVELS - 1)) + strlen(pre);
}

static void
emit_tree(struct outctx *c, const struct view *v, int depth)
{
	nd_buf *b = nd_out_buf(c->o);
	char incl[32], excl[32], pre[24];
	double share = c->r->total > 0 ? (double)v->incl /
	    (double)c->r->total : 0.0;
	size_t bar = (size_t)llround(share * BARW);
	size_t ind = tree_indent(depth, pre, sizeof pre);
	size_t used = ind + nd_text_width(v->name, strlen(v->name));
	size_t col = (c->namew < TREE_BARCOL ? c->namew : TREE_BARCOL) + 2;

	nd_fmt_dur(incl, sizeof incl, v->incl, 0);
	nd_fmt_dur(excl, sizeof excl, v->excl, 0);
	nd_buf_addf(b, "%6.2f%%  %11s  %11s  %8llu  %*s%s%s", 100.0 * share,
	    incl, excl, (unsigned long long)v->count,
	    (int)(ind - strlen(pre)), "", pre, v->name);
	if (bar > 0) {
		for (size_t i = used; i < col; i++)
			nd_buf_addc(b, ' ');
		if (used >= col)
			nd_buf_adds(b, "  ");
		for (size_t i = 0; i < bar; i++)
			nd_buf_addc(b, '#');
	}
	nd_buf_addc(b, '\n');
	nd_out_commit(c->o);
}

/* Only regions with exclusive time are lines: the others would add
 * nothing to a flame graph, and writing them would make the output grow
 * with the square of the depth.  Each line is as long as the scope (and
 * op name) it stands for. */
static void
emit_folded(struct outctx *c, int depth)
{
	nd_buf *b = nd_out_buf(c->o);

	if (c->anc[depth]->excl <= 0)
		return;
	if (c->device != NULL) {
		for (const char *s = c->device; *s; s++)
			nd_buf_addc(b, *s == ';' ? ':' : *s == '\n' ? ' ' :
			    *s);
		nd_buf_addc(b, ';');
	}
	for (int i = 1; i <= depth; i++) {
		if (i > 1)
			nd_buf_addc(b, ';');
		for (const char *s = c->anc[i]->name; *s; s++)
			nd_buf_addc(b, *s == ';' ? ':' : *s == '\n' ? ' ' :
			    *s);
	}
	nd_buf_addf(b, " %lld\n", (long long)c->anc[depth]->excl);
	nd_out_commit(c->o);
}

/* A view and its depth on a walk's stack. */
struct wv {
	const struct view *v;
	int depth;
};

/* Write the region `top` (depth 1) and its subtree, parents first. */
static void
walk(struct outctx *c, const struct view *top, int fmt)
{
	struct wv *st = NULL;
	size_t n = 0, cap = 0;

	nd_grow(&st, &cap, 1, sizeof *st);
	st[n].v = top;
	st[n++].depth = 1;
	c->root_incl = top->incl;
	while (n > 0) {
		struct wv it = st[--n];
		const struct view *v = it.v;
		size_t d = (size_t)it.depth;

		nd_grow(&c->anc, &c->capanc, d + 1, sizeof *c->anc);
		nd_grow(&c->plen, &c->capplen, d + 1, sizeof *c->plen);
		c->anc[d] = v;
		c->path.len = d > 1 ? c->plen[d - 1] : 0;
		if (d > 1)
			nd_buf_addc(&c->path, '/');
		nd_buf_adds(&c->path, v->name);
		c->plen[d] = c->path.len;
		if (fmt == FMT_JSON)
			emit_json(c, v, it.depth);
		else if (fmt == FMT_TREE)
			emit_tree(c, v, it.depth);
		else
			emit_folded(c, it.depth);
		nd_grow(&st, &cap, n + v->nkids, sizeof *st);
		for (size_t i = v->nkids; i-- > 0;) {
			st[n].v = v->kids[i];
			st[n++].depth = it.depth + 1;
		}
	}
	free(st);
}

static void
name_width(const struct view *top, size_t *w)
{
	struct wv *st = NULL;
	size_t n = 0, cap = 0;

	nd_grow(&st, &cap, 1, sizeof *st);
	st[n].v = top;
	st[n++].depth = 1;
	while (n > 0) {
		struct wv it = st[--n];
		char pre[24];
		size_t u = tree_indent(it.depth, pre, sizeof pre) +
		    nd_text_width(it.v->name, strlen(it.v->name));

		if (u > *w)
			*w = u;
		nd_grow(&st, &cap, n + it.v->nkids, sizeof *st);
		for (size_t i = 0; i < it.v->nkids; i++) {
			st[n].v = it.v->kids[i];
			st[n++].depth = it.depth + 1;
		}
	}
	free(st);
}

static void
write_partial(struct regions *r, nd_out *o)
{
	nd_buf *b = nd_out_buf(o);
	uint32_t n = nd_agg_count(r->agg);
	char want = (char)(r->merge && r->fallback);
	nd_jw w;
	nd_partial_w pw;

	nd_partial_begin(&pw, o, &w, "region_partial");
	nd_jw_kcstr(&w, "timelines", r->timelines);
	nd_jw_kbool(&w, "fallback", r->fallback);
	nd_jw_kcstr(&w, "rule", r->rule);
	nd_jw_kuint(&w, "sources", r->sources);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_partial_commit(&pw);
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
		nd_partial_commit(&pw);
	}
	nd_partial_end(&pw);
}

static void
output(struct regions *r, const char *path)
{
	nd_out *o = nd_out_open(path);
	uint32_t *roots = NULL;
	size_t nroots = 0, caproots = 0;
	struct outctx c;

	if (r->fmt == FMT_PARTIAL) {
		write_partial(r, o);
		nd_out_close(o);
		return;
	}
	build_tree(r);
	for (size_t i = 0; i < r->nnodes; i++)
		if (r->nodes[i].parent == UINT32_MAX) {
			nd_grow(&roots, &caproots, nroots + 1,
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
		struct view *top = view_new("");
		struct view *other = view_new(OTHER);

		if (dev->nkids > 1)
			qsort(dev->kids, dev->nkids, sizeof *dev->kids,
			    node_cmp);
		for (size_t k = 0; k < dev->nkids; k++)
			make_view(r, dev->kids[k], top, other);
		if (other->incl > 0 || other->count > 0) {
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
				name_width(top->kids[k], &c.namew);
			if (r->by_device) {
				char d[32];

				nd_fmt_dur(d, sizeof d, dev->incl, 0);
				nd_buf_addf(nd_out_buf(o), "%sdevice %s: %s\n",
				    i > 0 ? "\n" : "", dev->name, d);
			}
		}
		for (size_t k = 0; k < top->nkids; k++)
			walk(&c, top->kids[k], r->fmt);
		view_free(top);
	}
	free(c.anc);
	free(c.plen);
	nd_buf_free(&c.path);
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
	while ((c = getopt_long(argc, argv, "ho:uV", opts, NULL)) != -1)
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
		case 'u':
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
