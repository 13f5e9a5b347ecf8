#include "nd_buf.h"
#include "nd_util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

void
nd_buf_reserve(nd_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need < b->len)
		nd_die(ND_EXIT_ERROR, "out of memory (buffer overflow)");
	if (need > b->cap) {
		size_t c = b->cap ? b->cap : 256;

		while (c < need)
			c = c * 2 > c ? c * 2 : need;
		b->p = nd_xrealloc(b->p, c);
		b->cap = c;
	}
}

void
nd_buf_add(nd_buf *b, const void *p, size_t n)
{
	nd_buf_reserve(b, n);
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
nd_buf_adds(nd_buf *b, const char *s)
{
	nd_buf_add(b, s, strlen(s));
}

void
nd_buf_addf(nd_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	nd_buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
nd_buf_free(nd_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
