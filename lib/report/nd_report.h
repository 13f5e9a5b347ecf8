/*
 * nd_report: the root-cause report of trace-report(1), built in one reading
 * of an ndtrace stream (two when it is out of order: nd_report_end) from the
 * modules of the analysis programs:
 *
 *   steps, breakdown, statistics, classes, stragglers   nd_steps for the
 *       step windows (one per source, a second one per device for the
 *       per-device breakdown), nd_stepsum for the steady window, the
 *       statistics and the ranks
 *   exclusive time, top ops, families, collectives      nd_scan, rolled up
 *       and ranked by nd_top (ND_TL_DEVICE: device ops, or every span when
 *       there is none)
 *   regions                                             the same exclusive
 *       times in the scope tree of nd_regions (nd_rtree)
 *   idle gaps, payload, cause                           nd_gaps
 *       (ND_GAP_DEVICE level)
 *   memory peak, and the op and scope running at it     nd_mem
 *   roofline of the top ops                             nd_roofline (by
 *       name)
 *   timeline strip of the representative step (HTML)   the step windows
 *       and gaps above, with the latest device ops of the first devices
 *       kept in bounded rings (see trace-report(1), Timeline strip)
 *
 * Usage: nd_report_new(), then nd_run over its engine (nd_report_run_new:
 * it reads, reads again when the report asks, merges partials and writes
 * the format asked for); or by hand nd_report_event() for every record of
 * a stream in order and nd_report_end_source() after each source,
 * nd_report_end() (and nd_report_restart and again from the first record
 * when it says so), nd_report_finish(), then any of the writers.  The
 * writers are deterministic: the same input gives the same bytes (sorting
 * breaks every tie by name).  Thresholds of the findings are named by a
 * stable rule id (nd_report_rules) and set in percent with
 * nd_report_set_threshold.
 *
 * Ownership: the report owns everything it computed; strings it returns are
 * valid until nd_report_free.
 */
#ifndef ND_REPORT_H
#define ND_REPORT_H

#include "nd_buf.h"
#include "nd_engine.h"
#include "nd_event.h"
#include "nd_out.h"
#include "nd_stream.h"

#include <regex.h>
#include <stdint.h>

#define ND_REPORT_SCHEMA "ndtrace-report/1"

typedef struct nd_report nd_report;

typedef struct nd_report_opts {
	int top;		/* table rows (0: all) */
	int64_t warmup;		/* steps left out of the steady state */
	int drop_last;
	const regex_t *re;	/* --step-regex, or NULL */
	const char *step_regex;	/* its text (partial results name it) */
	int unordered;		/* buffer timelines (input in any order) */
	const char *stamp;	/* a generation line to print, or NULL */
	int html;		/* nd_report_html will be called: also collect
				 * what only the page draws (the timeline strip) */
	/* roofline peaks (nd_roofline.h): NULL / 0 for the stream's own */
	const char *device;
	double peak_tflops, peak_gbps;
} nd_report_opts;

/* A finding rule: id, default threshold (percent), what it measures. */
typedef struct nd_report_rule {
	const char *id;
	double def;
	const char *what;
} nd_report_rule;

/* The rule table, terminated by an entry with id NULL. */
const nd_report_rule *nd_report_rules(void);

nd_report *nd_report_new(const nd_report_opts *o);
void nd_report_free(nd_report *r);
/* "ID=VALUE" (percent).  0, or -1 when ID is unknown or VALUE malformed. */
int nd_report_set_threshold(nd_report *r, const char *spec);
/* Every record of the stream, in order; si is the record's source; and
 * nd_report_end_source after the last record of each source (nd_run's
 * end_source). */
void nd_report_event(nd_report *r, const nd_event *ev,
    const nd_source_info *si);
void nd_report_end_source(nd_report *r);
/* The end of a reading of the input: 0, or 1 when spans came out of order
 * on a timeline (exclusive time, gaps, memory, launches): call
 * nd_report_restart, which forgets every record but what was learnt of the
 * order, and feed the input again from its start. */
int nd_report_end(nd_report *r);
void nd_report_restart(nd_report *r);
/* After the last record. */
void nd_report_finish(nd_report *r);

/* The formats of the report (and a partial result, for nd_run). */
enum { ND_REPORT_MARKDOWN, ND_REPORT_JSON, ND_REPORT_HTML,
	ND_REPORT_PARTIAL };
/* The report in format (Markdown, JSON or HTML) to o, committed as it is
 * written: one document (nd_doc: text, figures, data) that each format
 * renders. */
void nd_report_write(nd_report *r, int format, nd_out *o);

/* trace-report as an engine of nd_run (nd_engine.h): reads the stream (or
 * merges partials), then writes the report in format to the output.
 * ND_REPORT_PARTIAL writes a partial result instead (nd_partial framing,
 * header "report_partial"): the state of every part of the collection, in
 * records of its own and its engines' (nd_report_int.h).  A merge reads
 * partials into a report made with the output options (the collection
 * options are in the partials, which must agree; an error when they do
 * not, when opts.html is set and a partial has no strip, or when a partial
 * is malformed), and gives the report of one reading of the partials'
 * inputs in order. */
typedef struct nd_report_run nd_report_run;
nd_report_run *nd_report_run_new(nd_report *r, int format);
nd_engine nd_report_run_engine(nd_report_run *x);
void nd_report_run_free(nd_report_run *x);

#endif
