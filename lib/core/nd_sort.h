/*
 * nd_sort: a stable, adaptive merge sort for arrays of fixed-size records.
 *
 * Profiles are "almost sorted": a timeline is usually a handful of ordered
 * runs (CPU ops, then runtime calls, ...) or ordered by end time.  nd_sort
 * finds the natural runs and merges them (TimSort's scheme without
 * galloping), so an ordered array costs one pass of comparisons and nothing
 * else, k runs cost O(n log k), and the worst case is O(n log n).  When
 * only a few records (at most n/16) are out of place, they are taken out,
 * sorted apart and merged back in one pass instead.
 *
 * Memory: a merge moves only the part of the shorter run that is out of
 * place into a scratch buffer, so the scratch never exceeds n/2 records (n/16
 * for the few-out-of-place case) and is not allocated for sorted input.  glibc's qsort(3), by contrast,
 * allocates a copy of the whole array.
 *
 * cmp(a, b, ctx) returns <0, 0 or >0; records comparing equal keep their
 * order.
 */
#ifndef ND_SORT_H
#define ND_SORT_H

#include <stddef.h>
#include <stdint.h>

typedef int (*nd_sort_cmp)(const void *a, const void *b, void *ctx);

void nd_sort(void *base, size_t n, size_t size, nd_sort_cmp cmp, void *ctx);

/* 1 when base[0..n) is already in order (non-descending). */
int nd_sorted(const void *base, size_t n, size_t size, nd_sort_cmp cmp,
    void *ctx);

/* Searching base[0..n), records of size bytes sorted by the int64_t at
 * byte offset off of each (offsetof): the index of the first whose key is
 * >= key, n when none (a lower bound, in log n). */
size_t nd_lower_bound(const void *base, size_t n, size_t size, size_t off,
    int64_t key);

#endif
