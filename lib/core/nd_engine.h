/*
 * nd_engine: the contract between an analysis engine and the driver that
 * feeds it (nd_run), so that a program is its options plus one nd_run over
 * its engines, and the reading, the order policy, source boundaries,
 * partial framing and errors live in the driver only.
 *
 * The driver calls, in this order:
 *   record      every record of the stream, in stream order, with its
 *               source; from a reading of the input (not with --merge);
 *   end_source  when the source of the records changes, and after the last
 *               record (may be NULL);
 *   end_input   when the input ends: ND_ENGINE_OK, or ND_ENGINE_AGAIN when
 *               records came too late to be answered exactly (the engine has
 *               noted which timelines; see nd_drive.h);
 *   restart     when some engine asked for another reading: forget every
 *               figure, keep what was learnt about the order; the input is
 *               then read again from its start (when no engine has one,
 *               none may ask, and a pipe is not spooled);
 *   load        with --merge, instead of record: each record of a partial
 *               result after its header (nd_partial_read has checked the
 *               framing); a record it refuses is the stream's error
 *               (nd_stream_fail: it adds nothing of it and returns), which
 *               the driver prints;
 *   finish      once, after the last reading or merge;
 *   write       the answer, or the partial result when the engine was made
 *               for --partial, to the output.
 * A filter, which writes as it reads (trace-context), has start instead
 * of write: it gets the output before the first record.  And done, when
 * not NULL, may end a reading early: after each record, when every
 * engine has a done that returns 1 (the answer is complete:
 * trace-context --max); end_input must then not ask for another reading.
 * An engine that also reads inputs of its own (trace-mem's snapshot
 * pickles) has foreign, which says whether a path is one of those, and
 * read_foreign, which reads it: the driver then reads the inputs in the
 * order given, each foreign one by its engine and each run of stream
 * inputs as one reading (end_input after each run).
 * An engine whose input can be wrong in a way only it sees (a record it
 * cannot use, an answer that does not exist) keeps the first such error
 * and says so in error, which the driver asks after every callback (after
 * each record too, so a filter writes nothing past the record at fault),
 * then prints the one line and exits 2.
 * Every callback gets the engine's own state (self); NULL callbacks are
 * skipped.  Engines are written with designated initializers, so a
 * callback added here costs no other engine a line.
 */
#ifndef ND_ENGINE_H
#define ND_ENGINE_H

#include "nd_err.h"
#include "nd_event.h"
#include "nd_out.h"
#include "nd_stream.h"

#include <stddef.h>
#include <stdint.h>

enum { ND_ENGINE_OK = 0, ND_ENGINE_AGAIN = 1 };

/* What the driver learnt of its input, for finish. */
typedef struct nd_run_res {
	int passes;		/* 1, or 2 when the input was read again */
	uint32_t sources;	/* sources of the last reading */
	uint64_t spooled;	/* bytes of stdin spooled for a second reading */
	int merged;		/* the inputs were partial results */
	uint64_t records;	/* of the stream inputs, every reading */
	uint32_t foreign;	/* inputs an engine read itself */
} nd_run_res;

typedef struct nd_engine {
	const char *name;
	void *self;
	/* the type of the header record of its partial results, for
	 * --merge ("top_partial"); NULL: the engine cannot merge */
	const char *partial_type;
	const char *const *partial_body;	/* its record types */
	size_t npartial_body;
	void (*record)(void *self, const nd_event *ev,
	    const nd_source_info *si);
	void (*end_source)(void *self);
	int (*end_input)(void *self);
	void (*restart)(void *self);
	void (*load)(void *self, nd_stream *st, const nd_event *ev);
	void (*finish)(void *self, const nd_run_res *res);
	void (*write)(void *self, nd_out *o);
	void (*start)(void *self, nd_out *o);
	int (*done)(void *self);
	int (*foreign)(void *self, const char *path);
	void (*read_foreign)(void *self, const char *path);
	const nd_err *(*error)(void *self);	/* NULL: none yet */
} nd_engine;

#endif
