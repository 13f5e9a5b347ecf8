/*
 * trace-report: a deterministic root-cause report of an ndtrace stream, in
 * Markdown, JSON or self-contained HTML (see trace-report(1)).  The work is
 * nd_report (lib/nd_report*.c); this file reads options and the stream.
 */
#include "nd_cli.h"
#include "nd_run.h"
#include "nd_partial.h"
#include "nd_peak.h"
#include "nd_report.h"
#include "nd_util.h"

#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_text[] =
"usage: trace-report [-huV] [-o file] [-k N] [-p X] [-t id=value] [-w n] [-x regex] [--drop-last] [--json | --html] [--stamp] [--device name] [--peak-gbps Y] [--list-thresholds] [--partial | --merge] [file ...]\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -k, --top N            rows per table (default 10; 0: all)\n"
"  -t, --threshold ID=V   threshold of finding ID in percent (repeatable)\n"
"      --list-thresholds  print the finding rules and their defaults and exit\n"
"  -w, --warmup N         steps left out of the steady state (default 1)\n"
"      --drop-last        leave the last step out of the steady state too\n"
"  -x, --step-regex RE    steps are the spans whose name matches RE\n"
"      --json             one JSON document instead of Markdown\n"
"      --html             one self-contained HTML page with charts\n"
"      --stamp            add the time of generation (output then differs)\n"
"  -u, --unordered        buffer every timeline (one reading, more memory)\n"
"      --device NAME      the device of every span, for the roofline (A100,\n"
"                         TPU v5e, ...; the table of trace-roofline(1))\n"
"  -p, --peak-tflops X    compute peak of a device for the roofline, TFLOP/s\n"
"      --peak-gbps Y      memory bandwidth of a device for the roofline, GB/s\n"
"      --partial          write partial results for --merge (collection\n"
"                         options, and --html; see trace-report(1))\n"
"      --merge            read partial results and write the report of all\n"
"                         their inputs (with the other options)\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

enum { OPT_DROP_LAST = 256, OPT_JSON, OPT_HTML, OPT_STAMP, OPT_UNORDERED,
	OPT_LIST, OPT_DEVICE, OPT_PEAK_TFLOPS, OPT_PEAK_GBPS, OPT_PARTIAL,
	OPT_MERGE };

/* The options, once parsed. */
struct args {
	nd_report_opts ro;
	const char *outpath;
	const char **thr;	/* the --threshold values */
	size_t nthr;
	int fmt;		/* 0 Markdown, 1 JSON, 2 HTML */
	int stamp, list, has_re;
	regex_t re;
	int partial, merge;
	/* the last option given of each kind, for --partial and --merge */
	const char *collect_opt, *output_opt;
};

/* Options read by the collection (they go to --partial) or only by the
 * output (they go to --merge). */
static void
kind_of(struct args *a, int c)
{
	switch (c) {
	case 'x': a->collect_opt = "--step-regex"; break;
	case 'u': case OPT_UNORDERED: a->collect_opt = "--unordered"; break;
	case OPT_DEVICE: a->collect_opt = "--device"; break;
	case 'p': case OPT_PEAK_TFLOPS: a->collect_opt = "--peak-tflops"; break;
	case OPT_PEAK_GBPS: a->collect_opt = "--peak-gbps"; break;
	case 'k': a->output_opt = "--top"; break;
	case 't': a->output_opt = "--threshold"; break;
	case 'w': a->output_opt = "--warmup"; break;
	case OPT_DROP_LAST: a->output_opt = "--drop-last"; break;
	case OPT_JSON: a->output_opt = "--json"; break;
	case OPT_HTML: break;	/* both: --partial keeps the strip */
	case OPT_STAMP: a->output_opt = "--stamp"; break;
	case OPT_LIST: a->output_opt = "--list-thresholds"; break;
	}
}

static void
check_mode(const struct args *a)
{
	nd_partial_opts po = { a->partial, a->merge, 1,
	    "--step-regex, --unordered, --device, --peak-tflops and "
	    "--peak-gbps", a->collect_opt != NULL,
	    "--top, --threshold, --warmup, --drop-last, --json, --stamp and "
	    "--list-thresholds", a->output_opt != NULL };

	nd_partial_check_opts(&po);
}

static void
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'k' },
		{ "threshold", required_argument, NULL, 't' },
		{ "list-thresholds", no_argument, NULL, OPT_LIST },
		{ "warmup", required_argument, NULL, 'w' },
		{ "drop-last", no_argument, NULL, OPT_DROP_LAST },
		{ "step-regex", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "html", no_argument, NULL, OPT_HTML },
		{ "stamp", no_argument, NULL, OPT_STAMP },
		{ "unordered", no_argument, NULL, OPT_UNORDERED },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "peak-tflops", required_argument, NULL, OPT_PEAK_TFLOPS },
		{ "peak-gbps", required_argument, NULL, OPT_PEAK_GBPS },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "merge", no_argument, NULL, OPT_MERGE },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	nd_report_opts *ro = &a->ro;
	int c;

	ro->top = 10;
	ro->warmup = 1;
	a->thr = nd_xcalloc((size_t)argc + 1, sizeof *a->thr);
	while ((c = getopt_long(argc, argv, "hVk:o:p:t:uw:x:", opts, NULL)) != -1) {
		kind_of(a, c);
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'V':
			nd_cli_version();
		case 'k':
			ro->top = (int)nd_cli_int("--top", optarg, 0, 1000000);
			break;
		case 'o':
			a->outpath = optarg;
			break;
		case 't':
			a->thr[a->nthr++] = optarg;
			break;
		case 'w':
			ro->warmup = nd_cli_int("--warmup", optarg, 0,
			    1000000000);
			break;
		case 'x':
			if (a->has_re)
				regfree(&a->re);
			nd_cli_regex(&a->re, "--step-regex", optarg, 0);
			a->has_re = 1;
			ro->step_regex = optarg;
			break;
		case OPT_DROP_LAST:
			ro->drop_last = 1;
			break;
		case OPT_JSON:
			a->fmt = 1;
			break;
		case OPT_HTML:
			a->fmt = 2;
			break;
		case OPT_STAMP:
			a->stamp = 1;
			break;
		case 'u':
		case OPT_UNORDERED:
			ro->unordered = 1;
			break;
		case OPT_LIST:
			a->list = 1;
			break;
		case OPT_DEVICE:
			if (optarg[0] == '\0')
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--device: ''");
			ro->device = optarg;
			break;
		case 'p':
		case OPT_PEAK_TFLOPS:
			ro->peak_tflops = nd_cli_double("--peak-tflops", optarg,
			    1e-9, 1e9);
			break;
		case OPT_PEAK_GBPS:
			ro->peak_gbps = nd_cli_double("--peak-gbps", optarg,
			    1e-9, 1e9);
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
	check_mode(a);
}

static void
list_thresholds(void)
{
	const nd_report_rule *ru = nd_report_rules();

	for (; ru->id != NULL; ru++)
		printf("%s\t%g\t%s\n", ru->id, ru->def, ru->what);
	nd_stdout_flush();
}

int
main(int argc, char **argv)
{
	/* static: still reachable (no leak report) when an option dies */
	static struct args a;
	char stampbuf[128];
	nd_report *r;
	nd_report_run *run;
	nd_engine e;
	nd_engine *ep = &e;
	nd_run_mode mode;

	nd_init(argv[0]);
	parse_args(argc, argv, &a);
	argc -= optind;
	argv += optind;
	if (a.list) {
		list_thresholds();
		free(a.thr);
		return ND_EXIT_OK;
	}
	nd_peak_check_device(a.ro.device, a.ro.peak_tflops, a.ro.peak_gbps,
	    "trace-roofline --print-peaks");
	a.ro.re = a.has_re ? &a.re : NULL;
	if (a.stamp) {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(stampbuf, sizeof stampbuf,
		    "Generated %Y-%m-%dT%H:%M:%SZ.", &tm);
		a.ro.stamp = stampbuf;
	}
	a.ro.html = a.fmt == 2;
	r = nd_report_new(&a.ro);
	for (size_t i = 0; i < a.nthr; i++)
		if (nd_report_set_threshold(r, a.thr[i]) != 0)
			nd_die(2, "invalid value for --threshold: '%s' (see "
			    "--list-thresholds)", a.thr[i]);
	free(a.thr);
	run = nd_report_run_new(r, a.partial ? ND_REPORT_PARTIAL : a.fmt == 1 ?
	    ND_REPORT_JSON : a.fmt == 2 ? ND_REPORT_HTML : ND_REPORT_MARKDOWN);
	e = nd_report_run_engine(run);
	/* out of order: read again (--unordered: buffered, one reading);
	 * NDTRACE_THREADS=2 may decode beside it */
	memset(&mode, 0, sizeof mode);
	mode.merge = a.merge;
	mode.once = a.ro.unordered;
	mode.threads = 1;
	mode.out = a.outpath;
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_report_run_free(run);
	nd_report_free(r);
	if (a.has_re)
		regfree(&a.re);
	return 0;
}
