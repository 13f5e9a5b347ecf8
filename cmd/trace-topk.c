/*
 * trace-topk: the ops (or families, classes, scopes, args...) that take the
 * time, by exclusive time, with counts, percentiles and shares; mergeable
 * partial results.  See trace-topk(1).
 */
#include "nd_agg.h"
#include "nd_cli.h"
#include "nd_out.h"
#include "nd_partial.h"
#include "nd_prov.h"
#include "nd_run.h"
#include "nd_top.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-topk [-huV] [-b keys] [-k N] [--sort order] [--timelines which] [--type type] [--overrun rule] [--wall] [--table | --csv | --partial] [--merge] [-o file] [file ...]\n"
"  -k, --top N          rows to show before the 'other' row (default 20; 0: all)\n"
"  -b, --by keys        group by these keys: name (default), family, class,\n"
"                       scope, cat, device, thread, rank, step, ... or args.X\n"
"      --sort order     order rows by self (default), total, count, mean, max\n"
"      --timelines which device (default; all when there are no device ops),\n"
"                       host or all\n"
"      --type type      aggregate records of this type (default: the type of\n"
"                       the first record with dur_ns, normally span)\n"
"      --overrun rule   clip (default) a child ending after its parent, or\n"
"                       reparent it as PyTorch's key_averages() does\n"
"  -u, --unordered      buffer every timeline (one reading, more memory)\n"
"      --wall           add each row's share of wall-clock busy device time\n"
"      --table          an aligned table for people\n"
"      --csv            CSV with a header line\n"
"      --partial        partial results for --merge\n"
"      --merge          combine partial results (the output of --partial)\n"
"  -o, --output file    write to file (atomically) instead of stdout\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n";

enum { OPT_BY = 256, OPT_SORT, OPT_TYPE, OPT_WALL, OPT_TABLE, OPT_CSV,
	OPT_PARTIAL };

struct args {
	int k, sort, fmt, nfmt, wall;
	const char *out, *by;
	nd_prov_args pa;
};

static void
option(struct args *a, int c)
{
	switch (c) {
	case 'h':
		nd_cli_help(usage_text);
	case 'k':
		a->k = (int)nd_cli_int("-k", optarg, 0, 100000000);
		break;
	case 'o':
		a->out = optarg;
		break;
	case 'V':
		nd_cli_version();
	case 'b':
	case OPT_BY:
		a->by = optarg;
		break;
	case OPT_SORT:
		if ((a->sort = nd_top_sort_of(optarg)) < 0)
			nd_die(ND_EXIT_ERROR, "invalid value for --sort: '%s' "
			    "(self, total, count, mean or max)", optarg);
		break;
	case OPT_TYPE:
		if (optarg[0] == '\0' || strlen(optarg) >= 64)
			nd_die(ND_EXIT_ERROR, "invalid value for --type: '%s'",
			    optarg);
		a->pa.so.type = optarg;
		a->pa.scanopt = 1;
		break;
	case OPT_WALL:
		a->wall = 1;
		break;
	case OPT_TABLE:
	case OPT_CSV:
	case OPT_PARTIAL:
		a->fmt = c == OPT_TABLE ? ND_TOP_TABLE : c == OPT_CSV ?
		    ND_TOP_CSV : ND_TOP_PARTIAL;
		a->nfmt++;
		break;
	default:
		if (!nd_prov_getopt(&a->pa, c, optarg))
			nd_cli_usage(usage_text);
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'k' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "type", required_argument, NULL, OPT_TYPE },
		{ "wall", no_argument, NULL, OPT_WALL },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "output", required_argument, NULL, 'o' },
		ND_PROV_LONGOPTS,
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct args a;
	nd_top *t;
	nd_engine e, *ep = &e;
	nd_run_mode mode = { 0 };
	int c;

	nd_init(argv[0]);
	memset(&a, 0, sizeof a);
	nd_prov_args_init(&a.pa);
	a.k = 20;
	while ((c = getopt_long(argc, argv, "b:hk:o:uV", opts, NULL)) != -1)
		option(&a, c);
	argc -= optind;
	argv += optind;
	if (a.nfmt > 1)
		nd_die(ND_EXIT_ERROR, "--table, --csv and --partial exclude "
		    "each other");
	{
		nd_partial_opts po = { a.fmt == ND_TOP_PARTIAL, a.pa.merge, 0,
		    "--timelines, --type, --overrun and --unordered",
		    a.pa.scanopt, NULL, 0 };

		nd_partial_check_opts(&po);
	}
	t = nd_top_new(a.sort, a.wall);
	if (a.by != NULL)
		nd_top_by(t, a.by);
	/* A --by key no span has is a typo; not for the default key, nor
	 * for a partial (another part may have the key). */
	e = nd_top_engine(t, &a.pa.so, a.pa.merge, a.fmt, a.k,
	    a.by != NULL && a.fmt != ND_TOP_PARTIAL);
	mode.merge = a.pa.merge;
	mode.once = a.pa.so.unordered;
	mode.out = a.out;
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_top_free(t);
	return ND_EXIT_OK;
}
