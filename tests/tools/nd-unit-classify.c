/*
 * nd-unit-classify: drive nd_classify and nd_scope from the tests.
 *
 *   nd-unit-classify [-r rules] [-n repeat]
 *       stdin: name TAB long_name TAB cat TAB process TAB thread (missing or
 *       empty trailing columns are absent); stdout: class TAB family.
 *       -n classifies every line that many times (the cache must return the
 *       answer of the first time).
 *   nd-unit-classify -s [-l]
 *       stdin: op paths; stdout: nd_scope_normalize of each (-l: drop_last),
 *       checking that the returned count equals the bytes appended.
 */
#include "nd_buf.h"
#include "nd_classify.h"
#include "nd_scope.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
classify_lines(const nd_rules *r, long repeat)
{
	char *line = NULL, *fld[5];
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) != -1) {
		nd_class_in in;
		nd_class_out out, again;
		char *p = line;
		int i;

		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		for (i = 0; i < 5; i++) {
			fld[i] = p;
			if (p != NULL && (p = strchr(p, '\t')) != NULL)
				*p++ = '\0';
			if (fld[i] != NULL && *fld[i] == '\0')
				fld[i] = NULL;
		}
		in.name = nd_str_c(fld[0]);
		in.long_name = nd_str_c(fld[1]);
		in.cat = nd_str_c(fld[2]);
		in.process = nd_str_c(fld[3]);
		in.thread = nd_str_c(fld[4]);
		nd_classify(r, &in, &out);
		for (long k = 1; k < repeat; k++) {
			nd_classify(r, &in, &again);
			if (again.cls != out.cls || again.family != out.family)
				nd_die(2, "cache answer differs for '%s'",
				    fld[0] ? fld[0] : "");
		}
		printf("%s\t%s\n", out.cls, out.family);
	}
	free(line);
}

static void
scope_lines(int drop_last)
{
	nd_buf b = ND_BUF_INIT;
	char *line = NULL;
	size_t cap = 0, got;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) != -1) {
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		nd_buf_reset(&b);
		nd_buf_adds(&b, "prefix:");
		got = nd_scope_normalize(line, (size_t)n, drop_last, &b);
		if (got != b.len - 7)
			nd_die(2, "returned %zu, appended %zu", got, b.len - 7);
		printf("%s\n", b.p + 7);
	}
	free(line);
	nd_buf_free(&b);
}

int
main(int argc, char **argv)
{
	const char *rules = NULL;
	nd_rules *loaded = NULL;
	nd_err rerr = { 0 };
	long repeat = 1;
	int c, scope = 0, drop_last = 0;

	nd_init(argv[0]);
	while ((c = getopt(argc, argv, "ln:r:s")) != -1)
		switch (c) {
		case 'l':
			drop_last = 1;
			break;
		case 'n':
			repeat = atol(optarg);
			break;
		case 'r':
			rules = optarg;
			break;
		case 's':
			scope = 1;
			break;
		default:
			fprintf(stderr, "usage: nd-unit-classify [-r rules] "
			    "[-n repeat] | -s [-l]\n");
			return 2;
		}
	if (scope)
		scope_lines(drop_last);
	else {
		if (rules != NULL &&
		    (loaded = nd_rules_load(rules, &rerr)) == NULL)
			nd_err_exit(&rerr);
		classify_lines(loaded ? loaded : nd_rules_default(), repeat);
		nd_rules_free(loaded);
	}
	return fflush(stdout) == 0 ? 0 : 2;
}
