/*
 * nd_stepsrun: a trace-steps run as a filter engine for nd_run
 * (nd_engine.h): the step records of every source as it ends (nd_steps),
 * the records it passes through, and at the end the summary and the rank
 * records (nd_stepsum); or a partial result (nd_stepspart) and, with
 * merge, the merge of partials.  Each source is buffered whole by
 * nd_steps, so any order of its records gives the same records.
 */
#ifndef ND_STEPSRUN_H
#define ND_STEPSRUN_H

#include "nd_engine.h"
#include "nd_steps.h"

#include <stdint.h>

typedef struct nd_stepsrun_opts {
	nd_steps_opts so;	/* so.re compiled from the --step-regex text */
	const char *collect;	/* --partial: the collection options as text */
	int partial, merge;
	int summary, ranks, drop_last;
	int64_t warmup;
} nd_stepsrun_opts;

typedef struct nd_stepsrun nd_stepsrun;

nd_stepsrun *nd_stepsrun_new(const nd_stepsrun_opts *o);
nd_engine nd_stepsrun_engine(nd_stepsrun *r);
void nd_stepsrun_free(nd_stepsrun *r);

#endif
