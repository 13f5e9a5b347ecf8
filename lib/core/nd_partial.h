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
 * every byte from the header's first to the last record's newline; when N
 * is 0, "empty":true follows "records" (see below).
 *
 * Why: jobs that write partials to one pipe interleave (a write above
 * PIPE_BUF is not atomic), and a torn or mixed line can still be valid JSON
 * with plausible numbers.  The reader therefore holds each partial's lines
 * until its trailer proves them whole and only then hands them to the
 * program, so a torn, cut-short or mixed partial is an error that names the
 * cause (exit 2), never a silently wrong merge.  Memory: one partial's
 * lines at a time.
 *
 * The framing proves a partial whole, not honest: one can be edited and
 * framed again.  So the reader also holds every partial to what a writer
 * makes, once here for every merger:
 *   - every input holds a partial, and a partial holds records unless its
 *     trailer says "empty":true, which nd_partial_end() writes for a writer
 *     with nothing to say (a rank without spans): an empty file or a bare
 *     header and trailer is a --partial job that failed, not a rank.  (The
 *     trailer, not the header: a writer that streams its records, as
 *     trace-gaps does, knows only at the end.)
 *   - figures a merge adds pass nd_partial_sum(), so that no sum of them,
 *     nor any sum the analysis makes of those sums, leaves int64: an
 *     error, never a wrapped or saturated figure;
 *   - a count that sizes memory is at most the partial's records
 *     (nd_partial_records()), one of which carries each thing counted;
 *   - a record passed through to the output is checked to be one record of
 *     the stream before it is written (nd_partial_record()).
 * Each dies naming the file and the record's line (exit 2).
 */
#ifndef ND_PARTIAL_H
#define ND_PARTIAL_H

#include "nd_json.h"
#include "nd_out.h"
#include "nd_sha256.h"
#include "nd_stream.h"
#include "nd_sum.h"

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
/* Write the trailer ("empty":true when no record was committed) and
 * commit it. */
void nd_partial_end(nd_partial_w *pw);
/* A body record: nd_partial_rec opens it in w as {"type":TYPE and returns
 * w for its members; nd_partial_rec_end closes it, ends the line and
 * commits it. */
nd_jw *nd_partial_rec(nd_partial_w *pw, nd_jw *w, const char *type);
void nd_partial_rec_end(nd_partial_w *pw, nd_jw *w);

/* The option rules of --partial and --merge, in one wording for every
 * program.  collect: the options a run takes that --merge reads from the
 * partials ("--timelines, --overrun and --unordered"), collect_given: one
 * of them was given; output: the options --partial leaves to --merge;
 * exclusive: the program cannot merge into a partial.  Dies (exit 2) with
 * "--partial and --merge exclude each other", "--merge takes COLLECT from
 * the partial results; do not give them again" or "--partial leaves
 * OUTPUT to --merge; give them there". */
typedef struct nd_partial_opts {
	int partial, merge, exclusive;
	const char *collect;
	int collect_given;
	const char *output;
	int output_given;
} nd_partial_opts;
void nd_partial_check_opts(const nd_partial_opts *o);

/* Called for the header and for each record of a partial whose trailer
 * checked out, in input order; nd_stream_lineno(st) is the record's line.
 * A record it refuses is the stream's error (nd_stream_fail, and return):
 * nd_partial_read returns it. */
typedef void (*nd_partial_fn)(void *ctx, nd_stream *st, const nd_event *ev);

/* Read paths[0..n) (stdin when n == 0): partials with header type HEADER
 * whose records have one of the types body[0..nbody).  `meta` and `end`
 * records between partials are skipped; anything else, an input that
 * holds no partial, a stream error or a record fn refused is an error:
 * -1 with err filled ("FILE:LINE: message"; reading stops there).  Else
 * the number of partials read (at least one an input). */
int64_t nd_partial_read(char **paths, int n, const char *header,
    const char *const *body, size_t nbody, nd_partial_fn fn, void *ctx,
    nd_err *err);

/* The rest are for an nd_partial_fn, on the record it was handed. */

/* Figures a merge adds up (durations, counts) add up to at most the one
 * bound of every sum (nd_sum.h) over the whole merge. */
#define ND_PARTIAL_SUM_MAX ND_SUM_MAX
/* v, the figure KEY of the record, after adding |v| to the merge's total
 * of figures; past ND_PARTIAL_SUM_MAX, 0 and the stream's error
 * "FILE:LINE: ... pass 2^60" (nd_stream_fail).  (Outside nd_partial_read,
 * a reader used alone, it returns v.) */
int64_t nd_partial_sum(const char *key, int64_t v);
/* The number of records (header and trailer not counted) of the partial
 * the record is in: the bound of a count its header declares. */
uint64_t nd_partial_records(void);

/* A record of the stream that a partial carries for the merge to write as
 * it is (a line a run passes through): text[0..len), the value of member
 * KEY of the record.  The stream's error (FILE:LINE, nd_stream_fail)
 * unless it is one record of ndtrace(7) -- one JSON object with a "type",
 * no line break -- that ok(rec) accepts; WHAT names those for the message
 * ("a meta record"). */
typedef int nd_partial_ok_fn(const nd_event *rec);
void nd_partial_record(const char *key, const char *text, size_t len,
    nd_partial_ok_fn *ok, const char *what);
/* The members of a body record, for a reader: a member missing or out of
 * range is the stream's error "TYPE record without a valid \"KEY\""
 * (nd_partial_bad: nd_stream_fail), after which the getters give 0 or NULL
 * and the reader returns without using what it read.
 *   nd_partial_int    an integer within +-2^53, as the stream's times and
 *                     durations; nd_partial_count the same, >= 0
 *   nd_partial_time   an end time (a time plus a duration), within +-2^62
 *   nd_partial_isum   nd_partial_int and nd_partial_count of a figure the
 *   nd_partial_usum   merge adds up (nd_partial_sum)
 *   nd_partial_str    a string (newly allocated) or null (NULL)
 *   nd_partial_index  base + x for an integer x in [0, n) */
void nd_partial_bad(nd_stream *st, const nd_event *ev, const char *key);
int64_t nd_partial_int(nd_stream *st, const nd_event *ev, const char *key);
uint64_t nd_partial_count(nd_stream *st, const nd_event *ev,
    const char *key);
int64_t nd_partial_time(nd_stream *st, const nd_event *ev, const char *key);
int64_t nd_partial_isum(nd_stream *st, const nd_event *ev, const char *key);
uint64_t nd_partial_usum(nd_stream *st, const nd_event *ev, const char *key);
char *nd_partial_str(nd_stream *st, const nd_event *ev, const char *key);
uint32_t nd_partial_index(nd_stream *st, const nd_event *ev, const char *key,
    uint32_t base, uint32_t n);

/* Records a filter passes through (ndtrace(7)): meta and other types, not
 * span, instant, counter, flow or end.  An nd_partial_ok_fn. */
int nd_partial_passed(const nd_event *rec);

#endif
