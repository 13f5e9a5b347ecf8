/*
 * nd_top: the top-k engine -- group records by --by keys, with count,
 * total and exclusive time, duration histogram, overrun count and one
 * example each; rank the groups; write them as NDJSON rows, an aligned
 * table, CSV, or partial results that a merge reads back.
 *
 * Push interface: feed the selected records of a scan and their exclusive
 * time (nd_top_engine, driven by nd_run), or whole rows
 * (nd_top_add_row: a caller that rolls up groups of its own), or partial
 * results (the same engine with merge); then nd_top_rank and nd_top_write.
 *
 * The order of rows (nd_top_rank): the chosen figure (--sort: self, total,
 * count, mean or max; all descending), then exclusive time, total time and
 * count (descending), then the key bytes (nd_agg.h encoding), so that
 * equal figures still give one order whatever the input order.
 *
 * Partial results (nd_partial framing, format version 2): a top_partial
 * header {by, of, timelines, fallback, rule, hist, wall, sources}, one
 * top_group record per group {key, count, total_ns, self_ns, min_ns,
 * max_ns, overrun, hist, example}, then, with --wall, one top_busy record
 * per device {source, device, busy_ns}.  Every figure merges exactly.
 */
#ifndef ND_TOP_H
#define ND_TOP_H

#include "nd_agg.h"
#include "nd_engine.h"
#include "nd_event.h"
#include "nd_out.h"
#include "nd_scan.h"
#include "nd_stream.h"

#include <stddef.h>
#include <stdint.h>

enum { ND_TOP_SELF, ND_TOP_TOTAL, ND_TOP_COUNT, ND_TOP_MEAN, ND_TOP_MAX };
enum { ND_TOP_JSON, ND_TOP_TABLE, ND_TOP_CSV, ND_TOP_PARTIAL };

typedef struct nd_top nd_top;

/* sort: ND_TOP_*; wall: also the busy time of each device (--wall). */
nd_top *nd_top_new(int sort, int wall);
void nd_top_free(nd_top *t);
/* "self", "total", "count", "mean", "max" -> ND_TOP_*; -1 if none. */
int nd_top_sort_of(const char *s);
/* Group by these keys (--by); dies (exit 2) on an empty spec or a key
 * that is an output key of top rows. */
void nd_top_by(nd_top *t, const char *spec);

/* t as an engine for nd_run (nd_engine.h): exclusive time through nd_scan
 * with opts (copied) from a reading, or partial results with merge; the
 * answer is the first k rows in fmt (nd_top_write).  check_by: die when a
 * --by key had no value on any record.  Groups by name unless nd_top_by
 * was called. */
nd_engine nd_top_engine(nd_top *t, const nd_scan_opts *opts, int merge,
    int fmt, int k, int check_by);

/* Add row r (figures, histogram, example) to the group with key bytes
 * key[0..n) (one nd_aggkey field per --by key). */
void nd_top_add_row(nd_top *t, const char *key, size_t n,
    const nd_agg_row *r);
/* The same for a caller that only ranks and reads count, total_ns,
 * self_ns, overrun and hist.max: the histogram buckets and the example
 * are left out (merging them was most of the cost of a roll-up). */
void nd_top_add_figures(nd_top *t, const char *key, size_t n,
    const nd_agg_row *r);

/* The order of rows above, for a caller that ranks rows of its own: <0
 * when x comes first; key: the group key bytes (nd_agg.h encoding). */
typedef struct nd_top_fig {
	uint64_t count;
	int64_t self_ns, total_ns, max_ns;
	const char *key;
	size_t keylen;
} nd_top_fig;

int nd_top_row_order(const nd_top_fig *x, const nd_top_fig *y, int sort);

/* The groups that count, ranked: *ids (caller frees) in the order above;
 * returns how many. */
size_t nd_top_rank(nd_top *t, uint32_t **ids);
const nd_agg_row *nd_top_row(nd_top *t, uint32_t id);
/* Key field i of group id (nd_by_field). */
int nd_top_field(nd_top *t, uint32_t id, size_t i, int *tag,
    const char **s, size_t *len);

/* Write the first k rows (0: all) and an "other" row, or (fmt
 * ND_TOP_PARTIAL) every group, on o; o is not closed. */
void nd_top_write(nd_top *t, nd_out *o, int fmt, int k);

#endif
