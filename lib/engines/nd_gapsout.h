/*
 * nd_gapsout: where the records of a gaps run go -- gap records, records
 * passed through, the gap_summary (nd_gapsum) -- as a stream or as a
 * partial result (nd_partial framing), and the merge of partial results.
 *
 * A partial (header "gaps_partial" with the collection options) holds the
 * lines a run would write, in order: gap records as written, any other
 * record passed through wrapped as {"type":"gap_pass","line":RECORD} (it
 * cannot then be taken for a record of the partial, and comes back byte for
 * byte), then the summary totals as gap_sum records.  A merge writes the
 * lines of its partials in order and adds their totals.  The gaps of a
 * source depend on that source alone (nd_gaps_reset between sources), so
 * the merge is byte-identical to one run over the inputs of the partials
 * in the same order, made with the same collection options; partials made
 * with other options are refused, naming the option.
 */
#ifndef ND_GAPSOUT_H
#define ND_GAPSOUT_H

#include "nd_engine.h"
#include "nd_gaps.h"

/* A trace-gaps run: options go (go->re compiled from step_regex, the
 * --step-regex text or NULL), as gap records or a partial (partial), with
 * the gap_summary (summary); merge: the inputs are partials. */
typedef struct nd_gapsrun nd_gapsrun;
nd_gapsrun *nd_gapsrun_new(const nd_gaps_opts *go, const char *step_regex,
    int partial, int summary, int merge);
/* e as a filter for nd_run (nd_engine.h): the gaps of every source, in
 * input order, after the records it passes through (the order policy of
 * nd_drive.h: a stream out of order is read again, the sources before
 * the late one not written twice); with merge, the partials' lines in
 * order and their totals added (partials made with other collection
 * options are refused, naming the option). */
nd_engine nd_gapsrun_engine(nd_gapsrun *e);
void nd_gapsrun_free(nd_gapsrun *e);

#endif
