#include "nd_out.h"
#include "nd_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	char *tmp;		/* NULL when written through (stdout, device) */
	int dst;		/* a hard-linked target, rewritten in place; or -1 */
	int slot;
	int is_stdout;
	int quiet_epipe;	/* stdout or a FIFO: a gone reader is no error */
	int gone;		/* the reader went away: drop every later byte */
	int has_mode;		/* replacing a regular file: keep its mode */
	mode_t mode;
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

/* Remove the temporaries, then die of the same signal (the handler runs
 * with every signal blocked; the re-raised one is delivered on return). */
static void
on_signal(int sig)
{
	cleanup_tmp();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Every signal whose default action ends the process, except the ones a
 * program error raises synchronously (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS): a crash keeps its core and the sanitizers' report. */
static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
	SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGABRT,
#ifdef SIGPOLL
	SIGPOLL,
#endif
#ifdef SIGPWR
	SIGPWR,
#endif
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

static void
catch_signal(int sig)
{
	struct sigaction old, sa;

	/* A signal ignored by the parent (nohup) or already handled (a
	 * sanitizer runtime) stays as it is. */
	if (sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

void
nd_out_install_cleanup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	atexit(cleanup_tmp);
	for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
	    i++)
		catch_signal(fatal_signals[i]);
#if defined(SIGRTMIN) && defined(SIGRTMAX)
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		catch_signal(sig);
#endif
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

/* The file a path names after following its symbolic links, which may not
 * exist yet (a dangling link names the file to create).  Caller frees. */
static char *
resolve_links(const char *path)
{
	char *p = nd_xstrdup(path);

	for (int hops = 0; ; hops++) {
		struct stat st;
		char *t, *q, *slash;
		ssize_t n;
		size_t cap = 256;

		if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
			return p;
		if (hops == 40) {
			errno = ELOOP;
			nd_die_errno(ND_EXIT_ERROR, "%s: cannot create output",
			    path);
		}
		for (;;) {
			t = nd_xmalloc(cap);
			if ((n = readlink(p, t, cap)) < 0)
				nd_die_errno(ND_EXIT_ERROR, "%s: cannot create "
				    "output", path);
			if ((size_t)n < cap)
				break;
			free(t);
			cap *= 2;
		}
		t[n] = '\0';
		slash = strrchr(p, '/');
		if (t[0] == '/' || slash == NULL) {
			q = t;
		} else {
			/* Relative to the directory holding the link. */
			size_t d = (size_t)(slash - p) + 1;

			q = nd_xmalloc(d + (size_t)n + 1);
			memcpy(q, p, d);
			memcpy(q + d, t, (size_t)n + 1);
			free(t);
		}
		free(p);
		p = q;
	}
}

/* The descriptor N of a path /dev/fd/N or /proc/self/fd/N (and
 * /dev/stdin, /dev/stdout, /dev/stderr), or -1 for any other path. */
static int
named_fd(const char *path)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout",
	    "/dev/stderr" };
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };
	const char *d = NULL;
	long long n = 0;

	for (int i = 0; i < 3; i++)
		if (strcmp(path, std[i]) == 0)
			return i;
	for (int i = 0; i < 2 && d == NULL; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			d = path + strlen(dirs[i]);
	if (d == NULL || *d == '\0')
		return -1;
	for (; *d >= '0' && *d <= '9' && n <= INT_MAX; d++)
		n = n * 10 + (*d - '0');
	return *d == '\0' && n <= INT_MAX ? (int)n : -1;
}

static int
writable_fd(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) != O_RDONLY;
}

/* A copy of this process's own descriptor that path names, or -1.  A
 * /dev/fd/N path names N; any other path names standard input, output or
 * error when it is the file that descriptor is open on for writing (as
 * /dev/stdout is, or the file itself: `prog -o log >> log`).  Writing
 * through the descriptor keeps its offset and O_APPEND, as the shell's `>`
 * would; replacing the file would drop what the shell wrote around us. */
static int
own_fd(const char *path)
{
	struct stat st, fst;
	int fd = named_fd(path), d;

	if (fd < 0 && stat(path, &st) == 0)
		for (int i = 0; i <= 2 && fd < 0; i++)
			if (writable_fd(i) && fstat(i, &fst) == 0 &&
			    fst.st_dev == st.st_dev && fst.st_ino == st.st_ino)
				fd = i;
	if (fd < 0)
		return -1;
	if (!writable_fd(fd)) {
		errno = EBADF;
		nd_die_errno(ND_EXIT_ERROR, "%s: cannot create output", path);
	}
	if ((d = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		nd_die_errno(ND_EXIT_ERROR, "%s: cannot create output", path);
	return d;
}

/* The temporary beside o->path.  A target with several hard links is
 * opened now (to fail before any work) and rewritten in place by
 * nd_out_close, so that every link sees the new content. */
static void
open_tmp(nd_out *o, const char *path)
{
	struct stat st;

	if (stat(o->path, &st) == 0) {
		o->has_mode = 1;
		o->mode = st.st_mode & 07777;
		if (S_ISREG(st.st_mode) && st.st_nlink > 1 &&
		    (o->dst = open(o->path, O_WRONLY | O_NOCTTY |
		    O_CLOEXEC)) < 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: cannot create output",
			    path);
	}
	o->tmp = nd_xmalloc(strlen(o->path) + 32);
	sprintf(o->tmp, "%s.tmp.XXXXXX", o->path);
	/* Made in its slot, already marked: a signal right after mkstemp
	 * must find the file to remove. */
	o->slot = nd_out_tmp_register(o->tmp);
	o->fd = mkstemp(tmp_paths[o->slot]);
	if (o->fd < 0) {
		nd_out_tmp_forget(o->slot);
		nd_die_errno(ND_EXIT_ERROR, "%s: cannot create output", path);
	}
	strcpy(o->tmp, tmp_paths[o->slot]);
}

nd_out *
nd_out_open(const char *path)
{
	nd_out *o = nd_xcalloc(1, sizeof *o);
	struct stat st;

	o->slot = -1;
	o->dst = -1;
	nd_buf_reserve(&o->buf, FLUSH_AT + 4096);
	if (path == NULL || strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		o->name = "<stdout>";
		o->is_stdout = 1;
		o->quiet_epipe = 1;
		return o;
	}
	o->name = nd_xstrdup(path);
	if ((o->fd = own_fd(path)) >= 0) {
		o->quiet_epipe = 1;	/* as on stdout */
		return o;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A device or FIFO is written through, as the shell's `>`
		 * does: replacing it would break it (and its reader). */
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			nd_die_errno(ND_EXIT_ERROR, "%s: cannot create output",
			    path);
		}
		o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (o->fd < 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: cannot create output",
			    path);
		o->quiet_epipe = S_ISFIFO(st.st_mode);
		return o;
	}
	/* A regular file or a new one: written beside its real place (the
	 * target of a symbolic link) and renamed over it when complete. */
	o->path = resolve_links(path);
	open_tmp(o, path);
	return o;
}

nd_buf *
nd_out_buf(nd_out *o)
{
	return &o->buf;
}

static void
write_fd(nd_out *o, int fd, const char *p, size_t n)
{
	/* exit() flushes stdio streams made by nd_out_stdio, which write here
	 * again: without this they would fail and exit once more, forever. */
	if (o->gone)
		return;
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE && o->quiet_epipe) {
				o->gone = 1;
				exit(0);	/* reader went away: quiet */
			}
			nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
		}
		p += w;
		n -= (size_t)w;
	}
}

static void
write_all(nd_out *o, const char *p, size_t n)
{
	write_fd(o, o->fd, p, n);
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

static ssize_t
stdio_write(void *cookie, const char *p, size_t n)
{
	nd_out_write(cookie, p, n);	/* dies on error */
	return (ssize_t)n;
}

FILE *
nd_out_stdio(nd_out *o)
{
	static const cookie_io_functions_t io = { NULL, stdio_write, NULL,
	    NULL };
	FILE *f = fopencookie(o, "w", io);

	if (f == NULL)
		nd_die_errno(ND_EXIT_ERROR, "%s: cannot open a stream", o->name);
	return f;
}

/* The complete output, from the temporary, over the hard-linked target's
 * content (truncated first, as the shell's `>` does); not atomic, but only
 * an error during this copy (a full disk) can leave the target partial. */
static void
copy_back(nd_out *o)
{
	ssize_t r;

	if (lseek(o->fd, 0, SEEK_SET) != 0 || ftruncate(o->dst, 0) != 0)
		nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
	while ((r = read(o->fd, o->buf.p, o->buf.cap)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
		write_fd(o, o->dst, o->buf.p, (size_t)r);
	}
	if (fsync(o->dst) != 0 || close(o->dst) != 0)
		nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
	close(o->fd);
	unlink(o->tmp);
}

void
nd_out_close(nd_out *o)
{
	nd_out_flush(o);
	if (o->dst >= 0) {
		copy_back(o);
		nd_out_tmp_forget(o->slot);
		free(o->tmp);
		free(o->path);
	} else if (o->tmp != NULL) {
		mode_t mode = o->mode;

		if (!o->has_mode) {
			/* mkstemp makes 0600; a new file gets 0666 & ~umask. */
			mode_t um = umask(0);

			umask(um);
			mode = 0666 & ~um;
		}
		if (fchmod(o->fd, mode) != 0 || fsync(o->fd) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
		if (close(o->fd) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
		if (rename(o->tmp, o->path) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: cannot rename into place",
			    o->name);
		nd_out_tmp_forget(o->slot);
		free(o->tmp);
		free(o->path);
	} else if (!o->is_stdout) {
		/* A device or FIFO: nothing to sync or rename. */
		if (close(o->fd) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s: write error", o->name);
	} else {
		/* Catch errors of anything written through stdio too. */
		nd_stdout_flush();
	}
	if (!o->is_stdout)
		free((char *)o->name);
	nd_buf_free(&o->buf);
	free(o);
}
