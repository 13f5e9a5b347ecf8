/*
 * nd_partial: the framing of partial results (--partial and --merge).
 *
 * A partial result is a header record (type "top_partial",
 * "region_partial", ...; its first keys "type" and "version"), the
 * program's records, and a trailer
 *
 *   {"type":"partial_end","records":N,"sha256":"..."}
 *
 * where N counts the lines between header and trailer and sha256 is that of
 * every byte from the header's first to the last record's newline.
 *
 * Why: jobs that write partials to one pipe interleave (a write above
 * PIPE_BUF is not atomic), and a torn or mixed line can still be valid JSON
 * with plausible numbers.  The reader therefore holds each partial's lines
 * until its trailer proves them whole and only then hands them to the
 * program, so a torn, cut-short or mixed partial is an error that names the
 * cause (exit 2), never a silently wrong merge.  Memory: one partial's
 * lines at a time.
 */
#ifndef ND_PARTIAL_H
#define ND_PARTIAL_H

#include "nd_json.h"
#include "nd_out.h"
#include "nd_sha256.h"
#include "nd_stream.h"

#include <stdint.h>

#define ND_PARTIAL_VERSION 2
#define ND_PARTIAL_END "partial_end"

typedef struct nd_partial_w {
	nd_out *o;
	nd_sha256 sha;
	uint64_t lines;		/* header included */
	size_t mark;		/* start of the uncommitted bytes */
} nd_partial_w;

/* Start a partial on o: opens the header object in w with "type" TYPE and
 * "version".  The caller adds its keys, closes the object, adds '\n' and
 * calls nd_partial_commit(), as after each of its records. */
void nd_partial_begin(nd_partial_w *pw, nd_out *o, nd_jw *w, const char *type);
/* Instead of nd_out_commit() for every complete line of the partial. */
void nd_partial_commit(nd_partial_w *pw);
/* Write the trailer and commit it. */
void nd_partial_end(nd_partial_w *pw);

/* Called for the header and for each record of a partial whose trailer
 * checked out, in input order; nd_stream_lineno(st) is the record's line. */
typedef void (*nd_partial_fn)(void *ctx, nd_stream *st, const nd_event *ev);

/* Read paths[0..n) (stdin when n == 0): partials with header type HEADER
 * whose records have one of the types body[0..nbody).  `meta` and `end`
 * records between partials are skipped; anything else dies with a one-line
 * message.  Returns the number of partials read. */
unsigned nd_partial_read(char **paths, int n, const char *header,
    const char *const *body, size_t nbody, nd_partial_fn fn, void *ctx);

#endif
