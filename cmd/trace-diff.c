/*
 * trace-diff: compare two ndtrace streams (before, after): deltas of step
 * time, time shares and exclusive time per key, regression gates with a
 * verdict and exit status for CI, and a run history.  See trace-diff(1);
 * the engine is lib/engines/nd_diff (and lib/engines/nd_history).
 */
#include "nd_cli.h"
#include "nd_diffrun.h"
#include "nd_history.h"
#include "nd_out.h"
#include "nd_run.h"
#include "nd_util.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-diff [-hV] [-b key] [-k N] [-w n] [-x regex] [--drop-last] [--fail-on rule] [--warn-on rule] [--allow-same] [--table] [--history file] [--label text] [--trend] [--last N] [-o file] [before after]\n"
"  -b, --by KEY           per-key deltas by KEY: name (default), family,\n"
"                         class, scope, cat, any span key or args.KEY\n"
"  -k, --top N            rows of each key list in --table (default 10;\n"
"                         0: all); the records always hold every key\n"
"  -w, --warmup N         steps left out of the steady state (default 1)\n"
"      --drop-last        leave the last step out of the steady state too\n"
"  -x, --step-regex RE    steps are the spans whose name matches RE\n"
"      --fail-on RULE     fail (exit 1) when RULE fires; repeatable\n"
"      --warn-on RULE     warn when RULE fires; repeatable\n"
"                         (no rule given: --fail-on step.median>+5%\n"
"                         --fail-on step.p90>+10% --warn-on\n"
"                         share.communication>+0.05 --warn-on share.idle>+0.05)\n"
"      --allow-same       compare a trace with itself (else refused)\n"
"      --table            a table for people instead of records\n"
"      --history FILE     append one line about this comparison to FILE\n"
"      --label TEXT       the label of the history line\n"
"      --trend            summarise the history FILE instead of comparing\n"
"      --last N           records in the trend series (default 20; 0: all)\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

enum {
	OPT_DROP_LAST = 256, OPT_FAIL_ON, OPT_WARN_ON, OPT_ALLOW_SAME, OPT_TABLE, OPT_HISTORY,
	OPT_LABEL, OPT_TREND, OPT_LAST
};

struct args {
	const char *outpath, *regex, *history, *label;
	int table, trend, allow_same;
	int64_t top, last;
	nd_diff_opts o;
	nd_rule *rules;
	size_t nrules;
};

static void
add_rule(struct args *a, const char *text, int level)
{
	char err[512];

	a->rules = nd_xrealloc(a->rules, (a->nrules + 1) * sizeof *a->rules);
	if (nd_rule_parse(text, level, &a->rules[a->nrules], err,
	    sizeof err) != 0)
		nd_die(ND_EXIT_ERROR, "invalid rule '%s': %s", text, err);
	a->nrules++;
}

/* Options into a; returns optind. */
static int
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "allow-same", no_argument, NULL, OPT_ALLOW_SAME },
		{ "by", required_argument, NULL, 'b' },
		{ "drop-last", no_argument, NULL, OPT_DROP_LAST },
		{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
		{ "history", required_argument, NULL, OPT_HISTORY },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "last", required_argument, NULL, OPT_LAST },
		{ "output", required_argument, NULL, 'o' },
		{ "step-regex", required_argument, NULL, 'x' },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "top", required_argument, NULL, 'k' },
		{ "trend", no_argument, NULL, OPT_TREND },
		{ "warmup", required_argument, NULL, 'w' },
		{ "warn-on", required_argument, NULL, OPT_WARN_ON },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	memset(a, 0, sizeof *a);
	a->top = 10;
	a->last = 20;
	a->o.warmup = 1;
	a->o.by = "name";
	a->o.min_pct = 1;
	while ((ch = getopt_long(argc, argv, "b:hk:o:Vw:x:", opts, NULL)) != -1)
		switch (ch) {
		case 'b':
			if (*optarg == '\0')
				nd_die(ND_EXIT_ERROR, "--by: empty key");
			a->o.by = optarg;
			break;
		case 'h':
			nd_cli_help(usage_text);
		case 'k':
			a->top = nd_cli_int("--top", optarg, 0, INT32_MAX);
			break;
		case 'o':
			a->outpath = optarg;
			break;
		case 'V':
			nd_cli_version();
		case 'w':
			a->o.warmup = nd_cli_int("--warmup", optarg, 0, INT64_MAX);
			break;
		case 'x':
			a->regex = optarg;
			break;
		case OPT_DROP_LAST:
			a->o.drop_last = 1;
			break;
		case OPT_FAIL_ON:
		case OPT_WARN_ON:
			add_rule(a, optarg, ch == OPT_FAIL_ON ? ND_RULE_FAIL :
			    ND_RULE_WARN);
			break;
		case OPT_ALLOW_SAME:
			a->allow_same = 1;
			break;
		case OPT_TABLE:
			a->table = 1;
			break;
		case OPT_HISTORY:
			a->history = optarg;
			break;
		case OPT_LABEL:
			a->label = optarg;
			break;
		case OPT_TREND:
			a->trend = 1;
			break;
		case OPT_LAST:
			a->last = nd_cli_int("--last", optarg, 0, INT32_MAX);
			break;
		default:
			nd_cli_usage(usage_text);
		}
	return optind;
}

static void
free_rules(struct args *a)
{
	for (size_t i = 0; i < a->nrules; i++)
		nd_rule_free(&a->rules[i]);
	free(a->rules);
}

/* --trend: summarise the history file. */
static int
trend(struct args *a, int argc)
{
	nd_out *out;

	if (a->history == NULL)
		nd_die(ND_EXIT_ERROR, "--trend needs --history FILE");
	if (argc != 0 || a->label != NULL)
		nd_die(ND_EXIT_ERROR, "--trend takes no traces and no "
		    "--label");
	out = nd_out_open(a->outpath);
	nd_history_trend(a->history, (size_t)a->last, a->table,
	    nd_out_buf(out));
	nd_out_close(out);
	free_rules(a);
	return ND_EXIT_OK;
}

/* Compare the two sides, write, append the history; the exit status. */
static int
compare(struct args *a, char **paths)
{
	nd_diffrun_opts ro;
	nd_diffrun *x;
	nd_engine e;
	nd_engine *ep = &e;
	nd_run_mode mode;
	int rc;

	memset(&ro, 0, sizeof ro);
	ro.o = a->o;
	ro.rules = a->rules;
	ro.nrules = a->nrules;
	ro.table = a->table;
	ro.top = (size_t)a->top;
	ro.allow_same = a->allow_same;
	ro.history = a->history;
	ro.label = a->label;
	x = nd_diffrun_new(&ro);
	e = nd_diffrun_engine(x);
	memset(&mode, 0, sizeof mode);
	mode.threads = 1;	/* NDTRACE_THREADS=2 may decode beside it */
	mode.out = a->outpath;
	nd_run(&ep, 1, paths, 2, &mode, NULL);
	rc = nd_diffrun_done(x);
	nd_diffrun_free(x);
	return rc;
}

int
main(int argc, char **argv)
{
	struct args a;
	regex_t re;
	int rc;

	nd_init(argv[0]);
	rc = parse_args(argc, argv, &a);
	argc -= rc;
	argv += rc;

	if (a.trend)
		return trend(&a, argc);
	if (argc != 2)
		nd_cli_usage(usage_text);
	if (strcmp(argv[0], "-") == 0 && strcmp(argv[1], "-") == 0)
		nd_die(ND_EXIT_ERROR, "before and after cannot both be stdin");
	if (a.label != NULL && a.history == NULL)
		nd_die(ND_EXIT_ERROR, "--label needs --history FILE");
	if (a.nrules == 0) {
		a.rules = nd_xmalloc(4 * sizeof *a.rules);
		a.nrules = nd_rule_defaults(a.rules);
	}
	if (a.regex != NULL) {
		nd_cli_regex(&re, "--step-regex", a.regex, 0);
		a.o.re = &re;
	}
	rc = compare(&a, argv);
	free_rules(&a);
	if (a.regex != NULL)
		regfree(&re);
	return rc;
}
