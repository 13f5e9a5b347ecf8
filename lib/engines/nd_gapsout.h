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

#include "nd_gaps.h"
#include "nd_gapsum.h"
#include "nd_out.h"
#include "nd_partial.h"

/* The options that decide which gaps a run finds and what they say. */
typedef struct nd_gaps_coll {
	int level;		/* ND_GAP_TIMELINE or ND_GAP_DEVICE */
	int64_t min_ns, kernel_wait_ns;
	int host_context, within_steps;
	char *step_regex;	/* NULL: none (owned) */
} nd_gaps_coll;

typedef struct nd_gapsout {
	nd_out *o;
	int partial, summary;
	nd_partial_w pw;
	nd_gapsum *sum;		/* NULL when neither summary nor partial */
	nd_gaps_coll coll;
	unsigned nheaders;	/* merge: partial headers read */
} nd_gapsout;

/* A run with options go (step_regex: the --step-regex text or NULL) to o:
 * writes the partial header when partial. */
void nd_gapsout_begin(nd_gapsout *g, nd_out *o, int partial, int summary,
    const nd_gaps_opts *go, const char *step_regex);
/* The gaps of every source of paths[0..n) (stdin when n == 0) with
 * options go, as gap records, in input order (the order policy of
 * nd_drive.h: a stream out of order is read again). */
void nd_gapsout_run(nd_gapsout *g, const nd_gaps_opts *go, char **paths,
    int n);
/* After the caller appended a gap record (and its newline) to
 * nd_out_buf(o). */
void nd_gapsout_gap(nd_gapsout *g, const nd_gap *gap);
/* A record that is passed through (line without its newline). */
void nd_gapsout_pass(nd_gapsout *g, const char *line, size_t len);
/* Instead of a run: the partials in paths[0..n) (stdin when n == 0).
 * Dies (exit 2) on partials made with other collection options. */
void nd_gapsout_merge(nd_gapsout *g, nd_out *o, int partial, int summary,
    char **paths, int n);
/* The summary, or the partial's totals and trailer; frees what g holds
 * (not o). */
void nd_gapsout_end(nd_gapsout *g);

#endif
