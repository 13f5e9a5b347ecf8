/*
 * nd_diffrun: a trace-diff run as an engine of nd_run: the records of the
 * first input to the before side, those of the second to the after side
 * (nd_diff_reader each: a side out of order is read again with the
 * other), then the deltas, the verdict of the rules and the provenance
 * checks (the same trace on both sides is refused unless allowed; the
 * same source path or run id is a warning), written as records or as a
 * table for people.
 */
#ifndef ND_DIFFRUN_H
#define ND_DIFFRUN_H

#include "nd_diff.h"
#include "nd_engine.h"

typedef struct nd_diffrun_opts {
	nd_diff_opts o;
	const nd_rule *rules;	/* the gates (nd_rule_defaults when none) */
	size_t nrules;
	int table;		/* a table for people (--table) */
	size_t top;		/* rows of each key list in the table */
	int allow_same;
	/* --history FILE and its label: append one line after the output */
	const char *history, *label;
} nd_diffrun_opts;

typedef struct nd_diffrun nd_diffrun;
nd_diffrun *nd_diffrun_new(const nd_diffrun_opts *o);
nd_engine nd_diffrun_engine(nd_diffrun *x);
/* After nd_run: append the history line (when asked) and return the exit
 * status, ND_EXIT_FINDING when a --fail-on rule fired, else ND_EXIT_OK. */
int nd_diffrun_done(nd_diffrun *x);
void nd_diffrun_free(nd_diffrun *x);

#endif
