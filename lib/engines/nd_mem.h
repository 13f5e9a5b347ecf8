/*
 * nd_mem: memory timelines, peaks and attribution, from an ndtrace stream
 * or from a PyTorch CUDA memory snapshot (trace-mem(1) is the reference for
 * every record and key written here).
 *
 * From a stream, a "memory sample" is
 *   - a Kineto `[memory]` event (chrome2ndjson writes it as an instant
 *     named "[memory]"): args "Total Allocated", "Total Reserved", "Bytes"
 *     (+ allocated, - freed), "Device Type" (c10::DeviceType: 0 CPU, 1 CUDA
 *     and 6 HIP both GPU, ...) and "Device Id"; the record's own `device`
 *     key is the device of its process, not of the memory, and is not used;
 *   - an XPlane allocator event (xplane2ndjson: MemoryAllocation and
 *     MemoryDeallocation on host lines): any record whose args hold a number
 *     "bytes_allocated", with "bytes_reserved", "peak_bytes_in_use",
 *     "allocation_bytes"/"requested_bytes", "tf_op" and "allocator_name"
 *     (or the TPU runtime's "index_on_host").
 * Samples form one series per (source, device or allocator).  A sample is
 * attributed to the innermost span of its own timeline (source, pid, tid)
 * that contains it (start <= ts < end; zero-length spans contain nothing),
 * or to its "tf_op" when it has one.  Everything of a source is held until
 * the source ends (spans at about 48 bytes each, samples at about 100), so
 * records may come in any order; with nd_mem_opts.ordered (the stream's
 * timelines in start order; a caller that cannot promise it reads again
 * when nd_mem_disordered says so) only the spans that hold a sample are
 * kept.
 *
 * From a snapshot (nd_pickle): segments and blocks give reserved,
 * allocated, requested and inactive bytes and the largest live blocks;
 * device_traces replayed from the state the snapshot implies at their start
 * give the timeline (allocated until free_requested, active until
 * free_completed, reserved through segment events), the peak and the live
 * blocks at the peak, and out-of-memory events.
 *
 * Output: complete lines appended to an nd_buf; commit(ctx) is called after
 * each line (nd_out_commit for a program, nothing for the fuzz harness).
 * Input errors in a snapshot's structure are returned, never fatal.
 */
#ifndef ND_MEM_H
#define ND_MEM_H

#include "nd_buf.h"
#include "nd_event.h"
#include "nd_memtl.h"
#include "nd_pickle.h"
#include "nd_stream.h"

#include <stddef.h>
#include <stdint.h>

typedef struct nd_mem_opts {
	int top;		/* mem_top / mem_block rows (0: none) */
	int sort_total;		/* mem_top by inclusive, not self, bytes */
	int frames;		/* stack frames kept per block (0: none) */
	int timeline;		/* write meta + counter records */
	int table;		/* a report for people instead of records */
	int ordered;		/* timelines come in start order (ndtrace(7)):
				 * keep only spans a sample falls in */
} nd_mem_opts;

typedef struct nd_mem nd_mem;

nd_mem *nd_mem_new(const nd_mem_opts *o, nd_buf *out,
    void (*commit)(void *ctx), void *ctx);
void nd_mem_free(nd_mem *m);

/* Stream input: every record of a stream, in order; the first after
 * nd_mem_end_source (or the first of all) begins a source. */
void nd_mem_record(nd_mem *m, const nd_event *ev, const nd_source_info *si);
/* The source ends (nd_run's end_source, and the end of the stream): its
 * records are written. */
void nd_mem_end_source(nd_mem *m);
/* 1 when nd_mem_opts.ordered met a record of a timeline that starts before
 * an earlier one of it: the attribution of samples to spans may be wrong;
 * read the input again without ordered. */
int nd_mem_disordered(const nd_mem *m);

/* A PyTorch memory snapshot (the root of a loaded pickle) from `source`.
 * 0 when written; -1 with msg filled when the value is not a snapshot. */
int nd_mem_snapshot(nd_mem *m, const char *source, const nd_pkv *root,
    char *msg, size_t msgsz);

/* A PyTorch memory timeline export (nd_memtl) from `source`: its peak and
 * the peak of each category (with --timeline, first its counters). */
void nd_mem_timeline(nd_mem *m, const char *source, const nd_memtl *tl);

/* After every input: the mem_top rows (and the table's last section). */
void nd_mem_finish(nd_mem *m);

#endif
