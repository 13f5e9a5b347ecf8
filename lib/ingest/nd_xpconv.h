/*
 * nd_xpconv: the XPlane profile (*.xplane.pb, gzip allowed) -> ndtrace
 * stream engine (the rules are in xplane2ndjson(1)).
 *
 * nd_xpconv_convert reads one file whole, validates every selected line
 * and only then writes its meta record, its records and its end record to
 * out: a damaged file (an error value, nd_err.h) leaves nothing of it on
 * the output.
 */
#ifndef ND_XPCONV_H
#define ND_XPCONV_H

#include "nd_classify.h"
#include "nd_err.h"
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

/* path: a file, "-" for stdin.  0, or -1 with err filled on an input
 * error; nothing of the input reaches out unless all of it is valid (one
 * exception: a plane whose metadata make over 4 GiB of JSON is found as it
 * is written). */
int nd_xpconv_convert(const char *path, const nd_xpconv_opts *o, nd_out *out,
    nd_err *err);
/* The same for the file's bytes p[0..n) (gzip allowed), named name. */
int nd_xpconv_convert_mem(const void *p, size_t n, const char *name,
    const nd_xpconv_opts *o, nd_out *out, nd_err *err);

#endif
