/*
 * trace-mem: memory timelines, peaks and the ops that allocate, from an
 * ndtrace stream ([memory] events, XPlane allocator statistics), from a
 * PyTorch CUDA memory snapshot pickle, or from a PyTorch memory timeline
 * export (HTA's memory_timeline.raw).  See trace-mem(1).
 */
#include "nd_cli.h"
#include "nd_memrun.h"
#include "nd_run.h"
#include "nd_util.h"

#include <getopt.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-mem [-hV] [-k N] [--frames N] [--sort self|total] [--snapshot] [--timeline | --table | --dump] [-o FILE] [FILE ...]\n"
"  -k, --top N          rows of top allocating ops and of largest blocks\n"
"                       (default 10; 0: none)\n"
"      --frames N       stack frames kept per snapshot block (default 5)\n"
"      --sort WHAT      order top ops by self (default) or total bytes\n"
"      --snapshot       read every FILE as a PyTorch memory snapshot\n"
"                       (default: a regular file whose first byte is 0x80)\n"
"      --timeline       also write the timeline as meta and counter records\n"
"      --table          a report for people instead of records\n"
"      --dump           write each snapshot's value as one JSON line\n"
"  -o, --output FILE    write to FILE (atomically) instead of stdout\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n";

enum { OPT_FRAMES = 256, OPT_SORT, OPT_SNAPSHOT, OPT_TIMELINE, OPT_TABLE,
	OPT_DUMP };

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'k' },
		{ "frames", required_argument, NULL, OPT_FRAMES },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "snapshot", no_argument, NULL, OPT_SNAPSHOT },
		{ "timeline", no_argument, NULL, OPT_TIMELINE },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "dump", no_argument, NULL, OPT_DUMP },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	nd_memrun_opts mo;
	nd_mem_opts *o = &mo.mem;
	nd_run_mode mode;
	nd_memrun *x;
	nd_engine e;
	nd_engine *ep = &e;
	int c;

	nd_init(argv[0]);
	memset(&mo, 0, sizeof mo);
	memset(&mode, 0, sizeof mode);
	o->top = 10;
	o->frames = 5;
	while ((c = getopt_long(argc, argv, "hk:o:V", opts, NULL)) != -1)
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'k':
			o->top = (int)nd_cli_int("--top", optarg, 0, 1000000);
			break;
		case 'o':
			mode.out = optarg;
			break;
		case 'V':
			nd_cli_version();
		case OPT_FRAMES:
			o->frames = (int)nd_cli_int("--frames", optarg, 0,
			    1000);
			break;
		case OPT_SORT:
			if (strcmp(optarg, "self") == 0)
				o->sort_total = 0;
			else if (strcmp(optarg, "total") == 0)
				o->sort_total = 1;
			else
				nd_die(ND_EXIT_ERROR, "--sort: '%s' is not "
				    "self or total", optarg);
			break;
		case OPT_SNAPSHOT:
			mo.snapshot = 1;
			break;
		case OPT_TIMELINE:
			o->timeline = 1;
			break;
		case OPT_TABLE:
			o->table = 1;
			break;
		case OPT_DUMP:
			mo.dump = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;
	if (o->timeline + o->table + mo.dump > 1)
		nd_die(ND_EXIT_ERROR, "--timeline, --table and --dump exclude "
		    "each other");
	x = nd_memrun_new(&mo);
	e = nd_memrun_engine(x);
	mode.once = 1;		/* nd_mem takes any order in one reading */
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_memrun_free(x);
	return ND_EXIT_OK;
}
