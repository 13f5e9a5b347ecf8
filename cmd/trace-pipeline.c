/*
 * trace-pipeline: pipeline-parallel schedules from the ranks' own traces --
 * the forward, backward and weight-gradient blocks of every micro-batch on
 * every stage, the bubbles between them, P2P waits and the slow stage;
 * NDJSON records, a table or an SVG chart; mergeable partial results.  See
 * trace-pipeline(1); the run is lib/engines/nd_piperun, over nd_pipe.
 */
#include "nd_cli.h"
#include "nd_partial.h"
#include "nd_pipe.h"
#include "nd_piperun.h"
#include "nd_run.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-pipeline [-hV] [-o file] [--table] [--svg] [--step n] [--forward regex] [--backward regex] [--wgrad regex] [--p2p regex] [--partial] [--merge] [file ...]\n"
"      --forward RE       forward blocks: spans whose name matches RE\n"
"      --backward RE      backward blocks (tried before the forward rule)\n"
"      --wgrad RE         weight-gradient blocks (tried first)\n"
"      --p2p RE           point-to-point send/receive spans\n"
"      --step N           only step N (with --svg: its chart instead of the\n"
"                         typical step's)\n"
"      --table            a table for people instead of records\n"
"      --svg              the SVG schedule chart of one step\n"
"      --partial          partial results for --merge (with the rules)\n"
"      --merge            combine partial results (the output of --partial;\n"
"                         with --table, --svg, --step N, or with --partial)\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

enum { OPT_FORWARD = 256, OPT_BACKWARD, OPT_WGRAD, OPT_P2P, OPT_STEP,
	OPT_TABLE, OPT_SVG, OPT_PARTIAL, OPT_MERGE };


struct args {
	const char *out;
	int rules;		/* a rule option given */
	nd_piperun_opts o;	/* what the run is given */
};

static void
option(struct args *a, int ch)
{
	switch (ch) {
	case 'h':
		nd_cli_help(usage_text);
	case 'o':
		a->out = optarg;
		break;
	case 'V':
		nd_cli_version();
	case OPT_FORWARD:
		a->o.po.forward = optarg;
		a->rules = 1;
		break;
	case OPT_BACKWARD:
		a->o.po.backward = optarg;
		a->rules = 1;
		break;
	case OPT_WGRAD:
		a->o.po.wgrad = optarg;
		a->rules = 1;
		break;
	case OPT_P2P:
		a->o.po.p2p = optarg;
		a->rules = 1;
		break;
	case OPT_STEP:
		a->o.step = nd_cli_int("--step", optarg, INT64_MIN / 2,
		    INT64_MAX / 2);
		a->o.has_step = 1;
		break;
	case OPT_TABLE:
		a->o.table = 1;
		break;
	case OPT_SVG:
		a->o.svg = 1;
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

static void
check_modes(const struct args *a)
{
	if (a->o.table && a->o.svg)
		nd_die(ND_EXIT_ERROR, "--table and --svg: give one of them");
	nd_partial_opts po = { a->o.partial, a->o.merge, 0,
	    "--forward, --backward, --wgrad and --p2p", a->rules,
	    "--table, --svg and --step",
	    a->o.table || a->o.svg || a->o.has_step };

	nd_partial_check_opts(&po);
}

/* The answer, or a partial, or the merge of partials: one nd_run. */
static void
run(const struct args *a, char **argv, int argc)
{
	nd_piperun *r = nd_piperun_new(&a->o);
	nd_engine e = nd_piperun_engine(r), *ep = &e;
	nd_run_mode mode = { 0, 0, 0, NULL };

	mode.merge = a->o.merge;
	mode.out = a->out;
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_piperun_free(r);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backward", required_argument, NULL, OPT_BACKWARD },
		{ "forward", required_argument, NULL, OPT_FORWARD },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "output", required_argument, NULL, 'o' },
		{ "p2p", required_argument, NULL, OPT_P2P },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "step", required_argument, NULL, OPT_STEP },
		{ "svg", no_argument, NULL, OPT_SVG },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "wgrad", required_argument, NULL, OPT_WGRAD },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct args a;
	int ch;

	nd_init(argv[0]);
	memset(&a, 0, sizeof a);
	while ((ch = getopt_long(argc, argv, "ho:V", opts, NULL)) != -1)
		option(&a, ch);
	argc -= optind;
	argv += optind;
	check_modes(&a);
	run(&a, argv, argc);
	return ND_EXIT_OK;
}
