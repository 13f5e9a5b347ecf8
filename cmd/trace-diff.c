/*
 * trace-diff: compare two ndtrace streams (before, after): deltas of step
 * time, time shares and exclusive time per key, regression gates with a
 * verdict and exit status for CI, and a run history.  See trace-diff(1);
 * the engine is lib/engines/nd_diff (and lib/engines/nd_history).
 */
#include "nd_cli.h"
#include "nd_diff.h"
#include "nd_history.h"
#include "nd_out.h"
#include "nd_util.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

struct warns {
	char **w;
	size_t n;
};

static void
add_warn(struct warns *w, const char *fmt, const char *a, const char *b)
{
	char msg[1024];

	snprintf(msg, sizeof msg, fmt, a, b);
	nd_warn("%s", msg);
	w->w = nd_xrealloc(w->w, (w->n + 1) * sizeof *w->w);
	w->w[w->n++] = nd_xstrdup(msg);
}

/* Provenance: refuse identical inputs, warn about the same path or run. */
static void
provenance(const nd_diff_side *b, const nd_diff_side *a, int allow_same,
    struct warns *w)
{
	const nd_diff_src *sb, *sa;
	size_t nb = nd_diff_side_sources(b, &sb), na = nd_diff_side_sources(a, &sa);
	int same = nb > 0 && nb == na;

	for (size_t i = 0; same && i < nb; i++)
		if (sb[i].sha256 == NULL || sa[i].sha256 == NULL ||
		    strcmp(sb[i].sha256, sa[i].sha256) != 0)
			same = 0;
	if (same && !allow_same)
		nd_die(ND_EXIT_ERROR, "before and after are the same trace "
		    "(sha256 %.16s...): comparing a trace with itself proves "
		    "nothing (--allow-same to do it anyway)", sb[0].sha256);
	if (same)
		add_warn(w, "before and after are the same trace (sha256 %.16s...%s)",
		    sb[0].sha256, "");
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < na; j++) {
			if (!same && sb[i].path != NULL && sa[j].path != NULL &&
			    strcmp(sb[i].path, sa[j].path) == 0)
				add_warn(w, "same source path on both sides: %s%s",
				    sb[i].path, "");
			if (sb[i].run_id != NULL && sa[j].run_id != NULL &&
			    strcmp(sb[i].run_id, sa[j].run_id) == 0)
				add_warn(w, "same run id on both sides: %s%s",
				    sb[i].run_id, "");
		}
}

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
compare(struct args *a, const char *bpath, const char *apath)
{
	nd_diff_side *before, *after;
	nd_diff d;
	nd_verdict v;
	struct warns w = { NULL, 0 };
	char err[512];
	nd_out *out;
	int rc;

	before = nd_diff_side_read(bpath, &a->o);
	after = nd_diff_side_read(apath, &a->o);
	provenance(before, after, a->allow_same, &w);
	if (nd_diff_side_steady(before)->count == 0 ||
	    nd_diff_side_steady(after)->count == 0)
		add_warn(&w, "no steady steps on the %s side%s: no step or "
		    "share deltas (see --warmup, --step-regex)",
		    nd_diff_side_steady(before)->count == 0 ? "before" : "after",
		    "");
	nd_diff_compute(before, after, &a->o, &d);
	if (nd_diff_verdict(&d, a->rules, a->nrules, &v, err, sizeof err) != 0)
		nd_die(ND_EXIT_ERROR, "%s", err);
	for (size_t i = 0; i < v.nmissing; i++)
		add_warn(&w, "rule %s not evaluated: metric not available%s",
		    v.missing[i], "");

	out = nd_out_open(a->outpath);
	if (a->table)
		nd_diff_write_table(nd_out_buf(out), &d, &v, (size_t)a->top);
	else {
		nd_diff_write_deltas(nd_out_buf(out), &d);
		nd_diff_write_verdict(nd_out_buf(out), &d, &v, a->rules,
		    a->nrules, before, after, w.w, w.n);
	}
	nd_out_close(out);

	if (a->history != NULL) {
		nd_buf hb = ND_BUF_INIT;

		nd_history_line(&hb, a->label, (long long)time(NULL), &d, &v,
		    before, after);
		if (nd_history_append(a->history, hb.p, hb.len) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s", a->history);
		nd_buf_free(&hb);
	}

	rc = v.status == ND_RULE_FAIL ? ND_EXIT_FINDING : ND_EXIT_OK;
	nd_verdict_free(&v);
	nd_diff_free(&d);
	nd_diff_side_free(before);
	nd_diff_side_free(after);
	for (size_t i = 0; i < w.n; i++)
		free(w.w[i]);
	free(w.w);
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
	rc = compare(&a, argv[0], argv[1]);
	free_rules(&a);
	if (a.regex != NULL)
		regfree(&re);
	return rc;
}
