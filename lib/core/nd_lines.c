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
	char cut;		/* the byte the current line's NUL replaced */
	size_t cut_at;		/* and where, in buf */
	nd_err err;		/* the first error; nd_lines_next then ends */
};

nd_lines *
nd_lines_open(nd_in *in)
{
	nd_lines *lr = nd_xcalloc(1, sizeof *lr);

	lr->in = in;
	lr->cap = 4 * CHUNK;
	lr->buf = nd_xmalloc(lr->cap + 1);
	lr->max = ND_LINES_MAX_DEFAULT;
	nd_err_clear(&lr->err);
	return lr;
}

const nd_err *
nd_lines_err(const nd_lines *lr)
{
	return lr->err.code != 0 ? &lr->err : NULL;
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
	if (lr->err.code != 0)
		return NULL;
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
			lr->cut = s[n];
			lr->cut_at = (size_t)(s + n - lr->buf);
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
			lr->cut = s[scanned];
			lr->cut_at = (size_t)(s + scanned - lr->buf);
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

			if (r == 0 && nd_in_err(lr->in) != NULL) {
				nd_err_copy(&lr->err, nd_in_err(lr->in));
				return NULL;
			}
			if (r == 0)
				lr->eof = 1;
			lr->end += r;
		}
	}
toolong:
	if (lr->lineno == 0 && nd_lines_foreign(lr))
		return NULL;
	nd_err_line(&lr->err, nd_in_name(lr->in), lr->lineno + 1,
	    "line longer than %zu bytes", lr->max);
	return NULL;
}

/*
 * Recognising the documents people feed a filter before converting them.
 * Called only once line 1 has failed as a record, so a valid stream can
 * never be mistaken; the buffer then still holds the input from byte 0.
 */

static size_t
skip_ws(const unsigned char *p, size_t i, size_t n)
{
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' ||
	    p[i] == '\n'))
		i++;
	return i;
}

static int
has_key(const unsigned char *p, size_t i, size_t n, const char *key)
{
	size_t k = strlen(key);

	return n - i >= k && memcmp(p + i, key, k) == 0;
}

/* A protobuf varint at p[*i..n): 0 and the value, or -1. */
static int
varint(const unsigned char *p, size_t *i, size_t n, uint64_t *v)
{
	*v = 0;
	for (int sh = 0; sh < 64 && *i < n; sh += 7) {
		unsigned char c = p[(*i)++];

		*v |= (uint64_t)(c & 0x7f) << sh;
		if ((c & 0x80) == 0)
			return 0;
	}
	return -1;
}

/* Chrome/Kineto JSON: an object whose first key is not "type" (an ndtrace
 * record) but a Chrome member, or with "traceEvents" in what was read; or
 * an array of event objects (the legacy torch export). */
static int
is_chrome(const unsigned char *p, size_t n)
{
	static const char *const keys[] = { "\"traceEvents\"",
		"\"schemaVersion\"", "\"displayTimeUnit\"",
		"\"deviceProperties\"", "\"distributedInfo\"",
		"\"otherData\"", "\"systemTraceEvents\"", "\"metadata\"" };
	size_t i = 0;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	i = skip_ws(p, i, n);
	if (i < n && p[i] == '[') {
		i = skip_ws(p, i + 1, n);
		return i < n && (p[i] == '{' || p[i] == ']');
	}
	if (i >= n || p[i] != '{')
		return 0;
	i = skip_ws(p, i + 1, n);
	if (has_key(p, i, n, "\"type\""))
		return 0;
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (has_key(p, i, n, keys[k]))
			return 1;
	return memmem(p, n, "\"traceEvents\"", 13) != NULL;
}

/* An XSpace: field 1 (a plane, length-delimited) whose first member is one
 * of XPlane's fields. */
static int
is_xplane(const unsigned char *p, size_t n)
{
	size_t i = 1;
	uint64_t len;

	if (n < 3 || p[0] != 0x0a || varint(p, &i, n, &len) != 0 || i >= n)
		return 0;
	if (len == 0)
		return p[i] == 0x0a || p[i] == 0x12 || p[i] == 0x1a ||
		    p[i] == 0x22;
	return p[i] == 0x08 || p[i] == 0x12 || p[i] == 0x1a ||
	    p[i] == 0x22 || p[i] == 0x2a || p[i] == 0x32;
}

/* The file name as a shell word (quoted when it needs to be). */
static void
shell_word(nd_buf *b, const char *s)
{
	if (s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-+.,/:=@%")] == '\0' && *s != '\0') {
		nd_buf_adds(b, s);
		return;
	}
	nd_buf_addc(b, '\'');
	for (; *s != '\0'; s++)
		if (*s == '\'')
			nd_buf_adds(b, "'\\''");
		else
			nd_buf_addc(b, *s);
	nd_buf_addc(b, '\'');
}

/* What trace-mem reads: a memory timeline export (a JSON array of arrays)
 * or a pickle of protocol 2 to 5 (a memory snapshot); NULL otherwise. */
static const char *
mem_input(const unsigned char *p, size_t n)
{
	size_t i = skip_ws(p, 0, n);

	if (n >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5)
		return "PyTorch memory snapshot (a pickle)";
	if (i < n && p[i] == '[') {
		i = skip_ws(p, i + 1, n);
		if (i < n && p[i] == '[')
			return "PyTorch memory timeline (a JSON array of "
			    "arrays)";
	}
	return NULL;
}

int
nd_lines_foreign(nd_lines *lr)
{
	const unsigned char *p = (const unsigned char *)lr->buf;
	const char *what, *conv, *name = nd_in_name(lr->in), *mem = NULL;
	size_t n = lr->end;
	int chrome, xplane, piped = strcmp(name, "<stdin>") == 0;
	nd_buf hint = ND_BUF_INIT;

	if (lr->lineno > 1 || lr->base_off != 0)
		return 0;
	if (lr->lineno == 1)
		lr->buf[lr->cut_at] = lr->cut;
	chrome = is_chrome(p, n);
	xplane = !chrome && is_xplane(p, n);
	if (!chrome && !xplane)
		mem = mem_input(p, n);
	if (lr->lineno == 1)
		lr->buf[lr->cut_at] = '\0';
	if (mem != NULL) {
		/* trace-mem reads it, from a file or a pipe */
		nd_buf_adds(&hint, piped ? "... | trace-mem" : "trace-mem ");
		if (!piped)
			shell_word(&hint, name);
		nd_err_set(&lr->err, name, ND_ERR_NONE, ND_ERR_NONE, "%s: %s%s, "
		    "not an ndtrace stream: give it to trace-mem: %s", name,
		    nd_in_is_gzip(lr->in) ? "a gzipped " : "a ", mem, hint.p);
		nd_buf_free(&hint);
		return 1;
	}
	if (!chrome && !xplane)
		return 0;
	what = chrome ? "Chrome/Kineto trace JSON" : "XPlane protobuf";
	conv = chrome ? "chrome2ndjson" : "xplane2ndjson";
	if (piped) {
		nd_buf_adds(&hint, "... | ");
		nd_buf_adds(&hint, conv);
	} else {
		nd_buf_adds(&hint, conv);
		nd_buf_addc(&hint, ' ');
		shell_word(&hint, name);
	}
	nd_err_set(&lr->err, name, ND_ERR_NONE, ND_ERR_NONE, "%s: %s%s, not "
	    "an ndtrace stream: convert it first: %s | %s", name,
	    nd_in_is_gzip(lr->in) ? "a gzipped " : chrome ? "a " : "an ", what,
	    hint.p, nd_progname);
	nd_buf_free(&hint);
	return 1;
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
