/*
 * nd_stepsum: see nd_stepsum.h and trace-steps(1).
 */
#include "nd_stepsum.h"

#include "nd_json.h"
#include "nd_partial.h"
#include "nd_sort.h"
#include "nd_sum.h"
#include "nd_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LISTED 64		/* class step lists longer than this are left out */

struct devrec {
	int64_t num, dur;
	uint32_t dev;
	nd_breakdown bd;
};

struct nd_stepsum {
	nd_stepsum_rec *rec;
	size_t nrec, caprec;
	struct devrec *drec;
	size_t ndrec, capdrec;
	int64_t *num, *dur;
	nd_stepsum_dev *dev;
	nd_rank_win *win;
	nd_stepsum_rankstep *rs;
	size_t caprs;
	nd_stepsum_src *src;
	nd_stepsum_res res;
};

nd_stepsum *
nd_stepsum_new(void)
{
	return nd_xcalloc(1, sizeof(nd_stepsum));
}

void
nd_stepsum_free(nd_stepsum *s)
{
	if (s == NULL)
		return;
	free(s->rec);
	free(s->drec);
	free(s->num);
	free(s->dur);
	free(s->dev);
	free(s->win);
	free(s->rs);
	free(s->src);
	nd_step_classes_free(&s->res.cl);
	free(s);
}

void
nd_stepsum_add(nd_stepsum *s, const nd_stepsum_rec *r)
{
	if (s->nrec == s->caprec)
		nd_grow(&s->rec, &s->caprec, s->nrec + 1, sizeof *s->rec);
	/* its parts are parts of its window, so the window bounds them */
	nd_sum_add("step", r->dur);
	s->rec[s->nrec++] = *r;
}

void
nd_stepsum_add_dev(nd_stepsum *s, int64_t num, int64_t dur, uint32_t dev,
    const nd_breakdown *bd)
{
	struct devrec *x;

	if (s->ndrec == s->capdrec)
		nd_grow(&s->drec, &s->capdrec, s->ndrec + 1, sizeof *s->drec);
	x = &s->drec[s->ndrec++];
	x->num = num;
	x->dur = nd_sum_add("step", dur);
	x->dev = dev;
	x->bd = *bd;
}

int
nd_stepsum_window(size_t n, int64_t warmup, int drop_last, size_t *first,
    size_t *last)
{
	uint64_t skip = (uint64_t)(warmup > 0 ? warmup : 0);

	/* too few steps to leave any out: the whole run is the steady state */
	if ((uint64_t)n <= skip || (uint64_t)n - skip <= (drop_last ? 1u : 0u)) {
		*first = 0;
		*last = n;
		return 0;
	}
	*first = (size_t)skip;
	*last = drop_last ? n - 1 : n;
	return 1;
}

/* Records by step number, then source; equal ones keep their order. */
static int
rec_num_cmp(const void *a, const void *b, void *ctx)
{
	const nd_stepsum_rec *x = a, *y = b;

	(void)ctx;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return (x->source > y->source) - (x->source < y->source);
}

/* Job steps, the steady window, its statistics and classes. */
static void
job_steps(nd_stepsum *s)
{
	nd_stepsum_res *r = &s->res;
	size_t nj = 0;

	nd_sort(s->rec, s->nrec, sizeof *s->rec, rec_num_cmp, NULL);
	s->num = nd_xmalloc((s->nrec ? s->nrec : 1) * sizeof *s->num);
	s->dur = nd_xmalloc((s->nrec ? s->nrec : 1) * sizeof *s->dur);
	for (size_t i = 0; i < s->nrec; i++) {
		const nd_stepsum_rec *x = &s->rec[i];

		if (x->source + 1 > r->sources)
			r->sources = x->source + 1;
		if (nj > 0 && s->num[nj - 1] == x->num) {
			if (x->dur > s->dur[nj - 1])
				s->dur[nj - 1] = x->dur;
			continue;
		}
		s->num[nj] = x->num;
		s->dur[nj] = x->dur;
		nj++;
	}
	r->records = s->nrec;
	r->nsteps = nj;
	r->num = s->num;
	r->dur = s->dur;
	nd_stat_of(s->dur, nj, &r->all);
	r->applied = nd_stepsum_window(nj, r->warmup, r->drop_last, &r->first,
	    &r->last);
	nd_stat_of(s->dur + r->first, r->last - r->first, &r->steady);
	nd_step_classify(s->num + r->first, s->dur + r->first,
	    r->last - r->first, &r->cl);
	if (r->last > r->first) {
		r->first_step = s->num[r->first];
		r->last_step = s->num[r->last - 1];
	}
}

static int
steady_num(const nd_stepsum_res *r, int64_t num)
{
	return r->last > r->first && num >= r->first_step &&
	    num <= r->last_step;
}

/* The steady breakdown and MFU, over the records and per device. */
static void
breakdowns(nd_stepsum *s)
{
	nd_stepsum_res *r = &s->res;
	double mfu_sum = 0;
	size_t nmfu = 0;

	for (size_t i = 0; i < s->nrec; i++) {
		const nd_stepsum_rec *x = &s->rec[i];

		if (!steady_num(r, x->num))
			continue;
		nd_breakdown_add(&r->bd, &x->bd);
		r->bd_total += x->dur;
		if (x->has_mfu) {
			mfu_sum += x->mfu;
			nmfu++;
		}
	}
	if (nmfu > 0) {
		r->has_mfu = 1;
		r->mfu = mfu_sum / (double)nmfu;
	}
	for (size_t i = 0; i < s->ndrec; i++)
		if (s->drec[i].dev + (size_t)1 > r->ndev)
			r->ndev = s->drec[i].dev + (size_t)1;
	s->dev = nd_xcalloc(r->ndev ? r->ndev : 1, sizeof *s->dev);
	r->dev = s->dev;
	for (size_t i = 0; i < s->ndrec; i++) {
		const struct devrec *x = &s->drec[i];

		if (!steady_num(r, x->num))
			continue;
		nd_breakdown_add(&s->dev[x->dev].bd, &x->bd);
		s->dev[x->dev].total += x->dur;
		nd_breakdown_add(&r->dev_bd, &x->bd);
		r->dev_total += x->dur;
	}
	if (r->dev_total == 0) {
		r->dev_bd = r->bd;
		r->dev_total = r->bd_total;
	}
}

static int
win_cmp(const void *a, const void *b, void *ctx)
{
	const nd_rank_win *x = a, *y = b;

	(void)ctx;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static void
rank_step(void *ctx, const nd_rank_win *w, size_t n, int abs,
    const nd_straggler *sg)
{
	nd_stepsum *s = ctx;
	nd_stepsum_res *r = &s->res;
	nd_stepsum_rankstep *x;
	nd_stepsum_src *who = &s->src[w[sg->straggler].source];

	if (r->nrs == s->caprs)
		nd_grow(&s->rs, &s->caprs, r->nrs + 1, sizeof *s->rs);
	x = &s->rs[r->nrs];
	x->first = (size_t)(w - s->win);
	x->n = n;
	x->abs = abs;
	x->sg = *sg;
	if (!abs)
		r->rank_abs = 0;
	for (size_t k = 0; k < n; k++) {
		s->src[w[k].source].busy_sum += w[k].dur - w[k].wait;
		s->src[w[k].source].busy_n++;
	}
	who->straggler++;
	if (sg->lag_ns > who->lag_max)
		who->lag_max = sg->lag_ns;
	if (r->nrs == 0 || sg->lag_ns > r->lag_max) {
		r->lag_max = sg->lag_ns;
		r->lag_max_step = w[0].num;
		r->lag_max_rank = w[sg->straggler].rank;
	}
	if (sg->dur_max - sg->dur_min > r->spread_max)
		r->spread_max = sg->dur_max - sg->dur_min;
	r->nrs++;
}

/* One window per (step, source) and the straggler of each shared step. */
static void
ranks(nd_stepsum *s)
{
	nd_stepsum_res *r = &s->res;
	uint32_t best = 0;

	s->win = nd_xmalloc((s->nrec ? s->nrec : 1) * sizeof *s->win);
	for (size_t i = 0; i < s->nrec; i++) {
		const nd_stepsum_rec *x = &s->rec[i];
		nd_rank_win *w = &s->win[i];

		w->num = x->num;
		w->ts = x->ts;
		w->dur = x->dur;
		w->wait = x->wait;
		w->has_rank = x->has_rank;
		w->rank = x->has_rank ? x->rank : (int64_t)x->source;
		w->source = x->source;
		w->has_origin = x->has_origin;
		w->origin = x->has_origin ? x->origin : 0;
	}
	nd_sort(s->win, s->nrec, sizeof *s->win, win_cmp, NULL);
	r->nwin = nd_rank_wins_merge(s->win, s->nrec);
	r->win = s->win;
	s->src = nd_xcalloc(r->sources ? r->sources : 1, sizeof *s->src);
	r->src = s->src;
	for (size_t i = 0; i < r->nwin; i++) {
		nd_stepsum_src *x = &s->src[s->win[i].source];

		if (!x->has_win)
			x->win_first = i;
		x->has_win = 1;
		x->win_last = i;
	}
	r->rank_abs = 1;
	nd_rank_steps(s->win, r->nwin, rank_step, s);
	r->rs = s->rs;
	for (uint32_t i = 1; i < r->sources; i++)
		if (s->src[i].straggler > s->src[best].straggler)
			best = i;
	if (r->nrs > 0 && r->sources > 0 && s->src[best].has_win &&
	    s->src[best].straggler * 2 > r->nrs) {
		r->has_named = 1;
		r->named = best;
	}
}

void
nd_stepsum_finish(nd_stepsum *s, int64_t warmup, int drop_last)
{
	s->res.warmup = warmup;
	s->res.drop_last = drop_last != 0;
	job_steps(s);
	breakdowns(s);
	ranks(s);
}

const nd_stepsum_res *
nd_stepsum_result(const nd_stepsum *s)
{
	return &s->res;
}

/* ---- records ---- */

static int
i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

void
nd_stepsum_put_stat(nd_jw *w, const nd_stat *st, int full)
{
	nd_jw_kuint(w, "count", st->count);
	if (st->count == 0 && !full)
		return;
	nd_jw_kint(w, "mean_ns", st->mean);
	nd_jw_kint(w, "median_ns", st->median);
	nd_jw_kint(w, "p90_ns", st->p90);
	nd_jw_kint(w, "min_ns", st->min);
	nd_jw_kint(w, "max_ns", st->max);
	nd_jw_kint(w, "stddev_ns", st->stddev);
	if (full)
		nd_jw_kint(w, "total_ns", st->total);
}

static void
put_stat(nd_jw *w, const nd_stat *st)
{
	nd_stepsum_put_stat(w, st, 0);
}

/* Figures of the class split, to 4 decimals (no float noise). */
static double
round4(double x)
{
	return isfinite(x) ? round(x * 1e4) / 1e4 : x;
}

/* Each part of a breakdown, ns. */
static void
put_parts(nd_jw *w, const nd_breakdown *bd)
{
	nd_jw_kint(w, "compute_ns", bd->compute_ns);
	nd_jw_kint(w, "communication_ns", bd->communication_ns);
	nd_jw_kint(w, "memory_ns", bd->memory_ns);
	nd_jw_kint(w, "host_ns", bd->host_ns);
	nd_jw_kint(w, "idle_ns", bd->idle_ns);
	nd_jw_kint(w, "overlap_ns", bd->overlap_ns);
}

void
nd_stepsum_put_bd(nd_jw *w, const nd_breakdown *bd, int64_t total)
{
	nd_jw_kint(w, "dur_ns", total);
	put_parts(w, bd);
}

static void
put_breakdown(nd_jw *w, const nd_breakdown *bd, int64_t total)
{
	nd_jw_key(w, "breakdown");
	nd_jw_obj(w);
	nd_stepsum_put_bd(w, bd, total);
	nd_jw_obj_end(w);
	nd_jw_key(w, "shares");
	nd_jw_obj(w);
	nd_jw_kdbl(w, "compute", (double)bd->compute_ns / (double)total);
	nd_jw_kdbl(w, "communication",
	    (double)bd->communication_ns / (double)total);
	nd_jw_kdbl(w, "memory", (double)bd->memory_ns / (double)total);
	nd_jw_kdbl(w, "host", (double)bd->host_ns / (double)total);
	nd_jw_kdbl(w, "idle", (double)bd->idle_ns / (double)total);
	nd_jw_kdbl(w, "overlap", (double)bd->overlap_ns / (double)total);
	nd_jw_obj_end(w);
}

static void
put_class(nd_jw *w, const nd_stepsum_res *r, const nd_step_class *k)
{
	size_t n = r->last - r->first;

	nd_jw_obj(w);
	nd_jw_kcstr(w, "class", k->name);
	put_stat(w, &k->st);
	nd_jw_kdbl(w, "share", (double)k->n / (double)n);
	nd_jw_kint(w, "representative_step", k->representative);
	if (k->has_period) {
		nd_jw_kint(w, "period", k->period);
		nd_jw_kint(w, "phase", k->phase);
	}
	if (r->cl.nclass == 2 && k->n <= MAX_LISTED) {
		int64_t *sn = nd_xmalloc((k->n ? k->n : 1) * sizeof *sn);

		for (size_t i = 0; i < k->n; i++)
			sn[i] = r->num[r->first + r->cl.idx[k->first + i]];
		qsort(sn, k->n, sizeof *sn, i64_cmp);
		nd_jw_key(w, "steps");
		nd_jw_arr(w);
		for (size_t i = 0; i < k->n; i++)
			nd_jw_int(w, sn[i]);
		nd_jw_arr_end(w);
		free(sn);
	}
	nd_jw_obj_end(w);
}

void
nd_stepsum_write_summary(nd_buf *b, const nd_stepsum *s)
{
	const nd_stepsum_res *r = &s->res;
	int ss = ND_SS_NONE;
	nd_jw w;

	for (size_t i = 0; i < s->nrec; i++)
		if (s->rec[i].step_source > ss)
			ss = s->rec[i].step_source;
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "step_summary");
	put_stat(&w, &r->all);
	nd_jw_kint(&w, "warmup", r->warmup);
	nd_jw_kbool(&w, "drop_last", r->drop_last);
	nd_jw_kbool(&w, "warmup_applied", r->applied);
	nd_jw_kuint(&w, "records", r->records);
	nd_jw_kuint(&w, "sources", r->sources);
	nd_jw_kcstr(&w, "step_source", nd_ss_name(ss));
	nd_jw_key(&w, "steady");
	nd_jw_obj(&w);
	put_stat(&w, &r->steady);
	if (r->last > r->first) {
		nd_jw_kint(&w, "first_step", r->first_step);
		nd_jw_kint(&w, "last_step", r->last_step);
	}
	nd_jw_obj_end(&w);
	if (r->bd_total > 0)
		put_breakdown(&w, &r->bd, r->bd_total);
	if (r->has_mfu)
		nd_jw_kdbl(&w, "mfu", r->mfu);
	if (r->cl.nclass > 0) {
		nd_jw_key(&w, "classes");
		nd_jw_arr(&w);
		for (int c = 0; c < r->cl.nclass; c++)
			put_class(&w, r, &r->cl.c[c]);
		nd_jw_arr_end(&w);
		nd_jw_key(&w, "split");
		nd_jw_obj(&w);
		nd_jw_kbool(&w, "real", r->cl.nclass == 2);
		if (r->last - r->first >= ND_CLASS_MIN_STEPS) {
			nd_jw_kdbl(&w, "r2", round4(r->cl.r2));
			nd_jw_kdbl(&w, "gap", round4(r->cl.gap));
			nd_jw_kdbl(&w, "ratio", round4(r->cl.ratio));
		}
		nd_jw_obj_end(&w);
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

static void
put_rank(nd_jw *w, const char *key, const char *skey, const nd_rank_win *x,
    nd_stepsum_path_fn *path, void *ctx)
{
	const char *p = path != NULL ? path(ctx, x->source) : NULL;

	if (x->has_rank)
		nd_jw_kint(w, key, x->rank);
	if (p != NULL)
		nd_jw_kcstr(w, skey, p);
}

void
nd_stepsum_write_rankstep(nd_buf *b, const nd_stepsum *s, size_t i,
    nd_stepsum_path_fn *path, void *ctx)
{
	const nd_stepsum_rankstep *x = &s->rs[i];
	const nd_rank_win *win = s->win + x->first;
	const nd_straggler *sg = &x->sg;
	nd_jw w;

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "step_ranks");
	nd_jw_kint(&w, "step", win[0].num);
	nd_jw_kuint(&w, "ranks", x->n);
	nd_jw_kcstr(&w, "clock", x->abs ? "absolute" : "relative");
	nd_jw_kint(&w, "dur_min_ns", sg->dur_min);
	nd_jw_kint(&w, "dur_max_ns", sg->dur_max);
	nd_jw_kint(&w, "dur_spread_ns", sg->dur_max - sg->dur_min);
	if (x->abs)
		nd_jw_kint(&w, "end_spread_ns", sg->end_spread);
	put_rank(&w, "straggler_rank", "straggler_source", &win[sg->straggler],
	    path, ctx);
	nd_jw_kint(&w, "lag_ns", sg->lag_ns);
	put_rank(&w, "last_rank", "last_source", &win[sg->last], path, ctx);
	nd_jw_kint(&w, "last_by_ns", sg->last_by_ns);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

void
nd_stepsum_write_straggler(nd_buf *b, const nd_stepsum *s,
    nd_stepsum_path_fn *path, void *ctx)
{
	const nd_stepsum_res *r = &s->res;
	nd_jw w;

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "straggler");
	nd_jw_kuint(&w, "steps", r->nrs);
	if (r->has_named) {
		put_rank(&w, "rank", "source",
		    &s->win[s->src[r->named].win_last], path, ctx);
		nd_jw_kuint(&w, "straggler_steps", s->src[r->named].straggler);
	} else
		nd_jw_kbool(&w, "named", 0);
	nd_jw_key(&w, "counts");
	nd_jw_arr(&w);
	for (uint32_t i = 0; i < r->sources; i++) {
		if (!s->src[i].has_win)
			continue;
		nd_jw_obj(&w);
		put_rank(&w, "rank", "source", &s->win[s->src[i].win_first],
		    path, ctx);
		nd_jw_kuint(&w, "straggler_steps", s->src[i].straggler);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

/* ---- partial results: the engine's input ---- */

static void
put_rec(nd_jw *w, const nd_stepsum_rec *x)
{
	nd_jw_obj(w);
	nd_jw_kcstr(w, "type", ND_STEPSUM_REC);
	nd_jw_kuint(w, "src", x->source);
	nd_jw_kint(w, "num", x->num);
	nd_jw_kint(w, "start_ns", x->ts);
	nd_jw_kint(w, "len_ns", x->dur);
	nd_jw_kint(w, "wait_ns", x->wait);
	if (x->has_rank)
		nd_jw_kint(w, "src_rank", x->rank);
	if (x->has_origin)
		nd_jw_kint(w, "clock_ns", x->origin);
	put_parts(w, &x->bd);
	if (x->has_mfu && isfinite(x->mfu))
		nd_jw_kdbl(w, "mfu", x->mfu);
	else if (x->has_mfu)	/* JSON has no such number */
		nd_jw_kcstr(w, "mfu", isnan(x->mfu) ? "nan" :
		    x->mfu > 0 ? "inf" : "-inf");
	nd_jw_kcstr(w, "step_source", nd_ss_name(x->step_source));
	nd_jw_obj_end(w);
}

void
nd_stepsum_write_partial(const nd_stepsum *s, nd_partial_w *pw)
{
	nd_buf *b = nd_out_buf(pw->o);
	nd_jw w;

	for (size_t i = 0; i < s->nrec; i++) {
		nd_jw_init(&w, b);
		put_rec(&w, &s->rec[i]);
		nd_buf_addc(b, '\n');
		nd_partial_commit(pw);
	}
	for (size_t i = 0; i < s->ndrec; i++) {
		const struct devrec *x = &s->drec[i];

		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", ND_STEPSUM_DEV);
		nd_jw_kuint(&w, "dev", x->dev);
		nd_jw_kint(&w, "num", x->num);
		nd_jw_kint(&w, "len_ns", x->dur);
		put_parts(&w, &x->bd);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		nd_partial_commit(pw);
	}
}

/* The stream's error; what follows reads 0s and adds nothing. */
static void
bad_member(nd_stream *st, const nd_event *ev, const char *key,
    const char *what)
{
	nd_stream_fail(st, "%.*s record without a valid \"%s\" (%s)",
	    (int)ev->type_name.n, ev->type_name.p, key, what);
}

/* Member KEY as an int64; has (when not NULL) says whether it is there,
 * else it must be. */
static int64_t
get_i64(nd_stream *st, const nd_event *ev, const char *key, int *has)
{
	const nd_jval *v = nd_event_get(ev, key);
	int64_t x = 0;

	if (has != NULL)
		*has = v != NULL;
	if (v == NULL && has != NULL)
		return 0;
	if (v == NULL || v->type != ND_JNUM || nd_json_int64(v, &x) != 0) {
		bad_member(st, ev, key, "an integer");
		return 0;
	}
	return x;
}

/* An index plus its base, within uint32. */
static uint32_t
get_index(nd_stream *st, const nd_event *ev, const char *key, uint32_t base,
    int64_t *raw)
{
	int64_t x = get_i64(st, ev, key, NULL);

	if (x < 0 || (uint64_t)x + base > UINT32_MAX) {
		bad_member(st, ev, key, "an index out of range");
		x = 0;
	}
	*raw = x;
	return (uint32_t)x + base;
}

/* A duration the summary adds up (nd_partial_sum). */
static int64_t
get_sum(nd_stream *st, const nd_event *ev, const char *key)
{
	return nd_partial_sum(key, get_i64(st, ev, key, NULL));
}

static void
get_parts(nd_stream *st, const nd_event *ev, nd_breakdown *bd)
{
	bd->compute_ns = get_sum(st, ev, "compute_ns");
	bd->communication_ns = get_sum(st, ev, "communication_ns");
	bd->memory_ns = get_sum(st, ev, "memory_ns");
	bd->host_ns = get_sum(st, ev, "host_ns");
	bd->idle_ns = get_sum(st, ev, "idle_ns");
	bd->overlap_ns = get_sum(st, ev, "overlap_ns");
}

static void
get_mfu(nd_stream *st, const nd_event *ev, nd_stepsum_rec *x)
{
	const nd_jval *v = nd_event_get(ev, "mfu");

	if (v == NULL)
		return;
	x->has_mfu = 1;
	if (v->type == ND_JNUM)
		x->mfu = nd_json_double(v);
	else if (v->type == ND_JSTR && nd_jstr_eq(v, "nan"))
		x->mfu = NAN;
	else if (v->type == ND_JSTR && nd_jstr_eq(v, "inf"))
		x->mfu = INFINITY;
	else if (v->type == ND_JSTR && nd_jstr_eq(v, "-inf"))
		x->mfu = -INFINITY;
	else
		bad_member(st, ev, "mfu", "a number");
}

static int
get_ss(nd_stream *st, const nd_event *ev)
{
	const nd_jval *v = nd_event_get(ev, "step_source");

	if (v != NULL && v->type == ND_JSTR)
		for (int k = ND_SS_NONE; k <= ND_SS_MARKER; k++)
			if (nd_jstr_eq(v, nd_ss_name(k)))
				return k;
	bad_member(st, ev, "step_source", "none, inferred, xla_module or "
	    "marker");
	return ND_SS_NONE;
}

int
nd_stepsum_read_partial(nd_stepsum *s, nd_stream *st, const nd_event *ev,
    uint32_t src_base, uint32_t dev_base, int64_t *src_max,
    int64_t *dev_max)
{
	nd_stepsum_rec x;
	nd_breakdown bd;
	int64_t raw, num, dur;
	uint32_t dev;

	if (nd_str_eq(ev->type_name, ND_STEPSUM_DEV)) {
		dev = get_index(st, ev, "dev", dev_base, &raw);
		if (dev_max != NULL && raw > *dev_max)
			*dev_max = raw;
		num = get_i64(st, ev, "num", NULL);
		dur = get_sum(st, ev, "len_ns");
		get_parts(st, ev, &bd);
		if (!nd_stream_failed(st))
			nd_stepsum_add_dev(s, num, dur, dev, &bd);
		return 1;
	}
	if (!nd_str_eq(ev->type_name, ND_STEPSUM_REC))
		return 0;
	memset(&x, 0, sizeof x);
	x.source = get_index(st, ev, "src", src_base, &raw);
	if (src_max != NULL && raw > *src_max)
		*src_max = raw;
	x.num = get_i64(st, ev, "num", NULL);
	/* a time, which the summary adds a duration to */
	x.ts = get_i64(st, ev, "start_ns", NULL);
	if (x.ts > INT64_MAX / 2 || x.ts < INT64_MIN / 2)
		bad_member(st, ev, "start_ns", "a time within +-2^62");
	x.dur = get_sum(st, ev, "len_ns");
	x.wait = get_sum(st, ev, "wait_ns");
	x.rank = get_i64(st, ev, "src_rank", &x.has_rank);
	x.origin = get_i64(st, ev, "clock_ns", &x.has_origin);
	get_parts(st, ev, &x.bd);
	get_mfu(st, ev, &x);
	x.step_source = get_ss(st, ev);
	if (!nd_stream_failed(st))
		nd_stepsum_add(s, &x);
	return 1;
}

/* ---- the step record (trace-steps(1)) ---- */

void
nd_stepsum_step_write(nd_buf *b, const nd_step *s, int pw,
    const nd_stepsum_where *wh, nd_stepsum_rec *x)
{
	nd_jw w;

	memset(x, 0, sizeof *x);
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", pw ? "profile_window" : "step");
	if (wh->path != NULL)
		nd_jw_kcstr(&w, "source", wh->path);
	nd_jw_kint(&w, "ts_ns", s->ts);
	nd_jw_kint(&w, "dur_ns", s->dur);
	if (wh->key != NULL)
		nd_jw_kcstr(&w, wh->is_dev ? "device" : "process", wh->key);
	if (wh->has_rank) {
		nd_jw_kint(&w, "rank", wh->rank);
		x->has_rank = 1;
		x->rank = wh->rank;
	}
	if (!pw)
		nd_jw_kint(&w, "step", s->num);
	nd_jw_kint(&w, "compute_ns", s->bd.compute_ns);
	nd_jw_kint(&w, "communication_ns", s->bd.communication_ns);
	nd_jw_kint(&w, "memory_ns", s->bd.memory_ns);
	nd_jw_kint(&w, "host_ns", s->bd.host_ns);
	nd_jw_kint(&w, "idle_ns", s->bd.idle_ns);
	nd_jw_kint(&w, "overlap_ns", s->bd.overlap_ns);
	nd_jw_kint(&w, "wait_ns", s->wait_ns);
	if (!pw)
		nd_jw_kcstr(&w, "marker", nd_sm_name(s->marker));
	nd_jw_kcstr(&w, "step_source", nd_ss_name(s->source));
	nd_jw_kint(&w, "devices", s->ndev);
	if (wh->model != NULL)
		nd_jw_kcstr(&w, "device_name", wh->model);
	if (s->has_flops) {
		nd_jw_kdbl(&w, "flops", s->flops);
		if (s->dur > 0)
			nd_jw_kdbl(&w, "tflops", s->flops / (double)s->dur / 1e3);
		if (s->peak_tflops > 0 && s->dur > 0) {
			nd_jw_kdbl(&w, "peak_tflops", s->peak_tflops);
			x->has_mfu = 1;
			x->mfu = s->flops / (double)s->dur / 1e3 /
			    s->peak_tflops;
			nd_jw_kdbl(&w, "mfu", x->mfu);
		}
	}
	nd_jw_obj_end(&w);
	x->num = s->num;
	x->ts = s->ts;
	x->dur = s->dur;
	x->wait = s->wait_ns;
	x->bd = s->bd;
	x->step_source = s->source;
}

int
nd_stepsum_step_read(const nd_event *ev, nd_stepsum_rec *x)
{
	static const char *const parts[] = {
		"compute_ns", "communication_ns", "memory_ns", "host_ns",
		"idle_ns", "overlap_ns", "wait_ns"
	};
	int64_t val[7] = { 0 };
	const nd_jval *v;

	if (!(ev->has & ND_HAS_STEP) || !(ev->has & ND_HAS_TS) ||
	    !(ev->has & ND_HAS_DUR))
		return 0;
	memset(x, 0, sizeof *x);
	x->num = ev->step;
	x->ts = ev->ts_ns;
	x->dur = ev->dur_ns;
	if (ev->has & ND_HAS_RANK) {
		x->has_rank = 1;
		x->rank = ev->rank;
	}
	for (int i = 0; i < 7; i++)
		if ((v = nd_event_get(ev, parts[i])) != NULL)
			(void)nd_json_int(v, &val[i]);
	x->bd.compute_ns = val[0];
	x->bd.communication_ns = val[1];
	x->bd.memory_ns = val[2];
	x->bd.host_ns = val[3];
	x->bd.idle_ns = val[4];
	x->bd.overlap_ns = val[5];
	x->wait = val[6];
	if ((v = nd_event_get(ev, "mfu")) != NULL && v->type == ND_JNUM) {
		x->has_mfu = 1;
		x->mfu = nd_json_double(v);
	}
	x->step_source = nd_ss_of(nd_event_get(ev, "step_source"));
	return 1;
}
