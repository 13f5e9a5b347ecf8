/*
 * For the analysis harnesses (fuzz_pickle, fuzz_pipe): what an analysis
 * writes must be whole lines, each a JSON object; and the analysis must
 * return its errors, never end the process (nd_die_hook).
 */
#ifndef FUZZ_LINES_H
#define FUZZ_LINES_H

#include "ndtrace.h"

#include <stdlib.h>
#include <string.h>

static void
die_is_a_bug(int code)
{
	(void)code;
	abort();	/* the reader and the analysis must return errors */
}

static void
check_json_lines(const nd_buf *b)
{
	const char *p = b->p, *end;

	if (b->len == 0)
		return;
	end = b->p + b->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q = p;
		nd_jval v;
		nd_jerr e;

		if (nl == NULL)
			abort();	/* every record ends its line */
		if (nd_json_value(&q, p, nl, &v, &e) != 0 || v.type != ND_JOBJ)
			abort();
		p = nl + 1;
	}
}

#endif
