/*
 * nd_gapsum: totals of gaps -- count, total_ns and max_ns -- overall, by
 * cause, by payload name and by payload scope (region), written as one
 * "gap_summary" record, and the same totals as "gap_sum" records of a
 * partial result that merge by addition.
 *
 * A push engine: nd_gapsum_add() for each gap handed out by nd_gaps (or
 * nd_gapsum_read() for each gap_sum record), nd_gapsum_write() at the end
 * (or nd_gapsum_rows() for the rows of a table, as trace-report shows
 * them).  A row also keeps its longest gap -- the earliest on ties, so the
 * order of the gaps does not matter -- its start, and for a payload row
 * the gap's marker and scope.
 * Integer sums only, so the order of adding does not matter and a merge of
 * partials gives the totals of one run; sums saturate at INT64_MAX (never
 * reached by real profiles: 292 years), and a merge refuses partials whose
 * figures add up past 2^60 (nd_partial_sum).  Rows are ordered by total_ns
 * descending, then by key (bytes; no scope before any scope), so the record
 * does not depend on the order of the gaps.  Memory: one row per distinct
 * cause, payload name and scope.
 */
#ifndef ND_GAPSUM_H
#define ND_GAPSUM_H

#include "nd_buf.h"
#include "nd_gaps.h"
#include "nd_stream.h"

typedef struct nd_gapsum nd_gapsum;

nd_gapsum *nd_gapsum_new(void);
void nd_gapsum_free(nd_gapsum *s);
void nd_gapsum_add(nd_gapsum *s, const nd_gap *gap);
/* A row of a table, in output order: its key decoded (NULL: no scope;
 * names may hold NUL: lengths), its totals, and its longest gap's start,
 * marker and scope (payload rows; NULL: none). */
typedef struct nd_gapsum_row {
	const char *key, *marker, *scope;
	size_t keylen, marker_len, scope_len;
	uint64_t count;
	int64_t total_ns, max_ns, max_ts;
} nd_gapsum_row;

enum { ND_GAPSUM_CAUSE, ND_GAPSUM_PAYLOAD, ND_GAPSUM_SCOPE };
/* The rows of table by (ND_GAPSUM_*); valid until the next call or
 * nd_gapsum_free. */
size_t nd_gapsum_rows(nd_gapsum *s, int by, const nd_gapsum_row **out);

/* The gap_summary record and its newline. */
void nd_gapsum_write(const nd_gapsum *s, nd_buf *b);

/* The totals as gap_sum records for a partial result: fn(ctx) is called
 * after each record (and its newline) is appended to b. */
void nd_gapsum_write_partial(const nd_gapsum *s, nd_buf *b,
    void (*fn)(void *ctx), void *ctx);
/* Add one gap_sum record; dies (FILE:LINE: ..., exit 2) when it is not
 * one nd_gapsum_write_partial() writes. */
void nd_gapsum_read(nd_gapsum *s, nd_stream *st, const nd_event *ev);

#endif
