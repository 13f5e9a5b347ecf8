/*
 * nd_lines: a line reader over nd_in.  Lines are returned without their
 * '\n' (and without a '\r' before it), NUL-terminated, valid until the next
 * call.  A line longer than the limit is an input error rather than a
 * reason to grow without bound.  Errors are values: nd_lines_next returns
 * NULL and nd_lines_err() the error ("FILE:LINE: message"; the input's
 * own, nd_in.h; a document to convert, nd_lines_foreign).
 */
#ifndef ND_LINES_H
#define ND_LINES_H

#include "nd_in.h"

#define ND_LINES_MAX_DEFAULT ((size_t)64 << 20)	/* 64 MiB */

typedef struct nd_lines nd_lines;

nd_lines *nd_lines_open(nd_in *in);
/* Next line or NULL at end.  *len gets its length; *nonl is set when the
 * last line of the input had no final newline. */
char *nd_lines_next(nd_lines *lr, size_t *len, int *nonl);
uint64_t nd_lines_lineno(const nd_lines *lr);
/* Decompressed byte offset of the start of the current line. */
uint64_t nd_lines_offset(const nd_lines *lr);
/* When the input is a document to convert first (a Chrome/Kineto trace
 * JSON, an XPlane protobuf, either gzipped), 1 with the error "FILE: a
 * ..., not an ndtrace stream: convert it first: CONVERTER FILE | prog" (or
 * "give it to trace-mem: ..." for a memory snapshot or timeline) kept as
 * nd_lines_err's; else 0.  Call it when line 1 is not a valid record (an
 * earlier or later call returns 0): readers never guess while the stream
 * is valid. */
int nd_lines_foreign(nd_lines *lr);
/* The first error, or NULL. */
const nd_err *nd_lines_err(const nd_lines *lr);
void nd_lines_set_max(nd_lines *lr, size_t max);
void nd_lines_close(nd_lines *lr);	/* does not close the nd_in */

#endif
