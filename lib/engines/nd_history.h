/*
 * nd_history: the run history of trace-diff(1) -- one JSON line per
 * comparison, appended safely by concurrent writers, and its trend.
 *
 * Appending: the file is opened with O_APPEND (created 0644) and locked
 * with flock(LOCK_EX) while the line is written, so lines from concurrent
 * writers never interleave, even on file systems where O_APPEND alone is not
 * atomic.  Under the lock, a torn last line (a writer died mid-line) is cut
 * off first, and a line that does not fit (ENOSPC, EFBIG) is truncated back,
 * so the file only ever holds whole lines.
 */
#ifndef ND_HISTORY_H
#define ND_HISTORY_H

#include "nd_buf.h"
#include "nd_diff.h"

#include <stddef.h>

/* The history line (with '\n') of a comparison; label may be NULL; now:
 * seconds since the epoch. */
void nd_history_line(nd_buf *b, const char *label, long long now,
    const nd_diff *d, const nd_verdict *v, const nd_diff_side *before,
    const nd_diff_side *after);
/* Append line[0..n) atomically (all of it or nothing); may warn about a
 * dropped torn line.  0 ok; -1 with errno. */
int nd_history_append(const char *path, const char *line, size_t n);
/* The trend of a history file over its last `last` records (0: all): a
 * `trend` record, or with table a text summary with a sparkline.  Dies
 * (exit 2) when the file cannot be read. */
void nd_history_trend(const char *path, size_t last, int table, nd_buf *out);

#endif
