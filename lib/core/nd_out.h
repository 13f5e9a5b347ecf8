/*
 * nd_out: buffered output to stdout or to a file written atomically.
 *
 * A named output that is a regular file or a new path is written to a
 * temporary file in the same directory and renamed over the target only by
 * nd_out_close() after every byte reached the disk, so a failed or
 * interrupted run never leaves a partial file: the temporary is removed at
 * exit and on every signal whose default action ends the process (then the
 * program dies of that signal).  A symbolic link is followed: its target is
 * replaced the same way, in the target's directory.  A device or a FIFO is
 * written through (opened, never replaced), as the shell's `>` does.  So is
 * a descriptor of the process itself (/dev/fd/N, /dev/stdout, or the file
 * standard output or error is open on): written through a copy of it, at
 * its offset, so that `{ echo H; prog -o /dev/stdout; } > f` keeps H.  A
 * regular file with several hard links is written to the temporary, then
 * copied over the file's content at close, so every link sees the output.
 *
 * Records are built directly in the output buffer (nd_out_buf) and
 * nd_out_commit() flushes when enough has accumulated.  A write error ends
 * the program: EPIPE on stdout or a FIFO (the reader went away, `| head`)
 * quietly with status 0, anything else with a message and status 2.
 */
#ifndef ND_OUT_H
#define ND_OUT_H

#include "nd_buf.h"

#include <stdio.h>

typedef struct nd_out nd_out;

/* path NULL or "-" means stdout.  Dies when the directory is not writable. */
nd_out *nd_out_open(const char *path);
nd_buf *nd_out_buf(nd_out *o);
/* Flush if the buffer is large; call after each complete record. */
void nd_out_commit(nd_out *o);
void nd_out_write(nd_out *o, const void *p, size_t n);
void nd_out_flush(nd_out *o);
/* Flush, fsync and rename into place (or flush stdout); frees o.
 * Dies with a message on any write error. */
void nd_out_close(nd_out *o);

/* A stdio stream whose bytes go through o (for code written with
 * fprintf); fclose it before nd_out_close(o). */
FILE *nd_out_stdio(nd_out *o);

/* Register an extra path to remove if the program stops before committing
 * it (used by programs that write a file by other means).  Returns a slot. */
int nd_out_tmp_register(const char *path);
void nd_out_tmp_forget(int slot);

/* Called once by nd_init(). */
void nd_out_install_cleanup(void);

#endif
