#include "nd_out.h"
#include "nd_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef ND_OUT_FLUSH_AT
#define FLUSH_AT ND_OUT_FLUSH_AT	/* the fuzz build: small flushes */
#else
#define FLUSH_AT (256 * 1024)
#endif
#define MAX_TMP 16

struct nd_out {
	nd_buf buf;
	int fd;
	const char *name;	/* for messages */
	char *path;		/* target, NULL for stdout */
	char *tmp;
	int slot;
};

/* Temporary files to remove when the process ends early.  Fixed storage so
 * the signal handler can read it without locks or allocation. */
static char tmp_paths[MAX_TMP][4096];
static volatile sig_atomic_t tmp_used[MAX_TMP];

static void
cleanup_tmp(void)
{
	for (int i = 0; i < MAX_TMP; i++)
		if (tmp_used[i]) {
			unlink(tmp_paths[i]);
			tmp_used[i] = 0;
		}
}

static void
on_signal(int sig)
{
	cleanup_tmp();
	signal(sig, SIG_DFL);
	raise(sig);
}

void
nd_out_install_cleanup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	atexit(cleanup_tmp);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
}

int
nd_out_tmp_register(const char *path)
{
	for (int i = 0; i < MAX_TMP; i++)
		if (!tmp_used[i]) {
			if (strlen(path) >= sizeof tmp_paths[i])
				nd_die(ND_EXIT_ERROR, "%s: path too long", path);
			strcpy(tmp_paths[i], path);
			tmp_used[i] = 1;
			return i;
		}
	nd_die(ND_EXIT_ERROR, "too many output files");
}

void
nd_out_tmp_forget(int slot)
{
	if (slot >= 0 && slot < MAX_TMP)
		tmp_used[slot] = 0;
}

nd_out *
nd_out_open(const char *path)
{
	nd_out *o = nd_xcalloc(1, sizeof *o);

	o->slot = -1;
	nd_buf_reserve(&o->buf, FLUSH_AT + 4096);
	if (path == NULL || strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		o->name = "<stdout>";
		return o;
	}
	o->path = nd_xstrdup(path);
	o->name = o->path;
	o->tmp = nd_xmalloc(strlen(path) + 32);
	sprintf(o->tmp, "%s.tmp.XXXXXX", path);
	o->fd = mkstemp(o->tmp);
	if (o->fd < 0)
		nd_die_errno(ND_EXIT_ERROR, "%s: cannot create output", path);
	o->slot = nd_out_tmp_register(o->tmp);
	return o;
}

nd_buf *
nd_out_buf(nd_out *o)
{
	return &o->buf;
}

static void
write_all(nd_out *o, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE && o->path == NULL)
				exit(0);	/* reader went away: quiet */
			nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
		}
		p += w;
		n -= (size_t)w;
	}
}

void
nd_out_flush(nd_out *o)
{
	if (o->buf.len > 0)
		write_all(o, o->buf.p, o->buf.len);
	nd_buf_reset(&o->buf);
}

void
nd_out_commit(nd_out *o)
{
	if (o->buf.len >= FLUSH_AT)
		nd_out_flush(o);
}

void
nd_out_write(nd_out *o, const void *p, size_t n)
{
	if (n >= FLUSH_AT) {
		nd_out_flush(o);
		write_all(o, p, n);
		return;
	}
	nd_buf_add(&o->buf, p, n);
	nd_out_commit(o);
}

void
nd_out_close(nd_out *o)
{
	nd_out_flush(o);
	if (o->path != NULL) {
		mode_t um = umask(0);

		umask(um);
		/* mkstemp makes 0600; give the file the usual 0666 & ~umask. */
		if (fchmod(o->fd, 0666 & ~um) != 0 || fsync(o->fd) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
		if (close(o->fd) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
		if (rename(o->tmp, o->path) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: cannot rename into place",
			    o->name);
		nd_out_tmp_forget(o->slot);
		free(o->tmp);
		free(o->path);
	} else if (o->fd == STDOUT_FILENO) {
		/* Catch errors of anything written through stdio too. */
		if (fflush(stdout) != 0) {
			if (errno == EPIPE)
				exit(0);
			nd_die_errno(ND_EXIT_ERROR, "<stdout>: write error");
		}
	}
	nd_buf_free(&o->buf);
	free(o);
}
