/*
 * chrome2ndjson: Chrome/Perfetto/Kineto trace JSON -> ndtrace stream.
 * The options and the inputs; the conversion is lib/ingest/nd_kineto.
 */
#include "nd_classify.h"
#include "nd_cli.h"
#include "nd_kineto.h"
#include "nd_out.h"
#include "nd_rundir.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: chrome2ndjson [-hqV] [--all-captures] [--list] [--no-args] [--no-flows] "
    "[-o file] [--rank n] [-r file] [--rules-add file] [--run name] [path ...]\n"
"      --all-captures\n"
"                     every capture of each worker in a directory, not the\n"
"                     newest only\n"
"      --list         print the files that would be read, then exit\n"
"  -o, --output FILE  write to FILE (atomically) instead of stdout\n"
"      --rank N       rank for inputs without distributedInfo.rank\n"
"  -r, --rules FILE   classification rules (TSV, see trace-classify(1))\n"
"      --rules-add FILE\n"
"                     the rules in FILE, then the built-in ones\n"
"      --no-args      leave out the args of every record\n"
"      --no-flows     do not write flow records (count them as skipped)\n"
"      --run NAME     the run of a directory of runs to read (default: last)\n"
"  -q, --quiet        do not print warnings on stderr\n"
"  -h, --help         show this help and exit\n"
"  -V, --version      show the version and exit\n"
"A path is a trace file (gzip allowed), - for stdin, or a directory of\n"
"*.json[.gz] traces (PyTorch's tensorboard_trace_handler) or of runs.\n";

/* *.json and *.json.gz: PyTorch's WORKER.TIME.pt.trace.json[.gz] and
 * the traces other tools leave in a directory. */
static int
is_trace_name(const char *n)
{
	size_t l = strlen(n);

	if (l > 3 && strcmp(n + l - 3, ".gz") == 0)
		l -= 3;
	return n[0] != '.' && l > 5 && strncmp(n + l - 5, ".json", 5) == 0;
}

/* The files the paths stand for (stdin without one), newest capture of
 * each worker unless all; what is skipped goes to skips. */
static void
resolve(int argc, char **argv, const char *run, int all, nd_strv *files,
    nd_rundir_skips *skips)
{
	int used_run = 0;
	nd_err err;

	if (argc == 0)
		nd_strv_add(files, nd_xstrdup("-"));
	nd_err_clear(&err);
	for (int i = 0; i < argc; i++) {
		size_t from = files->n;

		if (nd_rundir_resolve(argv[i], run, is_trace_name,
		    "*.json[.gz] trace", files, skips, &used_run, &err) != 0) {
			nd_strv_free(files);
			nd_err_exit(&err);
		}
		nd_rundir_newest(files, from, all, skips);
	}
	if (run != NULL && !used_run)
		nd_die(ND_EXIT_ERROR, "--run %s: no directory of runs among "
		    "the paths", run);
}

int
main(int argc, char **argv)
{
	enum { O_RANK = 256, O_RULES, O_RULES_ADD, O_NOARGS, O_NOFLOWS, O_ALL, O_LIST,
	    O_RUN };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "rank", required_argument, NULL, O_RANK },
		{ "rules", required_argument, NULL, O_RULES },
		{ "rules-add", required_argument, NULL, O_RULES_ADD },
		{ "no-args", no_argument, NULL, O_NOARGS },
		{ "no-flows", no_argument, NULL, O_NOFLOWS },
		{ "all-captures", no_argument, NULL, O_ALL },
		{ "list", no_argument, NULL, O_LIST },
		{ "run", required_argument, NULL, O_RUN },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	nd_kineto_opts o;
	const char *opath = NULL, *run = NULL;
	nd_rules_opt ro = { NULL, 0 };
	nd_strv files = { 0 };
	nd_rundir_skips skips = { 0 };
	int all = 0, list = 0;
	nd_rules *loaded;
	nd_out *out;
	nd_err err;
	int c;

	nd_init(argv[0]);
	memset(&o, 0, sizeof o);
	while ((c = getopt_long(argc, argv, "ho:qr:V", longopts, NULL)) != -1)
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'o':
			opath = optarg;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'V':
			nd_cli_version();
		case O_RANK:
			o.has_rank = 1;
			o.rank = nd_cli_int("--rank", optarg, 0, INT32_MAX);
			break;
		case 'r':
		case O_RULES:
		case O_RULES_ADD:
			nd_rules_opt_set(&ro, optarg, c == O_RULES_ADD);
			break;
		case O_NOARGS:
			o.no_args = 1;
			break;
		case O_NOFLOWS:
			o.no_flows = 1;
			break;
		case O_ALL:
			all = 1;
			break;
		case O_LIST:
			list = 1;
			break;
		case O_RUN:
			run = optarg;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;
	/* for tests: a small budget takes the ordered path on small files */
	if (getenv("CHROME2NDJSON_BUDGET") != NULL)
		o.budget = (size_t)nd_cli_int("CHROME2NDJSON_BUDGET",
		    getenv("CHROME2NDJSON_BUDGET"), 1, INT32_MAX);
	o.stats = getenv("CHROME2NDJSON_STATS") != NULL;
	o.rules = nd_rules_opt_load(&ro, &loaded);
	resolve(argc, argv, run, all, &files, &skips);
	if (list) {
		nd_rundir_list(&files, &skips);
		nd_strv_free(&files);
		nd_rundir_skips_free(&skips);
		nd_rules_free(loaded);
		return ND_EXIT_OK;
	}
	out = nd_out_open(opath);
	nd_err_clear(&err);
	for (size_t i = 0; i < files.n; i++)
		if (nd_kineto_convert(files.v[i], &o, out, &err) != 0)
			nd_err_exit(&err);	/* nothing of it was written */
	nd_out_close(out);
	nd_strv_free(&files);
	nd_rundir_skips_free(&skips);
	nd_rules_free(loaded);
	return ND_EXIT_OK;
}
