/*
 * nd_end: the writer of the `end` record (ndtrace(7)) that closes each
 * source of an ingest program.  Its fixed members come in this order:
 *
 *   {"type":"end","events":..,"spans":..,"instants":..,"counters":..,
 *    "flows":.., <the producer's members>, "skipped":{..},
 *    <the producer's members>, "sha256":"..","suspected_truncation":..,
 *    "warnings":[..]}
 *
 * The producer adds its own members with the nd_jw it is given, between
 * the calls, and its warnings (JSON strings) between nd_end_tail and
 * nd_end_close.
 */
#ifndef ND_END_H
#define ND_END_H

#include "nd_buf.h"
#include "nd_json.h"

#include <stddef.h>
#include <stdint.h>

typedef struct nd_end_counts {
	uint64_t events;	/* events read from the source */
	uint64_t spans, instants, counters, flows;	/* records written */
} nd_end_counts;

/* Starts the record in b; w writes the rest. */
void nd_end_open(nd_jw *w, nd_buf *b, const nd_end_counts *c);
/* "skipped": the count of each reason; keep_zero: also those of 0. */
void nd_end_skipped(nd_jw *w, const char *const *names, const uint64_t *n,
    size_t nreasons, int keep_zero);
/* sha256 (hex) and the truncation verdict; leaves w in "warnings". */
void nd_end_tail(nd_jw *w, const char *sha256, int truncated);
/* Ends "warnings", the record and its line. */
void nd_end_close(nd_jw *w);

#endif
