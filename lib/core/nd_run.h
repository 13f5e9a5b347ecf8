/*
 * nd_run: the one driver of the analysis engines (nd_engine.h).  It reads
 * the inputs (nd_drive: files, stdin, a second reading or a spool when an
 * engine asks, nd_drive.h's order policy), finds the source boundaries
 * once, reads partial results with their framing checked (nd_partial) for
 * --merge, and writes every engine's answer to one output (nd_out, -o
 * written atomically).  Input errors end the program with one line and
 * exit 2: nd_stream's, nd_partial's and the engines' (nd_engine.h).
 */
#ifndef ND_RUN_H
#define ND_RUN_H

#include "nd_engine.h"

typedef struct nd_run_mode {
	int merge;		/* the inputs are partial results (--merge) */
	int once;		/* never read twice (--unordered) */
	int threads;		/* may decode on a second thread */
	const char *out;	/* -o, or NULL: stdout */
} nd_run_mode;

/* Run engines e[0..n) over paths[0..npaths) ("-" or none: stdin); res, when
 * not NULL, gets what the driver learnt.  With mode->merge, one engine. */
void nd_run(nd_engine *const *e, size_t n, char **paths, int npaths,
    const nd_run_mode *mode, nd_run_res *res);

#endif
