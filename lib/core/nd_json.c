#include "nd_json.h"
#include "nd_util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---------- decoding ---------- */

/* Byte classes inside strings: 0 plain ASCII, 1 quote/backslash, 2 control
 * character, 3 UTF-8 lead or continuation byte. */
static const unsigned char str_class[256] = {
	2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,
	0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
	0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,
	0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
	3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3, 3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,
	3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3, 3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,
	3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3, 3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,
	3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3, 3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,
};

#define FAIL(at, m) do { e->off = (size_t)((at) - base); e->msg = (m); \
	return -1; } while (0)

/* Length of the valid UTF-8 sequence at p (1..4), 0 if invalid. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		if (end - p >= 2 && (p[1] & 0xc0) == 0x80)
			return 2;
		return 0;
	}
	if (c >= 0xe0 && c <= 0xef) {
		if (end - p < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && p[1] < 0xa0)
			return 0;	/* overlong */
		if (c == 0xed && p[1] >= 0xa0)
			return 0;	/* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (end - p < 4 || (p[1] & 0xc0) != 0x80 ||
		    (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && p[1] < 0x90)
			return 0;
		if (c == 0xf4 && p[1] >= 0x90)
			return 0;
		return 4;
	}
	return 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static inline __attribute__((always_inline)) int
scan_string(const char **pp, const char *base, const char *end, nd_jval *v,
    nd_jerr *e)
{
	const unsigned char *p = (const unsigned char *)*pp + 1;
	const unsigned char *ue = (const unsigned char *)end;
	int esc = 0;

	for (;;) {
#if defined(__SSE2__)
		/* Sixteen bytes at a time: a signed compare with 0x20 flags
		 * both control characters and every non-ASCII byte, so one
		 * mask finds the first byte that needs a look. */
		while (ue - p >= 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)p);
			__m128i m = _mm_or_si128(_mm_or_si128(
			    _mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
			    _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
			    _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
			unsigned bits = (unsigned)_mm_movemask_epi8(m);

			if (bits != 0) {
				p += __builtin_ctz(bits);
				goto special;
			}
			p += 16;
		}
#endif
		/* Eight bytes at a time: the lowest flagged byte of the mask
		 * is exactly the first special one (quote, backslash, control
		 * or non-ASCII), so jump straight to it. */
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		while (ue - p >= 8) {
			uint64_t x, q, b, c, m;

			memcpy(&x, p, 8);
			q = x ^ 0x2222222222222222ULL;
			b = x ^ 0x5c5c5c5c5c5c5c5cULL;
			q = (q - 0x0101010101010101ULL) & ~q;
			b = (b - 0x0101010101010101ULL) & ~b;
			c = (x - 0x2020202020202020ULL) & ~x;
			m = (q | b | c | x) & 0x8080808080808080ULL;
			if (m != 0) {
				p += __builtin_ctzll(m) >> 3;
				goto special;
			}
			p += 8;
		}
#endif
		while (p < ue && str_class[*p] == 0)
			p++;
		if (p >= ue)
			FAIL(end, "unterminated string");
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
special:
#endif
		switch (str_class[*p]) {
		case 1:
			if (*p == '"') {
				p++;
				v->type = ND_JSTR;
				v->raw = *pp;
				v->len = (size_t)((const char *)p - *pp);
				v->esc = esc;
				*pp = (const char *)p;
				return 0;
			}
			esc = 1;
			if (p + 1 >= ue)
				FAIL(end, "unterminated string");
			switch (p[1]) {
			case '"': case '\\': case '/': case 'b': case 'f':
			case 'n': case 'r': case 't':
				p += 2;
				break;
			case 'u':
				if (ue - p < 6 || hexval(p[2]) < 0 ||
				    hexval(p[3]) < 0 || hexval(p[4]) < 0 ||
				    hexval(p[5]) < 0)
					FAIL((const char *)p, "invalid \\u escape in string");
				p += 6;
				break;
			default:
				FAIL((const char *)p, "invalid escape in string");
			}
			break;
		case 2:
			if (*p == 0)
				FAIL((const char *)p, "NUL byte in string");
			FAIL((const char *)p, "unescaped control character in string");
		default: {
			size_t n = utf8_len(p, ue);

			if (n == 0)
				FAIL((const char *)p, "invalid UTF-8 in string");
			p += n;
		}
		}
	}
}

int nd_json_long_numbers;

static inline __attribute__((always_inline)) int
scan_number(const char **pp, const char *base, const char *end, nd_jval *v,
    nd_jerr *e)
{
	const char *p = *pp, *s = p;

	if (p < end && *p == '-')
		p++;
	if (p >= end)
		FAIL(p, "invalid number");
	if (*p == 'I' && p > s)
		FAIL(s, "NaN and Infinity are not JSON");
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		FAIL(s, "invalid number");
	if (p < end && *p == '.') {
		p++;
		if (p >= end || *p < '0' || *p > '9')
			FAIL(p, "invalid number");
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			FAIL(p, "invalid number");
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p - s > ND_JSON_MAX_NUMBER && !nd_json_long_numbers)
		FAIL(s, "number too long");
	v->type = ND_JNUM;
	v->raw = s;
	v->len = (size_t)(p - s);
	v->esc = 0;
	*pp = p;
	return 0;
}

static inline const char *
skip_ws(const char *p, const char *end)
{
	if (ND_LIKELY(p < end && (unsigned char)*p > ' '))
		return p;	/* records have no white space between tokens */
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static inline __attribute__((always_inline)) int scan_value(const char **pp, const char *base, const char *end,
    nd_jval *v, nd_jerr *e, int depth);

/* The wanted key that k (a scanned key) is, or -1. */
static int
note_find(nd_jnote *note, const nd_jval *k)
{
	size_t n = k->len - 2;

	if (k->esc) {
		note->esc = 1;
		return -1;
	}
	/* most keys are ruled out by their length alone */
	if (n >= 32)
		return -1;
	for (unsigned i = note->bylen[n]; i > 0; i = note->next[i - 1]) {
		const char *w = note->want[i - 1].s, *c = k->raw + 1;
		size_t j = 0;

		while (j < n && w[j] == c[j])
			j++;
		if (j == n)
			return (int)i - 1;
	}
	return -1;
}

void
nd_jnote_init(nd_jnote *note, const nd_jkey *want, unsigned nwant)
{
	memset(note, 0, sizeof *note);
	note->want = want;
	note->nwant = nwant;
	for (unsigned i = nwant; i-- > 0;)
		if (want[i].n < 32) {
			note->next[i] = note->bylen[want[i].n];
			note->bylen[want[i].n] = (uint8_t)(i + 1);
		}
}

/* Written once, compiled twice: without notes (note a constant NULL, so
 * the hot path has no trace of them) and with. */
static inline __attribute__((always_inline)) int
scan_container_impl(const char **pp, const char *base, const char *end,
    nd_jval *v, nd_jerr *e, int depth, nd_jnote *note)
{
	const char *s = *pp, *p = s + 1;
	int obj = *s == '{';
	char close = obj ? '}' : ']';
	nd_jval sub;
	int ki = -1;

	if (depth >= ND_JSON_MAX_DEPTH)
		FAIL(s, "nesting too deep");
	p = skip_ws(p, end);
	if (p < end && *p == close) {
		p++;
		goto done;
	}
	for (;;) {
		p = skip_ws(p, end);
		if (obj) {
			if (p >= end)
				FAIL(end, "unexpected end of input in object");
			if (*p != '"')
				FAIL(p, "expected a string key");
			if (scan_string(&p, base, end, &sub, e) != 0)
				return -1;
			if (note != NULL)
				ki = note_find(note, &sub);
			p = skip_ws(p, end);
			if (p >= end)
				FAIL(end, "unexpected end of input in object");
			if (*p != ':')
				FAIL(p, "expected ':' after key");
			p++;
		}
		if (scan_value(&p, base, end, &sub, e, depth + 1) != 0)
			return -1;
		if (ki >= 0) {
			if (note->count[ki] == 0) {
				note->val[ki] = sub;
				note->count[ki] = 1;
			} else
				note->count[ki] = 2;
		}
		p = skip_ws(p, end);
		if (p >= end)
			FAIL(end, obj ? "unexpected end of input in object" :
			    "unexpected end of input in array");
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == close) {
			p++;
			break;
		}
		FAIL(p, obj ? "expected ',' or '}' in object" :
		    "expected ',' or ']' in array");
	}
done:
	v->type = obj ? ND_JOBJ : ND_JARR;
	v->raw = s;
	v->len = (size_t)(p - s);
	v->esc = 0;
	*pp = p;
	return 0;
}

static int
scan_container(const char **pp, const char *base, const char *end,
    nd_jval *v, nd_jerr *e, int depth)
{
	return scan_container_impl(pp, base, end, v, e, depth, NULL);
}

static int
scan_container_noting(const char **pp, const char *base, const char *end,
    nd_jval *v, nd_jerr *e, nd_jnote *note)
{
	return scan_container_impl(pp, base, end, v, e, 1, note);
}

static inline __attribute__((always_inline)) int
scan_value(const char **pp, const char *base, const char *end, nd_jval *v,
    nd_jerr *e, int depth)
{
	const char *p = skip_ws(*pp, end);

	*pp = p;
	if (p >= end)
		FAIL(p, "unexpected end of input");
	switch (*p) {
	case '"':
		return scan_string(pp, base, end, v, e);
	case '{':
	case '[':
		return scan_container(pp, base, end, v, e, depth);
	case 't':
		if (end - p >= 4 && memcmp(p, "true", 4) == 0) {
			v->type = ND_JTRUE;
			goto lit4;
		}
		break;
	case 'n':
		if (end - p >= 4 && memcmp(p, "null", 4) == 0) {
			v->type = ND_JNULL;
			goto lit4;
		}
		break;
	case 'f':
		if (end - p >= 5 && memcmp(p, "false", 5) == 0) {
			v->type = ND_JFALSE;
			v->raw = p;
			v->len = 5;
			v->esc = 0;
			*pp = p + 5;
			return 0;
		}
		break;
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return scan_number(pp, base, end, v, e);
	case 'N':
	case 'I':
		FAIL(p, "NaN and Infinity are not JSON");
	case '\0':
		FAIL(p, "NUL byte");
	}
	FAIL(p, "invalid JSON value");
lit4:
	v->raw = p;
	v->len = 4;
	v->esc = 0;
	*pp = p + 4;
	return 0;
}

int
nd_json_value(const char **p, const char *base, const char *end, nd_jval *v,
    nd_jerr *e)
{
	return scan_value(p, base, end, v, e, 0);
}

void
nd_jiter_init(nd_jiter *it, const nd_jval *obj, const char *base)
{
	it->p = obj->raw + 1;
	it->end = obj->raw + obj->len - 1;
	it->base = base;
	it->first = 1;
}

int
nd_jiter_next(nd_jiter *it, nd_jval *key, nd_jval *val, nd_jerr *e)
{
	const char *base = it->base;
	const char *p = skip_ws(it->p, it->end);

	if (p >= it->end)
		return 0;
	if (!it->first) {
		if (*p != ',')
			FAIL(p, "expected ','");
		p = skip_ws(p + 1, it->end);
	}
	it->first = 0;
	if (p >= it->end || *p != '"')
		FAIL(p, "expected a string key");
	if (scan_string(&p, base, it->end, key, e) != 0)
		return -1;
	p = skip_ws(p, it->end);
	if (p >= it->end || *p != ':')
		FAIL(p, "expected ':' after key");
	p++;
	if (scan_value(&p, base, it->end, val, e, 1) != 0)
		return -1;
	it->p = p;
	return 1;
}

int
nd_jobj_open(nd_jiter *it, const char *p, const char *end, const char *base,
    nd_jerr *e)
{
	p = skip_ws(p, end);
	if (p >= end)
		FAIL(p, "unexpected end of input");
	if (*p != '{')
		FAIL(p, "not an object");
	it->p = p + 1;
	it->end = end;
	it->base = base;
	it->first = 1;
	return 0;
}

static inline __attribute__((always_inline)) int
jobj_next(nd_jiter *it, nd_jval *key, nd_jval *val, nd_jerr *e,
    const char *on, size_t onlen, nd_jnote *note)
{
	const char *base = it->base, *end = it->end;
	const char *p = skip_ws(it->p, end);

	if (p >= end)
		FAIL(end, "unexpected end of input in object");
	if (*p == '}') {
		it->p = p + 1;
		return 0;
	}
	if (!it->first) {
		if (*p != ',')
			FAIL(p, "expected ',' or '}' in object");
		p = skip_ws(p + 1, end);
	}
	it->first = 0;
	if (p >= end)
		FAIL(end, "unexpected end of input in object");
	if (*p != '"')
		FAIL(p, "expected a string key");
	if (scan_string(&p, base, end, key, e) != 0)
		return -1;
	p = skip_ws(p, end);
	if (p >= end)
		FAIL(end, "unexpected end of input in object");
	if (*p != ':')
		FAIL(p, "expected ':' after key");
	p++;
	if (on != NULL && key->len == onlen + 2 && !key->esc &&
	    memcmp(key->raw + 1, on, onlen) == 0 &&
	    (p = skip_ws(p, end)) < end && *p == '{') {
		memset(note->count, 0, sizeof note->count);
		note->esc = 0;
		if (scan_container_noting(&p, base, end, val, e, note) != 0)
			return -1;
		it->p = p;
		return 2;
	}
	if (scan_value(&p, base, end, val, e, 1) != 0)
		return -1;
	it->p = p;
	return 1;
}

int
nd_jobj_next(nd_jiter *it, nd_jval *key, nd_jval *val, nd_jerr *e)
{
	return jobj_next(it, key, val, e, NULL, 0, NULL);
}

int
nd_jobj_next_noting(nd_jiter *it, nd_jval *key, nd_jval *val, nd_jerr *e,
    const char *on, size_t onlen, nd_jnote *note)
{
	return jobj_next(it, key, val, e, on, onlen, note);
}

void
nd_jaiter_init(nd_jiter *it, const nd_jval *arr, const char *base)
{
	nd_jiter_init(it, arr, base);
}

int
nd_jaiter_next(nd_jiter *it, nd_jval *val, nd_jerr *e)
{
	const char *base = it->base;
	const char *p = skip_ws(it->p, it->end);

	if (p >= it->end)
		return 0;
	if (!it->first) {
		if (*p != ',')
			FAIL(p, "expected ','");
		p++;
	}
	it->first = 0;
	if (scan_value(&p, base, it->end, val, e, 1) != 0)
		return -1;
	it->p = p;
	return 1;
}

static void
put_utf8(nd_buf *b, unsigned cp)
{
	char t[4];
	size_t n;

	if (cp < 0x80) {
		t[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		t[0] = (char)(0xc0 | cp >> 6);
		t[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		t[0] = (char)(0xe0 | cp >> 12);
		t[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		t[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		t[0] = (char)(0xf0 | cp >> 18);
		t[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		t[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		t[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	nd_buf_add(b, t, n);
}

static unsigned
hex4(const char *p)
{
	return (unsigned)(hexval(p[0]) << 12 | hexval(p[1]) << 8 |
	    hexval(p[2]) << 4 | hexval(p[3]));
}

void
nd_json_unescape(const nd_jval *v, nd_buf *out)
{
	const char *p = v->raw + 1, *end = v->raw + v->len - 1;

	if (!v->esc) {
		nd_buf_add(out, p, (size_t)(end - p));
		return;
	}
	nd_buf_reserve(out, (size_t)(end - p));
	while (p < end) {
		const char *q = memchr(p, '\\', (size_t)(end - p));

		if (q == NULL) {
			nd_buf_add(out, p, (size_t)(end - p));
			break;
		}
		nd_buf_add(out, p, (size_t)(q - p));
		switch (q[1]) {
		case 'b': nd_buf_addc(out, '\b'); break;
		case 'f': nd_buf_addc(out, '\f'); break;
		case 'n': nd_buf_addc(out, '\n'); break;
		case 'r': nd_buf_addc(out, '\r'); break;
		case 't': nd_buf_addc(out, '\t'); break;
		case 'u': {
			unsigned cp = hex4(q + 2);

			p = q + 6;
			if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 &&
			    p[0] == '\\' && p[1] == 'u') {
				unsigned lo = hex4(p + 2);

				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					    (lo - 0xdc00);
					p += 6;
				}
			}
			/* A lone surrogate cannot be UTF-8: replace it. */
			if (cp >= 0xd800 && cp < 0xe000)
				cp = 0xfffd;
			put_utf8(out, cp);
			continue;
		}
		default: nd_buf_addc(out, q[1]); break;
		}
		p = q + 2;
	}
}

char *
nd_jstr_dup(const nd_jval *v)
{
	nd_buf b = ND_BUF_INIT;

	if (v == NULL || v->type != ND_JSTR)
		return NULL;
	nd_json_unescape(v, &b);
	if (b.p == NULL)
		return nd_xstrdup("");
	return b.p;	/* the buffer is the string: hand it over */
}

int
nd_jstr_eq(const nd_jval *v, const char *s)
{
	size_t n = strlen(s);

	if (v->type != ND_JSTR)
		return 0;
	if (!v->esc)
		return v->len - 2 == n && memcmp(v->raw + 1, s, n) == 0;
	{
		nd_buf b = ND_BUF_INIT;
		int eq;

		nd_json_unescape(v, &b);
		eq = b.len == n && memcmp(b.p, s, n) == 0;
		nd_buf_free(&b);
		return eq;
	}
}

int
nd_json_int(const nd_jval *v, int64_t *out)
{
	const char *p = v->raw, *end = v->raw + v->len;
	int neg = 0;
	uint64_t x = 0;

	if (v->type != ND_JNUM)
		return -1;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (end - p <= 15) {
		/* below 10^15 < 2^53: no overflow to watch for */
		for (; p < end; p++) {
			unsigned d = (unsigned)(unsigned char)*p - '0';

			if (d > 9)
				return -1;
			x = x * 10 + d;
		}
	} else
		for (; p < end; p++) {
			if (*p < '0' || *p > '9')
				return -1;
			x = x * 10 + (uint64_t)(*p - '0');
			if (x > (uint64_t)ND_JSON_MAX_SAFE_INT)
				return -1;
		}
	*out = neg ? -(int64_t)x : (int64_t)x;
	return 0;
}

int
nd_json_int64(const nd_jval *v, int64_t *out)
{
	const char *p = v->raw, *end = v->raw + v->len;
	int neg = 0;
	uint64_t x = 0;

	if (v->type != ND_JNUM)
		return -1;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (x > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -1;
	*out = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

/* The double of a number whose digits (leading zeros aside) make at most
 * 2^53 and whose power of ten is within 10^+-22, both exact as doubles, so
 * one multiply or divide rounds once, as strtod does (Clinger's fast path:
 * integer args such as flops and bytes need no strtod).  1 with *out, 0
 * when the number needs strtod. */
static int
double_fast(const char *p, const char *end, double *out)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
	};
	uint64_t m = 0;
	int neg = 0, eneg = 0, nd = 0;
	long e = 0, x = 0;
	double d;

#if FLT_EVAL_METHOD != 0
	return 0;	/* extended precision would round twice */
#endif
	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	for (int frac = 0; p < end; p++) {
		unsigned c = (unsigned)(unsigned char)*p - '0';

		if (c > 9) {
			if (*p != '.' || frac)
				break;
			frac = 1;
			continue;
		}
		if (++nd > 19)
			return 0;	/* m could overflow */
		m = m * 10 + c;
		e -= frac;
	}
	if (m > (uint64_t)ND_JSON_MAX_SAFE_INT)
		return 0;
	if (p < end) {
		if (*p != 'e' && *p != 'E')
			return 0;
		if (++p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		for (; p < end; p++) {
			if (*p < '0' || *p > '9' || x > 1000)
				return 0;
			x = x * 10 + (*p - '0');
		}
		e += eneg ? -x : x;
	}
	if (m == 0)
		d = 0;
	else if (e < -22 || e > 22)
		return 0;
	else
		d = e < 0 ? (double)m / p10[-e] : (double)m * p10[e];
	*out = neg ? -d : d;
	return 1;
}

double
nd_json_double(const nd_jval *v)
{
	char tmp[512];
	size_t n = v->len < sizeof tmp - 1 ? v->len : sizeof tmp - 1;
	double d;

	if (v->type == ND_JNUM && double_fast(v->raw, v->raw + v->len, &d))
		return d;
	memcpy(tmp, v->raw, n);
	tmp[n] = '\0';
	return strtod(tmp, NULL);
}

int
nd_json_fixed(const char *s, size_t n, int scale, int64_t *out)
{
	const char *p = s, *end = s + n;
	int neg = 0, frac = 0, ndig = 0, seen = 0;
	long exp10 = 0, shift;
	char dig[40];
	__int128 x = 0;
	const __int128 lim = (__int128)INT64_MAX;

	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	/* Mantissa digits (leading zeros skipped, at most 38 kept) and the
	 * power of ten they are scaled by. */
	for (; p < end && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.') {
			if (frac)
				return -1;
			frac = 1;
			continue;
		}
		if (*p < '0' || *p > '9')
			return -1;
		seen = 1;
		if (ndig == 0 && *p == '0') {
			if (frac)
				exp10--;
			continue;
		}
		if (ndig < 38) {
			dig[ndig++] = *p;
			if (frac)
				exp10--;
		} else if (!frac)
			exp10++;
	}
	if (!seen)
		return -1;
	if (p < end) {
		char tmp[16];
		size_t en = (size_t)(end - p - 1);
		char *ep;
		long e;

		if (en == 0 || en >= sizeof tmp)
			return -1;
		memcpy(tmp, p + 1, en);
		tmp[en] = '\0';
		e = strtol(tmp, &ep, 10);
		if (*ep != '\0' || e > 400 || e < -400)
			return -1;
		exp10 += e;
	}
	shift = exp10 + scale;
	if (shift >= 0) {
		for (int i = 0; i < ndig; i++) {
			x = x * 10 + (dig[i] - '0');
			if (x > lim)
				return -1;
		}
		for (; shift > 0 && x != 0; shift--) {
			x *= 10;
			if (x > lim)
				return -1;
		}
	} else {
		/* Keep the digits above the cut; the first one below it rounds
		 * (half away from zero). */
		long keep = ndig + shift;

		for (long i = 0; i < keep; i++) {
			x = x * 10 + (dig[i] - '0');
			if (x > lim)
				return -1;
		}
		if (keep >= 0 && keep < ndig && dig[keep] >= '5')
			x++;
	}
	*out = neg ? -(int64_t)x : (int64_t)x;
	return 0;
}

/* ---------- encoding ---------- */

static const char hexdig[] = "0123456789abcdef";

void
nd_json_put_str(nd_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + n;
	const unsigned char *q = p;

	nd_buf_reserve(b, n + 2);
	b->p[b->len++] = '"';
	/* the usual case, nothing to escape: one copy */
	while (q < end && str_class[*q] == 0)
		q++;
	if (q == end) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
		b->p[b->len++] = '"';
		b->p[b->len] = '\0';
		return;
	}
	while (p < end) {
		const unsigned char *q = p;

		while (q < end && str_class[*q] == 0)
			q++;
		if (q > p) {
			nd_buf_add(b, p, (size_t)(q - p));
			p = q;
			if (p >= end)
				break;
		}
		switch (str_class[*p]) {
		case 1: {
			char t[2] = { '\\', (char)*p };
			nd_buf_add(b, t, 2);
			p++;
			break;
		}
		case 2: {
			char t[6];
			size_t tn = 2;

			t[0] = '\\';
			switch (*p) {
			case '\n': t[1] = 'n'; break;
			case '\t': t[1] = 't'; break;
			case '\r': t[1] = 'r'; break;
			case '\b': t[1] = 'b'; break;
			case '\f': t[1] = 'f'; break;
			default:
				t[1] = 'u'; t[2] = '0'; t[3] = '0';
				t[4] = hexdig[*p >> 4]; t[5] = hexdig[*p & 15];
				tn = 6;
			}
			nd_buf_add(b, t, tn);
			p++;
			break;
		}
		default: {
			size_t l = utf8_len(p, end);

			if (l == 0) {
				nd_buf_add(b, "\xef\xbf\xbd", 3);	/* U+FFFD */
				p++;
			} else {
				nd_buf_add(b, p, l);
				p += l;
			}
		}
		}
	}
	nd_buf_addc(b, '"');
}

void
nd_json_put_u64(nd_buf *b, uint64_t v)
{
	char t[24];
	int i = 24;

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	nd_buf_add(b, t + i, (size_t)(24 - i));
}

void
nd_json_put_i64(nd_buf *b, int64_t v)
{
	if (v < 0) {
		nd_buf_addc(b, '-');
		nd_json_put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else
		nd_json_put_u64(b, (uint64_t)v);
}

void
nd_json_put_double(nd_buf *b, double v)
{
	char t[40];

	if (isnan(v) || isinf(v)) {
		nd_buf_add(b, "null", 4);
		return;
	}
	if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) {
		nd_json_put_i64(b, (int64_t)v);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(t, sizeof t, "%.*g", prec, v);
		if (strtod(t, NULL) == v)
			break;
	}
	nd_buf_adds(b, t);
}

void
nd_jw_init(nd_jw *w, nd_buf *b)
{
	w->b = b;
	w->depth = 0;
	w->nonempty = 0;
	w->after_key = 0;
}

/* Before a value: a comma when it is not the first element of an array. */
static void
jw_sep(nd_jw *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->depth > 0 && (w->nonempty >> w->depth & 1))
		nd_buf_addc(w->b, ',');
	w->nonempty |= (uint64_t)1 << w->depth;
}

static void
jw_open(nd_jw *w, char c)
{
	jw_sep(w);
	nd_buf_addc(w->b, c);
	w->depth++;
	if (w->depth > 62)
		nd_die(ND_EXIT_ERROR, "internal error: JSON output nested too deep");
	w->nonempty &= ~((uint64_t)1 << w->depth);
}

static void
jw_close(nd_jw *w, char c)
{
	nd_buf_addc(w->b, c);
	w->depth--;
}

void nd_jw_obj(nd_jw *w) { jw_open(w, '{'); }
void nd_jw_obj_end(nd_jw *w) { jw_close(w, '}'); }
void nd_jw_arr(nd_jw *w) { jw_open(w, '['); }
void nd_jw_arr_end(nd_jw *w) { jw_close(w, ']'); }

void
nd_jw_keyn(nd_jw *w, const char *k, size_t n)
{
	if (w->nonempty >> w->depth & 1)
		nd_buf_addc(w->b, ',');
	w->nonempty |= (uint64_t)1 << w->depth;
	nd_json_put_str(w->b, k, n);
	nd_buf_addc(w->b, ':');
	w->after_key = 1;
}

void
nd_jw_key(nd_jw *w, const char *k)
{
	nd_jw_keyn(w, k, strlen(k));
}

void
nd_jw_str(nd_jw *w, const char *s, size_t n)
{
	jw_sep(w);
	nd_json_put_str(w->b, s, n);
}

void
nd_jw_cstr(nd_jw *w, const char *s)
{
	nd_jw_str(w, s, strlen(s));
}

void
nd_jw_int(nd_jw *w, int64_t v)
{
	jw_sep(w);
	nd_json_put_i64(w->b, v);
}

void
nd_jw_uint(nd_jw *w, uint64_t v)
{
	jw_sep(w);
	nd_json_put_u64(w->b, v);
}

void
nd_jw_dbl(nd_jw *w, double v)
{
	jw_sep(w);
	nd_json_put_double(w->b, v);
}

void
nd_jw_bool(nd_jw *w, int v)
{
	jw_sep(w);
	if (v)
		nd_buf_add(w->b, "true", 4);
	else
		nd_buf_add(w->b, "false", 5);
}

void
nd_jw_null(nd_jw *w)
{
	jw_sep(w);
	nd_buf_add(w->b, "null", 4);
}

void
nd_jw_raw(nd_jw *w, const char *json, size_t n)
{
	jw_sep(w);
	nd_buf_add(w->b, json, n);
}
