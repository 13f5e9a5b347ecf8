/*
 * libFuzzer harness: the command-line value parsers (durations, exact
 * decimal scaling) on arbitrary text.  Checks they never crash and that a
 * parsed duration is non-negative.
 */
#include "ndtrace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	int64_t v;

	memcpy(s, data, size);
	s[size] = '\0';
	if (nd_parse_duration(s, &v) == 0 && v < 0)
		abort();
	for (int scale = -3; scale <= 9; scale += 3)
		(void)nd_json_fixed(s, strlen(s), scale, &v);
	free(s);
	return 0;
}
