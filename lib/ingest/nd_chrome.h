/*
 * nd_chrome: a streaming reader of Chrome trace JSON (the Trace Event
 * Format of chrome://tracing and Perfetto, as written by PyTorch/Kineto,
 * PyTorch's legacy profiler, JAX and TensorFlow).
 *
 * Both forms are read: an object {"traceEvents":[...], other members}
 * whose members may come in any order (Kineto writes keys before and after
 * traceEvents), and a bare array [...] of events.  The document is never
 * held whole: the input is read by blocks through nd_in (gzip sniffed), and
 * each element of traceEvents, and each other top-level member, is
 * validated with nd_json_value and handed out as a slice of an internal
 * buffer, valid until the next nd_chrome_next() (the nd_util.h rule).  So
 * memory is bounded by the largest single value, which is capped
 * (ND_CHROME_MAX_VALUE by default): a bigger event is a fatal error, a
 * bigger top-level member other than traceEvents is skipped without being
 * held (structurally scanned only) and reported with val.type == ND_JNONE.
 *
 * How a value's extent is found: nd_json_value runs on the buffered bytes;
 * when it stops at the end of what is buffered (a value cut by a block
 * boundary) the buffer is refilled and the value parsed again.  A value is
 * thus validated in one pass over its bytes, except the one per block that
 * straddles a boundary.
 *
 * Errors are values (nd_err.h) and name the decompressed byte offset
 * (1-based): "FILE: byte N: message".  The first one ends the document:
 * nd_chrome_next returns ND_CHROME_END and nd_chrome_err() the error.
 * Invalid JSON anywhere, traceEvents not an array, a second traceEvents,
 * trailing data, an empty input.  One leniency from the Trace Event Format:
 * a bare array may end without its closing ']' (the format allows it so that
 * a crashed process leaves a readable trace) provided the input ends after
 * a complete element; nd_chrome_unclosed() then returns 1 and the caller
 * should warn.
 */
#ifndef ND_CHROME_H
#define ND_CHROME_H

#include "nd_err.h"
#include "nd_in.h"
#include "nd_json.h"
#include "nd_util.h"

#include <stddef.h>
#include <stdint.h>

#define ND_CHROME_MAX_VALUE ((size_t)64 << 20)	/* 64 MiB */

typedef enum {
	ND_CHROME_END = 0,
	ND_CHROME_EVENT,	/* an element of traceEvents (any JSON value) */
	ND_CHROME_MEMBER	/* a top-level member other than traceEvents */
} nd_chrome_kind;

typedef struct nd_chrome_item {
	nd_chrome_kind kind;
	nd_jval key;		/* MEMBER: its name (a string value) */
	nd_jval val;		/* ND_JNONE: a MEMBER too large, skipped */
	uint64_t off;		/* decompressed offset of val (0-based) */
	uint64_t size;		/* bytes of val (also when skipped) */
} nd_chrome_item;

typedef struct nd_chrome nd_chrome;

/* Reads from in, which stays owned by the caller. */
nd_chrome *nd_chrome_open(nd_in *in);
void nd_chrome_set_max(nd_chrome *c, size_t max_value);
/* The next item; 0 (ND_CHROME_END) once the document is complete. */
int nd_chrome_next(nd_chrome *c, nd_chrome_item *it);
/* '{' (object form) or '[' (bare array), 0 before the first item. */
int nd_chrome_form(const nd_chrome *c);
/* 1 when a bare array ended without ']'. */
int nd_chrome_unclosed(const nd_chrome *c);
/* Decompressed offset (0-based) of a pointer into the current item. */
uint64_t nd_chrome_offset(const nd_chrome *c, const char *p);
/* The error that ended the document, or NULL. */
const nd_err *nd_chrome_err(const nd_chrome *c);
/* For a caller's own error about the item at offset off: e filled (first
 * error wins) with "FILE: byte OFF+1: message"; returns -1.  It reads
 * only c's name, so another thread may call it while c reads on. */
int nd_chrome_error(const nd_chrome *c, nd_err *e, uint64_t off,
    const char *fmt, ...) ND_PRINTF(4, 5);
void nd_chrome_close(nd_chrome *c);

#endif
