#include "nd_drive.h"
#include "nd_drive_mt.h"
#include "nd_spool.h"
#include "nd_sum.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Kept here: still reachable (no leak report) if the program dies
 * while reading. */
static nd_stream *cur_st;
static nd_spool *cur_spool;

nd_stream *
nd_drive_stream(void)
{
	return cur_st;
}

/* Is stdin one of the inputs? */
static int
reads_stdin(char **paths, int n)
{
	if (n == 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (strcmp(paths[i], "-") == 0)
			return 1;
	return 0;
}

/* stdin's offset when it is a regular file that can be read again from
 * there; -1 otherwise (a pipe, a terminal: it is spooled). */
static off_t
stdin_offset(void)
{
	struct stat sb;

	if (fstat(STDIN_FILENO, &sb) != 0 || !S_ISREG(sb.st_mode))
		return -1;
	return lseek(STDIN_FILENO, 0, SEEK_CUR);
}

/* One reading of the input; returns cb.end's answer. */
static int
pass(char **paths, int n, const nd_drive_cb *cb, nd_drive_res *res,
    int replay, int threads)
{
	nd_event ev;
	int r;

	nd_event_init(&ev);
	cur_st = nd_stream_open(paths, n);
	if (cur_spool != NULL)
		nd_stream_spool_stdin(cur_st, cur_spool, replay);
	if (threads < 2 || cb->done != NULL ||
	    nd_drive_mt_records(cur_st, cb) != 0)
		while (nd_stream_next(cur_st, &ev)) {
			cb->record(cb->ctx, &ev,
			    nd_stream_meta(cur_st, ev.source));
			if (cb->done != NULL && cb->done(cb->ctx))
				break;
		}
	if (nd_stream_err(cur_st) != NULL)
		nd_err_exit(nd_stream_err(cur_st));	/* the driver prints */
	res->sources = nd_stream_nsources(cur_st);
	/* the input has ended: what end finds names no line (nd_sum), but
	 * it may still ask nd_drive_stream of every source */
	nd_sum_end();
	r = cb->end(cb->ctx);
	nd_stream_close(cur_st);
	cur_st = NULL;
	nd_event_free(&ev);
	return r;
}

void
nd_drive(char **paths, int n, const nd_drive_opts *opts,
    const nd_drive_cb *cb, nd_drive_res *res)
{
	off_t off = -1;
	int in = reads_stdin(paths, n);
	int threads = opts->threads ? nd_drive_mt_threads() : 1;

	memset(res, 0, sizeof *res);
	if (in && !opts->once && (off = stdin_offset()) < 0)
		cur_spool = nd_spool_new();
	res->passes = 1;
	if (pass(paths, n, cb, res, 0, threads) == ND_DRIVE_AGAIN) {
		if (opts->once)
			nd_die(ND_EXIT_ERROR, "internal error: a second "
			    "reading asked for after --unordered");
		if (in && off >= 0 && lseek(STDIN_FILENO, off, SEEK_SET) < 0)
			nd_die_errno(ND_EXIT_ERROR, "<stdin>: cannot read it "
			    "again");
		res->passes = 2;
		if (pass(paths, n, cb, res, 1, threads) == ND_DRIVE_AGAIN)
			nd_die(ND_EXIT_ERROR, "internal error: records still "
			    "out of order on a second reading");
	}
	if (cur_spool != NULL)
		res->spooled = nd_spool_size(cur_spool);
	nd_spool_free(cur_spool);
	cur_spool = NULL;
	if (getenv("ND_DRIVE_STATS") != NULL)
		fprintf(stderr, "%s: %d pass%s, %llu bytes of stdin spooled\n",
		    nd_progname, res->passes, res->passes == 1 ? "" : "es",
		    (unsigned long long)res->spooled);
}
