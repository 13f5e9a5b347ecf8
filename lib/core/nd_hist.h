/*
 * nd_hist: a mergeable histogram of non-negative integers (durations in ns)
 * for quantiles, with a fixed relative error bound.
 *
 * Buckets are log-linear (as in HdrHistogram): values below 2^ND_HIST_SUB
 * (64) have a bucket each; a value v >= 64 with highest set bit e
 * (2^e <= v < 2^(e+1)) falls in one of 64 equal sub-buckets of
 * [2^e, 2^(e+1)), each 2^(e-6) wide (so values below 128 are exact).  The index is computed with integer
 * operations only, so every machine puts a value in the same bucket and
 * merging two histograms (adding counts bucket by bucket) is exact and
 * order-independent.
 *
 * Error bound: a quantile is reported as the middle of its bucket, clamped
 * to the histogram's exact minimum and maximum.  For a bucket [lo, lo + w)
 * with w = 2^(e-6) and lo >= 2^e = 64 w, the distance to any value in it
 * is at most w/2 <= lo/128, so the reported quantile is within 1/128
 * (0.78 %) of the true sample value of that rank; below 128 it is exact.
 * The rank of quantile q over n values is ceil(q n) (the nearest-rank
 * definition; q = 0.5 of 4 values is the 2nd smallest).
 *
 * Storage is a dense array of counts over the range of buckets actually
 * used, so memory grows with the spread of the values (at most about 3,700
 * buckets for the whole int64 range; 640 for three decades), not with
 * their number.  Counts are 32-bit until one would overflow, then the
 * array is widened to 64 bits, so nothing ever saturates.  The serialised
 * form (nd_hist_write / nd_hist_read) is a JSON array of alternating
 * bucket index and count for non-empty buckets,
 * e.g. [12,3,70,1]; the scheme is named ND_HIST_SCHEME so readers can check
 * that both sides agree.
 *
 * Ownership: an nd_hist is a value type embedded by the caller; init it
 * with ND_HIST_INIT (or zero it), release with nd_hist_free.
 */
#ifndef ND_HIST_H
#define ND_HIST_H

#include "nd_buf.h"
#include "nd_json.h"

#include <stddef.h>
#include <stdint.h>

#define ND_HIST_SUB 6			/* log2 of sub-buckets per octave */
#define ND_HIST_SCHEME "loglin6"	/* name of the bucket scheme */
/* Relative error bound of nd_hist_quantile (0 below 128). */
#define ND_HIST_REL_ERR (1.0 / 128)

typedef struct nd_hist {
	void *c;		/* counts of buckets lo .. lo + n - 1: uint32_t,
				 * or uint64_t once one count needs it (wide) */
	uint32_t lo, n;
	uint64_t total;		/* number of values */
	int64_t min, max;	/* exact, valid when total > 0 */
	int wide;
} nd_hist;

#define ND_HIST_INIT { NULL, 0, 0, 0, 0, 0, 0 }

/* Bucket index of v (v < 0 is treated as 0) and the bucket's bounds. */
uint32_t nd_hist_index(int64_t v);
int64_t nd_hist_bucket_lo(uint32_t idx);
int64_t nd_hist_bucket_width(uint32_t idx);

void nd_hist_add(nd_hist *h, int64_t v);
/* Count in bucket idx. */
uint64_t nd_hist_count(const nd_hist *h, uint32_t idx);
/* Add cnt values falling in bucket idx (for readers of serialised forms). */
void nd_hist_add_bucket(nd_hist *h, uint32_t idx, uint64_t cnt);
/* dst += src (exact). */
void nd_hist_merge(nd_hist *dst, const nd_hist *src);
/* Value of quantile q in [0,1] (0 when empty), per the bound above. */
int64_t nd_hist_quantile(const nd_hist *h, double q);
void nd_hist_free(nd_hist *h);

/* Append the serialised counts (a JSON array) with the JSON writer. */
void nd_hist_write(const nd_hist *h, nd_jw *w);
/* Read a serialised array (a validated JSON value) and add its counts to h;
 * min/max are not in the array: the caller sets them.  0 ok, -1 when the
 * value is not an array of index/count integer pairs, or its counts add up
 * to more than 2^53 (the most a count that the array must match can be:
 * more is no histogram that was written, and could wrap the counts). */
int nd_hist_read(nd_hist *h, const nd_jval *arr);

#endif
