#include "nd_spool.h"
#include "nd_util.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALIGN 4096

struct win {
	char *p;
	uint64_t off;
	size_t len;
	uint64_t tick;
};

struct nd_spool_rd {
	struct nd_spool *s;
	struct win win[ND_SPOOL_WINDOWS];
	uint64_t tick;
	char *big;		/* reads larger than a window */
	size_t bigcap;
};

struct nd_spool {
	int fd;			/* -1 while everything is in memory */
	int nofile;		/* creating the file failed: stay in memory */
	char *mem;		/* in memory: all; on disk: the write buffer */
	size_t memcap, memlen;
	size_t memmax;		/* in memory up to this */
	uint64_t memoff;	/* spool offset of mem[0] (= bytes in the file) */
	uint64_t size;
	struct nd_spool_rd rd;	/* the cursor of nd_spool_get */
};

nd_spool *
nd_spool_new(void)
{
	nd_spool *s = nd_xcalloc(1, sizeof *s);
	const char *e = getenv("ND_SPOOL_MEM");
	char *end;
	unsigned long long v;

	s->fd = -1;
	s->rd.s = s;
	s->memmax = ND_SPOOL_MEM;
	/* tests set a small figure to reach the file with small inputs */
	if (e != NULL && *e != '\0') {
		v = strtoull(e, &end, 10);
		if (*end == '\0' && v < ND_SPOOL_MEM)
			s->memmax = (size_t)v;
	}
	return s;
}

void
nd_spool_free(nd_spool *s)
{
	if (s == NULL)
		return;
	if (s->fd >= 0)
		close(s->fd);
	for (int i = 0; i < ND_SPOOL_WINDOWS; i++)
		free(s->rd.win[i].p);
	free(s->mem);
	free(s->rd.big);
	free(s);
}

static void
write_all(nd_spool *s, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(s->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			nd_die_errno(ND_EXIT_ERROR, "temporary file: write error");
		p += w;
		n -= (size_t)w;
	}
}

static void
flush(nd_spool *s)
{
	write_all(s, s->mem, s->memlen);
	s->memoff += s->memlen;
	s->memlen = 0;
}

/* Once per process: a spool that silently stays in memory surprises whoever
 * sized the job by the documented bound (then "out of memory" under a
 * ulimit that a writable TMPDIR would have met). */
static void
warn_no_file(const char *env, const char *dir)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;
	const char *e = strerror(errno);

	if (atomic_flag_test_and_set(&said))
		return;
	if (env != NULL)
		nd_warn("TMPDIR=%s: cannot create a spool file (%s): keeping "
		    "the spool in memory", env, e);
	else
		nd_warn("%s (TMPDIR unset): cannot create a spool file (%s): "
		    "keeping the spool in memory", dir, e);
}

static int
open_file(void)
{
	const char *env = getenv("TMPDIR"), *dir = env;
	char path[4096];
	int fd;

	if (dir == NULL || *dir == '\0') {
		env = NULL;
		dir = "/tmp";
	}
	if (snprintf(path, sizeof path, "%s/ndtrace-spool.XXXXXX", dir) >=
	    (int)sizeof path) {
		errno = ENAMETOOLONG;
		warn_no_file(env, dir);
		return -1;
	}
	if ((fd = mkstemp(path)) < 0) {
		warn_no_file(env, dir);
		return -1;
	}
	unlink(path);
	return fd;
}

static void
grow_mem(nd_spool *s, size_t need)
{
	if (need > s->memcap) {
		size_t c = s->memcap ? s->memcap : 65536;

		while (c < need)
			c *= 2;
		s->mem = nd_xrealloc(s->mem, c);
		s->memcap = c;
	}
}

char *
nd_spool_reserve(nd_spool *s, size_t n)
{
	if (s->fd < 0 && !s->nofile && s->memlen + n > s->memmax) {
		if ((s->fd = open_file()) < 0)
			s->nofile = 1;
		else
			flush(s);
	}
	if (s->fd >= 0 && s->memlen + n > s->memcap && s->memlen > 0)
		flush(s);
	grow_mem(s, s->memlen + n);
	return s->mem + s->memlen;
}

uint64_t
nd_spool_commit(nd_spool *s, size_t used)
{
	uint64_t off = s->memoff + s->memlen;

	s->memlen += used;
	s->size += used;
	return off;
}

uint64_t
nd_spool_add(nd_spool *s, const void *p, size_t n)
{
	char *d = nd_spool_reserve(s, n);

	if (n > 0)
		memcpy(d, p, n);
	return nd_spool_commit(s, n);
}

uint64_t
nd_spool_size(const nd_spool *s)
{
	return s->size;
}

int
nd_spool_on_disk(const nd_spool *s)
{
	return s->fd >= 0;
}

static void
read_at(nd_spool *s, char *p, size_t n, uint64_t off)
{
	while (n > 0) {
		ssize_t r = pread(s->fd, p, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			nd_die_errno(ND_EXIT_ERROR, "temporary file: read error");
		if (r == 0)
			nd_die(ND_EXIT_ERROR, "temporary file: unexpected end");
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
}

const char *
nd_spool_rd_get(nd_spool_rd *r, uint64_t off, size_t n)
{
	nd_spool *s = r->s;
	struct win *w, *victim;
	uint64_t start;
	size_t len;

	if (s->fd < 0)
		return s->mem + off;
	if (off >= s->memoff)
		return s->mem + (off - s->memoff);
	r->tick++;
	victim = &r->win[0];
	for (int i = 0; i < ND_SPOOL_WINDOWS; i++) {
		w = &r->win[i];
		if (w->p != NULL && off >= w->off && off + n <= w->off + w->len) {
			w->tick = r->tick;
			return w->p + (off - w->off);
		}
		if (w->tick < victim->tick)
			victim = w;
	}
	if (n > ND_SPOOL_WINDOW - ALIGN) {
		if (n > r->bigcap) {
			free(r->big);
			r->big = nd_xmalloc(n);
			r->bigcap = n;
		}
		read_at(s, r->big, n, off);
		return r->big;
	}
	start = off - off % ALIGN;
	len = ND_SPOOL_WINDOW;
	if (start + len > s->memoff)
		len = (size_t)(s->memoff - start);
	if (victim->p == NULL)
		victim->p = nd_xmalloc(ND_SPOOL_WINDOW);
	read_at(s, victim->p, len, start);
	victim->off = start;
	victim->len = len;
	victim->tick = r->tick;
	return victim->p + (off - start);
}

const char *
nd_spool_get(nd_spool *s, uint64_t off, size_t n)
{
	if (s->fd >= 0 && off < s->memoff && off + n > s->memoff)
		flush(s);	/* straddles the write buffer: put all on disk */
	return nd_spool_rd_get(&s->rd, off, n);
}

nd_spool_rd *
nd_spool_rd_new(nd_spool *s)
{
	nd_spool_rd *r = nd_xcalloc(1, sizeof *r);

	r->s = s;
	return r;
}

void
nd_spool_rd_free(nd_spool_rd *r)
{
	if (r == NULL)
		return;
	for (int i = 0; i < ND_SPOOL_WINDOWS; i++)
		free(r->win[i].p);
	free(r->big);
	free(r);
}
