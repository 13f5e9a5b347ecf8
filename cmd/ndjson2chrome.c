/*
 * ndjson2chrome: an ndtrace stream -> Chrome trace JSON (object form), for
 * Perfetto UI and chrome://tracing.  See ndjson2chrome(1); the run is
 * lib/engines/nd_tochrome.
 */
#include "nd_cli.h"
#include "nd_run.h"
#include "nd_tochrome.h"
#include "nd_util.h"

#include <stdlib.h>

static const char usage_text[] =
"usage: ndjson2chrome [-DhV] [-o file] [file ...]\n"
"  -o, --output FILE    write to FILE (atomically) instead of stdout\n"
"  -D, --keep-derived   also copy step, scope, class, family, device and\n"
"                       rank into args.ndtrace (shown by the trace viewer)\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n";

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "keep-derived", no_argument, NULL, 'D' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	nd_run_mode mode = { 0, 0, 0, NULL };
	nd_tochrome *t;
	nd_engine e, *ep = &e;
	int c, keep = 0;

	nd_init(argv[0]);
	while ((c = getopt_long(argc, argv, "Dhko:V", longopts, NULL)) != -1)
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'k':	/* -k is --top elsewhere */
			nd_cli_deprecated("-k", "-D (--keep-derived)");
			/* FALLTHROUGH */
		case 'D':
			keep = 1;
			break;
		case 'o':
			mode.out = optarg;
			break;
		case 'V':
			nd_cli_version();
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;
	t = nd_tochrome_new(keep);
	e = nd_tochrome_engine(t);
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_tochrome_free(t);
	return ND_EXIT_OK;
}
