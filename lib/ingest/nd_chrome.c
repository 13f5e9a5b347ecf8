#include "nd_chrome.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fuzz build makes blocks small (fast, and values straddle them). */
#ifdef ND_CHROME_BLOCK
#define BLOCK ((size_t)ND_CHROME_BLOCK)
#else
#define BLOCK ((size_t)4 << 20)
#endif

enum {
	S_START, S_TOP_FIRST, S_TOP_NEXT, S_ARR_FIRST, S_ARR_VALUE, S_ARR_NEXT,
	S_DONE, S_END
};

struct nd_chrome {
	nd_in *in;
	char *buf;
	size_t cap, len, pos;
	uint64_t base;		/* decompressed offset of buf[0] */
	size_t max;
	int eof;
	int state;
	int form;
	int in_object;		/* the array being read is traceEvents */
	int seen_events;
	int seen_schema;
	int unclosed;
	nd_buf key;		/* copy of the current member name */
	nd_err err;		/* the first error; the document then ends */
};

nd_chrome *
nd_chrome_open(nd_in *in)
{
	nd_chrome *c = nd_xcalloc(1, sizeof *c);

	c->in = in;
	c->cap = BLOCK;
	c->buf = nd_xmalloc(c->cap);
	c->max = ND_CHROME_MAX_VALUE;
	c->state = S_START;
	nd_err_clear(&c->err);
	/* a number of any length is valid JSON; the caller must not copy
	 * one longer than ND_JSON_MAX_NUMBER into a stream as a number */
	nd_json_long_numbers = 1;
	return c;
}

void
nd_chrome_set_max(nd_chrome *c, size_t max_value)
{
	c->max = max_value < 64 ? 64 : max_value;
}

void
nd_chrome_close(nd_chrome *c)
{
	if (c == NULL)
		return;
	free(c->buf);
	nd_buf_free(&c->key);
	free(c);
}

int
nd_chrome_form(const nd_chrome *c)
{
	return c->form;
}

int
nd_chrome_unclosed(const nd_chrome *c)
{
	return c->unclosed;
}

uint64_t
nd_chrome_offset(const nd_chrome *c, const char *p)
{
	return c->base + (uint64_t)(p - c->buf);
}

/* Offsets are 0-based here and 1-based in messages. */
static int
verror(const nd_chrome *c, nd_err *e, uint64_t off, const char *fmt,
    va_list ap)
{
	return nd_err_vbyte(e, nd_in_name(c->in), off + 1, fmt, ap);
}

int
nd_chrome_error(const nd_chrome *c, nd_err *e, uint64_t off,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(c, e, off, fmt, ap);
	va_end(ap);
	return -1;
}

const nd_err *
nd_chrome_err(const nd_chrome *c)
{
	return c->err.code != 0 ? &c->err : NULL;
}

/* After an error the document ends: no more input, and nd_chrome_next
 * returns ND_CHROME_END. */
static void
end_document(nd_chrome *c)
{
	c->eof = 1;
	c->pos = c->len;
	c->state = S_END;
}

/* The reader's error at offset off.  Returns -1. */
static int ND_PRINTF(3, 4)
fail(nd_chrome *c, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(c, &c->err, off, fmt, ap);
	va_end(ap);
	end_document(c);
	return -1;
}

/* Make room and read more: drop what was consumed (before pos), grow the
 * buffer when the unconsumed part fills it, then fill it up. */
static void
more(nd_chrome *c)
{
	if (c->pos > 0) {
		memmove(c->buf, c->buf + c->pos, c->len - c->pos);
		c->base += c->pos;
		c->len -= c->pos;
		c->pos = 0;
	}
	if (c->cap > 2 * BLOCK && c->len < BLOCK / 2) {
		c->buf = nd_xrealloc(c->buf, BLOCK);
		c->cap = BLOCK;
	}
	if (c->len == c->cap) {
		c->cap *= 2;
		c->buf = nd_xrealloc(c->buf, c->cap);
	}
	while (c->len < c->cap && !c->eof) {
		size_t r = nd_in_read(c->in, c->buf + c->len, c->cap - c->len);

		if (r == 0 && nd_in_err(c->in) != NULL) {
			nd_err_copy(&c->err, nd_in_err(c->in));
			end_document(c);
			return;
		}
		if (r == 0)
			c->eof = 1;
		c->len += r;
	}
}

/* Skip white space; the next byte, or -1 at the end of the input. */
static int
next_char(nd_chrome *c)
{
	for (;;) {
		while (c->pos < c->len) {
			unsigned char ch = (unsigned char)c->buf[c->pos];

			if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t')
				return ch;
			c->pos++;
		}
		if (c->eof)
			return -1;
		more(c);
	}
}

static const char *
describe(int ch, char tmp[16])
{
	if (ch < 0)
		return "the end of the input";
	if (ch >= 0x20 && ch < 0x7f)
		snprintf(tmp, 16, "'%c'", ch);
	else
		snprintf(tmp, 16, "byte 0x%02x", ch);
	return tmp;
}

static int
fail_here(nd_chrome *c, const char *what)
{
	char tmp[16];
	int ch = c->pos < c->len ? (unsigned char)c->buf[c->pos] : -1;

	return fail(c, c->base + c->pos, "%s, found %s%s", what,
	    describe(ch, tmp), ch < 0 ? " (truncated file?)" : "");
}

/* Validate the value at pos.  1 with v filled and pos past it; 0 when it
 * is larger than the limit and may_skip (pos unchanged); -1 on an error. */
static int
parse_value(nd_chrome *c, nd_jval *v, int may_skip, const char *what)
{
	for (;;) {
		const char *p = c->buf + c->pos, *end = c->buf + c->len;
		nd_jerr e;

		if (nd_json_value(&p, c->buf, end, v, &e) == 0) {
			/* A number or literal that ends with the buffer may be
			 * cut; anything else ends with its own delimiter. */
			if (p < end || c->eof) {
				c->pos = (size_t)(p - c->buf);
				return 1;
			}
		} else if (c->eof || e.off + 8 < c->len) {
			char near[40];
			size_t n = 0;

			/* A little of the text there, printable ASCII only. */
			for (size_t i = e.off; i < c->len && n < 24; i++) {
				unsigned char ch = (unsigned char)c->buf[i];

				if (ch == '\n' || ch == '\r' || ch == '\t')
					ch = ' ';
				near[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
			}
			near[n] = '\0';
			if (e.off >= c->len)
				return fail(c, c->base + e.off, "invalid JSON: "
				    "%s%s", e.msg, c->eof ? " (truncated file?)" : "");
			return fail(c, c->base + e.off, "invalid JSON: %s; text "
			    "there: %s", e.msg, near);
		}
		if (c->len - c->pos >= c->max) {
			if (may_skip)
				return 0;
			return fail(c, c->base + c->pos, "%s larger than "
			    "%zu MiB: refusing to hold it in memory", what,
			    c->max >> 20);
		}
		more(c);
		if (c->err.code != 0)
			return -1;
	}
}

/* Structural skip of a value too large to keep (not validated). */
static void
skip_value(nd_chrome *c)
{
	int depth = 0, instr = 0, esc = 0, scalar;
	unsigned char first = (unsigned char)c->buf[c->pos];

	scalar = first != '{' && first != '[' && first != '"';
	for (;;) {
		if (c->pos == c->len) {
			if (c->eof) {
				fail(c, c->base + c->pos, "unexpected end of input "
				    "in a skipped value (truncated file?)");
				return;
			}
			more(c);
			continue;
		}
		{
			unsigned char ch = (unsigned char)c->buf[c->pos];

			if (scalar) {
				if (ch == ',' || ch == '}' || ch == ']' ||
				    ch == ' ' || ch == '\n' || ch == '\r' ||
				    ch == '\t')
					return;
				c->pos++;
				continue;
			}
			c->pos++;
			if (instr) {
				if (esc)
					esc = 0;
				else if (ch == '\\')
					esc = 1;
				else if (ch == '"') {
					instr = 0;
					if (depth == 0)
						return;
				}
			} else if (ch == '"')
				instr = 1;
			else if (ch == '{' || ch == '[')
				depth++;
			else if (ch == '}' || ch == ']') {
				if (--depth == 0)
					return;
			}
		}
	}
}

static void
close_array(nd_chrome *c)
{
	c->pos++;
	if (c->in_object) {
		c->in_object = 0;
		c->state = S_TOP_NEXT;
	} else
		c->state = S_DONE;
}

/* A top-level member: its name, then the value (traceEvents switches to
 * array reading).  1 when it produced an item, -1 on an error. */
static int
member(nd_chrome *c, nd_chrome_item *it)
{
	nd_jval key;
	uint64_t key_off;
	int ch, got;

	if (next_char(c) != '"')
		return fail_here(c, "expected a member name (a string)");
	key_off = c->base + c->pos;
	if (parse_value(c, &key, 0, "member name") < 0)
		return -1;
	nd_buf_reset(&c->key);
	nd_buf_add(&c->key, key.raw, key.len);
	it->key = key;
	it->key.raw = c->key.p;
	if ((ch = next_char(c)) != ':')
		return fail_here(c, "expected ':' after a member name");
	c->pos++;
	ch = next_char(c);
	if (ch < 0)
		return fail_here(c, "expected a value");
	c->state = S_TOP_NEXT;
	if (nd_jstr_eq(&it->key, "traceEvents")) {
		char tmp[16];

		if (c->seen_events)
			return fail(c, key_off, "a second \"traceEvents\" "
			    "member");
		if (ch != '[')
			return fail(c, c->base + c->pos, "\"traceEvents\" is "
			    "not an array (found %s)", describe(ch, tmp));
		c->seen_events = 1;
		c->in_object = 1;
		c->pos++;
		c->state = S_ARR_FIRST;
		return 0;
	}
	if (nd_jstr_eq(&it->key, "schema"))
		c->seen_schema = 1;
	it->kind = ND_CHROME_MEMBER;
	if ((got = parse_value(c, &it->val, 1, "member")) < 0)
		return -1;
	if (got) {
		it->off = c->base + (uint64_t)(it->val.raw - c->buf);
		it->size = it->val.len;
	} else {
		it->off = c->base + c->pos;
		it->val.type = ND_JNONE;
		skip_value(c);
		if (c->err.code != 0)
			return -1;
		it->size = c->base + c->pos - it->off;
	}
	return 1;
}

/* The first byte is neither '{' nor '[': say what the input is. */
static void
not_a_trace(nd_chrome *c, int ch)
{
	if (ch == 0x80 && c->len - c->pos >= 2 &&
	    c->buf[c->pos + 1] >= 2 && c->buf[c->pos + 1] <= 5)
		fail(c, c->base + c->pos, "not a Chrome trace: a pickle (a "
		    "PyTorch memory snapshot? trace-mem reads it)");
	else
		fail_here(c, "not a Chrome trace: expected '{' or '['");
}

/* The document's first byte: '{' or '[' (after a byte order mark). */
static void
start(nd_chrome *c)
{
	int ch;

	while (c->len - c->pos < 3 && !c->eof)
		more(c);
	if (c->len - c->pos >= 3 &&
	    memcmp(c->buf + c->pos, "\xef\xbb\xbf", 3) == 0)
		c->pos += 3;	/* UTF-8 byte order mark */
	ch = next_char(c);
	if (ch < 0) {
		fail(c, c->base + c->pos, "empty input: not a Chrome trace");
		return;
	}
	if (ch != '{' && ch != '[') {
		not_a_trace(c, ch);
		return;
	}
	c->form = ch;
	c->pos++;
	c->state = ch == '{' ? S_TOP_FIRST : S_ARR_FIRST;
}

/* In the top-level object: its end, or the next member (member()). */
static int
top_next(nd_chrome *c, nd_chrome_item *it)
{
	int ch = next_char(c);

	if (ch == '}') {
		if (!c->seen_events)
			return fail(c, c->base + c->pos, "no \"traceEvents\" "
			    "member: not a Chrome trace%s", c->seen_schema ?
			    " (an ndtrace stream? those are read by the "
			    "trace-* programs)" : "");
		c->pos++;
		c->state = S_DONE;
		return 0;
	}
	if (c->state == S_TOP_NEXT) {
		if (ch != ',')
			return fail_here(c, "expected ',' or '}' after a "
			    "top-level member");
		c->pos++;
	}
	return member(c, it);
}

int
nd_chrome_next(nd_chrome *c, nd_chrome_item *it)
{
	int ch;

	memset(it, 0, sizeof *it);
	for (;;) {
		if (c->err.code != 0)
			c->state = S_END;
		switch (c->state) {
		case S_START:
			start(c);
			break;
		case S_TOP_FIRST:
		case S_TOP_NEXT:
			if (top_next(c, it) > 0)
				return it->kind;
			break;
		case S_ARR_FIRST:
			ch = next_char(c);
			if (ch == ']') {
				close_array(c);
				break;
			}
			c->state = S_ARR_VALUE;
			break;
		case S_ARR_VALUE:
			ch = next_char(c);
			if (ch < 0 && !c->in_object) {
				c->unclosed = 1;
				c->state = S_END;
				return ND_CHROME_END;
			}
			if (ch < 0 || ch == ']') {
				fail_here(c, c->in_object ? "expected an event "
				    "in \"traceEvents\"" : "expected an event");
				break;
			}
			if (parse_value(c, &it->val, 0, "event") < 0)
				break;
			it->kind = ND_CHROME_EVENT;
			it->off = c->base + (uint64_t)(it->val.raw - c->buf);
			it->size = it->val.len;
			c->state = S_ARR_NEXT;
			return ND_CHROME_EVENT;
		case S_ARR_NEXT:
			ch = next_char(c);
			if (ch < 0 && !c->in_object) {
				c->unclosed = 1;
				c->state = S_END;
				return ND_CHROME_END;
			}
			if (ch == ']') {
				close_array(c);
				break;
			}
			if (ch != ',') {
				fail_here(c, c->in_object ? "expected ',' or "
				    "']' after an event in \"traceEvents\"" :
				    "expected ',' or ']' after an event");
				break;
			}
			c->pos++;
			c->state = S_ARR_VALUE;
			break;
		case S_DONE:
			if (next_char(c) >= 0) {
				fail_here(c, "trailing data after the JSON "
				    "document");
				break;
			}
			c->state = S_END;
			return ND_CHROME_END;
		default:
			return ND_CHROME_END;
		}
	}
}
