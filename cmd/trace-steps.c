/*
 * trace-steps: training steps, each with the breakdown of its window into
 * compute, exposed communication, memory, host and idle time, achieved
 * TFLOP/s and MFU; with --summary step statistics and light/heavy classes,
 * with --ranks the straggler across ranks; mergeable partial results.  See
 * trace-steps(1); the run is lib/engines/nd_stepsrun, over nd_steps
 * (steps), nd_stepsum (summary, ranks) and nd_stepspart (partials).
 */
#include "nd_cli.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_partial.h"
#include "nd_peak.h"
#include "nd_steps.h"
#include "nd_stepsrun.h"
#include "nd_run.h"
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
	int peaks;
	int outopt;		/* -s, -R, -w or --drop-last given */
	nd_stepsrun_opts o;	/* what the run is given */
};

static void
option(struct args *a, int ch)
{
	switch (ch) {
	case 'd':
		a->o.so.per_device = 1;
		break;
	case 'h':
		nd_cli_help(usage_text);
	case 'o':
		a->out = optarg;
		break;
	case 'p': {
		const nd_peak *p = nd_peak_find(optarg, strlen(optarg));

		if (p != NULL && strcspn(optarg, "0123456789.") != 0)
			a->o.so.peak_tflops = p->tflops;
		else
			a->o.so.peak_tflops = nd_cli_double("--peak-tflops",
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
			a->o.warmup = nd_cli_int("--warmup", optarg, 0,
			    INT64_MAX);
		a->o.ranks |= ch == 'R' || ch == 'r';
		a->o.summary |= ch == 's';
		a->o.drop_last |= ch == OPT_DROP_LAST;
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
		a->o.partial = 1;
		break;
	case OPT_MERGE:
		a->o.merge = 1;
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
	if (a->o.so.per_device)
		nd_buf_adds(b, " --per-device");
	if (a->regex != NULL) {
		nd_buf_adds(b, " --step-regex ");
		nd_buf_adds(b, a->regex);
	}
	if (a->o.so.peak_tflops > 0) {
		nd_buf_adds(b, " --peak-tflops ");
		nd_json_put_double(b, a->o.so.peak_tflops);
	}
	nd_buf_addc(b, '\0');
}

static void
check_modes(const struct args *a, int argc)
{
	if (a->peaks && argc > 0)
		nd_die(ND_EXIT_ERROR, "--print-peaks takes no file arguments");
	nd_partial_opts po = { a->o.partial, a->o.merge, 0,
	    "--per-device, --step-regex and --peak-tflops",
	    a->o.so.per_device || a->regex != NULL || a->o.so.peak_tflops > 0,
	    "--summary, --ranks, --warmup and --drop-last", a->outopt };

	nd_partial_check_opts(&po);
}

/* Steps of the inputs, or the merge of partials: one nd_run. */
static void
run_steps(struct args *a, char **argv, int argc)
{
	regex_t re;
	nd_buf collect = ND_BUF_INIT;
	nd_stepsrun *r;
	nd_engine e, *ep = &e;
	nd_run_mode mode = { 0, 0, 0, NULL };

	if (a->regex != NULL && !a->o.merge) {
		nd_cli_regex(&re, "--step-regex", a->regex, 0);
		a->o.so.re = &re;
	}
	collect_text(a, &collect);
	/* without the separator of the first option */
	a->o.collect = collect.p[0] == ' ' ? collect.p + 1 : collect.p;
	r = nd_stepsrun_new(&a->o);
	e = nd_stepsrun_engine(r);
	mode.merge = a->o.merge;
	mode.out = a->out;
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_stepsrun_free(r);
	nd_buf_free(&collect);
	if (a->o.so.re != NULL)
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
	a.o.warmup = 1;
	a.o.so.flops = 1;
	while ((ch = getopt_long(argc, argv, "dho:p:RrsVw:x:", opts, NULL)) != -1)
		option(&a, ch);
	argc -= optind;
	argv += optind;
	check_modes(&a, argc);
	if (a.peaks)
		print_peaks(a.out);
	else
		run_steps(&a, argv, argc);
	return ND_EXIT_OK;
}
