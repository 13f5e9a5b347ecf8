/*
 * nd_stepspart: the partial results of trace-steps(1) (--partial) and their
 * merge (--merge), so that trace-steps --merge over the partials of some
 * inputs writes what one trace-steps over those inputs writes.
 *
 * What a run writes before its summary depends on one source at a time
 * (its step or profile_window records, and the records it passes through),
 * so a partial carries those lines as they are; only the summary and rank
 * records need every source, and the partial carries their input: the step
 * records nd_stepsum was given, and the path of each source.  Framing:
 * nd_partial, header type "steps_partial":
 *
 *   {"type":"steps_partial","version":2,"collect":"-d -x RE -p 312"}
 *   {"type":"steps_out","line":"{\"type\":\"step\",...}"}     as written
 *   {"type":"steps_source","path":"rank0.ndjson"}         one per source
 *   step_rec, step_dev records (nd_stepsum_write_partial)
 *   {"type":"partial_end",...}
 *
 * "collect" is the caller's canonical text of the options that shape the
 * lines and step records; partials merge only when theirs are equal.
 *
 * Merge order: partials in the order read; the sources of partial k follow
 * those of partials 0..k-1 (nd_stepsum_read_partial's base), so the merge
 * equals one run over the inputs of every partial in that order.  Memory:
 * one partial's lines (nd_partial), the step records, the paths.
 */
#ifndef ND_STEPSPART_H
#define ND_STEPSPART_H

#include "nd_out.h"
#include "nd_partial.h"
#include "nd_stepsum.h"
#include "nd_stream.h"

#include <stdint.h>

#define ND_STEPSPART "steps_partial"

/* Writing: begin, a line per record the run writes for its sources (len
 * bytes without the newline), then end with the paths of the n sources
 * (path(ctx, i), or none when NULL) and the step records of s. */
void nd_stepspart_begin(nd_partial_w *pw, nd_out *o, const char *collect);
void nd_stepspart_line(nd_partial_w *pw, const char *line, size_t len);
void nd_stepspart_end(nd_partial_w *pw, const nd_stepsum *s, uint32_t n,
    nd_stepsum_path_fn *path, void *ctx);
/* Whether a run writes a record of its input for its source (passes it
 * through): not one it reads (spans, instants, counters, flows, end) nor
 * one it makes again from the steps (step_summary, step_ranks,
 * straggler).  A merge writes no other (an nd_partial_ok_fn). */
int nd_stepspart_passes(const nd_event *ev);

typedef struct nd_stepspart_m {
	nd_out *o;		/* the lines go here */
	nd_partial_w *pw;	/* in a partial (a reduction tree), or NULL */
	nd_stepsum *sum;	/* the step records, or NULL: not kept */
	char *collect;		/* of the first header */
	char *hdr;		/* of the header being read */
	unsigned nheaders;
	char **path;		/* of every source */
	size_t cappath;
	uint32_t npath, base;	/* base: the first source of this partial */
	int64_t src_max;	/* of this partial's step records */
} nd_stepspart_m;

/* The merge of partials (nd_partial_read with ND_STEPSPART and
 * nd_stepspart_body, as nd_run's --merge): each one's lines to o as soon
 * as its trailer checked out, its step records to sum (when not NULL).
 * With pw, the output is a partial again: its header (the collection
 * options of the first) and the lines as they were; the caller ends it
 * (nd_stepspart_end with sum, m->npath and nd_stepspart_path).  Dies
 * (exit 2, one line) on a bad partial and on partials made with other
 * collection options. */
#define ND_STEPSPART_NBODY 4
extern const char *const nd_stepspart_body[ND_STEPSPART_NBODY];
void nd_stepspart_merge_begin(nd_stepspart_m *m, nd_out *o,
    nd_partial_w *pw, nd_stepsum *sum);
/* One record of a partial whose framing checked out (an nd_partial_fn on
 * m). */
void nd_stepspart_load(void *m, nd_stream *st, const nd_event *ev);
/* The path of merged source i (an nd_stepsum_path_fn on m). */
const char *nd_stepspart_path(void *m, uint32_t source);
void nd_stepspart_free(nd_stepspart_m *m);

#endif
