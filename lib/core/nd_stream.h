/*
 * nd_stream: read ndtrace streams from files or stdin, one record at a time,
 * tracking sources.
 *
 * A source begins at each input file and at each `meta` record (except a
 * `meta` that is the first record of a fresh source), so `cat a b | prog`
 * and `prog a b` see the same sources.  nd_event.source is the 0-based
 * source index; nd_stream_meta() returns what that source's `meta` said.
 *
 * Errors (unreadable file, bad JSON, a reserved key of the wrong type) are
 * values: nd_stream_next returns 0 as at the end, and nd_stream_err() then
 * returns the error, "FILE:LINE: message"; the driver (nd_drive, nd_run)
 * prints it and exits 2.
 */
#ifndef ND_STREAM_H
#define ND_STREAM_H

#include "nd_err.h"
#include "nd_event.h"
#include "nd_spool.h"

typedef struct nd_stream nd_stream;

typedef struct nd_source_info {
	int has_meta;
	int64_t origin_ns;
	int has_rank;
	int64_t rank;
	char *host;		/* NULL if unknown */
	char *path;		/* the meta's "source", or the file name */
	char *format;
	int input;		/* the index of the input it came from */
} nd_source_info;

/* paths[0..n): "-" is stdin; n == 0 reads stdin. */
nd_stream *nd_stream_open(char **paths, int n);
/* 1 with the next record in ev, 0 at the end of all inputs or on an
 * error (nd_stream_err). */
int nd_stream_next(nd_stream *st, nd_event *ev);
/* The error that ended the reading, or NULL. */
const nd_err *nd_stream_err(const nd_stream *st);
/* For a reader that holds many records at once (nd_drive_mt): the same,
 * but the line is first copied by keep(ctx, line, len), which returns the
 * copy (NUL-terminated, len + 1 bytes) to decode, and the decoded strings
 * go to scratch: the record stays valid while the copy and scratch do.  A
 * source's nd_stream_meta stays at its address until nd_stream_close. */
int nd_stream_next_kept(nd_stream *st, nd_event *ev, nd_buf *scratch,
    char *(*keep)(void *ctx, const char *line, size_t len), void *ctx);
/* For a reader that hands records on later (nd_drive_mt): the record the
 * analysis has is line LINE of input INPUT (nd_stream_input), for the
 * messages of nd_sum.  nd_stream_next says so itself. */
void nd_stream_at(const nd_stream *st, int input, uint64_t line);
const nd_source_info *nd_stream_meta(const nd_stream *st, uint32_t source);
uint32_t nd_stream_nsources(const nd_stream *st);
const char *nd_stream_file(const nd_stream *st);
uint64_t nd_stream_lineno(const nd_stream *st);
/* The index in paths of the input being read, -1 before the first (for a
 * reader that wants something of every input). */
int nd_stream_input(const nd_stream *st);
void nd_stream_close(nd_stream *st);
/* Before the first nd_stream_next: stdin ("-") is spooled to sp as it is
 * read (replay 0), or read back from sp (replay 1; nd_in_replay). */
void nd_stream_spool_stdin(nd_stream *st, nd_spool *sp, int replay);

/* For engines that read their own records back (--merge's load): an
 * error of the record at hand, "FILE:LINE: message", as the stream's own
 * (nd_stream_err; the first wins): reading then ends, and the driver
 * prints it.  Returns -1; the engine returns without using the record. */
int nd_stream_fail(nd_stream *st, const char *fmt, ...) ND_PRINTF(2, 3);
/* The same with an error a reader made itself ("FILE:LINE: ..."). */
void nd_stream_fail_with(nd_stream *st, const nd_err *e);
int nd_stream_failed(const nd_stream *st);
/* The member KEY of ev, which must exist with JSON type `type`, else the
 * stream's error "FILE:LINE: TYPE record without a valid "KEY"" and an
 * empty value of that type (0, "", [], {}). */
const nd_jval *nd_stream_need(nd_stream *st, const nd_event *ev,
    const char *key, nd_jtype type);
/* The same for an integer within +-2^53 (0 after an error). */
int64_t nd_stream_need_int(nd_stream *st, const nd_event *ev, const char *key);

/* For readers of partial results (nd_partial): a line that is not a record
 * dies with "FILE:LINE: WHAT (ERROR): WHY" (the likely cause) instead. */
void nd_stream_set_hint(nd_stream *st, const char *what, const char *why);
/* For readers that hold records and hand them on later: report LINE as the
 * current line until called with 0. */
void nd_stream_set_lineno(nd_stream *st, uint64_t line);

#endif
