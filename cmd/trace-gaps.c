/*
 * trace-gaps: idle intervals on device op timelines, each with the op that
 * ends it (marker), the first real work after it (payload) and its likely
 * cause, as "gap" records.  See trace-gaps(1); the engine is lib/engines/nd_gaps.
 */
#include "nd_cli.h"
#include "nd_gaps.h"
#include "nd_gapsout.h"
#include "nd_run.h"
#include "nd_partial.h"
#include "nd_util.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-gaps [-cShuV] [-K dur] [-l level] [-m dur] [-o file] [-x regex] [--totals] [--partial] [--merge] [file ...]\n"
"  -l, --level LEVEL      device (default: idle on every timeline of the\n"
"                         device) or timeline (idle on one timeline)\n"
"  -m, --min DUR          report gaps of at least DUR (default 0; 10us, 1ms)\n"
"  -K, --kernel-wait DUR  shorter gaps have cause kernel_wait (default 30us)\n"
"  -c, --host-context     add the 3 host spans overlapping each gap most\n"
"  -S, --within-steps     keep only the parts of gaps inside step windows\n"
"  -x, --step-regex RE    step windows from spans whose name matches RE\n"
"  -u, --unordered        buffer every timeline: one reading of a stream out\n"
"                         of order (more memory)\n"
"      --totals           add a gap_summary record: totals by cause, payload\n"
"                         and scope\n"
"      --partial          partial results for --merge\n"
"      --merge            combine partial results (the output of --partial)\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

enum { OPT_TOTALS = 256, OPT_PARTIAL, OPT_MERGE };

struct args {
	nd_gaps_opts go;
	const char *out, *regex;
	int summary, partial, merge;
	int collopt;		/* a collection option was given */
};

static void
option(struct args *a, int ch)
{
	/* the options that decide the gaps: --merge takes them from the
	 * partial results */
	if (ch < 256 && strchr("cKklmrSsux", ch) != NULL)
		a->collopt = 1;
	switch (ch) {
	case 'c':
		a->go.host_context = ND_GAP_MAX_CTX;
		break;
	case 'h':
		nd_cli_help(usage_text);
	case 'k':	/* -k is --top elsewhere */
		nd_cli_deprecated("-k", "-K (--kernel-wait)");
		/* FALLTHROUGH */
	case 'K':
		a->go.kernel_wait_ns = nd_cli_duration("--kernel-wait", optarg);
		break;
	case 'l':
		if (strcmp(optarg, "device") == 0)
			a->go.level = ND_GAP_DEVICE;
		else if (strcmp(optarg, "timeline") == 0)
			a->go.level = ND_GAP_TIMELINE;
		else
			nd_die(ND_EXIT_ERROR, "invalid value for --level: "
			    "'%s' (use device or timeline)", optarg);
		break;
	case 'm':
		a->go.min_ns = nd_cli_duration("--min", optarg);
		break;
	case 'o':
		a->out = optarg;
		break;
	case 'r':	/* -r is --rules elsewhere */
		nd_cli_deprecated("-r", "-x (--step-regex)");
		/* FALLTHROUGH */
	case 'x':
		a->regex = optarg;
		break;
	case 's':	/* -s is --summary elsewhere */
		nd_cli_deprecated("-s", "-S (--within-steps)");
		/* FALLTHROUGH */
	case 'S':
		a->go.within_steps = 1;
		break;
	case 'u':
		a->go.unordered = 1;
		break;
	case 'V':
		nd_cli_version();
	case OPT_TOTALS:
		a->summary = 1;
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

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host-context", no_argument, NULL, 'c' },
		{ "kernel-wait", required_argument, NULL, 'K' },
		{ "level", required_argument, NULL, 'l' },
		{ "min", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "step-regex", required_argument, NULL, 'x' },
		{ "within-steps", no_argument, NULL, 'S' },
		{ "unordered", no_argument, NULL, 'u' },
		{ "totals", no_argument, NULL, OPT_TOTALS },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "merge", no_argument, NULL, OPT_MERGE },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct args a;
	regex_t re;
	nd_gapsrun *g;
	nd_engine e, *ep = &e;
	nd_run_mode mode = { 0, 0, 0, NULL };
	int ch;

	nd_partial_opts po = { 0, 0, 0, "--level, --min, --kernel-wait, "
	    "--host-context, --within-steps, --step-regex and --unordered", 0,
	    NULL, 0 };

	nd_init(argv[0]);
	memset(&a, 0, sizeof a);
	a.go.level = ND_GAP_DEVICE;
	a.go.kernel_wait_ns = 30000;
	while ((ch = getopt_long(argc, argv, "chK:k:l:m:o:r:SsuVx:", opts,
	    NULL)) != -1)
		option(&a, ch);
	argc -= optind;
	argv += optind;
	po.partial = a.partial;
	po.merge = a.merge;
	po.collect_given = a.collopt;
	nd_partial_check_opts(&po);
	if (a.regex != NULL) {
		nd_cli_regex(&re, "--step-regex", a.regex, 0);
		a.go.re = &re;
	}
	g = nd_gapsrun_new(&a.go, a.regex, a.partial, a.summary, a.merge);
	e = nd_gapsrun_engine(g);
	mode.merge = a.merge;
	mode.once = a.go.unordered;
	mode.out = a.out;
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_gapsrun_free(g);
	if (a.regex != NULL)
		regfree(&re);
	return ND_EXIT_OK;
}
