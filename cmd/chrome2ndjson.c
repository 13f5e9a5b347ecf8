/*
 * chrome2ndjson: Chrome/Perfetto/Kineto trace JSON -> ndtrace stream.
 * The options and the inputs; the conversion is lib/nd_kineto.
 */
#include "nd_classify.h"
#include "nd_cli.h"
#include "nd_kineto.h"
#include "nd_out.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_text[] =
"usage: chrome2ndjson [-hqV] [--no-args] [--no-flows] [-o file] [--rank n] "
    "[-r file] [file ...]\n"
"  -o, --output FILE  write to FILE (atomically) instead of stdout\n"
"      --rank N       rank for inputs without distributedInfo.rank\n"
"  -r, --rules FILE   classification rules (TSV, see trace-classify(1))\n"
"      --no-args      leave out the args of every record\n"
"      --no-flows     do not write flow records (count them as skipped)\n"
"  -q, --quiet        do not print warnings on stderr\n"
"  -h, --help         show this help and exit\n"
"  -V, --version      show the version and exit\n";

/* A directory is a common slip (the profiler writes one per run): say
 * what to give instead, before anything is converted. */
static void
not_a_directory(const char *path)
{
	struct stat st;

	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 &&
	    S_ISDIR(st.st_mode))
		nd_die(ND_EXIT_ERROR, "%s: is a directory: give the trace "
		    "files in it (e.g. %s%s*.pt.trace.json.gz)", path, path,
		    path[strlen(path) - 1] == '/' ? "" : "/");
}

int
main(int argc, char **argv)
{
	enum { O_RANK = 256, O_RULES, O_NOARGS, O_NOFLOWS };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "rank", required_argument, NULL, O_RANK },
		{ "rules", required_argument, NULL, O_RULES },
		{ "no-args", no_argument, NULL, O_NOARGS },
		{ "no-flows", no_argument, NULL, O_NOFLOWS },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	nd_kineto_opts o;
	const char *opath = NULL, *rules = NULL;
	nd_rules *loaded = NULL;
	nd_out *out;
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
			rules = optarg;
			break;
		case O_NOARGS:
			o.no_args = 1;
			break;
		case O_NOFLOWS:
			o.no_flows = 1;
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
	if (rules != NULL)
		o.rules = loaded = nd_rules_load(rules);
	else
		o.rules = nd_rules_default();
	for (int i = 0; i < argc; i++)
		not_a_directory(argv[i]);
	out = nd_out_open(opath);
	if (argc == 0)
		nd_kineto_convert("-", &o, out);
	for (int i = 0; i < argc; i++)
		nd_kineto_convert(argv[i], &o, out);
	nd_out_close(out);
	nd_rules_free(loaded);
	return ND_EXIT_OK;
}
