/*
 * nd_piperun: a trace-pipeline run as an engine for nd_run (nd_engine.h):
 * the spans to nd_pipe, the meta records kept; at the end the step
 * records (meta lines first), the table or the SVG chart of one step, or
 * a partial result ("pipe_partial": the rules, the meta lines as
 * pipe_line records, nd_pipe's own records), and with --merge the merge
 * of partials made with the same rules.
 */
#ifndef ND_PIPERUN_H
#define ND_PIPERUN_H

#include "nd_engine.h"
#include "nd_pipe.h"

#include <stdint.h>

typedef struct nd_piperun_opts {
	nd_pipe_opts po;
	int table, svg, partial, merge, has_step;
	int64_t step;		/* --step, when has_step */
} nd_piperun_opts;

typedef struct nd_piperun nd_piperun;

/* Dies (exit 2) on rules that do not compile. */
nd_piperun *nd_piperun_new(const nd_piperun_opts *o);
nd_engine nd_piperun_engine(nd_piperun *r);
void nd_piperun_free(nd_piperun *r);

#endif
