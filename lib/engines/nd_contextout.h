/*
 * nd_contextout: a trace-context run -- which spans match, the context
 * engine (nd_context.h) over the input, and what is written: each span
 * once with its "context" object, or a listing per match (--table).
 *
 * Order (nd_drive.h's policy): a source's output is held (nd_spool:
 * memory, then an unlinked file) until the source ends.  A span out of
 * order on its timeline drops what its source held; the input is read
 * again, the sources before it skipped (already written) and every later
 * one held whole and given to the engine in time order (start, the longer
 * first, then stream order).  So a shuffled stream gives the matches and
 * contexts of the same records in time order, numbered on from the
 * matches already written.  --max stops the reading once its last match
 * is complete.
 */
#ifndef ND_CONTEXTOUT_H
#define ND_CONTEXTOUT_H

#include "nd_engine.h"

#include <stdint.h>

typedef struct nd_contextout_opts {
	const char *pattern;
	int use_re;		/* pattern is a POSIX ERE */
	const char *key;	/* NULL: the name; "args.X" for an argument */
	int64_t before, after, max, lookback;
	int overlapping, table;
	const char *out;	/* -o, or NULL: stdout */
} nd_contextout_opts;

typedef struct nd_contextout nd_contextout;

/* Dies (exit 2) on an invalid regex. */
nd_contextout *nd_contextout_new(const nd_contextout_opts *o);
/* c as a filter for nd_run (nd_engine.h): it writes each source as it
 * ends, may ask for a second reading, and stops the reading at --max. */
nd_engine nd_contextout_engine(nd_contextout *c);
/* After nd_run: frees c; ND_EXIT_OK when something matched,
 * ND_EXIT_FINDING otherwise. */
int nd_contextout_end(nd_contextout *c);

#endif
