/*
 * nd_report: the model, built once after the last record (nd_report_finish):
 * steps, tables, regions, memory peaks.
 */
#include "nd_report_int.h"

#include "nd_regions.h"
#include "nd_sort.h"
#include "nd_top.h"

#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static char *
strdup_n(nd_str s)
{
	return s.p == NULL ? NULL : nd_xstrndup(s.p, s.n);
}


static int64_t
src_rank(const nd_report *r, uint32_t source)
{
	if (source < r->nsrc && r->src[source].has_rank)
		return r->src[source].rank;
	return source;
}

/* The rank spread and the straggler of the step-summary engine, per
 * source (every source has a row). */
static void
model_ranks(nd_report *r, const nd_stepsum_res *s)
{
	r->ranks = nd_xcalloc(r->nsrc ? r->nsrc : 1, sizeof *r->ranks);
	r->nranks = r->nsrc;
	for (size_t i = 0; i < r->nsrc; i++) {
		r->ranks[i].rank = src_rank(r, (uint32_t)i);
		if (i >= s->sources)
			continue;
		r->ranks[i].straggler = s->src[i].straggler;
		r->ranks[i].lag_max = s->src[i].lag_max;
		r->ranks[i].busy_sum = s->src[i].busy_sum;
		r->ranks[i].busy_n = s->src[i].busy_n;
	}
	r->rank_steps = s->nrs;
	r->rank_abs = s->rank_abs;
	r->lag_max = s->lag_max;
	r->lag_max_step = s->lag_max_step;
	r->lag_max_rank = s->lag_max_rank;
	r->spread_max = s->spread_max;
}

/* No source has steps: the breakdowns cover the profile window of each
 * device (nd_steps_profile), summed over devices in dbd. */
static void
model_profile(nd_report *r)
{
	memset(&r->dbd, 0, sizeof r->dbd);
	r->dbd_total = 0;
	for (size_t i = 0; i < r->ndevs; i++) {
		r->devbd[i].bd = r->devs[i].pw_bd;
		r->devbd[i].total = r->devs[i].pw_total;
		nd_breakdown_add(&r->dbd, &r->devs[i].pw_bd);
		r->dbd_total += r->devs[i].pw_total;
	}
	if (r->dbd_total > 0)
		r->window = RW_PROFILE;
}

/* The step statistics, breakdowns and straggler: the step-summary engine
 * (nd_stepsum) over the step records of finish_source. */
static void
model_steps(nd_report *r)
{
	const nd_stepsum_res *s;
	size_t n;

	if (r->ss == NULL)
		r->ss = nd_stepsum_new();
	nd_stepsum_finish(r->ss, r->o.warmup, r->o.drop_last);
	s = nd_stepsum_result(r->ss);
	r->nsteps = s->nsteps;
	r->all = s->all;
	r->steady = s->steady;
	r->warmup_applied = s->applied;
	r->warmup = s->applied ? r->o.warmup : 0;
	r->cl = s->cl;
	n = s->last - s->first;
	r->cl_num = nd_xmalloc((n + 1) * sizeof *r->cl_num);
	memcpy(r->cl_num, s->num + s->first, n * sizeof *r->cl_num);
	r->cl_dur = nd_xmalloc((n + 1) * sizeof *r->cl_dur);
	memcpy(r->cl_dur, s->dur + s->first, n * sizeof *r->cl_dur);
	r->first_step = s->first_step;
	r->last_step = s->last_step;
	r->bd = s->bd;
	r->bd_total = s->bd_total;
	r->dbd = s->dev_bd;
	r->dbd_total = s->dev_total;
	r->window = s->nsteps > 0 && s->dev_total > 0 ? RW_STEADY : RW_NONE;
	r->devbd = nd_xcalloc(r->ndevs ? r->ndevs : 1, sizeof *r->devbd);
	r->ndevbd = r->ndevs;
	for (size_t i = 0; i < r->ndevs; i++) {
		r->devbd[i].dev = (uint32_t)i;
		if (i < s->ndev) {
			r->devbd[i].bd = s->dev[i].bd;
			r->devbd[i].total = s->dev[i].total;
		}
	}
	if (s->nsteps == 0)
		model_profile(r);
	model_ranks(r, s);
}

/* shared with the findings (nd_report_int.h) under its lib-wide name */
#define leaf_field nd_rep_leaf_field

/* Field `field` (F_*) of a leaf key, NULL when it has none. */
const char *
leaf_field(const char *k, size_t n, int field, size_t *len)
{
	const char *p = k, *end = k + n, *s;
	int tag, i = 0;

	while (nd_aggkey_next(&p, end, &tag, &s, len)) {
		if (i == field)
			return tag == ND_AGGKEY_NONE ? NULL : s;
		i++;
	}
	return NULL;
}

/* A table of the report: the leaves rolled up by one field in nd_top
 * (its row order), read back as rows.  keys: where the rows' names live. */
static void
table_rows(nd_top *t, nd_intern *keys, struct trow **rows, size_t *nrows)
{
	uint32_t *ids;
	size_t n = nd_top_rank(t, &ids);

	*rows = nd_xcalloc(n ? n : 1, sizeof **rows);
	*nrows = n;
	for (size_t i = 0; i < n; i++) {
		const nd_agg_row *row = nd_top_row(t, ids[i]);
		struct trow *tr = &(*rows)[i];
		const char *s;
		size_t len;
		int tag;

		nd_top_field(t, ids[i], 0, &tag, &s, &len);
		tr->key = nd_intern_str(keys, nd_intern_id(keys, s, len),
		    &tr->keylen);
		tr->count = row->count;
		tr->self = row->self_ns;
		tr->total = row->total_ns;
		tr->max = row->hist.max;
	}
	free(ids);
}

/* Add leaf row `row` to table t under field f of leaf key k ("(none)"
 * when the leaf has no such field). */
static void
table_add(nd_top *t, nd_buf *kb, const char *k, size_t kn, int f,
    const nd_agg_row *row)
{
	size_t len;
	const char *s = leaf_field(k, kn, f, &len);

	nd_buf_reset(kb);
	nd_aggkey_str(kb, s ? s : "(none)", s ? len : 6);
	nd_top_add_figures(t, kb->p, kb->len, row);
}

/* The path of region t. */
void
nd_rep_reg_path(const nd_report *r, const struct trow *t, nd_buf *p)
{
	nd_rtree_path(r->rtree, t->id, p);
}

/* The regions (nd_rtree) as rows, ranked; the ones shown get their path. */
static void
reg_rows(nd_report *r)
{
	size_t n = nd_rtree_count(r->rtree), m;
	uint32_t *ids;
	nd_buf p = ND_BUF_INIT;

	nd_rtree_sum(r->rtree);
	ids = nd_rtree_rank(r->rtree);
	r->regs = nd_xcalloc(n ? n : 1, sizeof *r->regs);
	r->reg_pos = nd_xmalloc((n ? n : 1) * sizeof *r->reg_pos);
	r->nregs = n;
	for (size_t i = 0; i < n; i++) {
		const nd_region *nd = nd_rtree_node(r->rtree, ids[i]);
		struct trow *t = &r->regs[i];

		t->count = nd->count;
		t->self = nd->incl;
		t->excl = nd->excl;
		t->depth = nd->depth;
		t->id = ids[i];
		t->parent = nd->parent;
		t->seg = nd->name;
		t->seglen = nd->namelen;
		t->plen = nd->plen;
		t->rank = nd->rank;
		r->reg_pos[ids[i]] = (uint32_t)i;
	}
	free(ids);
	m = nd_rep_cut(r, n);
	r->reg_own = nd_xcalloc(m ? m : 1, sizeof *r->reg_own);
	for (size_t i = 0; i < m; i++) {
		nd_rep_reg_path(r, &r->regs[i], &p);
		r->reg_own[i] = nd_xstrndup(p.p ? p.p : "", p.len);
		r->regs[i].key = r->reg_own[i];
		r->regs[i].keylen = p.len;
	}
	r->nreg_own = m;
	nd_buf_free(&p);
}

static void
model_tables(nd_report *r)
{
	uint32_t n = nd_agg_count(r->leaf);
	nd_top *ops = nd_top_new(ND_TOP_SELF, 0);
	nd_top *fams = nd_top_new(ND_TOP_SELF, 0);
	nd_top *colls = nd_top_new(ND_TOP_SELF, 0);

	r->fallback = !r->has_device;
	r->k_ops = nd_intern_new();
	r->k_fams = nd_intern_new();
	r->k_colls = nd_intern_new();
	r->rtree = nd_rtree_new();
	for (uint32_t i = 0; i < n; i++) {
		size_t kn, len;
		const char *k = nd_agg_key(r->leaf, i, &kn);
		const nd_agg_row *row = nd_agg_row_of(r->leaf, i);
		const char *s;

		if (row->count == 0)
			continue;
		if (!r->fallback && k[5] != 'd')
			continue;
		r->self_total += row->self_ns;
		r->ops_spans += row->count;
		table_add(ops, &r->key, k, kn, F_NAME, row);
		table_add(fams, &r->key, k, kn, F_FAMILY, row);
		s = leaf_field(k, kn, F_CLASS, &len);
		if (s != NULL && len == 13 &&
		    memcmp(s, "communication", 13) == 0) {
			table_add(colls, &r->key, k, kn, F_FAMILY, row);
			r->coll_total += row->self_ns;
		}
		s = leaf_field(k, kn, F_SCOPE, &len);
		if (s != NULL) {
			uint32_t id = nd_rtree_scope(r->rtree, UINT32_MAX, s,
			    len, NULL);

			if (id != UINT32_MAX)
				nd_rtree_add(r->rtree, id, row->count,
				    row->self_ns, row->overrun);
		}
	}
	table_rows(ops, r->k_ops, &r->ops, &r->nops);
	table_rows(fams, r->k_fams, &r->fams, &r->nfams);
	table_rows(colls, r->k_colls, &r->colls, &r->ncolls);
	nd_top_free(ops);
	nd_top_free(fams);
	nd_top_free(colls);
	reg_rows(r);
}

static void
model_memory(nd_report *r)
{
	nd_event ev;
	nd_buf scratch = { 0 };
	nd_everr err;
	size_t i = 0;

	nd_mem_end_source(r->mem);
	nd_mem_finish(r->mem);
	nd_event_init(&ev);
	while (i < r->membuf.len) {
		char *nl = memchr(r->membuf.p + i, '\n', r->membuf.len - i);
		size_t len = nl ? (size_t)(nl - (r->membuf.p + i)) :
		    r->membuf.len - i;
		const nd_jval *v;
		struct mpeak *p;
		int64_t x;

		if (nd_event_decode(&ev, r->membuf.p + i, len, &scratch,
		    &err) == 0 && nd_str_eq(ev.type_name, "mem_peak")) {
			r->peaks = nd_xrealloc(r->peaks, (r->npeaks + 1) *
			    sizeof *r->peaks);
			p = &r->peaks[r->npeaks++];
			memset(p, 0, sizeof *p);
			p->source = nd_jstr_dup(nd_event_get(&ev, "source"));
			p->device = strdup_n(ev.device);
			if (p->device == NULL)
				p->device = nd_jstr_dup(nd_event_get(&ev,
				    "allocator"));
			p->op = nd_jstr_dup(nd_event_get(&ev, "op"));
			p->scope = strdup_n(ev.scope);
			p->ts = ev.ts_ns;
			if ((v = nd_event_get(&ev, "allocated_bytes")) &&
			    nd_json_int(v, &x) == 0)
				p->alloc = x;
			if ((v = nd_event_get(&ev, "reserved_bytes")) &&
			    nd_json_int(v, &x) == 0)
				p->reserved = x;
			if (ev.has & ND_HAS_STEP) {
				p->has_step = 1;
				p->step = ev.step;
			}
		}
		i += len + 1;
	}
	nd_event_free(&ev);
	nd_buf_free(&scratch);
}


/* Names with numbers in numeric order ("GPU:2" before "GPU:10"). */
static int
nat_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			size_t na, nb;

			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (na = 0; isdigit((unsigned char)a[na]); na++)
				;
			for (nb = 0; isdigit((unsigned char)b[nb]); nb++)
				;
			if (na != nb)
				return na < nb ? -1 : 1;
			for (; na > 0; na--, a++, b++)
				if (*a != *b)
					return *a < *b ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int
devbd_cmp(const void *a, const void *b, void *ctx)
{
	const nd_report *r = ctx;
	const struct rdev *x = &r->devs[*(const uint32_t *)a];
	const struct rdev *y = &r->devs[*(const uint32_t *)b];

	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return nat_cmp(x->key, y->key);
}

/* The breakdown rows by source then device, whatever the order the
 * devices came in (the dev field leads each row). */
/* The model of everything collected but the roofline, findings and
 * pipeline: steps, tables, memory, gaps. */
void
nd_rep_model(nd_report *r)
{
	model_steps(r);
	nd_sort(r->devbd, r->ndevbd, sizeof *r->devbd, devbd_cmp, r);
	model_tables(r);
	nd_rep_model_opreg(r);
	model_memory(r);
	nd_rep_model_gaps(r);
}

/* The op x region table: exclusive time per (name, scope) of the leaves
 * of the ops table, in nd_top's row order (nd_top.h: exclusive, total,
 * count, then key bytes), so its rows are trace-topk's --by name,scope.
 * Grouped by a table and only the rows shown selected (a sorted array of
 * at most OPREG_SEL rows, else a full sort): the leaves can be many. */
#define OPREG_SEL 64

struct ogrp {
	uint64_t count;
	int64_t self, total;
};

struct osel {
	const struct ogrp *g;
	nd_intern *keys;
};

static int
opreg_cmp(const void *a, const void *b, void *ctx)
{
	const struct osel *c = ctx;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	nd_top_fig x = { c->g[ia].count, c->g[ia].self, c->g[ia].total, 0,
	    NULL, 0 };
	nd_top_fig y = { c->g[ib].count, c->g[ib].self, c->g[ib].total, 0,
	    NULL, 0 };

	x.key = nd_intern_str(c->keys, ia, &x.keylen);
	y.key = nd_intern_str(c->keys, ib, &y.keylen);
	return nd_top_row_order(&x, &y, ND_TOP_SELF);
}

/* The first m of ids[0..n) in opreg_cmp order, into ids[0..m). */
static void
opreg_select(uint32_t *ids, size_t n, size_t m, struct osel *c)
{
	size_t k = 0;

	if (m > OPREG_SEL || m >= n) {
		nd_sort(ids, n, sizeof *ids, opreg_cmp, c);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ids[i];
		size_t j;

		if (k == m && opreg_cmp(&id, &ids[m - 1], c) >= 0)
			continue;
		j = k < m ? k++ : m - 1;
		while (j > 0 && opreg_cmp(&id, &ids[j - 1], c) < 0) {
			ids[j] = ids[j - 1];
			j--;
		}
		ids[j] = id;
	}
}

void
nd_rep_model_opreg(nd_report *r)
{
	uint32_t n = nd_agg_count(r->leaf), *ids;
	struct osel c;
	struct ogrp *g = NULL;
	size_t capg = 0, ng, m;

	c.keys = nd_intern_new();
	for (uint32_t i = 0; i < n; i++) {
		size_t kn, len;
		const char *k = nd_agg_key(r->leaf, i, &kn);
		const nd_agg_row *row = nd_agg_row_of(r->leaf, i);
		const char *s;
		uint32_t id;

		if (row->count == 0 || (!r->fallback && k[5] != 'd'))
			continue;
		nd_buf_reset(&r->key);
		s = leaf_field(k, kn, F_NAME, &len);
		nd_aggkey_str(&r->key, s ? s : "(none)", s ? len : 6);
		if ((s = leaf_field(k, kn, F_SCOPE, &len)) != NULL)
			nd_aggkey_str(&r->key, s, len);
		else
			nd_aggkey_none(&r->key);
		id = nd_intern_id(c.keys, r->key.p, r->key.len);
		if (id >= capg) {
			size_t old = capg;

			nd_grow(&g, &capg, (size_t)id + 1, sizeof *g);
			memset(g + old, 0, (capg - old) * sizeof *g);
		}
		g[id].count += row->count;
		g[id].self += row->self_ns;
		g[id].total += row->total_ns;
	}
	c.g = g;
	ng = nd_intern_count(c.keys);
	ids = nd_xmalloc((ng ? ng : 1) * sizeof *ids);
	for (size_t i = 0; i < ng; i++)
		ids[i] = (uint32_t)i;
	m = nd_rep_cut(r, ng);
	opreg_select(ids, ng, m, &c);
	r->nopreg_rows = ng;
	r->opreg = nd_xcalloc(m ? m : 1, sizeof *r->opreg);
	r->nopreg = m;
	for (size_t i = 0; i < m; i++) {
		struct orow *o = &r->opreg[i];
		size_t kn, len = 0;
		const char *k = nd_intern_str(c.keys, ids[i], &kn);
		const char *s = leaf_field(k, kn, 0, &len);

		o->op = nd_intern_str(r->names, nd_intern_id(r->names,
		    s ? s : "", s ? len : 0), &o->oplen);
		s = leaf_field(k, kn, 1, &len);
		o->region = s == NULL ? NULL : nd_intern_str(r->names,
		    nd_intern_id(r->names, s, len), &o->regionlen);
		o->count = g[ids[i]].count;
		o->excl = g[ids[i]].self;
		o->total = g[ids[i]].total;
	}
	free(ids);
	free(g);
	nd_intern_free(c.keys);
}

/* Lines by idle time, then label and source; regions of gaps by time,
 * then name (none last). */
static int
line_cmp(const void *a, const void *b, void *ctx)
{
	const nd_report *r = ctx;
	const struct gline *x = a, *y = b;
	int c;

	if (x->idle != y->idle)
		return x->idle > y->idle ? -1 : 1;
	if ((c = strcmp(nd_rep_name_of(r, x->label),
	    nd_rep_name_of(r, y->label))) != 0)
		return c;
	return (x->source > y->source) - (x->source < y->source);
}

/* Two names by id, none (UINT32_MAX) last. */
static int
name_cmp(const nd_report *r, uint32_t x, uint32_t y)
{
	if (x == UINT32_MAX || y == UINT32_MAX)
		return (x == UINT32_MAX) - (y == UINT32_MAX);
	return strcmp(nd_rep_name_of(r, x), nd_rep_name_of(r, y));
}

/* Models by devices, then name (unknown last); hw_src_cmp: by source
 * first. */
static int
hw_cmp(const void *a, const void *b, void *ctx)
{
	const struct hwrow *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return name_cmp(ctx, x->model, y->model);
}

static int
hw_src_cmp(const void *a, const void *b, void *ctx)
{
	const struct hwrow *x = a, *y = b;

	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return hw_cmp(a, b, ctx);
}

/* The hardware over sources: the rows of every source summed by model. */
static void
model_hw(nd_report *r)
{
	nd_map64 *ix = nd_map64_new();

	r->hwall = nd_xcalloc(r->nhw ? r->nhw : 1, sizeof *r->hwall);
	for (size_t i = 0; i < r->nhw; i++) {
		int isnew;
		uint64_t *v = nd_map64_put(ix, r->hw[i].model, &isnew);

		if (isnew) {
			*v = r->nhwall;
			r->hwall[r->nhwall] = r->hw[i];
			r->hwall[r->nhwall++].n = 0;
		}
		r->hwall[*v].n += r->hw[i].n;
	}
	nd_map64_free(ix);
	nd_sort(r->hwall, r->nhwall, sizeof *r->hwall, hw_cmp, r);
	nd_sort(r->hw, r->nhw, sizeof *r->hw, hw_src_cmp, r);
}

/* A payload row of nd_gapsum: its figures and its longest gap's marker
 * and region. */
static void
payload_row(nd_report *r, const nd_gapsum_row *x, struct payload *p)
{
	p->n = x->count;
	p->total = x->total_ns;
	p->max = x->max_ns;
	p->max_ts = x->max_ts;
	p->marker = nd_rep_name_idn(r, x->marker, x->marker_len);
	p->region = nd_rep_name_idn(r, x->scope, x->scope_len);
}

/* The gap tables from nd_gapsum's rows, in its order (total descending,
 * then name): a cause or payload the gaps did not name shows as "other"
 * and "?". */
static void
model_gapsum(nd_report *r)
{
	const nd_gapsum_row *x;
	size_t n = nd_gapsum_rows(r->gs, ND_GAPSUM_CAUSE, &x);

	for (size_t i = 0; i < n; i++) {
		nd_rep_cnt_add(&r->causes, &r->ncauses, &r->capcauses, NULL,
		    x[i].key != NULL ? nd_rep_name_idn(r, x[i].key,
		    x[i].keylen) : nd_rep_name_id(r, "other"), x[i].count,
		    x[i].total_ns);
		r->ngaps += x[i].count;
		r->gap_total += x[i].total_ns;
	}
	n = nd_gapsum_rows(r->gs, ND_GAPSUM_PAYLOAD, &x);
	for (size_t i = 0; i < n; i++) {
		uint32_t pid = x[i].key != NULL ? nd_rep_name_idn(r, x[i].key,
		    x[i].keylen) : nd_rep_name_id(r, "?");

		if (pid >= r->cappay) {
			size_t old = r->cappay;

			nd_grow(&r->pay, &r->cappay, (size_t)pid + 1,
			    sizeof *r->pay);
			memset(r->pay + old, 0, (r->cappay - old) *
			    sizeof *r->pay);
		}
		nd_grow(&r->payids, &r->cappayids, r->npayids + 1,
		    sizeof *r->payids);
		r->payids[r->npayids++] = pid;
		payload_row(r, &x[i], &r->pay[pid]);
	}
	n = nd_gapsum_rows(r->gs, ND_GAPSUM_SCOPE, &x);
	r->gregs = nd_xcalloc(n + 1, sizeof *r->gregs);
	for (size_t i = 0; i < n; i++) {
		payload_row(r, &x[i], &r->gregs[i]);
		r->gregs[i].marker = UINT32_MAX;
		r->gregs[i].region = nd_rep_name_idn(r, x[i].key, x[i].keylen);
	}
	r->ngregs = n;
}

void
nd_rep_model_gaps(nd_report *r)
{
	nd_sort(r->lines, r->nlines, sizeof *r->lines, line_cmp, r);
	while (r->nlines_gap < r->nlines && r->lines[r->nlines_gap].gaps > 0)
		r->nlines_gap++;
	model_gapsum(r);
	model_hw(r);
}

/* A comparison: trace-diff records and no span. */
int
nd_rep_is_comparison(const nd_report *r)
{
	return r->ndiff > 0 && r->ops_spans == 0 && r->nsteps == 0;
}

