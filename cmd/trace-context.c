/*
 * trace-context: the spans around every span that matches a pattern --
 * before and after it on its timeline, its enclosing spans, and with
 * --overlapping what the device's other timelines and the host did
 * meanwhile -- as a stream (each span once, with a "context" object) or as
 * a listing per match.  grep -C for timelines.  The run is
 * lib/engines/nd_contextout.c, the window logic nd_context.c.
 */
#include "nd_cli.h"
#include "nd_contextout.h"
#include "nd_run.h"
#include "nd_util.h"

#include <string.h>

static const char usage_text[] =
"usage: trace-context [-hV] [-A N] [-B N] [-C N] [--regex] [--key KEY] [--max M] [--overlapping] [--lookback N] [--table] [-o FILE] PATTERN [FILE ...]\n"
"  -A, --after-context N   the N spans after each match on its timeline\n"
"                          (default 3)\n"
"  -B, --before-context N  the N spans before each match on its timeline\n"
"                          (default 3)\n"
"  -C, --context N         both of the above\n"
"      --regex             PATTERN is a POSIX extended regular expression\n"
"      --key KEY           match KEY instead of name: any top-level key or\n"
"                          args.X\n"
"      --max M             stop after M matches\n"
"      --overlapping       also the spans of the device's other timelines and\n"
"                          of host timelines that overlap each match\n"
"      --lookback N        with --overlapping, the ended spans each timeline\n"
"                          keeps for later matches (default 1000)\n"
"      --table             a listing per match for people instead of a stream\n"
"  -o, --output FILE       write to FILE (atomically) instead of stdout\n"
"  -h, --help              show this help and exit\n"
"  -V, --version           show the version and exit\n";

enum { OPT_REGEX = 256, OPT_KEY, OPT_MAX, OPT_OVERLAPPING, OPT_LOOKBACK,
	OPT_TABLE };

/* Parse the options and PATTERN into o; returns the index in argv
 * of the first FILE. */
static int
parse_args(int argc, char **argv, nd_contextout_opts *o)
{
	static const struct option opts[] = {
		{ "after-context", required_argument, NULL, 'A' },
		{ "before-context", required_argument, NULL, 'B' },
		{ "context", required_argument, NULL, 'C' },
		{ "regex", no_argument, NULL, OPT_REGEX },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "max", required_argument, NULL, OPT_MAX },
		{ "overlapping", no_argument, NULL, OPT_OVERLAPPING },
		{ "lookback", required_argument, NULL, OPT_LOOKBACK },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	int64_t both = 3;
	int ch;

	memset(o, 0, sizeof *o);
	o->after = o->before = -1;
	o->lookback = 1000;
	while ((ch = getopt_long(argc, argv, "A:B:C:ho:V", opts, NULL)) != -1)
		switch (ch) {
		case 'A':
			o->after = nd_cli_int("--after-context", optarg, 0,
			    INT32_MAX);
			break;
		case 'B':
			o->before = nd_cli_int("--before-context", optarg, 0,
			    INT32_MAX);
			break;
		case 'C':
			both = nd_cli_int("--context", optarg, 0, INT32_MAX);
			break;
		case 'h':
			nd_cli_help(usage_text);
		case 'o':
			o->out = optarg;
			break;
		case 'V':
			nd_cli_version();
		case OPT_REGEX:
			o->use_re = 1;
			break;
		case OPT_KEY:
			if (optarg[0] == '\0' || strcmp(optarg, "args.") == 0)
				nd_die(ND_EXIT_ERROR, "invalid value for --key: "
				    "'%s'", optarg);
			o->key = optarg;
			break;
		case OPT_MAX:
			o->max = nd_cli_int("--max", optarg, 1, INT64_MAX);
			break;
		case OPT_OVERLAPPING:
			o->overlapping = 1;
			break;
		case OPT_LOOKBACK:
			o->lookback = nd_cli_int("--lookback", optarg, 0,
			    INT32_MAX);
			break;
		case OPT_TABLE:
			o->table = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	if (optind >= argc) {
		nd_warn("no PATTERN given");
		nd_cli_usage(usage_text);
	}
	if (o->after < 0)
		o->after = both;
	if (o->before < 0)
		o->before = both;
	o->pattern = argv[optind];
	return optind + 1;
}

int
main(int argc, char **argv)
{
	nd_contextout_opts o;
	nd_contextout *c;
	nd_engine e, *ep = &e;
	nd_run_mode mode = { 0, 0, 0, NULL };
	int first;

	nd_init(argv[0]);
	first = parse_args(argc, argv, &o);
	c = nd_contextout_new(&o);
	e = nd_contextout_engine(c);
	mode.out = o.out;
	nd_run(&ep, 1, argv + first, argc - first, &mode, NULL);
	return nd_contextout_end(c);
}
