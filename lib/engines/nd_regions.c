/*
 * nd_regions: time by named-scope region (see nd_regions.h).
 */
#include "nd_regions.h"

#include "nd_cli.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_name.h"
#include "nd_nest.h"
#include "nd_partial.h"
#include "nd_prov.h"
#include "nd_sort.h"
#include "nd_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE_SCOPE "(none)"
#define NONE_NAME "(unnamed)"
#define NONE_DEVICE "(unknown)"
#define OTHER "(other)"

/* A region as shown, after --depth, --min-share and --prune. */
struct view {
	char *name;		/* "a/b" after --prune; may hold NUL */
	size_t namelen;
	struct view **kids;
	size_t nkids, capkids;
	uint64_t self_count, count, overrun;
	int64_t excl, incl;
};

struct nd_rtree {
	nd_intern *ids;		/* (parent, name) -> node id */
	nd_region *nodes;
	size_t nnodes, capnodes;
	nd_buf tmp;
};

struct nd_regions {
	nd_scan *sc;		/* first: the reading's (nd_scan_eng_*) */
	nd_regions_opts o;
	int merge;
	nd_agg *agg;
	nd_buf key, tmp;
	int full_key;		/* key = (device, scope, name) whatever shown */
	nd_prov prov;
	nd_rtree *tree;
	int64_t total;
	/* as an engine (nd_regions_engine) */
	nd_scan_opts so;
};

nd_regions *
nd_regions_new(const nd_regions_opts *o)
{
	nd_regions *r = nd_xcalloc(1, sizeof *r);

	r->o = *o;
	r->agg = nd_agg_new();
	/* Partial results keep (device, scope, name) so that the merge can
	 * show any view of them. */
	r->full_key = o->fmt == ND_REG_PARTIAL;
	return r;
}

void
nd_regions_free(nd_regions *r)
{
	if (r == NULL)
		return;
	nd_scan_free(r->sc);
	nd_rtree_free(r->tree);
	nd_prov_free(&r->prov);
	nd_agg_free(r->agg);
	nd_buf_free(&r->key);
	nd_buf_free(&r->tmp);
	free(r);
}

/* ---- the scope tree ---- */

nd_rtree *
nd_rtree_new(void)
{
	nd_rtree *t = nd_xcalloc(1, sizeof *t);

	t->ids = nd_intern_new();
	return t;
}

void
nd_rtree_free(nd_rtree *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].name);
		free(t->nodes[i].kids);
	}
	free(t->nodes);
	nd_intern_free(t->ids);
	nd_buf_free(&t->tmp);
	free(t);
}

uint32_t
nd_rtree_child(nd_rtree *t, uint32_t parent, int root, const char *name,
    size_t n)
{
	uint32_t id;

	nd_buf_reset(&t->tmp);
	nd_buf_add(&t->tmp, &parent, sizeof parent);
	nd_buf_add(&t->tmp, name, n);
	id = nd_intern_id(t->ids, t->tmp.p, t->tmp.len);
	if (id >= t->nnodes) {
		nd_region *nd;

		nd_grow(&t->nodes, &t->capnodes, (size_t)id + 1,
		    sizeof *t->nodes);
		nd = &t->nodes[id];
		memset(nd, 0, sizeof *nd);
		nd->parent = parent;
		nd->name = nd_xstrndup(name, n);
		nd->namelen = n;
		if (parent == UINT32_MAX) {
			nd->depth = root ? 0 : 1;
			nd->plen = root ? 0 : n;
		} else {
			const nd_region *p = &t->nodes[parent];

			nd->depth = p->depth + 1;
			nd->plen = p->depth == 0 ? n : p->plen + 1 + n;
		}
		t->nnodes = (size_t)id + 1;
		if (parent != UINT32_MAX) {
			nd_region *p = &t->nodes[parent];

			nd_grow(&p->kids, &p->capkids, p->nkids + 1,
			    sizeof *p->kids);
			p->kids[p->nkids++] = id;
		}
	}
	return id;
}

uint32_t
nd_rtree_scope(nd_rtree *t, uint32_t parent, const char *scope, size_t n,
    const char *none)
{
	uint32_t cur = parent;
	int any = 0;
	size_t a = 0;

	while (a < n) {
		size_t b = a;

		while (b < n && scope[b] != '/')
			b++;
		if (b > a) {
			cur = nd_rtree_child(t, cur, 0, scope + a, b - a);
			any = 1;
		}
		a = b + 1;
	}
	if (any)
		return cur;
	if (none == NULL)
		return UINT32_MAX;
	return nd_rtree_child(t, parent, 0, none, strlen(none));
}

void
nd_rtree_add(nd_rtree *t, uint32_t id, uint64_t count, int64_t excl,
    uint64_t overrun)
{
	nd_region *nd = &t->nodes[id];

	nd->self_count += count;
	nd->excl += excl;
	nd->overrun += overrun;
}

int64_t
nd_rtree_sum(nd_rtree *t)
{
	int64_t total = 0;

	/* Children come after their parents: sum bottom-up. */
	for (size_t i = t->nnodes; i-- > 0;) {
		nd_region *nd = &t->nodes[i];

		nd->incl += nd->excl;
		nd->count += nd->self_count;
		nd->overrun_incl += nd->overrun;
		if (nd->parent != UINT32_MAX) {
			t->nodes[nd->parent].incl += nd->incl;
			t->nodes[nd->parent].count += nd->count;
			t->nodes[nd->parent].overrun_incl += nd->overrun_incl;
		} else
			total += nd->incl;
	}
	return total;
}

size_t
nd_rtree_count(const nd_rtree *t)
{
	return t->nnodes;
}

nd_region *
nd_rtree_node(nd_rtree *t, uint32_t id)
{
	return &t->nodes[id];
}

static int
name_cmp(const void *a, const void *b, void *ctx)
{
	const nd_region *x = (const nd_region *)ctx + *(const uint32_t *)a;
	const nd_region *y = (const nd_region *)ctx + *(const uint32_t *)b;
	int c = memcmp(x->name, y->name, x->namelen < y->namelen ?
	    x->namelen : y->namelen);

	if (c != 0)
		return c;
	return (x->namelen > y->namelen) - (x->namelen < y->namelen);
}

static int
rank_cmp(const void *a, const void *b, void *ctx)
{
	const nd_region *x = (const nd_region *)ctx + *(const uint32_t *)a;
	const nd_region *y = (const nd_region *)ctx + *(const uint32_t *)b;

	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Comparing tree ranks instead of paths keeps a deep scope from costing a
 * path comparison per pair. */
uint32_t *
nd_rtree_rank(nd_rtree *t)
{
	size_t n = t->nnodes, nst = 0, rank = 0;
	uint32_t *st = nd_xmalloc((n ? n : 1) * sizeof *st);
	uint32_t *ids = nd_xmalloc((n ? n : 1) * sizeof *ids);

	/* the tops, then each node's children, by name, pushed reversed */
	for (size_t i = 0; i < n; i++)
		if (t->nodes[i].parent == UINT32_MAX)
			ids[nst++] = (uint32_t)i;
	nd_sort(ids, nst, sizeof *ids, name_cmp, t->nodes);
	for (size_t i = nst; i-- > 0;)
		st[nst - 1 - i] = ids[i];
	while (nst > 0) {
		nd_region *nd = &t->nodes[st[--nst]];

		nd->rank = rank++;
		if (nd->nkids == 0)
			continue;
		memcpy(ids, nd->kids, nd->nkids * sizeof *ids);
		nd_sort(ids, nd->nkids, sizeof *ids, name_cmp, t->nodes);
		for (size_t i = nd->nkids; i-- > 0;)
			st[nst++] = ids[i];
	}
	free(st);
	for (size_t i = 0; i < n; i++)
		ids[i] = (uint32_t)i;
	nd_sort(ids, n, sizeof *ids, rank_cmp, t->nodes);
	return ids;
}

void
nd_rtree_path(nd_rtree *t, uint32_t id, nd_buf *p)
{
	const nd_region *nd = &t->nodes[id];
	size_t pos = nd->plen;

	nd_buf_reset(p);
	nd_buf_reserve(p, nd->plen + 1);
	p->len = nd->plen;
	p->p[p->len] = '\0';
	for (;;) {
		pos -= nd->namelen;
		if (nd->namelen > 0)
			memcpy(p->p + pos, nd->name, nd->namelen);
		if (nd->parent == UINT32_MAX ||
		    t->nodes[nd->parent].depth == 0)
			break;
		p->p[--pos] = '/';
		nd = &t->nodes[nd->parent];
	}
}

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
scan_record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	nd_regions *r = ctx;
	uint32_t id;

	(void)si;
	nd_buf_reset(&r->key);
	nd_buf_addc(&r->key, 0);
	if (r->full_key || r->o.by_device)
		key_str(&r->key, ev->device.p != NULL ? ev->device :
		    ev->process);
	else
		nd_aggkey_none(&r->key);
	key_str(&r->key, ev->scope);
	if (r->full_key || r->o.ops)
		key_str(&r->key, ev->name);
	else
		nd_aggkey_none(&r->key);
	id = nd_agg_id(r->agg, r->key.p, r->key.len);
	nd_agg_row_of(r->agg, id)->count++;
	return id;
}

static void
scan_done(void *ctx, const nd_nest_span *s)
{
	nd_agg_self(((nd_regions *)ctx)->agg, s);
}

static void
scan_reset(void *ctx)
{
	nd_agg_reset(((nd_regions *)ctx)->agg);
}


/* ---- merge ---- */

static void
merge_group(nd_regions *r, nd_stream *st, const nd_event *ev)
{
	const nd_jval *key = nd_stream_need(st, ev, "key", ND_JARR);
	nd_jiter it;
	nd_jval e;
	nd_jerr je;
	size_t n = 0;
	uint32_t id;
	nd_agg_row *row;

	if (r->prov.nheaders == 0)
		nd_stream_fail(st, "region_group before its region_partial "
		    "header");
	if (nd_stream_failed(st))
		return;
	nd_buf_reset(&r->key);
	nd_buf_addc(&r->key, (char)r->prov.fallback);
	nd_jaiter_init(&it, key, key->raw);
	while (nd_jaiter_next(&it, &e, &je) == 1) {
		int keep = n == 1 || (n == 0 && r->o.by_device) ||
		    (n == 2 && r->o.ops);

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
	if (n != 3) {
		nd_stream_fail(st, "\"key\" must be [device, scope, name], "
		    "each a string or null");
		return;
	}
	id = nd_agg_id(r->agg, r->key.p, r->key.len);
	row = nd_agg_row_of(r->agg, id);
	/* the figures the merge adds (nd_partial_sum) */
	row->count += (uint64_t)nd_partial_sum("count",
	    nd_stream_need_int(st, ev, "count"));
	row->self_ns += nd_partial_sum("exclusive_ns",
	    nd_stream_need_int(st, ev, "exclusive_ns"));
	row->overrun += (uint64_t)nd_partial_sum("overrun",
	    nd_stream_need_int(st, ev, "overrun"));
}

/* One record of a partial whose framing checked out (nd_partial). */
static void
merge_record(void *ctx, nd_stream *st, const nd_event *ev)
{
	nd_regions *r = ctx;

	if (nd_str_eq(ev->type_name, "region_partial"))
		nd_prov_header(&r->prov, st, ev);
	else
		merge_group(r, st, ev);
}

/* ---- the views ---- */

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
build_tree(nd_regions *r)
{
	uint32_t n = nd_agg_count(r->agg);
	char want = (char)(r->merge && r->prov.fallback);

	r->tree = nd_rtree_new();
	for (uint32_t i = 0; i < n; i++) {
		size_t kl, sn;
		const char *key = nd_agg_key(r->agg, i, &kl), *s;
		const nd_agg_row *row = nd_agg_row_of(r->agg, i);
		uint32_t cur;
		int tag;

		if (row->count == 0 || key[0] != want)
			continue;
		field(key, kl, 0, &tag, &s, &sn);
		if (!r->o.by_device || tag != ND_AGGKEY_STR) {
			s = r->o.by_device ? NONE_DEVICE : "";
			sn = strlen(s);
		}
		cur = nd_rtree_child(r->tree, UINT32_MAX, 1, s, sn);
		field(key, kl, 1, &tag, &s, &sn);
		cur = nd_rtree_scope(r->tree, cur, tag == ND_AGGKEY_STR ? s : "",
		    tag == ND_AGGKEY_STR ? sn : 0, NONE_SCOPE);
		if (r->o.ops) {
			field(key, kl, 2, &tag, &s, &sn);
			if (tag == ND_AGGKEY_STR && sn > 0)
				cur = nd_rtree_child(r->tree, cur, 0, s, sn);
			else
				cur = nd_rtree_child(r->tree, cur, 0, NONE_NAME,
				    strlen(NONE_NAME));
		}
		nd_rtree_add(r->tree, cur, row->count, row->self_ns,
		    row->overrun);
	}
	r->total = nd_rtree_sum(r->tree);
}

/* The order of regions shown: inclusive time (descending), then name. */
static int
node_cmp(const void *a, const void *b, void *ctx)
{
	const nd_region *x = (const nd_region *)ctx + *(const uint32_t *)a;
	const nd_region *y = (const nd_region *)ctx + *(const uint32_t *)b;

	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return nd_bytes_cmp(x->name, x->namelen, y->name, y->namelen);
}

static int
view_cmp(const void *a, const void *b)
{
	const struct view *x = *(struct view *const *)a;
	const struct view *y = *(struct view *const *)b;

	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return nd_bytes_cmp(x->name, x->namelen, y->name, y->namelen);
}


/* Views form a tree as deep as the deepest scope (one region per
 * segment): every walk over it below keeps its own stack instead of
 * recursing, and a view stores only its name -- the path and the frames
 * of a region are built while walking, so memory stays linear in the
 * segments of the input. */
static struct view *
view_new(const char *name, size_t n)
{
	struct view *v = nd_xcalloc(1, sizeof *v);

	v->name = nd_xstrndup(name, n);
	v->namelen = n;
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
make_view(nd_regions *r, uint32_t top, struct view *parent,
    struct view *other)
{
	struct mv *st = NULL;
	size_t n = 0, cap = 0;

	nd_grow(&st, &cap, 1, sizeof *st);
	st[n].id = top;
	st[n++].parent = parent;
	while (n > 0) {
		struct mv it = st[--n];
		nd_region *nd = &r->tree->nodes[it.id];
		double share = r->total > 0 ? (double)nd->incl /
		    (double)r->total : 0;
		struct view *v;

		if (share < r->o.min_share) {
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
		v = view_new(nd->name, nd->namelen);
		v->incl = nd->incl;
		v->count = nd->count;
		v->excl = nd->excl;
		v->self_count = nd->self_count;
		v->overrun = nd->overrun;
		view_add_kid(it.parent, v);
		if (r->o.depth > 0 && nd->depth >= r->o.depth) {
			/* --depth: the whole subtree is this region's own
			 * time */
			v->excl = nd->incl;
			v->self_count = nd->count;
			v->overrun = nd->overrun_incl;
			continue;
		}
		if (nd->nkids > 1)
			nd_sort(nd->kids, nd->nkids, sizeof *nd->kids,
			    node_cmp, r->tree->nodes);
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
				nd_buf_add(&nm, k->name, k->namelen);
				nd_buf_addc(&nm, '/');
				self_count += k->self_count;
				overrun += k->overrun;
				k->nkids = 0;
				view_free(k);
				k = c;
			}
			nd_buf_add(&nm, k->name, k->namelen);
			free(k->name);
			k->name = nd_xstrndup(nm.p, nm.len);
			k->namelen = nm.len;
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
	nd_regions *r;
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
	nd_jw_kstr(&w, "name", v->name, v->namelen);
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

/* The width of a view's name in --tree: that of its visible form. */
static size_t
view_width(const struct view *v)
{
	nd_buf t = ND_BUF_INIT;
	size_t w;

	nd_text_visible(&t, v->name, v->namelen);
	w = nd_text_width(t.p != NULL ? t.p : "", t.len);
	nd_buf_free(&t);
	return w;
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
	size_t used = ind + view_width(v);
	size_t col = (c->namew < TREE_BARCOL ? c->namew : TREE_BARCOL) + 2;

	nd_fmt_dur(incl, sizeof incl, v->incl, 0);
	nd_fmt_dur(excl, sizeof excl, v->excl, 0);
	nd_buf_addf(b, "%6.2f%%  %11s  %11s  %8llu  %*s%s", 100.0 * share,
	    incl, excl, (unsigned long long)v->count,
	    (int)(ind - strlen(pre)), "", pre);
	nd_text_visible(b, v->name, v->namelen);
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
		for (size_t k = 0; k < c->anc[i]->namelen; k++) {
			char ch = c->anc[i]->name[k];

			nd_buf_addc(b, ch == ';' ? ':' : ch == '\n' ? ' ' : ch);
		}
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
		nd_buf_add(&c->path, v->name, v->namelen);
		c->plen[d] = c->path.len;
		if (fmt == ND_REG_JSON)
			emit_json(c, v, it.depth);
		else if (fmt == ND_REG_TREE)
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
		    view_width(it.v);

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
write_partial(nd_regions *r, nd_out *o)
{
	nd_buf *b = nd_out_buf(o);
	uint32_t n = nd_agg_count(r->agg);
	char want = (char)(r->merge && r->prov.fallback);
	nd_jw w;
	nd_partial_w pw;

	nd_partial_begin(&pw, o, &w, "region_partial");
	nd_jw_kcstr(&w, "timelines", r->prov.timelines);
	nd_jw_kbool(&w, "fallback", r->prov.fallback);
	nd_jw_kcstr(&w, "rule", r->prov.rule);
	nd_jw_kuint(&w, "sources", r->prov.sources);
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

void
nd_regions_write(nd_regions *r, nd_out *o)
{
	uint32_t *roots = NULL;
	size_t nroots = 0, caproots = 0;
	struct outctx c;

	if (r->o.fmt == ND_REG_PARTIAL) {
		write_partial(r, o);
		return;
	}
	build_tree(r);
	for (size_t i = 0; i < r->tree->nnodes; i++)
		if (r->tree->nodes[i].parent == UINT32_MAX) {
			nd_grow(&roots, &caproots, nroots + 1,
			    sizeof *roots);
			roots[nroots++] = (uint32_t)i;
		}
	if (nroots > 1)
		nd_sort(roots, nroots, sizeof *roots, node_cmp,
		    r->tree->nodes);
	memset(&c, 0, sizeof c);
	c.r = r;
	c.o = o;
	if (r->o.fmt == ND_REG_TREE) {
		nd_buf_addf(nd_out_buf(o), "%7s  %11s  %11s  %8s  %s\n",
		    "share", "inclusive", "exclusive", "count", "region");
		nd_out_commit(o);
	}
	for (size_t i = 0; i < nroots; i++) {
		nd_region *dev = &r->tree->nodes[roots[i]];
		struct view *top = view_new("", 0);
		struct view *other = view_new(OTHER, strlen(OTHER));

		if (dev->nkids > 1)
			nd_sort(dev->kids, dev->nkids, sizeof *dev->kids,
			    node_cmp, r->tree->nodes);
		for (size_t k = 0; k < dev->nkids; k++)
			make_view(r, dev->kids[k], top, other);
		if (other->incl > 0 || other->count > 0) {
			view_add_kid(top, other);
			qsort(top->kids, top->nkids, sizeof *top->kids,
			    view_cmp);
		} else
			view_free(other);
		if (r->o.prune && r->o.fmt != ND_REG_FOLDED)
			prune(top);
		c.device = r->o.by_device ? dev->name : NULL;
		if (r->o.fmt == ND_REG_TREE) {
			c.namew = 0;
			for (size_t k = 0; k < top->nkids; k++)
				name_width(top->kids[k], &c.namew);
			if (r->o.by_device) {
				char d[32];

				nd_fmt_dur(d, sizeof d, dev->incl, 0);
				nd_buf_addf(nd_out_buf(o), "%sdevice %s: %s\n",
				    i > 0 ? "\n" : "", dev->name, d);
			}
		}
		for (size_t k = 0; k < top->nkids; k++)
			walk(&c, top->kids[k], r->o.fmt);
		view_free(top);
	}
	free(c.anc);
	free(c.plen);
	nd_buf_free(&c.path);
	if (r->o.fmt == ND_REG_TREE) {
		char d[32];

		nd_fmt_dur(d, sizeof d, r->total, 0);
		nd_buf_addf(nd_out_buf(o), "\ntotal %s%s\n", d,
		    r->prov.fallback && r->total > 0 ?
		    "; no device ops: every timeline counted" : "");
		nd_out_commit(o);
	}
	free(roots);
}

/* ---- the engine (nd_engine.h) ---- */

static const char *const partial_body[] = { "region_group" };

static void
eng_load(void *self, nd_stream *st, const nd_event *ev)
{
	merge_record(self, st, ev);
}

static void
eng_finish(void *self, const nd_run_res *rr)
{
	nd_regions *r = self;
	nd_scan_res res;

	if (rr->merged) {
		nd_prov_merged(&r->prov);
		return;
	}
	nd_scan_result(r->sc, rr, &res);
	nd_prov_scanned(&r->prov, &r->so, &res);
}

static void
eng_write(void *self, nd_out *o)
{
	nd_regions_write(self, o);
}

nd_engine
nd_regions_engine(nd_regions *r, const nd_scan_opts *opts, int merge)
{
	nd_engine e = {
		.name = "regions",
		.self = r,
		.partial_type = "region_partial",
		.partial_body = partial_body,
		.npartial_body = 1,
		/* the reading is nd_scan's (sc first in the state) */
		.record = nd_scan_eng_record,
		.end_source = nd_scan_eng_end_source,
		.end_input = nd_scan_eng_end_input,
		.restart = nd_scan_eng_restart,
		.load = eng_load,
		.finish = eng_finish,
		.write = eng_write,
	};

	if (merge) {
		r->merge = 1;
		/* partial results keep every key: any view can be made of
		 * them */
		if (r->o.fmt == ND_REG_PARTIAL)
			r->o.by_device = r->o.ops = 1;
	} else {
		nd_scan_cb cb = { r, scan_record, scan_done, scan_reset };

		r->so = *opts;
		r->sc = nd_scan_new(&r->so, &cb);
	}
	return e;
}
