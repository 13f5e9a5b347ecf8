/*
 * nd_memtl: PyTorch's memory timeline exports (torch.profiler's
 * MemoryProfileTimeline), which HTA's memory analysis reads:
 *   - export_memory_timeline_raw (HTA's memory_timeline.raw[.gz]): a JSON
 *     array of [time, action, bytes, category] events, time in ns since the
 *     epoch (-1: a tensor that existed before the profile), bytes signed
 *     (a free is negative), category an index into nd_memtl_category;
 *   - export_memory_timeline: [[times], [sizes]], times in us, each sizes
 *     entry [0, bytes of category 0, ..., bytes of category 7].
 * Both become one series of points: at each distinct time, the bytes held
 * per category after every event of that time (HTA's
 * MemoryAnalysis._process_raw_events), times in ns from the earliest
 * positive one; pre-existing tensors count from that origin.
 */
#ifndef ND_MEMTL_H
#define ND_MEMTL_H

#include "nd_json.h"

#include <stddef.h>
#include <stdint.h>

#define ND_MEMTL_NCAT 8

/* PyTorch's _CATEGORY_TO_INDEX order (the plot's, not Category's). */
extern const char *const nd_memtl_category[ND_MEMTL_NCAT];

typedef struct nd_memtl_point {
	int64_t ts_ns;
	int64_t bytes[ND_MEMTL_NCAT];
	int64_t total;		/* of bytes[]: fits in int64 */
} nd_memtl_point;

typedef struct nd_memtl {
	int raw;		/* export_memory_timeline_raw, else the sizes */
	uint64_t events;	/* raw events, or points */
	int64_t origin_ns;	/* epoch ns of ts_ns 0 (0 when unknown) */
	nd_memtl_point *pt;
	size_t npt;
} nd_memtl;

/* Reads the document data[0..len).  0 on success; -1 with msg and *off
 * (0-based byte offset) when it is not such a timeline. */
int nd_memtl_parse(const char *data, size_t len, nd_memtl *tl, char *msg,
    size_t msgsz, uint64_t *off);
void nd_memtl_free(nd_memtl *tl);

/* What a JSON array is, from its first element, for a program that
 * expected trace events there: "a JSON array of arrays of 4 numbers (an
 * HTA memory timeline? trace-mem reads it)", "a JSON array of strings". */
const char *nd_memtl_what(const nd_jval *first, char *buf, size_t n);

#endif
