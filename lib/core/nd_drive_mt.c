#include "nd_drive_mt.h"
#include "nd_in.h"
#include "nd_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A batch is handed on at NSLOT records or FILL bytes of lines: small
 * enough to be still in cache when the analysis reads it, large enough
 * that the hand-over (a lock, a wake-up) is noise. */
#define NSLOT 256
#define FILL ((size_t)128 << 10)
#define ARENA (2 * FILL)	/* any line up to FILL fits after < FILL used */

typedef struct slot {
	nd_event ev;
	nd_buf scratch;		/* ev's decoded strings */
	const nd_source_info *si;
	int input;		/* where, for nd_stream_at */
	uint64_t line;
} slot;

typedef struct batch {
	int full;		/* 1: the analysis', 0: the decoder's */
	int last;		/* no record after these */
	int died;		/* the decoder died after these */
	size_t n;
	char *arena;		/* the lines, NUL-terminated */
	size_t used;
	char **big;		/* lines longer than FILL, one allocation each */
	size_t nbig, capbig;
	slot s[NSLOT];
} batch;

typedef struct mt {
	nd_stream *st;
	batch *b[ND_DRIVE_MT_BATCHES];
	size_t wi;		/* the batch the decoder fills, mod the ring */
	pthread_mutex_t mu;
	pthread_cond_t full, free;
	pthread_t th;
	int code;		/* the decoder's nd_die: exit code, message */
	char msg[4096];
} mt;

/* Reachable from here while the program may die (no leak report). */
static mt *cur_mt;

/* ---- the decoding thread ---- */

static char *
keep_line(void *ctx, const char *line, size_t len)
{
	batch *b = ctx;
	char *p;

	if (len >= FILL) {
		nd_grow(&b->big, &b->capbig, b->nbig + 1, sizeof *b->big);
		p = b->big[b->nbig++] = nd_xmalloc(len + 1);
	} else {
		p = b->arena + b->used;
		b->used += len + 1;
	}
	memcpy(p, line, len + 1);
	return p;
}

/* nd_die on the decoder: the batch it fills ends there; the analysis
 * raises the error after its records.  The thread waits for the exit. */
static void
decoder_died(int code, const char *msg)
{
	mt *m = cur_mt;
	batch *b = m->b[m->wi % ND_DRIVE_MT_BATCHES];

	pthread_mutex_lock(&m->mu);
	m->code = code;
	snprintf(m->msg, sizeof m->msg, "%s", msg);
	b->died = 1;
	b->full = 1;
	pthread_cond_signal(&m->full);
	for (;;)
		pthread_cond_wait(&m->free, &m->mu);
}

static void
hand_on(mt *m, batch *b)
{
	pthread_mutex_lock(&m->mu);
	b->full = 1;
	pthread_cond_signal(&m->full);
	pthread_mutex_unlock(&m->mu);
}

/* The next batch of the ring, once the analysis is done with it. */
static batch *
next_free(mt *m)
{
	batch *b;

	pthread_mutex_lock(&m->mu);
	b = m->b[++m->wi % ND_DRIVE_MT_BATCHES];
	while (b->full)
		pthread_cond_wait(&m->free, &m->mu);
	pthread_mutex_unlock(&m->mu);
	b->n = 0;
	b->used = 0;
	for (size_t i = 0; i < b->nbig; i++)
		free(b->big[i]);
	b->nbig = 0;
	return b;
}

static void *
decoder(void *arg)
{
	mt *m = arg;
	batch *b = m->b[0];

	nd_die_defer = decoder_died;
	for (;;) {
		slot *sl = &b->s[b->n];
		int more = nd_stream_next_kept(m->st, &sl->ev, &sl->scratch,
		    keep_line, b);

		if (more) {
			sl->si = nd_stream_meta(m->st, sl->ev.source);
			sl->input = nd_stream_input(m->st);
			sl->line = nd_stream_lineno(m->st);
			b->n++;
			if (b->n < NSLOT && b->used < FILL)
				continue;
		}
		if (!more && nd_stream_err(m->st) != NULL)
			/* its records first, then the error, in order */
			decoder_died(nd_stream_err(m->st)->code,
			    nd_stream_err(m->st)->msg);
		b->last = !more;
		hand_on(m, b);
		if (!more)
			return NULL;
		b = next_free(m);
	}
}

/* ---- the calling thread ---- */

static mt *
mt_new(nd_stream *st)
{
	mt *m = nd_xcalloc(1, sizeof *m);

	m->st = st;
	for (int i = 0; i < ND_DRIVE_MT_BATCHES; i++) {
		batch *b = m->b[i] = nd_xcalloc(1, sizeof *b);

		b->arena = nd_xmalloc(ARENA);
		for (int j = 0; j < NSLOT; j++)
			nd_event_init(&b->s[j].ev);
	}
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->full, NULL);
	pthread_cond_init(&m->free, NULL);
	return m;
}

static void
mt_free(mt *m)
{
	for (int i = 0; i < ND_DRIVE_MT_BATCHES; i++) {
		batch *b = m->b[i];

		for (int j = 0; j < NSLOT; j++) {
			nd_event_free(&b->s[j].ev);
			nd_buf_free(&b->s[j].scratch);
		}
		for (size_t j = 0; j < b->nbig; j++)
			free(b->big[j]);
		free(b->big);
		free(b->arena);
		free(b);
	}
	pthread_mutex_destroy(&m->mu);
	pthread_cond_destroy(&m->full);
	pthread_cond_destroy(&m->free);
	free(m);
}

int
nd_drive_mt_records(nd_stream *st, const nd_drive_cb *cb)
{
	mt *m;

	/* read NDTRACE_MAX_INPUT here, first, as one thread would */
	(void)nd_in_max();
	m = cur_mt = mt_new(st);
	if (pthread_create(&m->th, NULL, decoder, m) != 0) {
		mt_free(m);
		cur_mt = NULL;
		return -1;
	}
	for (size_t ri = 0;; ri++) {
		batch *b = m->b[ri % ND_DRIVE_MT_BATCHES];

		pthread_mutex_lock(&m->mu);
		while (!b->full)
			pthread_cond_wait(&m->full, &m->mu);
		pthread_mutex_unlock(&m->mu);
		for (size_t i = 0; i < b->n; i++) {
			nd_stream_at(st, b->s[i].input, b->s[i].line);
			cb->record(cb->ctx, &b->s[i].ev, b->s[i].si);
		}
		if (b->died)
			nd_die(m->code, "%s", m->msg);
		if (b->last)
			break;
		pthread_mutex_lock(&m->mu);
		b->full = 0;
		pthread_cond_signal(&m->free);
		pthread_mutex_unlock(&m->mu);
	}
	pthread_join(m->th, NULL);
	mt_free(m);
	cur_mt = NULL;
	return 0;
}

/* NDTRACE_THREADS as 1 or 2; 0 (automatic) when unset, empty or 0. */
static int
threads_env(void)
{
	const char *e = getenv("NDTRACE_THREADS");
	char *end;
	long v;

	if (e == NULL || *e == '\0')
		return 1;
	errno = 0;
	v = strtol(e, &end, 10);
	if (*e < '0' || *e > '9' || *end != '\0' || errno != 0)
		nd_die(ND_EXIT_ERROR, "NDTRACE_THREADS: invalid value '%s' (1 "
		    "or 0: one thread, 2: decode on a second thread)", e);
	return v >= 2 ? 2 : 1;
}

int
nd_drive_mt_threads(void)
{
	return threads_env();
}
