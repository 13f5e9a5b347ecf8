/*
 * nd_xpconv: the XPlane profile (*.xplane.pb, gzip allowed) -> ndtrace
 * stream engine (the rules are in xplane2ndjson(1)).
 *
 * nd_xpconv_convert reads one file whole, validates every selected line
 * and only then writes its meta record, its records and its end record to
 * out: a damaged file (nd_die, exit 2) leaves nothing of it on the output.
 */
#ifndef ND_XPCONV_H
#define ND_XPCONV_H

#include "nd_classify.h"
#include "nd_out.h"

#include <regex.h>

#define ND_XPCONV_MAX_THREADS 4

typedef struct nd_xpconv_opts {
	const regex_t *planes;	/* only planes whose name matches; NULL all */
	const regex_t *lines;	/* only lines whose name or display name
				 * matches; NULL all */
	int device_only;	/* only /device:* planes */
	int no_args;		/* leave out "args" */
	const nd_rules *rules;	/* NULL: nd_rules_default() */
	int threads;		/* renderers (at most ND_XPCONV_MAX_THREADS);
				 * 0: one per idle CPU */
	int one_thread;		/* no threads at all: errors stay on this one */
} nd_xpconv_opts;

/* path: a file, "-" for stdin. */
void nd_xpconv_convert(const char *path, const nd_xpconv_opts *o, nd_out *out);

#endif
