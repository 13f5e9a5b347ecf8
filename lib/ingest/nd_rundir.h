/*
 * nd_rundir: the files a path argument stands for, when profilers write
 * one file per host or worker into directories (xplane2ndjson(1),
 * chrome2ndjson(1)).
 *
 * A path that is not a directory (or "-") stands for itself.  A directory
 * that holds matching files is a run directory: all of them, in name order.
 * Otherwise the runs are the subdirectories that hold matching files, looked
 * for in DIR/plugins/profile, DIR/profile, then DIR (a TensorBoard log
 * directory, its plugins/profile, or a directory of runs): the run whose
 * name sorts last (TensorBoard names runs by date), or the one `run` names,
 * which also looks past matching files directly in DIR.
 */
#ifndef ND_RUNDIR_H
#define ND_RUNDIR_H

#include "nd_err.h"

#include <stddef.h>

typedef struct nd_strv {
	char **v;
	size_t n, cap;
} nd_strv;

void nd_strv_add(nd_strv *sv, char *s);		/* takes s */
void nd_strv_free(nd_strv *sv);

/* The matching entries that are not read (a dangling or looping symbolic
 * link, a FIFO, the same capture twice): path and reason, each said on
 * stderr when found. */
typedef struct nd_rundir_skips {
	nd_strv path, why;
} nd_rundir_skips;

void nd_rundir_skips_free(nd_rundir_skips *sk);

/* --list: the files, one a line, then the skipped entries as
 * "PATH<TAB>skipped: REASON", on standard output (flushed).  Backslash,
 * tab, newline and other control bytes in a path are escaped (\\, \t,
 * \n, \xNN). */
void nd_rundir_list(const nd_strv *files, const nd_rundir_skips *sk);

typedef int (*nd_rundir_match)(const char *name);

/* Appends the files path stands for to files: 0, or -1 with err when a
 * directory has none (what names them: "*.xplane.pb") or no run `run`.
 * *used_run is set when run was looked up. */
int nd_rundir_resolve(const char *path, const char *run,
    nd_rundir_match match, const char *what, nd_strv *files,
    nd_rundir_skips *sk, int *used_run, nd_err *err);

/* PyTorch's tensorboard_trace_handler names each capture
 * WORKER.TIME.pt.trace.json[.gz] (TIME in ms or ns since the epoch): keeps,
 * of the files from index `from` on, only the newest capture of each
 * worker of each directory (every capture when `all`), and one file of a
 * capture written twice (.json and .json.gz: the first by name, the other
 * skipped into sk); other names are kept.  Name order stays. */
void nd_rundir_newest(nd_strv *files, size_t from, int all,
    nd_rundir_skips *sk);

#endif
