/*
 * nd_buf: a growable byte buffer.  The bytes are always followed by a NUL
 * (not counted in len) so a buffer can be handed to C string functions.
 */
#ifndef ND_BUF_H
#define ND_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct nd_buf {
	char *p;
	size_t len;
	size_t cap;
} nd_buf;

#define ND_BUF_INIT { NULL, 0, 0 }

void nd_buf_reserve(nd_buf *b, size_t extra);
void nd_buf_add(nd_buf *b, const void *p, size_t n);
void nd_buf_adds(nd_buf *b, const char *s);
void nd_buf_addf(nd_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void nd_buf_free(nd_buf *b);

static inline void
nd_buf_reset(nd_buf *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

static inline void
nd_buf_addc(nd_buf *b, char c)
{
	if (b->len + 2 > b->cap)
		nd_buf_reserve(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

#endif
