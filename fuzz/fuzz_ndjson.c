/*
 * libFuzzer harness: one NDJSON record through the decoder, the canonical
 * writer, and the decoder again (what is written must decode, and the
 * second encoding must equal the first).
 */
#include "ndtrace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static nd_event ev, ev2;
	static nd_buf scratch, scratch2, out, out2;
	nd_everr err;
	char *line = malloc(size + 1);

	/* The decoder sees one line as the line reader gives it. */
	memcpy(line, data, size);
	line[size] = '\0';
	if (nd_event_decode(&ev, line, size, &scratch, &err) == 0) {
		nd_buf_reset(&out);
		nd_event_write(&out, &ev);
		if (nd_event_decode(&ev2, out.p, out.len - 1, &scratch2, &err) != 0)
			abort();	/* we wrote something we cannot read */
		nd_buf_reset(&out2);
		nd_event_write(&out2, &ev2);
		if (out.len != out2.len || memcmp(out.p, out2.p, out.len) != 0)
			abort();	/* re-encoding is not stable */
	}
	free(line);
	return 0;
}
