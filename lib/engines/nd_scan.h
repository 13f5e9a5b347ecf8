/*
 * nd_scan: the exclusive-time engine.  Records are pushed in stream order
 * (nd_scan_feed); each selected record goes to the caller, with the
 * exclusive time of every span (nd_nest) when it is final.  Every program
 * that sums exclusive time (trace-topk, trace-regions, trace-report,
 * trace-diff) uses it, so these rules live here only:
 *
 * - Record type: opts.type, or by default the type of the first record
 *   with an integer dur_ns ("span" for an ingest stream, "gap" after
 *   trace-gaps).  Records of another type, and meta/end, are not handed on.
 * - Spans (type "span") need ts_ns and dur_ns and are nested per timeline
 *   (source, pid, tid) with opts.rule; other types are not nested: their
 *   exclusive time is their duration and --timelines does not apply.
 * - Timelines (spans only; nd_event_kind): ND_TL_DEVICE counts device ops
 *   and, while the input has shown none, every span; at the first device op
 *   everything counted so far is forgotten (cb.reset) and only device ops
 *   count from then on, so a stream without device ops counts every
 *   timeline (res.fallback says so).  ND_TL_HOST counts host spans,
 *   ND_TL_ALL every span.
 * - Order: timelines are flushed when their source ends.  A span that
 *   arrives too late to be nested exactly (ND_NEST_LATE) makes
 *   nd_scan_feed return ND_SCAN_LATE; the caller goes on to the end of the
 *   input (to find every such timeline), and when nd_scan_again says so
 *   calls nd_scan_restart and feeds the input again: those timelines are
 *   then buffered from their first span, which is exact.  opts.unordered buffers every timeline from the
 *   start instead (exact on any order in one reading, memory proportional
 *   to the spans).  nd_run (nd_run.h) is the driver that does this for
 *   a file, stdin redirected from one, or a pipe.
 *
 * Usage: nd_scan_new, nd_scan_feed for every record, nd_scan_end_source
 * at the end of each source (nd_run's end_source), nd_scan_end_reading at
 * the end of the input, nd_scan_free.
 */
#ifndef ND_SCAN_H
#define ND_SCAN_H

#include "nd_engine.h"
#include "nd_event.h"
#include "nd_nest.h"
#include "nd_stream.h"

#include <stddef.h>
#include <stdint.h>

enum { ND_TL_DEVICE = 0, ND_TL_HOST, ND_TL_ALL };

typedef struct nd_scan_opts {
	int timelines;		/* ND_TL_* */
	nd_nest_rule rule;
	int unordered;
	const char *type;	/* NULL: automatic (see above) */
} nd_scan_opts;

#define ND_SCAN_SKIP UINT64_MAX

typedef struct nd_scan_cb {
	void *ctx;
	/* A selected record; returns the tag given back in done() (a row
	 * id), or ND_SCAN_SKIP to leave the record out. */
	uint64_t (*record)(void *ctx, const nd_event *ev,
	    const nd_source_info *si);
	/* Exclusive time of a record is final (spans: from nd_nest; other
	 * types: at once, self = dur, depth 0). */
	void (*done)(void *ctx, const nd_nest_span *s);
	/* Forget everything counted so far. */
	void (*reset)(void *ctx);
} nd_scan_cb;

typedef struct nd_scan_res {
	int fallback;		/* ND_TL_DEVICE found no device op */
	char type[64];		/* type aggregated; "" when none was seen */
	uint64_t records;	/* records handed to cb.record (last pass) */
	int passes;		/* 2 when the input was read again */
	size_t reordered;	/* timelines that had to buffer */
	size_t held_max;	/* most spans held at once (memory) */
	uint32_t sources;
} nd_scan_res;

typedef struct nd_scan nd_scan;

enum { ND_SCAN_OK = 0, ND_SCAN_LATE = 1 };

/* opts and cb are copied. */
nd_scan *nd_scan_new(const nd_scan_opts *opts, const nd_scan_cb *cb);
void nd_scan_free(nd_scan *sc);
/* A record of the stream, in order; si describes its source.  ND_SCAN_OK,
 * or ND_SCAN_LATE: a span came too late to be nested exactly (dropped;
 * the answer of this reading is not exact). */
int nd_scan_feed(nd_scan *sc, const nd_event *ev,
    const nd_source_info *si);
/* The current source ended: its timelines are final. */
void nd_scan_end_source(nd_scan *sc);
/* The input ended: flush everything, and the figures of this reading. */
void nd_scan_end_reading(nd_scan *sc, nd_scan_res *res);
/* 1 when spans that count came late in this reading: the answer is not
 * exact; restart and feed the input again. */
int nd_scan_again(const nd_scan *sc);
/* The input will be fed again from its start: forget everything counted
 * (cb.reset) and buffer every timeline found late so far. */
void nd_scan_restart(nd_scan *sc);

/* For an engine built on nd_scan, as nd_run drives it: at the end of the
 * input, ND_ENGINE_AGAIN (this reading finished) when nd_scan_again, else
 * ND_ENGINE_OK; before a second reading, nd_scan_restart; at the end, the
 * figures of the last reading and of the driver's (sources, passes). */
int nd_scan_end_input(nd_scan *sc);
void nd_scan_result(nd_scan *sc, const nd_run_res *rr, nd_scan_res *res);
/* The reading callbacks (record, end_source, end_input, restart) of such
 * an engine whose state starts with its nd_scan * (nd_top, nd_regions):
 * every record goes to the scan, which does the rest. */
void nd_scan_eng_record(void *self, const nd_event *ev,
    const nd_source_info *si);
void nd_scan_eng_end_source(void *self);
int nd_scan_eng_end_input(void *self);
void nd_scan_eng_restart(void *self);

/* "device", "host", "all" -> ND_TL_*; -1 if none. */
int nd_scan_timelines(const char *s);
const char *nd_scan_timelines_name(int tl);

#endif
