/*
 * nd_tochrome: an ndtrace stream as Chrome trace JSON (object form), for
 * Perfetto UI and chrome://tracing: a filter engine for nd_run
 * (nd_engine.h).
 *
 * Streaming: each record becomes one event as it is read; what Chrome
 * wants once per process or thread (process_name, process_labels,
 * thread_name metadata) is collected and written after the events, with
 * the top-level members, so memory is per process and thread only.
 * The mapping (ndjson2chrome(1)) is chosen so that
 * `chrome2ndjson f | ndjson2chrome | chrome2ndjson` gives the same spans.
 */
#ifndef ND_TOCHROME_H
#define ND_TOCHROME_H

#include "nd_engine.h"

typedef struct nd_tochrome nd_tochrome;

/* keep_derived: also copy step, scope, class, family, device and rank
 * into args.ndtrace (-D). */
nd_tochrome *nd_tochrome_new(int keep_derived);
nd_engine nd_tochrome_engine(nd_tochrome *t);
void nd_tochrome_free(nd_tochrome *t);

#endif
