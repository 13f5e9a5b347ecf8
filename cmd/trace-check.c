/*
 * trace-check: validate that a stream follows the ndtrace contract
 * (ndtrace(7)).  Reads every line, reports each problem as
 * "trace-check: FILE:LINE: message" (up to --max-problems), exits 1 if any.
 * The checks are lib/engines/nd_check, which hands problems as values.
 */
#include "nd_check.h"
#include "nd_cli.h"
#include "nd_util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-check [-hqVv] [-M max] [file ...]\n"
"  -M, --max-problems N  report at most N problems (default 20; 0: no limit)\n"
"  -q, --quiet           report nothing, only the exit status\n"
"  -v, --verbose         print a summary line on stderr\n"
"  -h, --help            show this help and exit\n"
"  -V, --version         show the version and exit\n";

struct shown {
	uint64_t n, max;	/* problems found; shown at most (0: all) */
	int quiet;
};

/* A problem: "trace-check: FILE:LINE: message" on stderr, up to the
 * most shown. */
static void
show(void *ctx, const char *file, uint64_t line, const char *msg)
{
	struct shown *s = ctx;

	s->n++;
	if (s->quiet || (s->max > 0 && s->n > s->max))
		return;
	if (file == NULL)
		fprintf(stderr, "%s: %s\n", nd_progname, msg);
	else
		fprintf(stderr, "%s: %s:%llu: %s\n", nd_progname, file,
		    (unsigned long long)line, msg);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-problems", required_argument, NULL, 'M' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct shown s = { 0, 20, 0 };
	nd_check *c;
	nd_check_counts n;
	nd_err err;
	int ch, verbose = 0;

	nd_init(argv[0]);
	while ((ch = getopt_long(argc, argv, "hM:m:qVv", opts, NULL)) != -1)
		switch (ch) {
		case 'h':
			nd_cli_help(usage_text);
		case 'm':	/* -m is --min elsewhere */
			nd_cli_deprecated("-m", "-M (--max-problems)");
			/* FALLTHROUGH */
		case 'M':
			s.max = (uint64_t)nd_cli_int("--max-problems", optarg,
			    0, INT64_MAX);
			break;
		case 'q':
			s.quiet = 1;
			break;
		case 'V':
			nd_cli_version();
		case 'v':
			verbose = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;

	c = nd_check_new(show, &s);
	nd_err_clear(&err);
	if (argc == 0 && nd_check_file(c, "-", &err) != 0)
		nd_err_exit(&err);
	for (int i = 0; i < argc; i++)
		if (nd_check_file(c, argv[i], &err) != 0)
			nd_err_exit(&err);
	nd_check_end(c, &n);
	if (!s.quiet && s.max > 0 && n.problems > s.max)
		fprintf(stderr, "%s: %llu more problems not shown\n", nd_progname,
		    (unsigned long long)(n.problems - s.max));
	if (verbose)
		fprintf(stderr, "%s: %llu records, %llu spans, %llu sources, "
		    "%llu problems\n", nd_progname,
		    (unsigned long long)n.records, (unsigned long long)n.spans,
		    (unsigned long long)n.sources,
		    (unsigned long long)n.problems);
	nd_check_free(c);
	return n.problems > 0 ? ND_EXIT_FINDING : ND_EXIT_OK;
}
