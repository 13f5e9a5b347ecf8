/*
 * xplane2ndjson: read XPlane profiles (TensorFlow, JAX, XLA: *.xplane.pb)
 * and write the ndtrace stream (ndtrace(7)).  The options and the paths
 * (files, run and log directories); the conversion is lib/ingest/nd_xpconv.
 */
#include "nd_classify.h"
#include "nd_cli.h"
#include "nd_out.h"
#include "nd_rundir.h"
#include "nd_util.h"
#include "nd_xpconv.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: xplane2ndjson [-hV] [--device-only] [--lines regex] [--list] "
"[--no-args] [--planes regex] [--print-rules] [-r file] [--rules-add file] [--run name] "
"[-o file] [path ...]\n"
"  --device-only     only /device:* planes\n"
"  --lines REGEX     only lines whose name or display name matches\n"
"  --list            print the files that would be read, then exit\n"
"  --no-args         leave out \"args\"\n"
"  --planes REGEX    only planes whose name matches\n"
"  --print-rules     print the classification rules (TSV), then exit\n"
"  -r, --rules FILE  classify with the rules in FILE\n"
"  --rules-add FILE  the rules in FILE, then the built-in ones\n"
"  --run NAME        the run of a log directory to read (default: newest)\n"
"  -o, --output FILE write to FILE (atomically) instead of stdout\n"
"  -h, --help        show this help and exit\n"
"  -V, --version     show the version and exit\n"
"A path is a .xplane.pb file (gzip allowed), - for stdin, or a directory:\n"
"a run directory, a plugins/profile directory or a TensorBoard log directory.\n";

static int
is_xplane_name(const char *n)
{
	size_t l = strlen(n);

	return (l > 10 && strcmp(n + l - 10, ".xplane.pb") == 0) ||
	    (l > 13 && strcmp(n + l - 13, ".xplane.pb.gz") == 0);
}

/* ---------- main ---------- */

/* --planes / --lines: the last one given counts. */
static const regex_t *
compile_re(regex_t *re, const regex_t *old, const char *opt_name,
    const char *s)
{
	int rc;

	if (old != NULL)
		regfree(re);
	rc = regcomp(re, s, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char msg[256];

		regerror(rc, re, msg, sizeof msg);
		nd_die(ND_EXIT_ERROR, "invalid regular expression for %s: '%s': %s",
		    opt_name, s, msg);
	}
	return re;
}

/* The files the paths stand for (stdin without one); what is skipped goes
 * to skips. */
static void
resolve(int argc, char **argv, const char *run, nd_strv *files,
    nd_rundir_skips *skips)
{
	int used_run = 0;
	nd_err err;

	nd_err_clear(&err);
	if (argc == 0)
		(void)nd_rundir_resolve("-", run, is_xplane_name,
		    "*.xplane.pb", files, skips, &used_run, &err);
	for (int i = 0; i < argc && err.code == 0; i++)
		(void)nd_rundir_resolve(argv[i], run, is_xplane_name,
		    "*.xplane.pb", files, skips, &used_run, &err);
	if (err.code != 0) {
		nd_strv_free(files);
		nd_err_exit(&err);
	}
	if (run != NULL && !used_run)
		nd_die(ND_EXIT_ERROR, "--run %s: no log directory among the "
		    "paths", run);
}

/* Every file, one source each, to out (stdout when NULL). */
static void
convert_all(const nd_strv *files, const nd_xpconv_opts *opt,
    const char *out)
{
	nd_out *o = nd_out_open(out);
	nd_err err;

	nd_err_clear(&err);
	for (size_t i = 0; i < files->n; i++)
		if (nd_xpconv_convert(files->v[i], opt, o, &err) != 0)
			nd_err_exit(&err);
	nd_out_close(o);
}

int
main(int argc, char **argv)
{
	enum { O_DEVICE = 256, O_LINES, O_LIST, O_NOARGS, O_PLANES, O_PRINT,
	    O_RULES_ADD, O_RUN };
	static const struct option opts[] = {
		{ "device-only", no_argument, NULL, O_DEVICE },
		{ "lines", required_argument, NULL, O_LINES },
		{ "list", no_argument, NULL, O_LIST },
		{ "no-args", no_argument, NULL, O_NOARGS },
		{ "planes", required_argument, NULL, O_PLANES },
		{ "print-rules", no_argument, NULL, O_PRINT },
		{ "rules", required_argument, NULL, 'r' },
		{ "rules-add", required_argument, NULL, O_RULES_ADD },
		{ "run", required_argument, NULL, O_RUN },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL, *run = NULL, *e;
	nd_rules_opt ro = { NULL, 0 };
	int list = 0, print = 0, c;
	/* static: what they hold stays reachable on every way out */
	static nd_rules *loaded;
	static nd_xpconv_opts opt;
	static regex_t planes, lines;
	nd_strv files = { 0 };
	nd_rundir_skips skips = { 0 };

	nd_init(argv[0]);
	while ((c = getopt_long(argc, argv, "hVo:r:", opts, NULL)) != -1)
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'V':
			nd_cli_version();
		case 'o':
			out = optarg;
			break;
		case O_DEVICE:
			opt.device_only = 1;
			break;
		case O_LINES:
			opt.lines = compile_re(&lines, opt.lines, "--lines",
			    optarg);
			break;
		case O_LIST:
			list = 1;
			break;
		case O_NOARGS:
			opt.no_args = 1;
			break;
		case O_PLANES:
			opt.planes = compile_re(&planes, opt.planes, "--planes",
			    optarg);
			break;
		case O_PRINT:
			print = 1;
			break;
		case 'r':
		case O_RULES_ADD:
			nd_rules_opt_set(&ro, optarg, c == O_RULES_ADD);
			break;
		case O_RUN:
			run = optarg;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;

	/* The built-in table is compiled when first needed (not for --list,
	 * nor for a file that turns out to be damaged). */
	if (ro.path != NULL)
		opt.rules = nd_rules_opt_load(&ro, &loaded);
	if (print) {
		nd_rules_print(opt.rules != NULL ? opt.rules :
		    nd_rules_default(), stdout);
		nd_stdout_flush();
		return ND_EXIT_OK;
	}
	if ((e = getenv("XPLANE2NDJSON_THREADS")) != NULL && *e != '\0')
		opt.threads = (int)nd_cli_int("XPLANE2NDJSON_THREADS", e, 1,
		    ND_XPCONV_MAX_THREADS);
	resolve(argc, argv, run, &files, &skips);
	if (list) {
		nd_rundir_list(&files, &skips);
		nd_strv_free(&files);
		nd_rundir_skips_free(&skips);
		return ND_EXIT_OK;
	}
	convert_all(&files, &opt, out);
	nd_strv_free(&files);
	nd_rundir_skips_free(&skips);
	nd_rules_free(loaded);
	if (opt.planes != NULL)
		regfree(&planes);
	if (opt.lines != NULL)
		regfree(&lines);
	return ND_EXIT_OK;
}
