/*
 * trace-regions: time by named-scope region (the `scope` path of each op),
 * as a tree with inclusive and exclusive time, an indented text tree, or
 * folded stacks for flame graphs; mergeable partial results.  See
 * trace-regions(1).
 */
#include "nd_agg.h"
#include "nd_cli.h"
#include "nd_out.h"
#include "nd_partial.h"
#include "nd_prov.h"
#include "nd_regions.h"
#include "nd_run.h"
#include "nd_util.h"

#include <string.h>

static const char usage_text[] =
"usage: trace-regions [-huV] [--depth N] [--min-share fraction] [--prune] [--by-device] [--ops] [--timelines which] [--overrun rule] [--tree | --folded | --partial] [--merge] [-o file] [file ...]\n"
"      --depth N        show regions down to depth N; deeper time goes to\n"
"                       the region at depth N\n"
"      --min-share fraction  fold regions under this fraction of the total\n"
"                       into their parent (top-level ones into '(other)')\n"
"      --prune          collapse single-child chains that add no time\n"
"      --by-device      one tree per device\n"
"      --ops            add each op's name as a leaf below its scope\n"
"      --timelines which device (default; all when there are no device ops),\n"
"                       host or all\n"
"      --overrun rule   clip (default) a child ending after its parent, or\n"
"                       reparent it as PyTorch's key_averages() does\n"
"  -u, --unordered      buffer every timeline (one reading, more memory)\n"
"      --tree           an indented tree with '#' bars\n"
"      --folded         folded stacks 'a;b;c NS' for flamegraph.pl\n"
"      --partial        partial results for --merge\n"
"      --merge          combine partial results (the output of --partial)\n"
"  -o, --output file    write to file (atomically) instead of stdout\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n";

enum { OPT_DEPTH = 256, OPT_MINSHARE, OPT_PRUNE, OPT_BYDEV, OPT_OPS,
	OPT_TREE, OPT_FOLDED, OPT_PARTIAL };

struct args {
	nd_regions_opts ro;
	nd_prov_args pa;
	int nfmt;
	const char *out;
};

static void
option(struct args *a, int c)
{
	if (nd_prov_getopt(&a->pa, c, optarg))
		return;
	switch (c) {
	case 'h':
		nd_cli_help(usage_text);
	case 'o':
		a->out = optarg;
		break;
	case 'V':
		nd_cli_version();
	case OPT_DEPTH:
		a->ro.depth = (int)nd_cli_int("--depth", optarg, 1, 1000000);
		break;
	case OPT_MINSHARE:
		a->ro.min_share = nd_cli_double("--min-share", optarg, 0, 1);
		break;
	case OPT_PRUNE:
		a->ro.prune = 1;
		break;
	case OPT_BYDEV:
		a->ro.by_device = 1;
		break;
	case OPT_OPS:
		a->ro.ops = 1;
		break;
	case OPT_TREE:
	case OPT_FOLDED:
	case OPT_PARTIAL:
		a->ro.fmt = c == OPT_TREE ? ND_REG_TREE : c == OPT_FOLDED ?
		    ND_REG_FOLDED : ND_REG_PARTIAL;
		a->nfmt++;
		break;
	default:
		nd_cli_usage(usage_text);
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "min-share", required_argument, NULL, OPT_MINSHARE },
		{ "prune", no_argument, NULL, OPT_PRUNE },
		{ "by-device", no_argument, NULL, OPT_BYDEV },
		{ "ops", no_argument, NULL, OPT_OPS },
		{ "tree", no_argument, NULL, OPT_TREE },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "output", required_argument, NULL, 'o' },
		ND_PROV_LONGOPTS,
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct args a;
	nd_regions *r;
	nd_engine e, *ep = &e;
	nd_run_mode mode = { 0 };
	int c;

	nd_init(argv[0]);
	memset(&a, 0, sizeof a);
	nd_prov_args_init(&a.pa);
	a.pa.so.type = "span";
	while ((c = getopt_long(argc, argv, "ho:uV", opts, NULL)) != -1)
		option(&a, c);
	argc -= optind;
	argv += optind;
	if (a.nfmt > 1)
		nd_die(ND_EXIT_ERROR, "--tree, --folded and --partial exclude "
		    "each other");
	{
		nd_partial_opts po = { a.ro.fmt == ND_REG_PARTIAL, a.pa.merge,
		    0, "--timelines, --overrun and --unordered", a.pa.scanopt,
		    NULL, 0 };

		nd_partial_check_opts(&po);
	}
	r = nd_regions_new(&a.ro);
	e = nd_regions_engine(r, &a.pa.so, a.pa.merge);
	mode.merge = a.pa.merge;
	mode.once = a.pa.so.unordered;
	mode.out = a.out;
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_regions_free(r);
	return ND_EXIT_OK;
}
