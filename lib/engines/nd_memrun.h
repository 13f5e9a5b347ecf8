/*
 * nd_memrun: a trace-mem run as an engine of nd_run.  Its inputs are
 * streams (read by the driver, runs of them as one reading each), PyTorch
 * memory snapshot pickles (a regular file whose first byte is 0x80, or
 * every input with snapshot or dump) and PyTorch memory timeline exports
 * (a JSON array of arrays), the last two read whole by the engine, in
 * the order given; nd_mem writes as it goes.  Only a regular file (or
 * stdin redirected from one) is sniffed: a pipe is a stream.
 */
#ifndef ND_MEMRUN_H
#define ND_MEMRUN_H

#include "nd_engine.h"
#include "nd_mem.h"

typedef struct nd_memrun_opts {
	nd_mem_opts mem;
	int snapshot;		/* every input is a snapshot (--snapshot) */
	int dump;		/* each snapshot's value as one JSON line */
} nd_memrun_opts;

typedef struct nd_memrun nd_memrun;
nd_memrun *nd_memrun_new(const nd_memrun_opts *o);
nd_engine nd_memrun_engine(nd_memrun *x);
void nd_memrun_free(nd_memrun *x);

#endif
