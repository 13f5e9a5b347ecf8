/*
 * nd_prov: what aggregated results (of nd_top, nd_regions) were made from,
 * carried in the header of their partial results so that a merge combines
 * only results made alike: the timelines counted (--timelines), the overrun
 * rule, whether no device op was found (every timeline counted instead),
 * and the number of sources.
 *
 * A merge keeps the rule and the timelines of its partials (they must all
 * agree) and falls back only when every partial did: a partial that found
 * device ops wins, as one run over all the inputs would.
 */
#ifndef ND_PROV_H
#define ND_PROV_H

#include "nd_json.h"
#include "nd_scan.h"
#include "nd_stream.h"

#include <stdint.h>

typedef struct nd_prov {
	const char *timelines;	/* nd_scan_timelines_name() */
	char *rule;		/* "clip" or "reparent" (owned) */
	int fallback;		/* of the header last read; after
				 * nd_prov_merged, of the whole */
	int nheaders, nfallback;
	uint32_t sources;
} nd_prov;

/* After nd_scan with so: the provenance of one run. */
void nd_prov_scanned(nd_prov *p, const nd_scan_opts *so,
    const nd_scan_res *res);
/* Read the keys "rule", "timelines", "fallback" and "sources" of a partial
 * header; dies (exit 2, FILE:LINE: ...) when they cannot be merged with the
 * headers read before. */
void nd_prov_header(nd_prov *p, nd_stream *st, const nd_event *ev);
/* After the last header. */
void nd_prov_merged(nd_prov *p);
/* "timelines", "fallback" and "rule" as members of the open object w. */
void nd_prov_write(const nd_prov *p, nd_jw *w);
void nd_prov_free(nd_prov *p);

/* The options of every aggregating program: --timelines (device, host,
 * all), --overrun (clip, reparent), -u/--unordered and --merge.  Add
 * ND_PROV_LONGOPTS to the option table and pass each option character to
 * nd_prov_getopt: 1 when it was one of them; dies (exit 2) on a bad
 * value. */
enum { ND_PROV_OPT_TIMELINES = 0x1000, ND_PROV_OPT_OVERRUN,
	ND_PROV_OPT_UNORDERED, ND_PROV_OPT_MERGE };
#define ND_PROV_LONGOPTS \
	{ "timelines", required_argument, NULL, ND_PROV_OPT_TIMELINES }, \
	{ "overrun", required_argument, NULL, ND_PROV_OPT_OVERRUN }, \
	{ "unordered", no_argument, NULL, ND_PROV_OPT_UNORDERED }, \
	{ "merge", no_argument, NULL, ND_PROV_OPT_MERGE }

typedef struct nd_prov_args {
	nd_scan_opts so;	/* default: device timelines, clip */
	int merge;
	int scanopt;		/* a scan option was given (not with --merge) */
} nd_prov_args;

void nd_prov_args_init(nd_prov_args *a);
int nd_prov_getopt(nd_prov_args *a, int c, const char *arg);

#endif
