/*
 * nd_check: the checks of the stream contract (ndtrace(7)) on the lines of
 * its inputs, as trace-check makes them: every line decodes as one record;
 * each source starts with its meta record, which has the keys it must;
 * spans, instants, counters and flows have theirs, spans in order on their
 * timeline (nd_span_order); no key twice; nothing after a source's end
 * record, whose counts are the source's; the durations within the bound
 * of sums (nd_sum.h).  Sources are counted as nd_stream counts them.
 *
 * Unlike the readers, which stop at the first bad line, the checker goes
 * on: each problem is a value handed to fn (file, or NULL after the last
 * input; line; message), and the reading goes on to the next line.
 */
#ifndef ND_CHECK_H
#define ND_CHECK_H

#include "nd_err.h"

#include <stdint.h>

typedef void nd_check_fn(void *ctx, const char *file, uint64_t line,
    const char *msg);

typedef struct nd_check_counts {
	uint64_t records, spans, sources, problems;
} nd_check_counts;

typedef struct nd_check nd_check;
nd_check *nd_check_new(nd_check_fn *fn, void *ctx);
/* Check the lines of one input ("-": stdin); inputs in order make one
 * run.  -1 with err filled when the input cannot be read, or is a
 * document to convert (nd_lines_foreign): no problem of it is a finding. */
int nd_check_file(nd_check *c, const char *path, nd_err *err);
/* After the last input: what was read and the problems found (an empty
 * run is one). */
void nd_check_end(nd_check *c, nd_check_counts *n);
void nd_check_free(nd_check *c);

#endif
