/*
 * nd_roofline: achieved throughput of ops against the roofline of their
 * device, for trace-roofline(1) and trace-report(1).  trace-roofline(1)
 * is the reference for every rule and figure stated here.
 *
 * Spans are grouped by an nd_by key (the report uses "name").  An op's
 * work is its args.flops (else args.model_flops) and its memory traffic
 * args.bytes_accessed, when they are numbers (XPlane op statistics;
 * Kineto's with_flops puts flops, without bytes, on CPU operators).  For
 * each group: the spans and their time, and over the spans with flops:
 * their time, flops and bytes (bytes only when every one of them has
 * bytes).  From these:
 *   tflops      flops / flops_ns / 1000         (achieved TFLOP/s)
 *   gbps        bytes / flops_ns                (achieved GB/s)
 *   intensity   flops / bytes                   (FLOP per byte)
 *   ridge       peak_tflops * 1000 / peak_gbps  (FLOP per byte)
 *   bound       "memory" when intensity < ridge, else "compute"
 *   attainable  min(peak_tflops, intensity * peak_gbps / 1000)
 *   pct         achieved / attainable * 100: gbps / peak_gbps * 100 when
 *               memory-bound, tflops / peak_tflops * 100 when compute-
 *               bound (the same figure, and defined at intensity 0).
 *
 * Timelines (nd_event_kind): ND_ROOF_AUTO counts device ops when any device
 * op has flops, else host spans (Kineto puts flops on CPU operators);
 * device annotations are never counted except with ND_TL_ALL.
 *
 * Peaks per span: opts.peak_tflops / opts.peak_gbps when given; else the
 * nd_peak table row of opts.device, else of the span's device name
 * (nd_devnames, from the source's meta records); else the peaks the meta
 * records state.  A group whose spans with flops have different peaks has
 * none (mixed).
 *
 * Ownership: the nd_roofline owns its rows, keys and names; pointers returned
 * are valid until nd_roofline_free.  The nd_by is borrowed.
 */
#ifndef ND_ROOFLINE_H
#define ND_ROOFLINE_H

#include "nd_by.h"
#include "nd_engine.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_partial.h"
#include "nd_stream.h"

#include <stddef.h>
#include <stdint.h>

#define ND_ROOF_AUTO (-1)

typedef struct nd_roofline_opts {
	int timelines;		/* ND_ROOF_AUTO or ND_TL_* (nd_agg.h) */
	double peak_tflops;	/* > 0: every device's compute peak */
	double peak_gbps;	/* > 0: every device's memory bandwidth */
	const char *device;	/* a device name for every device, or NULL */
} nd_roofline_opts;

/* A group. */
typedef struct nd_roofline_row {
	const char *key;	/* nd_by key bytes */
	size_t keylen;
	uint64_t count;		/* spans */
	int64_t total_ns;	/* their durations */
	uint64_t flops_count;	/* spans with flops */
	int64_t flops_ns;	/* their durations */
	double flops, bytes;	/* sums over the spans with flops */
	uint64_t bytes_count;	/* spans with flops and bytes */
	int peak;		/* 0: unknown, 1: known, 2: mixed */
	double peak_tflops, peak_gbps;	/* when peak == 1 (0: unknown) */
	const char *device_name;	/* the spans' device name, or NULL
					 * (unknown or mixed) */
	int kind;		/* internal: timeline class */
	int name_mixed;		/* internal */
	/* internal: flops and bytes summed exactly (integer values in
	 * 128 bits, the rest in a double), so that a sum does not depend on
	 * how the spans were grouped into partial results */
	uint64_t flops_x[2], bytes_x[2];
	double flops_r, bytes_r;
} nd_roofline_row;

/* The figures of a row; has_* say which are defined. */
typedef struct nd_roofline_fig {
	int has_tflops;		/* flops_ns > 0 */
	int has_bytes;		/* bytes of every span: gbps, intensity */
	int has_tpeak;		/* peak_tflops known: pct_of_peak */
	int has_roof;		/* both peaks and bytes: ridge ... pct */
	double tflops, gbps, intensity;
	double pct_of_peak;	/* tflops / peak_tflops * 100 */
	double ridge, attainable, pct;
	const char *bound;	/* "compute" or "memory" */
} nd_roofline_fig;

/* Totals over the counted timelines. */
typedef struct nd_roofline_sum {
	const char *timelines;	/* "device", "host" or "all" */
	uint64_t spans, flops_spans;
	int64_t total_ns, flops_ns;
	double flops, bytes;
	size_t rows;		/* groups with flops */
	uint32_t sources;
} nd_roofline_sum;

typedef struct nd_roofline nd_roofline;

nd_roofline *nd_roofline_new(const nd_roofline_opts *o, const nd_by *by);
void nd_roofline_free(nd_roofline *r);
/* Every record of a stream, in order (meta records name devices; spans
 * are counted; everything else is ignored). */
void nd_roofline_record(nd_roofline *r, const nd_event *ev, const nd_source_info *si);
/* After the last record: the groups with flops, by time with flops (then
 * total time, then key), and the totals. */
size_t nd_roofline_finish(nd_roofline *r, const nd_roofline_row **rows, nd_roofline_sum *sum);
void nd_roofline_figures(const nd_roofline_row *row, nd_roofline_fig *f);
/* The answer: rows as "roofline" records and a summary (ND_ROOF_JSON), an
 * aligned table for people or CSV. */
enum { ND_ROOF_JSON = 0, ND_ROOF_TABLE, ND_ROOF_CSV };
/* The group keys of --by spec (NULL: name); dies (exit 2) on an empty spec
 * or an output key of roofline rows. */
nd_by *nd_roofline_by(const char *spec);
/* r as an engine for nd_run (nd_engine.h): one reading in any order; the
 * first k rows (0: all) in fmt.  check_by: die when a --by key had no
 * value on any record. */
nd_engine nd_roofline_engine(nd_roofline *r, int fmt, int k, int check_by);
/* The ridge point, FLOP/byte where the compute roof meets the memory
 * roof: peak_tflops * 1e3 / peak_gbps; 0 when a peak is unknown. */
double nd_roofline_ridge(double peak_tflops, double peak_gbps);
/* 1 when rows[0..n) have one device peak between them (each row's own,
 * peak == 1, the same TFLOP/s and GB/s), so a table can state it once. */
int nd_roofline_uniform(const nd_roofline_row *rows, size_t n);
/* The members of a "roofline" record after its keys (count ... 
 * pct_of_roofline; trace-roofline(1)), into an open object. */
void nd_roofline_row_json(nd_jw *w, const nd_roofline_row *row);
/* The members of a "roofline_summary" record after its type (timelines ...
 * rows). */
void nd_roofline_sum_json(nd_jw *w, const nd_roofline_sum *sum);

/* Partial results (nd_partial), before nd_roofline_finish: the state of
 * the whole (a roof_state record), then a roof_group record a group in the
 * order first seen.  nd_roofline_read_partial adds such a record of another
 * nd_roofline back (a group to its key's group) and returns 1, or returns
 * 0 for a record of another type; a record it refuses is the stream's
 * error (nd_partial.h). */
extern const char *const nd_roofline_partial_types[];
extern const size_t nd_roofline_partial_ntypes;
void nd_roofline_write_partial(const nd_roofline *r, nd_partial_w *pw);
int nd_roofline_read_partial(nd_roofline *r, nd_stream *st,
    const nd_event *ev);

#endif
