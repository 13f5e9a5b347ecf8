/*
 * For the ingest harnesses: what a conversion wrote to stdout (a memfd)
 * must be whole stream records, each one decoding (nd_event_decode, with
 * numbers longer than ND_JSON_MAX_NUMBER refused, as every stream reader
 * does), the first a meta record and the last an end record.
 */
#ifndef FUZZ_STREAM_H
#define FUZZ_STREAM_H

#include "ndtrace.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
fz_check_stream(void)
{
	static nd_event ev;
	static nd_buf scratch;
	nd_everr err;
	off_t n = lseek(STDOUT_FILENO, 0, SEEK_END);
	char *text = malloc((size_t)n + 1), *p, *end;
	int first = 1;

	nd_json_long_numbers = 0;
	if (n <= 0 || pread(STDOUT_FILENO, text, (size_t)n, 0) != n)
		abort();
	text[n] = '\0';
	if (text[n - 1] != '\n')
		abort();	/* a conversion writes whole records */
	p = text;
	end = text + n;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		*nl = '\0';
		if (nd_event_decode(&ev, p, (size_t)(nl - p), &scratch,
		    &err) != 0)
			abort();	/* the engine wrote an invalid record */
		if (first && ev.type != ND_EV_META)
			abort();
		first = 0;
		p = nl + 1;
		if (p == end && ev.type != ND_EV_END)
			abort();
	}
	free(text);
}

#endif
