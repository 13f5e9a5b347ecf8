/*
 * nd_name: the one rule that shortens a long name for a table cell meant
 * for people (trace-topk --table, trace-roofline --table, trace-mem
 * --table, trace-diff --table, the report's Markdown and HTML tables).  Machine outputs
 * (NDJSON, CSV, JSON) always carry the full name.  ndtrace(7), "Names in
 * tables", is the reference; in short, a name of at most `width`
 * characters is shown whole, and a longer one is shortened:
 *
 *   1. A name with a '/' is a path (scopes, TensorFlow op names, files):
 *      its first component, then "/…/", then as many of its last
 *      components as fit; when not even the last one fits, "…" and the
 *      end of the name.
 *   2. Any other name is read as a C++ signature: each template argument
 *      list that follows a name ("kernel<128, 4, ...>") becomes "<…>",
 *      each parameter list that follows a name or a closing bracket
 *      ("(int, float*)") becomes "(…)" ("()" when empty); "(anonymous
 *      namespace)" is part of the name and stays.  Then, when a parameter
 *      list was found, the return type (everything up to the last blank
 *      before it) is dropped.  Brackets that do not balance end the
 *      elision: the rest is kept as it is.
 *   3. When the result is still longer than width, its first width - 1
 *      characters and "…".
 * Characters are counted as UTF-8 code points; a name is never cut inside
 * one.
 */
#ifndef ND_NAME_H
#define ND_NAME_H

#include "nd_buf.h"

#include <stddef.h>

/* The width of the name cells of the tables (all but trace-diff's). */
#define ND_NAME_WIDTH 72

/* Append the name s[0..n), shortened to at most width characters (at
 * least 8), to out. */
void nd_name_short(const char *s, size_t n, size_t width, nd_buf *out);

/* Byte order of two length-counted names (they may hold NUL); a prefix
 * first. */
int nd_bytes_cmp(const char *a, size_t na, const char *b, size_t nb);

/* Natural order: runs of digits by value (GPU:2 before GPU:10), the rest
 * byte by byte; 0 only for equal names. */
int nd_name_natcmp(const char *a, size_t na, const char *b, size_t nb);

#endif
