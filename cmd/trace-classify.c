/*
 * trace-classify: set "class" and "family" of every span and instant from a
 * rule table (built-in, or --rules FILE); every other record passes through
 * byte for byte.  See trace-classify(1).
 */
#include "nd_classify.h"
#include "nd_classrun.h"
#include "nd_cli.h"
#include "nd_out.h"
#include "nd_run.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-classify [-hV] [-o file] [-r rules] [--rules-add rules] [--print-rules] [file ...]\n"
"  -o, --output FILE   write to FILE (replaced atomically) instead of stdout\n"
"  -r, --rules FILE    use the rule table in FILE instead of the built-in one\n"
"      --rules-add FILE the rules in FILE, then the built-in ones\n"
"      --print-rules   print the rule table in the form --rules reads, exit\n"
"  -h, --help          show this help and exit\n"
"  -V, --version       show the version and exit\n";

enum { OPT_PRINT_RULES = 256, OPT_RULES_ADD };

static void
print_rules(const nd_rules *r, const char *outpath)
{
	nd_out *o;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	/* Through nd_out so that -o and write errors behave as for records. */
	if ((fp = open_memstream(&text, &len)) == NULL)
		nd_die_errno(ND_EXIT_ERROR, "open_memstream");
	nd_rules_print(r, fp);
	if (fclose(fp) != 0)
		nd_die_errno(ND_EXIT_ERROR, "open_memstream");
	o = nd_out_open(outpath);
	nd_out_write(o, text, len);
	nd_out_close(o);
	free(text);
}

static void
classify(const nd_rules *r, char **files, int nfiles, const char *outpath)
{
	nd_classrun *c = nd_classrun_new(r);
	nd_engine e = nd_classrun_engine(c), *ep = &e;
	nd_run_mode mode = { 0, 0, 0, NULL };

	mode.out = outpath;
	nd_run(&ep, 1, files, nfiles, &mode, NULL);
	nd_classrun_free(c);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "print-rules", no_argument, NULL, OPT_PRINT_RULES },
		{ "rules", required_argument, NULL, 'r' },
		{ "rules-add", required_argument, NULL, OPT_RULES_ADD },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *outpath = NULL;
	nd_rules_opt ro = { NULL, 0 };
	nd_rules *loaded;
	const nd_rules *r;
	int ch, print = 0;

	nd_init(argv[0]);
	while ((ch = getopt_long(argc, argv, "ho:r:V", opts, NULL)) != -1)
		switch (ch) {
		case 'h':
			nd_cli_help(usage_text);
		case 'o':
			outpath = optarg;
			break;
		case 'r':
		case OPT_RULES_ADD:
			nd_rules_opt_set(&ro, optarg, ch == OPT_RULES_ADD);
			break;
		case 'V':
			nd_cli_version();
		case OPT_PRINT_RULES:
			print = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;

	r = nd_rules_opt_load(&ro, &loaded);
	if (print) {
		if (argc > 0)
			nd_die(ND_EXIT_ERROR, "--print-rules takes no file "
			    "arguments");
		print_rules(r, outpath);
	} else
		classify(r, argv, argc, outpath);
	nd_rules_free(loaded);
	return ND_EXIT_OK;
}
