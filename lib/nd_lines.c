#include "nd_lines.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK (1 << 20)

struct nd_lines {
	nd_in *in;
	char *buf;
	size_t cap, start, end;	/* unread bytes are buf[start..end) */
	int eof;
	uint64_t lineno;
	uint64_t base_off;	/* input offset of buf[0] */
	uint64_t line_off;
	size_t max;
};

nd_lines *
nd_lines_open(nd_in *in)
{
	nd_lines *lr = nd_xcalloc(1, sizeof *lr);

	lr->in = in;
	lr->cap = 4 * CHUNK;
	lr->buf = nd_xmalloc(lr->cap + 1);
	lr->max = ND_LINES_MAX_DEFAULT;
	return lr;
}

void
nd_lines_set_max(nd_lines *lr, size_t max)
{
	lr->max = max;
}

char *
nd_lines_next(nd_lines *lr, size_t *len, int *nonl)
{
	size_t scanned = 0;

	*nonl = 0;
	for (;;) {
		char *s = lr->buf + lr->start;
		char *nl = memchr(s + scanned, '\n', lr->end - lr->start - scanned);

		if (nl != NULL) {
			size_t n = (size_t)(nl - s);

			if (n > lr->max)
				goto toolong;
			lr->line_off = lr->base_off + lr->start;
			lr->start += n + 1;
			lr->lineno++;
			if (n > 0 && s[n - 1] == '\r')
				n--;
			s[n] = '\0';
			*len = n;
			return s;
		}
		scanned = lr->end - lr->start;
		if (scanned > lr->max)
			goto toolong;
		if (lr->eof) {
			if (scanned == 0)
				return NULL;
			lr->line_off = lr->base_off + lr->start;
			lr->start = lr->end;
			lr->lineno++;
			s[scanned] = '\0';
			*len = scanned;
			*nonl = 1;
			return s;
		}
		/* Move the partial line to the front, grow if needed, refill. */
		if (lr->start > 0) {
			memmove(lr->buf, s, scanned);
			lr->base_off += lr->start;
			lr->start = 0;
			lr->end = scanned;
		}
		if (lr->cap - lr->end < CHUNK) {
			lr->cap *= 2;
			lr->buf = nd_xrealloc(lr->buf, lr->cap + 1);
		}
		{
			size_t r = nd_in_read(lr->in, lr->buf + lr->end,
			    lr->cap - lr->end);

			if (r == 0)
				lr->eof = 1;
			lr->end += r;
		}
	}
toolong:
	nd_die(ND_EXIT_ERROR, "%s:%llu: line longer than %zu bytes",
	    nd_in_name(lr->in), (unsigned long long)lr->lineno + 1, lr->max);
}

uint64_t
nd_lines_lineno(const nd_lines *lr)
{
	return lr->lineno;
}

uint64_t
nd_lines_offset(const nd_lines *lr)
{
	return lr->line_off;
}

void
nd_lines_close(nd_lines *lr)
{
	if (lr == NULL)
		return;
	free(lr->buf);
	free(lr);
}
