/*
 * trace-steps: training steps, each with the breakdown of its window into
 * compute, exposed communication, memory, host and idle time, achieved
 * TFLOP/s and MFU; with --summary step statistics and light/heavy classes,
 * with --ranks the straggler across ranks; mergeable partial results.  See
 * trace-steps(1); the engines are lib/engines/nd_steps (steps), lib/engines/nd_stepsum
 * (summary, ranks), lib/engines/nd_stepspart (partial results) and lib/core/nd_interval,
 * lib/engines/nd_peak.
 */
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_partial.h"
#include "nd_peak.h"
#include "nd_steps.h"
#include "nd_stepspart.h"
#include "nd_stepsum.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-steps [-dhRsV] [-o file] [-p peak] [-w n] [-x regex] [--drop-last] [--print-peaks] [--partial] [--merge] [file ...]\n"
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
"      --partial          partial results for --merge (with -d, -x, -p)\n"
"      --merge            combine partial results (the output of --partial;\n"
"                         with -s, -R, -w, --drop-last, or with --partial)\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

enum { OPT_DROP_LAST = 256, OPT_PRINT_PEAKS, OPT_PARTIAL, OPT_MERGE };

struct run {
	nd_stream *st;
	nd_out *o;
	int partial;		/* lines go to pw (--partial) */
	nd_partial_w pw;
	nd_buf line;		/* a step record being built */
	nd_steps *steps;
	nd_stepsum *sum;	/* the records for -s, -R; NULL: not kept */
	int has_span_rank;
	int64_t span_rank;
	uint64_t spans;		/* spans of the current source */
};

/* A line of output for the sources (len bytes, no newline). */
static void
emit(struct run *r, const char *line, size_t len)
{
	nd_buf *b = nd_out_buf(r->o);

	if (r->partial) {
		nd_stepspart_line(&r->pw, line, len);
		return;
	}
	nd_buf_add(b, line, len);
	nd_buf_addc(b, '\n');
	nd_out_commit(r->o);
}

/* A step record for the summary: identity and clock of its source. */
static void
keep_rec(struct run *r, nd_stepsum_rec *x, uint32_t src)
{
	const nd_source_info *si = nd_stream_meta(r->st, src);

	if (r->sum == NULL)
		return;
	x->source = src;
	x->has_origin = si != NULL && si->has_meta && si->origin_ns != 0;
	x->origin = si != NULL ? si->origin_ns : 0;
	nd_stepsum_add(r->sum, x);
}

/* A step record, or with pw a profile_window record (no steps: not a
 * step, never kept for the summary). */
static void
write_step(struct run *r, const nd_step *s, const nd_source_info *si,
    uint32_t src, int pw)
{
	nd_stepsum_rec x;
	nd_stepsum_where wh;

	memset(&wh, 0, sizeof wh);
	wh.path = si != NULL ? si->path : NULL;
	wh.key = nd_steps_device(r->steps, s->dev, &wh.model, &wh.is_dev);
	if (si != NULL && si->has_rank) {
		wh.has_rank = 1;
		wh.rank = si->rank;
	} else if (r->has_span_rank) {
		wh.has_rank = 1;
		wh.rank = r->span_rank;
	}
	nd_buf_reset(&r->line);
	nd_stepsum_step_write(&r->line, s, pw, &wh, &x);
	emit(r, r->line.p, r->line.len);
	if (!pw)
		keep_rec(r, &x, src);
}

static void
flush_source(struct run *r, uint32_t src)
{
	const nd_step *steps;
	size_t n = nd_steps_finish(r->steps, &steps);
	const nd_source_info *si = nd_stream_meta(r->st, src);

	for (size_t i = 0; i < n; i++)
		write_step(r, &steps[i], si, src, 0);
	if (n == 0) {
		size_t np = nd_steps_profile(r->steps, &steps);

		for (size_t i = 0; i < np; i++)
			write_step(r, &steps[i], si, src, 1);
	}
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
	nd_stepsum_rec x;

	if (nd_stepsum_step_read(ev, &x))
		keep_rec(r, &x, ev->source);
}

/* ---- summary and ranks (lib/engines/nd_stepsum) ---- */

static const char *
src_path(void *ctx, uint32_t source)
{
	const nd_source_info *si = nd_stream_meta(ctx, source);

	return si != NULL ? si->path : NULL;
}

static void
write_summary(struct run *r, int64_t warmup, int drop_last, int summary,
    int ranks, nd_stepsum_path_fn *path, void *ctx)
{
	const nd_stepsum_res *res;

	nd_stepsum_finish(r->sum, warmup, drop_last);
	res = nd_stepsum_result(r->sum);
	if (summary) {
		nd_stepsum_write_summary(nd_out_buf(r->o), r->sum);
		nd_out_commit(r->o);
	}
	if (!ranks)
		return;
	for (size_t i = 0; i < res->nrs; i++) {
		nd_stepsum_write_rankstep(nd_out_buf(r->o), r->sum, i, path,
		    ctx);
		nd_out_commit(r->o);
	}
	nd_stepsum_write_straggler(nd_out_buf(r->o), r->sum, path, ctx);
	nd_out_commit(r->o);
}

/* Every record: spans to the step detection, step records to the summary,
 * the rest passed through. */
static void
read_all(struct run *r, const regex_t *re)
{
	int64_t cur = -1;
	nd_event ev;

	nd_event_init(&ev);
	while (nd_stream_next(r->st, &ev)) {
		if ((int64_t)ev.source != cur) {
			if (cur >= 0)
				flush_source(r, (uint32_t)cur);
			cur = ev.source;
		}
		if (ev.type == ND_EV_SPAN) {
			nd_span_role sr;

			if (!(ev.has & ND_HAS_TS) || !(ev.has & ND_HAS_DUR))
				continue;
			if (!r->has_span_rank && (ev.has & ND_HAS_RANK)) {
				r->has_span_rank = 1;
				r->span_rank = ev.rank;
			}
			r->spans++;
			nd_span_role_of(&ev, re, &sr);
			nd_steps_add(r->steps, &ev, &sr);
			continue;
		}
		/* the others are read, or recomputed from the steps */
		if (!nd_stepspart_passes(&ev))
			continue;
		if (ev.type == ND_EV_META)
			nd_steps_meta(r->steps, &ev);
		else if (nd_str_eq(ev.type_name, "step"))
			read_step(r, &ev);
		emit(r, ev.line, ev.len);
	}
	if (cur >= 0)
		flush_source(r, (uint32_t)cur);
	nd_event_free(&ev);
}

static void
print_peaks(const char *outpath)
{
	nd_out *o = nd_out_open(outpath);

	nd_peak_print(nd_out_buf(o));
	nd_out_commit(o);
	nd_out_close(o);
}

struct args {
	const char *out, *regex;
	int summary, ranks, drop_last, peaks, partial, merge;
	int outopt;		/* -s, -R, -w or --drop-last given */
	int64_t warmup;
	nd_steps_opts so;
};

static void
option(struct args *a, int ch)
{
	switch (ch) {
	case 'd':
		a->so.per_device = 1;
		break;
	case 'h':
		nd_cli_help(usage_text);
	case 'o':
		a->out = optarg;
		break;
	case 'p': {
		const nd_peak *p = nd_peak_find(optarg, strlen(optarg));

		if (p != NULL && strcspn(optarg, "0123456789.") != 0)
			a->so.peak_tflops = p->tflops;
		else
			a->so.peak_tflops = nd_cli_double("--peak-tflops",
			    optarg, 1e-9, 1e9);
		break;
	}
	case 'r':	/* -r is --rules elsewhere */
		nd_cli_deprecated("-r", "-R (--ranks)");
		/* FALLTHROUGH */
	case 'R':
	case 's':
	case 'w':
	case OPT_DROP_LAST:
		a->outopt = 1;
		if (ch == 'w')
			a->warmup = nd_cli_int("--warmup", optarg, 0,
			    INT64_MAX);
		a->ranks |= ch == 'R' || ch == 'r';
		a->summary |= ch == 's';
		a->drop_last |= ch == OPT_DROP_LAST;
		break;
	case 'V':
		nd_cli_version();
	case 'x':
		a->regex = optarg;
		break;
	case OPT_PRINT_PEAKS:
		a->peaks = 1;
		break;
	case OPT_PARTIAL:
		a->partial = 1;
		break;
	case OPT_MERGE:
		a->merge = 1;
		break;
	default:
		nd_cli_usage(usage_text);
	}
}

/* The options that shape the lines and step records of a partial, as
 * canonical text: partials merge only when theirs are equal. */
static void
collect_text(const struct args *a, nd_buf *b)
{
	if (a->so.per_device)
		nd_buf_adds(b, " --per-device");
	if (a->regex != NULL) {
		nd_buf_adds(b, " --step-regex ");
		nd_buf_adds(b, a->regex);
	}
	if (a->so.peak_tflops > 0) {
		nd_buf_adds(b, " --peak-tflops ");
		nd_json_put_double(b, a->so.peak_tflops);
	}
	nd_buf_addc(b, '\0');
}

static void
check_modes(const struct args *a, int argc)
{
	if (a->peaks && argc > 0)
		nd_die(ND_EXIT_ERROR, "--print-peaks takes no file arguments");
	nd_partial_opts po = { a->partial, a->merge, 0,
	    "--per-device, --step-regex and --peak-tflops",
	    a->so.per_device || a->regex != NULL || a->so.peak_tflops > 0,
	    "--summary, --ranks, --warmup and --drop-last", a->outopt };

	nd_partial_check_opts(&po);
}

static void
run_merge(const struct args *a, char **argv, int argc)
{
	nd_stepspart_m m;
	struct run r;

	memset(&r, 0, sizeof r);
	if (a->summary || a->ranks || a->partial)
		r.sum = nd_stepsum_new();
	r.o = nd_out_open(a->out);
	nd_stepspart_merge(&m, argv, argc, r.o, a->partial ? &r.pw : NULL,
	    r.sum);
	if (a->partial)
		nd_stepspart_end(&r.pw, r.sum, m.npath, nd_stepspart_path, &m);
	else if (r.sum != NULL)
		write_summary(&r, a->warmup, a->drop_last, a->summary,
		    a->ranks, nd_stepspart_path, &m);
	nd_out_close(r.o);
	nd_stepspart_free(&m);
	nd_stepsum_free(r.sum);
}

static void
run_scan(struct args *a, char **argv, int argc)
{
	regex_t re;
	struct run r;
	nd_buf collect = ND_BUF_INIT;

	memset(&r, 0, sizeof r);
	if (a->regex != NULL) {
		int rc = regcomp(&re, a->regex, REG_EXTENDED);

		if (rc != 0) {
			char msg[256];

			regerror(rc, &re, msg, sizeof msg);
			nd_die(ND_EXIT_ERROR, "invalid --step-regex '%s': %s",
			    a->regex, msg);
		}
		a->so.re = &re;
	}
	r.partial = a->partial;
	if (a->summary || a->ranks || a->partial)
		r.sum = nd_stepsum_new();
	r.steps = nd_steps_new(&a->so);
	r.st = nd_stream_open(argv, argc);
	r.o = nd_out_open(a->out);
	if (r.partial) {
		collect_text(a, &collect);
		/* without the separator of the first option */
		nd_stepspart_begin(&r.pw, r.o, collect.p[0] == ' ' ?
		    collect.p + 1 : collect.p);
	}
	read_all(&r, a->so.re);
	if (r.partial)
		nd_stepspart_end(&r.pw, r.sum, nd_stream_nsources(r.st),
		    src_path, r.st);
	else if (r.sum != NULL)
		write_summary(&r, a->warmup, a->drop_last, a->summary,
		    a->ranks, src_path, r.st);
	nd_out_close(r.o);
	nd_stream_close(r.st);
	nd_steps_free(r.steps);
	nd_stepsum_free(r.sum);
	nd_buf_free(&r.line);
	nd_buf_free(&collect);
	if (a->regex != NULL)
		regfree(&re);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "drop-last", no_argument, NULL, OPT_DROP_LAST },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "output", required_argument, NULL, 'o' },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
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
	struct args a;
	int ch;

	nd_init(argv[0]);
	memset(&a, 0, sizeof a);
	a.warmup = 1;
	a.so.flops = 1;
	while ((ch = getopt_long(argc, argv, "dho:p:RrsVw:x:", opts, NULL)) != -1)
		option(&a, ch);
	argc -= optind;
	argv += optind;
	check_modes(&a, argc);
	if (a.peaks)
		print_peaks(a.out);
	else if (a.merge)
		run_merge(&a, argv, argc);
	else
		run_scan(&a, argv, argc);
	return ND_EXIT_OK;
}
