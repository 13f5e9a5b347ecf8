/*
 * nd_drive: the reading loop of the programs whose engines need each
 * timeline in start order, and their one order policy.
 *
 * The inputs are read as one stream (nd_stream) and every record goes to
 * cb.record.  An engine that receives a record too late to answer exactly
 * (nd_scan's ND_SCAN_LATE) goes on to the end of the input (so every late
 * timeline is found in one reading); there cb.end returns ND_DRIVE_AGAIN,
 * having forgotten every figure, and the input is read a second time, when
 * the engines buffer what they found late.  So the same
 * records give the same answer whatever their order and wherever they
 * come from:
 *   - a file, or stdin redirected from one, is read again from the start
 *     (stdin from the offset it had);
 *   - stdin from a pipe is spooled as it is read (nd_spool: memory up to
 *     ND_SPOOL_MEM, then an unlinked temporary file) and read back from
 *     the spool.
 * opts.once says no second reading can be asked for (the engines buffer
 * every timeline: --unordered), so nothing is spooled.  An input in order
 * is read once.  With the environment variable ND_DRIVE_STATS set, the
 * number of readings and the bytes spooled go to stderr ("PROG: N
 * passes, B bytes of stdin spooled"), for tests and measurements.
 * opts.threads lets NDTRACE_THREADS=2 decode on a second thread
 * (nd_drive_mt): the same records, answer and errors.
 */
#ifndef ND_DRIVE_H
#define ND_DRIVE_H

#include "nd_event.h"
#include "nd_stream.h"

#include <stdint.h>

enum { ND_DRIVE_OK = 0, ND_DRIVE_AGAIN = 1 };

typedef struct nd_drive_opts {
	int once;		/* never read twice: do not spool */
	int threads;		/* may decode on a second thread (nd_drive_mt) */
} nd_drive_opts;

typedef struct nd_drive_cb {
	void *ctx;
	/* Every record, in order; si is its source. */
	void (*record)(void *ctx, const nd_event *ev,
	    const nd_source_info *si);
	/* The input ended: ND_DRIVE_OK, or ND_DRIVE_AGAIN to read it again
	 * from its start, every figure forgotten (engines keep what they
	 * learnt about the order). */
	int (*end)(void *ctx);
	/* May be NULL.  After each record: 1 stops the reading there (the
	 * answer is complete: trace-context --max); end is still called and
	 * must not then ask for another reading.  Records are then decoded
	 * on the reading thread. */
	int (*done)(void *ctx);
} nd_drive_cb;

typedef struct nd_drive_res {
	int passes;		/* 1, or 2 when the input was read again */
	uint64_t spooled;	/* bytes of stdin spooled */
	uint32_t sources;	/* nd_stream_nsources of the last reading */
} nd_drive_res;

/* paths[0..n): "-" is stdin; n == 0 reads stdin.  Input errors end the
 * program (exit 2), as nd_stream's. */
void nd_drive(char **paths, int n, const nd_drive_opts *opts,
    const nd_drive_cb *cb, nd_drive_res *res);
/* The stream being read, for a message that names the file and line of
 * the record in hand (nd_stream_file, nd_stream_lineno; not with
 * opts.threads), and in cb.end for what it knows of every source
 * (nd_stream_meta: the file of a source without records too); NULL
 * between readings. */
nd_stream *nd_drive_stream(void);

#endif
