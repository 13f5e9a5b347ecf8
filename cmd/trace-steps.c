/*
 * trace-steps: training steps, each with the breakdown of its window into
 * compute, exposed communication, memory, host and idle time, achieved
 * TFLOP/s and MFU; with --summary step statistics and light/heavy classes,
 * with --ranks the straggler across ranks.  See trace-steps(1); the engine
 * is lib/nd_steps (and lib/nd_interval, lib/nd_peak).
 */
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_peak.h"
#include "nd_sort.h"
#include "nd_steps.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-steps [-dhRsV] [-o file] [-p peak] [-w n] [-x regex] [--drop-last] [--print-peaks] [file ...]\n"
"  -d, --per-device       one record per step and device (default: per step\n"
"                         and source, over all its devices)\n"
"  -s, --summary          add a step_summary record (statistics, classes)\n"
"  -R, --ranks            add step_ranks records and a straggler record\n"
"  -w, --warmup N         steps left out of the steady state (default 1)\n"
"      --drop-last        leave the last step out of the steady state too\n"
"  -x, --step-regex RE    steps are the spans whose name matches RE\n"
"  -p, --peak-tflops X    device peak for MFU, TFLOP/s or a table name\n"
"                         (A100, H100, TPU v5e, ...)\n"
"      --print-peaks      print the built-in peak table and exit\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

enum { OPT_DROP_LAST = 256, OPT_PRINT_PEAKS };

#define MAX_LISTED 64		/* class step lists longer than this are left out */

static int
i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* What the summary and the rank analysis keep of each step record. */
struct rec {
	int64_t num, ts, dur, wait;
	nd_breakdown bd;
	uint32_t source;
	int has_rank;
	int64_t rank;
	int has_mfu;
	double mfu;
};

struct run {
	nd_stream *st;
	nd_out *o;
	nd_steps *steps;
	int keep;		/* keep the records for -s, -r */
	struct rec *recs;
	size_t nrecs, caprecs;
	int has_span_rank;
	int64_t span_rank;
	uint64_t spans;		/* spans of the current source */
};

static void
keep_rec(struct run *r, const struct rec *x)
{
	if (!r->keep)
		return;
	if (r->nrecs == r->caprecs)
		nd_grow(&r->recs, &r->caprecs, r->nrecs + 1, sizeof *r->recs);
	r->recs[r->nrecs++] = *x;
}

static void
write_step(struct run *r, const nd_step *s, const nd_source_info *si,
    uint32_t src)
{
	nd_buf *b = nd_out_buf(r->o);
	const char *model = NULL, *key;
	int is_dev = 0;
	struct rec x;
	nd_jw w;

	memset(&x, 0, sizeof x);
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "step");
	if (si != NULL && si->path != NULL)
		nd_jw_kcstr(&w, "source", si->path);
	nd_jw_kint(&w, "ts_ns", s->ts);
	nd_jw_kint(&w, "dur_ns", s->dur);
	key = nd_steps_device(r->steps, s->dev, &model, &is_dev);
	if (key != NULL)
		nd_jw_kcstr(&w, is_dev ? "device" : "process", key);
	if (si != NULL && si->has_rank) {
		nd_jw_kint(&w, "rank", si->rank);
		x.has_rank = 1;
		x.rank = si->rank;
	} else if (r->has_span_rank) {
		nd_jw_kint(&w, "rank", r->span_rank);
		x.has_rank = 1;
		x.rank = r->span_rank;
	}
	nd_jw_kint(&w, "step", s->num);
	nd_jw_kint(&w, "compute_ns", s->bd.compute_ns);
	nd_jw_kint(&w, "communication_ns", s->bd.communication_ns);
	nd_jw_kint(&w, "memory_ns", s->bd.memory_ns);
	nd_jw_kint(&w, "host_ns", s->bd.host_ns);
	nd_jw_kint(&w, "idle_ns", s->bd.idle_ns);
	nd_jw_kint(&w, "overlap_ns", s->bd.overlap_ns);
	nd_jw_kint(&w, "wait_ns", s->wait_ns);
	nd_jw_kcstr(&w, "marker", nd_sm_name(s->marker));
	nd_jw_kint(&w, "devices", s->ndev);
	if (model != NULL)
		nd_jw_kcstr(&w, "device_name", model);
	if (s->has_flops) {
		nd_jw_kdbl(&w, "flops", s->flops);
		if (s->dur > 0)
			nd_jw_kdbl(&w, "tflops", s->flops / (double)s->dur / 1e3);
		if (s->peak_tflops > 0 && s->dur > 0) {
			nd_jw_kdbl(&w, "peak_tflops", s->peak_tflops);
			x.has_mfu = 1;
			x.mfu = s->flops / (double)s->dur / 1e3 / s->peak_tflops;
			nd_jw_kdbl(&w, "mfu", x.mfu);
		}
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_out_commit(r->o);
	x.num = s->num;
	x.ts = s->ts;
	x.dur = s->dur;
	x.wait = s->wait_ns;
	x.bd = s->bd;
	x.source = src;
	keep_rec(r, &x);
}

static void
flush_source(struct run *r, uint32_t src)
{
	const nd_step *steps;
	size_t n = nd_steps_finish(r->steps, &steps);
	const nd_source_info *si = nd_stream_meta(r->st, src);

	for (size_t i = 0; i < n; i++)
		write_step(r, &steps[i], si, src);
	if (n == 0 && r->spans > 0)
		nd_warn("%s: no steps found (no step markers and no step keys "
		    "on device ops; see --step-regex)",
		    si != NULL && si->path != NULL ? si->path : "input");
	r->spans = 0;
	nd_steps_reset(r->steps);
	r->has_span_rank = 0;
}

/* A step record in the input (trace-steps reading its own output): kept
 * for the summary and passed through. */
static void
read_step(struct run *r, const nd_event *ev)
{
	struct rec x;
	const nd_jval *v;
	static const char *const parts[] = {
		"compute_ns", "communication_ns", "memory_ns", "host_ns",
		"idle_ns", "overlap_ns", "wait_ns"
	};
	int64_t val[7] = { 0 };

	if (!(ev->has & ND_HAS_STEP) || !(ev->has & ND_HAS_TS) ||
	    !(ev->has & ND_HAS_DUR))
		return;
	memset(&x, 0, sizeof x);
	x.num = ev->step;
	x.ts = ev->ts_ns;
	x.dur = ev->dur_ns;
	x.source = ev->source;
	if (ev->has & ND_HAS_RANK) {
		x.has_rank = 1;
		x.rank = ev->rank;
	}
	for (int i = 0; i < 7; i++)
		if ((v = nd_event_get(ev, parts[i])) != NULL)
			(void)nd_json_int(v, &val[i]);
	x.bd.compute_ns = val[0];
	x.bd.communication_ns = val[1];
	x.bd.memory_ns = val[2];
	x.bd.host_ns = val[3];
	x.bd.idle_ns = val[4];
	x.bd.overlap_ns = val[5];
	x.wait = val[6];
	if ((v = nd_event_get(ev, "mfu")) != NULL && v->type == ND_JNUM) {
		x.has_mfu = 1;
		x.mfu = nd_json_double(v);
	}
	keep_rec(r, &x);
}

/* ---- summary ---- */

static int
rec_num_cmp(const void *a, const void *b, void *ctx)
{
	const struct rec *x = a, *y = b;

	(void)ctx;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return (x->source > y->source) - (x->source < y->source);
}

static void
put_stat(nd_jw *w, const nd_stat *st)
{
	nd_jw_kuint(w, "count", st->count);
	if (st->count == 0)
		return;
	nd_jw_kint(w, "mean_ns", st->mean);
	nd_jw_kint(w, "median_ns", st->median);
	nd_jw_kint(w, "p90_ns", st->p90);
	nd_jw_kint(w, "min_ns", st->min);
	nd_jw_kint(w, "max_ns", st->max);
	nd_jw_kint(w, "stddev_ns", st->stddev);
}

/* Figures of the class split, to 4 decimals (no float noise). */
static double
round4(double x)
{
	return isfinite(x) ? round(x * 1e4) / 1e4 : x;
}

struct jstep {
	int64_t num, dur;	/* job step: the longest record of the number */
};

static void
write_summary(struct run *r, int64_t warmup, int drop_last)
{
	struct jstep *js;
	size_t nj = 0, first, last;
	int64_t *num, *dur;
	nd_stat all, steady;
	nd_step_classes cl;
	nd_breakdown bd;
	int64_t total = 0;
	double mfu_sum = 0;
	size_t nmfu = 0;
	uint32_t nsrc = 0;
	nd_buf *b = nd_out_buf(r->o);
	nd_jw w;

	nd_sort(r->recs, r->nrecs, sizeof *r->recs, rec_num_cmp, NULL);
	js = nd_xmalloc((r->nrecs ? r->nrecs : 1) * sizeof *js);
	for (size_t i = 0; i < r->nrecs; i++) {
		if (nj > 0 && js[nj - 1].num == r->recs[i].num) {
			if (r->recs[i].dur > js[nj - 1].dur)
				js[nj - 1].dur = r->recs[i].dur;
			continue;
		}
		js[nj].num = r->recs[i].num;
		js[nj].dur = r->recs[i].dur;
		nj++;
	}
	for (size_t i = 0; i < r->nrecs; i++)
		if (r->recs[i].source + 1 > nsrc)
			nsrc = r->recs[i].source + 1;
	num = nd_xmalloc((nj ? nj : 1) * sizeof *num);
	dur = nd_xmalloc((nj ? nj : 1) * sizeof *dur);
	for (size_t i = 0; i < nj; i++) {
		num[i] = js[i].num;
		dur[i] = js[i].dur;
	}
	nd_stat_of(dur, nj, &all);
	first = (size_t)warmup < nj ? (size_t)warmup : nj;
	last = nj;
	if (drop_last && last > first)
		last--;
	nd_stat_of(dur + first, last - first, &steady);
	nd_step_classify(num + first, dur + first, last - first, &cl);
	/* breakdown of the steady steps: every record of their numbers */
	memset(&bd, 0, sizeof bd);
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct rec *x = &r->recs[i];

		if (last == first || x->num < num[first] || x->num > num[last - 1])
			continue;
		nd_breakdown_add(&bd, &x->bd);
		total += x->dur;
		if (x->has_mfu) {
			mfu_sum += x->mfu;
			nmfu++;
		}
	}

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "step_summary");
	put_stat(&w, &all);
	nd_jw_kint(&w, "warmup", warmup);
	nd_jw_kbool(&w, "drop_last", drop_last);
	nd_jw_kuint(&w, "records", r->nrecs);
	nd_jw_kuint(&w, "sources", nsrc);
	nd_jw_key(&w, "steady");
	nd_jw_obj(&w);
	put_stat(&w, &steady);
	if (last > first) {
		nd_jw_kint(&w, "first_step", num[first]);
		nd_jw_kint(&w, "last_step", num[last - 1]);
	}
	nd_jw_obj_end(&w);
	if (total > 0) {
		nd_jw_key(&w, "breakdown");
		nd_jw_obj(&w);
		nd_jw_kint(&w, "dur_ns", total);
		nd_jw_kint(&w, "compute_ns", bd.compute_ns);
		nd_jw_kint(&w, "communication_ns", bd.communication_ns);
		nd_jw_kint(&w, "memory_ns", bd.memory_ns);
		nd_jw_kint(&w, "host_ns", bd.host_ns);
		nd_jw_kint(&w, "idle_ns", bd.idle_ns);
		nd_jw_kint(&w, "overlap_ns", bd.overlap_ns);
		nd_jw_obj_end(&w);
		nd_jw_key(&w, "shares");
		nd_jw_obj(&w);
		nd_jw_kdbl(&w, "compute", (double)bd.compute_ns / (double)total);
		nd_jw_kdbl(&w, "communication",
		    (double)bd.communication_ns / (double)total);
		nd_jw_kdbl(&w, "memory", (double)bd.memory_ns / (double)total);
		nd_jw_kdbl(&w, "host", (double)bd.host_ns / (double)total);
		nd_jw_kdbl(&w, "idle", (double)bd.idle_ns / (double)total);
		nd_jw_kdbl(&w, "overlap", (double)bd.overlap_ns / (double)total);
		nd_jw_obj_end(&w);
	}
	if (nmfu > 0)
		nd_jw_kdbl(&w, "mfu", mfu_sum / (double)nmfu);
	if (cl.nclass > 0) {
		nd_jw_key(&w, "classes");
		nd_jw_arr(&w);
		for (int c = 0; c < cl.nclass; c++) {
			const nd_step_class *k = &cl.c[c];

			nd_jw_obj(&w);
			nd_jw_kcstr(&w, "class", k->name);
			put_stat(&w, &k->st);
			nd_jw_kdbl(&w, "share", (double)k->n /
			    (double)(last - first));
			nd_jw_kint(&w, "representative_step", k->representative);
			if (k->has_period) {
				nd_jw_kint(&w, "period", k->period);
				nd_jw_kint(&w, "phase", k->phase);
			}
			if (cl.nclass == 2 && k->n <= MAX_LISTED) {
				int64_t *sn = nd_xmalloc(k->n * sizeof *sn);

				for (size_t i = 0; i < k->n; i++)
					sn[i] = num[first + cl.idx[k->first + i]];
				qsort(sn, k->n, sizeof *sn, i64_cmp);
				nd_jw_key(&w, "steps");
				nd_jw_arr(&w);
				for (size_t i = 0; i < k->n; i++)
					nd_jw_int(&w, sn[i]);
				nd_jw_arr_end(&w);
				free(sn);
			}
			nd_jw_obj_end(&w);
		}
		nd_jw_arr_end(&w);
		nd_jw_key(&w, "split");
		nd_jw_obj(&w);
		nd_jw_kbool(&w, "real", cl.nclass == 2);
		if (last - first >= ND_CLASS_MIN_STEPS) {
			nd_jw_kdbl(&w, "r2", round4(cl.r2));
			nd_jw_kdbl(&w, "gap", round4(cl.gap));
			nd_jw_kdbl(&w, "ratio", round4(cl.ratio));
		}
		nd_jw_obj_end(&w);
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_out_commit(r->o);
	nd_step_classes_free(&cl);
	free(js);
	free(num);
	free(dur);
}

/* ---- ranks ---- */

static int
rec_src_cmp(const void *a, const void *b, void *ctx)
{
	const struct rec *x = a, *y = b;
	int c = rec_num_cmp(a, b, ctx);

	if (c != 0)
		return c;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static void
put_rank(nd_jw *w, const char *key, const char *skey, const struct run *r,
    const nd_rank_win *x)
{
	const nd_source_info *si = nd_stream_meta(r->st, x->source);

	if (x->has_rank)
		nd_jw_kint(w, key, x->rank);
	if (si != NULL && si->path != NULL)
		nd_jw_kcstr(w, skey, si->path);
}

struct ranks_out {
	struct run *r;
	uint64_t *count;	/* steps each source is the straggler in */
	uint32_t nsrc;
	size_t nsteps;
};

static void
step_ranks(void *ctx, const nd_rank_win *win, size_t n, int abs,
    const nd_straggler *sg)
{
	struct ranks_out *ro = ctx;
	nd_buf *b = nd_out_buf(ro->r->o);
	nd_jw w;

	if (win[sg->straggler].source < ro->nsrc)
		ro->count[win[sg->straggler].source]++;
	ro->nsteps++;
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "step_ranks");
	nd_jw_kint(&w, "step", win[0].num);
	nd_jw_kuint(&w, "ranks", n);
	nd_jw_kcstr(&w, "clock", abs ? "absolute" : "relative");
	nd_jw_kint(&w, "dur_min_ns", sg->dur_min);
	nd_jw_kint(&w, "dur_max_ns", sg->dur_max);
	nd_jw_kint(&w, "dur_spread_ns", sg->dur_max - sg->dur_min);
	if (abs)
		nd_jw_kint(&w, "end_spread_ns", sg->end_spread);
	put_rank(&w, "straggler_rank", "straggler_source", ro->r,
	    &win[sg->straggler]);
	nd_jw_kint(&w, "lag_ns", sg->lag_ns);
	put_rank(&w, "last_rank", "last_source", ro->r, &win[sg->last]);
	nd_jw_kint(&w, "last_by_ns", sg->last_by_ns);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_out_commit(ro->r->o);
}

static void
write_ranks(struct run *r)
{
	nd_buf *b = nd_out_buf(r->o);
	nd_rank_win *per;	/* one per (step, source) */
	uint32_t nsrc = nd_stream_nsources(r->st);
	size_t nper;
	struct ranks_out ro;
	nd_jw w;

	nd_sort(r->recs, r->nrecs, sizeof *r->recs, rec_src_cmp, NULL);
	per = nd_xmalloc((r->nrecs ? r->nrecs : 1) * sizeof *per);
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct rec *x = &r->recs[i];
		const nd_source_info *si = nd_stream_meta(r->st, x->source);

		per[i].num = x->num;
		per[i].ts = x->ts;
		per[i].dur = x->dur;
		per[i].wait = x->wait;
		per[i].has_rank = x->has_rank;
		per[i].rank = x->has_rank ? x->rank : (int64_t)x->source;
		per[i].source = x->source;
		per[i].has_origin = si != NULL && si->has_meta &&
		    si->origin_ns != 0;
		per[i].origin = si != NULL ? si->origin_ns : 0;
	}
	nper = nd_rank_wins_merge(per, r->nrecs);
	ro.r = r;
	ro.nsrc = nsrc;
	ro.nsteps = 0;
	ro.count = nd_xcalloc(nsrc ? nsrc : 1, sizeof *ro.count);
	nd_rank_steps(per, nper, step_ranks, &ro);
	/* the rank that is the straggler in most (more than half) steps */
	{
		uint64_t *count = ro.count;
		size_t nsteps = ro.nsteps;
		uint32_t best = 0;
		const nd_rank_win *bx = NULL;

		for (uint32_t s = 1; s < nsrc; s++)
			if (count[s] > count[best])
				best = s;
		for (size_t i = 0; i < nper; i++)
			if (per[i].source == best)
				bx = &per[i];
		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", "straggler");
		nd_jw_kuint(&w, "steps", nsteps);
		if (nsteps > 0 && count[best] * 2 > nsteps && bx != NULL) {
			put_rank(&w, "rank", "source", r, bx);
			nd_jw_kuint(&w, "straggler_steps", count[best]);
		} else
			nd_jw_kbool(&w, "named", 0);
		nd_jw_key(&w, "counts");
		nd_jw_arr(&w);
		for (uint32_t s = 0; s < nsrc; s++) {
			const nd_rank_win *sx = NULL;

			for (size_t i = 0; i < nper && sx == NULL; i++)
				if (per[i].source == s)
					sx = &per[i];
			if (sx == NULL)
				continue;
			nd_jw_obj(&w);
			put_rank(&w, "rank", "source", r, sx);
			nd_jw_kuint(&w, "straggler_steps", count[s]);
			nd_jw_obj_end(&w);
		}
		nd_jw_arr_end(&w);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		nd_out_commit(r->o);
	}
	free(per);
	free(ro.count);
}

static void
print_peaks(const char *outpath)
{
	nd_out *o = nd_out_open(outpath);

	nd_peak_print(nd_out_buf(o));
	nd_out_commit(o);
	nd_out_close(o);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "drop-last", no_argument, NULL, OPT_DROP_LAST },
		{ "output", required_argument, NULL, 'o' },
		{ "peak-tflops", required_argument, NULL, 'p' },
		{ "per-device", no_argument, NULL, 'd' },
		{ "print-peaks", no_argument, NULL, OPT_PRINT_PEAKS },
		{ "ranks", no_argument, NULL, 'R' },
		{ "step-regex", required_argument, NULL, 'x' },
		{ "summary", no_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *outpath = NULL, *regex = NULL;
	int summary = 0, ranks = 0, drop_last = 0, peaks = 0, ch;
	int64_t warmup = 1, cur = -1;
	nd_steps_opts so;
	regex_t re;
	struct run r;
	nd_event ev;

	nd_init(argv[0]);
	memset(&so, 0, sizeof so);
	memset(&r, 0, sizeof r);
	so.flops = 1;
	while ((ch = getopt_long(argc, argv, "dho:p:RrsVw:x:", opts, NULL)) != -1)
		switch (ch) {
		case 'd':
			so.per_device = 1;
			break;
		case 'h':
			nd_cli_help(usage_text);
		case 'o':
			outpath = optarg;
			break;
		case 'p': {
			const nd_peak *p = nd_peak_find(optarg, strlen(optarg));

			if (p != NULL && strcspn(optarg, "0123456789.") != 0)
				so.peak_tflops = p->tflops;
			else
				so.peak_tflops = nd_cli_double("--peak-tflops",
				    optarg, 1e-9, 1e9);
			break;
		}
		case 'r':	/* -r is --rules elsewhere */
			nd_cli_deprecated("-r", "-R (--ranks)");
			/* FALLTHROUGH */
		case 'R':
			ranks = 1;
			break;
		case 's':
			summary = 1;
			break;
		case 'V':
			nd_cli_version();
		case 'w':
			warmup = nd_cli_int("--warmup", optarg, 0, INT64_MAX);
			break;
		case 'x':
			regex = optarg;
			break;
		case OPT_DROP_LAST:
			drop_last = 1;
			break;
		case OPT_PRINT_PEAKS:
			peaks = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;

	if (peaks) {
		if (argc > 0)
			nd_die(ND_EXIT_ERROR, "--print-peaks takes no file "
			    "arguments");
		print_peaks(outpath);
		return ND_EXIT_OK;
	}
	if (regex != NULL) {
		int rc = regcomp(&re, regex, REG_EXTENDED);

		if (rc != 0) {
			char msg[256];

			regerror(rc, &re, msg, sizeof msg);
			nd_die(ND_EXIT_ERROR, "invalid --step-regex '%s': %s",
			    regex, msg);
		}
		so.re = &re;
	}
	r.keep = summary || ranks;
	r.steps = nd_steps_new(&so);
	r.st = nd_stream_open(argv, argc);
	r.o = nd_out_open(outpath);
	nd_event_init(&ev);
	while (nd_stream_next(r.st, &ev)) {
		if ((int64_t)ev.source != cur) {
			if (cur >= 0)
				flush_source(&r, (uint32_t)cur);
			cur = ev.source;
		}
		if (ev.type == ND_EV_SPAN) {
			nd_span_role sr;

			if (!(ev.has & ND_HAS_TS) || !(ev.has & ND_HAS_DUR))
				continue;
			if (!r.has_span_rank && (ev.has & ND_HAS_RANK)) {
				r.has_span_rank = 1;
				r.span_rank = ev.rank;
			}
			r.spans++;
			nd_span_role_of(&ev, so.re, &sr);
			nd_steps_add(r.steps, &ev, &sr);
			continue;
		}
		if (ev.type == ND_EV_INSTANT || ev.type == ND_EV_COUNTER ||
		    ev.type == ND_EV_FLOW || ev.type == ND_EV_END)
			continue;
		if (ev.type == ND_EV_META)
			nd_steps_meta(r.steps, &ev);
		else if (nd_str_eq(ev.type_name, "step"))
			read_step(&r, &ev);
		else if (nd_str_eq(ev.type_name, "step_summary") ||
		    nd_str_eq(ev.type_name, "step_ranks") ||
		    nd_str_eq(ev.type_name, "straggler"))
			continue;	/* recomputed from the steps */
		nd_buf_add(nd_out_buf(r.o), ev.line, ev.len);
		nd_buf_addc(nd_out_buf(r.o), '\n');
		nd_out_commit(r.o);
	}
	if (cur >= 0)
		flush_source(&r, (uint32_t)cur);
	if (summary)
		write_summary(&r, warmup, drop_last);
	if (ranks)
		write_ranks(&r);
	nd_out_close(r.o);
	nd_stream_close(r.st);
	nd_event_free(&ev);
	nd_steps_free(r.steps);
	free(r.recs);
	if (regex != NULL)
		regfree(&re);
	return ND_EXIT_OK;
}
