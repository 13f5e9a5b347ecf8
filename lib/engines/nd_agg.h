/*
 * nd_agg: group-by tables for the aggregating programs (trace-topk,
 * trace-regions): a composite key -> a row of exactly mergeable figures.
 *
 * Keys are byte strings built with nd_aggkey_*: a sequence of fields, each
 * a tag byte (ND_AGGKEY_STR: a decoded string, ND_AGGKEY_RAW: the JSON
 * text of a non-string value, ND_AGGKEY_NONE: absent), a 4-byte length and
 * the bytes.  Two records fall in the same group when every field is equal
 * byte for byte; nd_aggkey_next walks the fields back for output.
 *
 * Rows hold count, sum of durations, sum of exclusive time, overrun count,
 * a histogram of durations (min/max exact, quantiles per nd_hist.h) and one
 * example instance.  Every figure merges exactly (sums, min, max, bucket
 * counts), and the example is chosen by a total order that does not depend
 * on the order rows are merged in: the earliest absolute start
 * (origin_ns + ts_ns, exact: nd_abstime_of, whatever the origin), then the
 * longer, then the smaller source path, pid, tid.  So reading partial results in any order gives the same answer.
 *
 * Ownership: the table owns its keys, rows, histograms and example texts;
 * pointers into it stay valid until the next nd_agg_id() that adds a row
 * (rows move when the table grows) or nd_agg_free().
 */
#ifndef ND_AGG_H
#define ND_AGG_H

#include "nd_buf.h"
#include "nd_hash.h"
#include "nd_hist.h"
#include "nd_json.h"
#include "nd_nest.h"
#include "nd_partial.h"
#include "nd_scan.h"	/* nd_scan feeds these tables */
#include "nd_stream.h"
#include "nd_util.h"

#include <stddef.h>
#include <stdint.h>

enum { ND_AGGKEY_NONE = '-', ND_AGGKEY_STR = 's', ND_AGGKEY_RAW = 'r' };

void nd_aggkey_str(nd_buf *k, const char *s, size_t n);
void nd_aggkey_raw(nd_buf *k, const char *json, size_t n);
void nd_aggkey_none(nd_buf *k);
/* Next field of key bytes [*p, end): 1 with tag/s/n, 0 at the end. */
int nd_aggkey_next(const char **p, const char *end, int *tag,
    const char **s, size_t *n);

/* One example instance of a group. */
typedef struct nd_agg_ex {
	int has;
	nd_abstime abs;		/* origin_ns + ts_ns: the ordering key */
	int64_t dur_ns, pid, tid;
	char *src;		/* source path (owned) */
	char *json;		/* the example as a JSON object (owned) */
	size_t json_len;
} nd_agg_ex;

typedef struct nd_agg_row {
	uint64_t count;
	uint64_t overrun;
	int64_t total_ns;	/* sum of durations */
	int64_t self_ns;	/* sum of exclusive time */
	nd_hist hist;		/* durations; hist.min/max are min_ns/max_ns */
	nd_agg_ex ex;
} nd_agg_row;

typedef struct nd_agg nd_agg;

nd_agg *nd_agg_new(void);
void nd_agg_free(nd_agg *a);
/* Id of the group with this key, creating an empty row if new. */
uint32_t nd_agg_id(nd_agg *a, const void *key, size_t n);
/* One instance of duration dur in group id: count, total_ns and the
 * histogram, applied a few adds later (see nd_agg_count). */
void nd_agg_add(nd_agg *a, uint32_t id, int64_t dur);
/* Number of groups.  It also applies the adds still pending, so call it
 * before reading rows' count, total_ns or histogram (every output path
 * does). */
uint32_t nd_agg_count(nd_agg *a);
nd_agg_row *nd_agg_row_of(nd_agg *a, uint32_t id);
const char *nd_agg_key(const nd_agg *a, uint32_t id, size_t *n);
/* Empty every row (keys stay, with their ids). */
void nd_agg_reset(nd_agg *a);
/* The caller's memo of row ids by the ids of its keys' fields (nd_hash's
 * nd_idmemo), as long-lived as the ids. */
nd_idmemo *nd_agg_memo(nd_agg *a);

/* A key as a JSON array, for partial results: a string field as a string,
 * an absent one as null, a raw one as a one-string array (its text need not
 * be JSON).  nd_aggkey_read appends the fields of such an array to k: 0, or
 * -1 when arr is not one. */
void nd_aggkey_json(nd_jw *w, const char *k, size_t n);
int nd_aggkey_read(nd_buf *k, const nd_jval *arr);
/* The figures of a row (count, total_ns, self_ns, min_ns, max_ns, overrun,
 * hist; not the example: the top_group records of nd_top and the report's
 * partial rows) as members of the open object w, and back into a
 * zeroed row: 0, or -1 with *bad the member missing or malformed. */
void nd_agg_row_json(nd_jw *w, const nd_agg_row *r);
int nd_agg_row_read(nd_agg_row *r, const nd_event *ev, const char **bad);

/* Partial results (nd_partial): a record of type TYPE a row with figures
 * (its key and nd_agg_row_json's members), in id order; and a record of
 * those added back to its key's row.  A record it refuses (a key of fewer
 * than minkey bytes, or malformed) is the stream's error (nd_partial.h). */
void nd_agg_write_partial(nd_agg *a, const char *type, nd_partial_w *pw);
void nd_agg_read_partial(nd_agg *a, nd_stream *st, const nd_event *ev,
    size_t minkey);

/* dst += src, all figures and the example. */
void nd_agg_merge(nd_agg_row *dst, const nd_agg_row *src);
/* The exclusive time of span s, tagged with its row id (s->user), is
 * final: add it and its overrun to that row. */
void nd_agg_self(nd_agg *a, const nd_nest_span *s);

/* Would an instance with these ordering fields replace the row's example?
 * (Cheap; call it before building the example text.) */
int nd_agg_ex_better(const nd_agg_ex *cur, nd_abstime abs, int64_t dur_ns,
    const char *src, int64_t pid, int64_t tid);
/* 0 when an instance at abs cannot replace the example of group id
 * (a check that does not touch the row); 1: ask nd_agg_ex_better. */
int nd_agg_example_maybe(const nd_agg *a, uint32_t id, nd_abstime abs);
/* Replace the example of group id (nd_agg_ex_set, and what
 * nd_agg_example_maybe remembers). */
void nd_agg_example_set(nd_agg *a, uint32_t id, nd_abstime abs,
    int64_t dur_ns, const char *src, int64_t pid, int64_t tid,
    const char *json, size_t n);
/* Replace the example (copies src and json). */
void nd_agg_ex_set(nd_agg_ex *ex, nd_abstime abs, int64_t dur_ns,
    const char *src, int64_t pid, int64_t tid, const char *json, size_t n);
void nd_agg_ex_free(nd_agg_ex *ex);

#endif
