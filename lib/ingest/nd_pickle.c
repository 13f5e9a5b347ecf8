/*
 * nd_pickle: the plain-data subset of Python's pickle format.  See
 * nd_pickle.h for the safety rules; the opcodes are those of CPython's
 * Lib/pickle.py and Lib/pickletools.py.
 */
#include "nd_pickle.h"
#include "nd_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nodes are allocated in chunks; decoded strings are owned separately. */
#define CHUNK 1024

struct chunk {
	struct chunk *next;
	size_t used;
	nd_pkv v[CHUNK];
};

struct nd_pickle {
	struct chunk *chunks;
	char **owned;		/* decoded strings */
	size_t nowned, capowned;
	nd_pkv *root;
};

struct rd {
	nd_pickle *pk;
	const unsigned char *p, *base, *end;
	size_t op_off;		/* offset of the current opcode */
	unsigned char op;
	nd_pkerr *err;
	nd_pkv **stack;
	size_t sp, capstack;
	size_t *marks;
	size_t nmarks, capmarks;
	nd_pkv **memo;
	size_t nmemo, capmemo;	/* slots 0..nmemo (holes are NULL) */
	size_t memo_count;	/* stored entries: MEMOIZE's next index */
	int proto;
};

static const struct {
	unsigned char op;
	const char *name;
	const char *refused;	/* why, when refused */
} opnames[] = {
	{ '(', "MARK", NULL }, { '.', "STOP", NULL }, { '0', "POP", NULL },
	{ '1', "POP_MARK", NULL }, { '2', "DUP", NULL },
	{ 'F', "FLOAT", NULL }, { 'I', "INT", NULL }, { 'J', "BININT", NULL },
	{ 'K', "BININT1", NULL }, { 'L', "LONG", NULL },
	{ 'M', "BININT2", NULL }, { 'N', "NONE", NULL },
	{ 'P', "PERSID", "it asks the caller for an external object" },
	{ 'Q', "BINPERSID", "it asks the caller for an external object" },
	{ 'R', "REDUCE", "it calls a Python object" },
	{ 'S', "STRING", NULL }, { 'T', "BINSTRING", NULL },
	{ 'U', "SHORT_BINSTRING", NULL }, { 'V', "UNICODE", NULL },
	{ 'X', "BINUNICODE", NULL }, { 'a', "APPEND", NULL },
	{ 'b', "BUILD", "it sets an object's state through Python code" },
	{ 'c', "GLOBAL", "it imports a Python object by name" },
	{ 'd', "DICT", NULL }, { '}', "EMPTY_DICT", NULL },
	{ 'e', "APPENDS", NULL }, { 'g', "GET", NULL },
	{ 'h', "BINGET", NULL },
	{ 'i', "INST", "it imports a class and creates an instance" },
	{ 'j', "LONG_BINGET", NULL }, { 'l', "LIST", NULL },
	{ ']', "EMPTY_LIST", NULL },
	{ 'o', "OBJ", "it creates a class instance" },
	{ 'p', "PUT", NULL }, { 'q', "BINPUT", NULL },
	{ 'r', "LONG_BINPUT", NULL }, { 's', "SETITEM", NULL },
	{ 't', "TUPLE", NULL }, { ')', "EMPTY_TUPLE", NULL },
	{ 'u', "SETITEMS", NULL }, { 'G', "BINFLOAT", NULL },
	{ 0x80, "PROTO", NULL },
	{ 0x81, "NEWOBJ", "it creates a class instance" },
	{ 0x82, "EXT1", "it imports an object from the extension registry" },
	{ 0x83, "EXT2", "it imports an object from the extension registry" },
	{ 0x84, "EXT4", "it imports an object from the extension registry" },
	{ 0x85, "TUPLE1", NULL }, { 0x86, "TUPLE2", NULL },
	{ 0x87, "TUPLE3", NULL }, { 0x88, "NEWTRUE", NULL },
	{ 0x89, "NEWFALSE", NULL }, { 0x8a, "LONG1", NULL },
	{ 0x8b, "LONG4", NULL }, { 'B', "BINBYTES", NULL },
	{ 'C', "SHORT_BINBYTES", NULL }, { 0x8c, "SHORT_BINUNICODE", NULL },
	{ 0x8d, "BINUNICODE8", NULL }, { 0x8e, "BINBYTES8", NULL },
	{ 0x8f, "EMPTY_SET", NULL }, { 0x90, "ADDITEMS", NULL },
	{ 0x91, "FROZENSET", NULL },
	{ 0x92, "NEWOBJ_EX", "it creates a class instance" },
	{ 0x93, "STACK_GLOBAL", "it imports a Python object by name" },
	{ 0x94, "MEMOIZE", NULL }, { 0x95, "FRAME", NULL },
	{ 0x96, "BYTEARRAY8", NULL },
	{ 0x97, "NEXT_BUFFER", "it needs an out-of-band buffer" },
	{ 0x98, "READONLY_BUFFER", "it needs an out-of-band buffer" },
};

static int
opindex(unsigned char op)
{
	for (size_t i = 0; i < sizeof opnames / sizeof *opnames; i++)
		if (opnames[i].op == op)
			return (int)i;
	return -1;
}

const char *
nd_pickle_opname(unsigned char op)
{
	int i = opindex(op);

	return i < 0 ? NULL : opnames[i].name;
}

static int
fail(struct rd *r, const char *fmt, ...) ND_PRINTF(2, 3);

static int
fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	r->err->off = r->op_off;
	va_start(ap, fmt);
	vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *
curname(struct rd *r)
{
	const char *n = nd_pickle_opname(r->op);

	return n != NULL ? n : "?";
}

/* ---- values ---- */

static nd_pkv *
newv(struct rd *r, nd_pktype t)
{
	nd_pickle *pk = r->pk;
	nd_pkv *v;

	if (pk->chunks == NULL || pk->chunks->used == CHUNK) {
		struct chunk *c = nd_xmalloc(sizeof *c);

		c->next = pk->chunks;
		c->used = 0;
		pk->chunks = c;
	}
	v = &pk->chunks->v[pk->chunks->used++];
	memset(v, 0, sizeof *v);
	v->type = (uint8_t)t;
	v->nodes = 1;
	return v;
}

static char *
own(struct rd *r, size_t n)
{
	nd_pickle *pk = r->pk;
	char *s = nd_xmalloc(n + 1);

	nd_grow(&pk->owned, &pk->capowned, pk->nowned + 1, sizeof *pk->owned);
	pk->owned[pk->nowned++] = s;
	return s;
}

static int
is_container(const nd_pkv *v)
{
	return v->type >= ND_PK_LIST;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Place child c into container p (p is being built or is still open). */
static int
adopt(struct rd *r, nd_pkv *p, nd_pkv *c)
{
	if (c == p)
		return fail(r, "%s puts %s into itself: self-referencing "
		    "structures are not supported", curname(r),
		    nd_pk_typename(p));
	if (is_container(c) && c->depth + 1 > p->depth) {
		if (c->depth + 1 > ND_PICKLE_MAX_DEPTH)
			return fail(r, "containers nested deeper than %d",
			    ND_PICKLE_MAX_DEPTH);
		p->depth = (uint16_t)(c->depth + 1);
	}
	if (p->depth == 0)
		p->depth = 1;
	c->frozen = 1;
	p->nodes = sat_add(p->nodes, c->nodes);
	return 0;
}

static int
add_item(struct rd *r, nd_pkv *p, nd_pkv *c)
{
	if (adopt(r, p, c) != 0)
		return -1;
	nd_grow(&p->u.items, &p->cap, p->n + 1, sizeof *p->u.items);
	p->u.items[p->n++] = c;
	return 0;
}

static int
add_pair(struct rd *r, nd_pkv *d, nd_pkv *k, nd_pkv *v)
{
	if (adopt(r, d, k) != 0 || adopt(r, d, v) != 0)
		return -1;
	nd_grow(&d->u.items, &d->cap, 2 * d->n + 2, sizeof *d->u.items);
	d->u.items[2 * d->n] = k;
	d->u.items[2 * d->n + 1] = v;
	d->n++;
	return 0;
}

/* ---- the stack ---- */

static void
push(struct rd *r, nd_pkv *v)
{
	nd_grow(&r->stack, &r->capstack, r->sp + 1, sizeof *r->stack);
	r->stack[r->sp++] = v;
}

/* Items above the innermost mark may be popped; below it they may not. */
static size_t
floor_sp(struct rd *r)
{
	return r->nmarks > 0 ? r->marks[r->nmarks - 1] : 0;
}

static int
need(struct rd *r, size_t k)
{
	if (r->sp - floor_sp(r) < k)
		return fail(r, "%s needs %zu value%s on the stack: stack "
		    "underflow", curname(r), k, k == 1 ? "" : "s");
	return 0;
}

static int
pop_mark(struct rd *r, size_t *mark)
{
	if (r->nmarks == 0)
		return fail(r, "%s without a MARK", curname(r));
	*mark = r->marks[--r->nmarks];
	return 0;
}

/* ---- reading arguments ---- */

static int
take(struct rd *r, size_t n, const unsigned char **out)
{
	if ((size_t)(r->end - r->p) < n)
		return fail(r, "truncated pickle: %s needs %zu byte%s, %zu "
		    "left", curname(r), n, n == 1 ? "" : "s",
		    (size_t)(r->end - r->p));
	*out = r->p;
	r->p += n;
	return 0;
}

static uint64_t
le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A text argument of protocol 0: the bytes up to '\n' (not included). */
static int
line(struct rd *r, const char **s, size_t *n)
{
	const unsigned char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));

	if (nl == NULL)
		return fail(r, "truncated pickle: %s argument has no "
		    "end of line", curname(r));
	*s = (const char *)r->p;
	*n = (size_t)(nl - r->p);
	r->p = nl + 1;
	return 0;
}

/* Decimal integer text (optional sign); 0 with *v, 1 if beyond int64,
 * -1 if not an integer. */
static int
parse_dec(const char *s, size_t n, int64_t *v)
{
	size_t i = 0;
	int neg = 0;
	uint64_t acc = 0;
	int big = 0;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i == n)
		return -1;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (acc > (UINT64_MAX - 9) / 10)
			big = 1;
		else
			acc = acc * 10 + (uint64_t)(s[i] - '0');
	}
	if (big || (!neg && acc > (uint64_t)INT64_MAX) ||
	    (neg && acc > (uint64_t)INT64_MAX + 1))
		return 1;
	*v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
	return 0;
}

static nd_pkv *
mkint(struct rd *r, int64_t i)
{
	nd_pkv *v = newv(r, ND_PK_INT);

	v->u.i = i;
	return v;
}

static nd_pkv *
mkstr(struct rd *r, nd_pktype t, const char *s, size_t n)
{
	nd_pkv *v = newv(r, t);

	v->u.s = s;
	v->n = n;
	return v;
}

/* Little-endian two's complement of n bytes (LONG1, LONG4). */
static nd_pkv *
mklong(struct rd *r, const unsigned char *p, size_t n)
{
	nd_pkv *v;

	/* drop redundant sign bytes (Python writes none; crafted input may) */
	while (n > 1 && ((p[n - 1] == 0x00 && !(p[n - 2] & 0x80)) ||
	    (p[n - 1] == 0xff && (p[n - 2] & 0x80))))
		n--;
	if (n == 0)
		return mkint(r, 0);
	if (n <= 8) {
		uint64_t u = le(p, (int)n);

		if (n < 8 && (p[n - 1] & 0x80))
			u |= ~(uint64_t)0 << (8 * n);
		return mkint(r, (int64_t)u);
	}
	v = mkstr(r, ND_PK_BIGINT, (const char *)p, n);
	v->text = 0;
	return v;
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

static size_t
put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* UNICODE: raw-unicode-escape (\uXXXX, \UXXXXXXXX; other bytes Latin-1). */
static int
load_unicode(struct rd *r)
{
	const char *s;
	size_t n, o = 0;
	char *d;

	if (line(r, &s, &n) != 0)
		return -1;
	d = own(r, 4 * n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' && i + 1 < n && (s[i + 1] == 'u' ||
		    s[i + 1] == 'U')) {
			int k = s[i + 1] == 'u' ? 4 : 8;
			uint32_t cp = 0;

			if (i + 2 + (size_t)k > n)
				return fail(r, "UNICODE: truncated \\%c escape",
				    s[i + 1]);
			for (int j = 0; j < k; j++) {
				int h = hexval(s[i + 2 + (size_t)j]);

				if (h < 0)
					return fail(r, "UNICODE: bad \\%c "
					    "escape", s[i + 1]);
				cp = cp << 4 | (uint32_t)h;
			}
			if (cp > 0x10ffff)
				return fail(r, "UNICODE: \\U%08x is not a "
				    "code point", (unsigned)cp);
			o += put_utf8(d + o, cp);
			i += 1 + (size_t)k;
		} else
			o += put_utf8(d + o, c);
	}
	d[o] = '\0';
	push(r, mkstr(r, ND_PK_STR, d, o));
	return 0;
}

/* STRING: a quoted Python 2 repr with backslash escapes. */
static int
load_string(struct rd *r)
{
	const char *s;
	size_t n, o = 0;
	char *d;

	if (line(r, &s, &n) != 0)
		return -1;
	if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0])
		return fail(r, "STRING argument is not a quoted string");
	s++;
	n -= 2;
	d = own(r, n);
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c != '\\') {
			d[o++] = c;
			continue;
		}
		if (++i == n)
			return fail(r, "STRING ends with a backslash");
		c = s[i];
		switch (c) {
		case '\n': break;
		case '\\': case '\'': case '"': d[o++] = c; break;
		case 'a': d[o++] = '\a'; break;
		case 'b': d[o++] = '\b'; break;
		case 'f': d[o++] = '\f'; break;
		case 'n': d[o++] = '\n'; break;
		case 'r': d[o++] = '\r'; break;
		case 't': d[o++] = '\t'; break;
		case 'v': d[o++] = '\v'; break;
		case 'x': {
			int h1 = i + 1 < n ? hexval(s[i + 1]) : -1;
			int h2 = i + 2 < n ? hexval(s[i + 2]) : -1;

			if (h1 < 0 || h2 < 0)
				return fail(r, "STRING: bad \\x escape");
			d[o++] = (char)(h1 << 4 | h2);
			i += 2;
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0';

				for (int j = 0; j < 2 && i + 1 < n &&
				    s[i + 1] >= '0' && s[i + 1] <= '7'; j++)
					v = v * 8 + (s[++i] - '0');
				d[o++] = (char)v;
			} else {
				d[o++] = '\\';
				d[o++] = c;
			}
		}
	}
	d[o] = '\0';
	push(r, mkstr(r, ND_PK_STR, d, o));
	return 0;
}

static int
load_float_text(struct rd *r)
{
	const char *s;
	size_t n;
	char buf[64], *e;
	double d;
	nd_pkv *v;

	if (line(r, &s, &n) != 0)
		return -1;
	if (n == 0 || n >= sizeof buf)
		return fail(r, "FLOAT argument is not a number");
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	d = strtod(buf, &e);
	if (*e != '\0' || e == buf)
		return fail(r, "FLOAT argument is not a number");
	v = newv(r, ND_PK_FLOAT);
	v->u.f = d;
	push(r, v);
	return 0;
}

static int
load_int_text(struct rd *r, int is_long)
{
	const char *s = NULL;
	size_t n = 0;
	int64_t i;
	int rc;

	if (line(r, &s, &n) != 0)
		return -1;
	if (!is_long && n == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1')) {
		nd_pkv *v = newv(r, ND_PK_BOOL);

		v->u.i = s[1] == '1';
		push(r, v);
		return 0;
	}
	if (is_long && n > 0 && s[n - 1] == 'L')
		n--;
	rc = parse_dec(s, n, &i);
	if (rc < 0)
		return fail(r, "%s argument is not an integer", curname(r));
	if (rc == 0)
		push(r, mkint(r, i));
	else {
		nd_pkv *v = mkstr(r, ND_PK_BIGINT, s, n);

		v->text = 1;
		push(r, v);
	}
	return 0;
}

/* ---- memo ---- */

static int
memo_put(struct rd *r, uint64_t idx)
{
	if (r->sp == 0 || r->sp == floor_sp(r))
		return fail(r, "%s with an empty stack", curname(r));
	if (idx >= (uint64_t)(r->end - r->base) + 1)
		return fail(r, "%s index %llu is out of range", curname(r),
		    (unsigned long long)idx);
	if (idx >= r->nmemo) {
		nd_grow(&r->memo, &r->capmemo, (size_t)idx + 1,
		    sizeof *r->memo);
		memset(r->memo + r->nmemo, 0,
		    ((size_t)idx + 1 - r->nmemo) * sizeof *r->memo);
		r->nmemo = (size_t)idx + 1;
	}
	if (r->memo[idx] == NULL)
		r->memo_count++;
	r->memo[idx] = r->stack[r->sp - 1];
	return 0;
}

static int
memo_get(struct rd *r, uint64_t idx)
{
	if (idx >= r->nmemo || r->memo[idx] == NULL)
		return fail(r, "%s: memo key %llu was never stored",
		    curname(r), (unsigned long long)idx);
	push(r, r->memo[idx]);
	return 0;
}

/* ---- the machine ---- */

static int
build_seq(struct rd *r, nd_pktype t, size_t from)
{
	nd_pkv *v = newv(r, t);

	v->depth = 1;
	for (size_t i = from; i < r->sp; i++)
		if (add_item(r, v, r->stack[i]) != 0)
			return -1;
	r->sp = from;
	push(r, v);
	return 0;
}

static int
set_pairs(struct rd *r, nd_pkv *d, size_t from)
{
	if ((r->sp - from) % 2 != 0)
		return fail(r, "%s with an odd number of values (a key "
		    "without a value)", curname(r));
	for (size_t i = from; i < r->sp; i += 2)
		if (add_pair(r, d, r->stack[i], r->stack[i + 1]) != 0)
			return -1;
	r->sp = from;
	return 0;
}

static int
mutable_target(struct rd *r, nd_pkv *t, nd_pktype want)
{
	if (t->type != want)
		return fail(r, "%s on %s, not a %s", curname(r),
		    nd_pk_typename(t), want == ND_PK_DICT ? "dict" :
		    want == ND_PK_SET ? "set" : "list");
	if (t->frozen)
		return fail(r, "%s changes %s already placed in another "
		    "container: self-referencing structures are not "
		    "supported", curname(r), nd_pk_typename(t));
	return 0;
}

/* PROTO, FRAME, STOP and the stack and mark operations. */
static int
op_control(struct rd *r, int *done)
{
	const unsigned char *a;
	size_t mark = 0;	/* set by pop_mark; 0 keeps -O2 -flto quiet */

	switch (r->op) {
	case 0x80:	/* PROTO */
		if (take(r, 1, &a) != 0)
			return -1;
		if (a[0] > 5)
			return fail(r, "unsupported pickle protocol %d", a[0]);
		r->proto = a[0];
		return 0;
	case 0x95:	/* FRAME: framing is only a read-ahead hint */
		if (take(r, 8, &a) != 0)
			return -1;
		if (le(a, 8) > (uint64_t)(r->end - r->p))
			return fail(r, "truncated pickle: FRAME of %llu bytes, "
			    "%zu left", (unsigned long long)le(a, 8),
			    (size_t)(r->end - r->p));
		return 0;
	case '.':	/* STOP */
		if (r->sp == floor_sp(r))
			return fail(r, "STOP with an empty stack");
		*done = 1;
		return 0;
	case '(':	/* MARK */
		nd_grow(&r->marks, &r->capmarks, r->nmarks + 1,
		    sizeof *r->marks);
		r->marks[r->nmarks++] = r->sp;
		return 0;
	case '0':	/* POP */
		if (r->sp > floor_sp(r))
			r->sp--;
		else if (pop_mark(r, &mark) != 0)
			return -1;
		else
			r->sp = mark;
		return 0;
	case '1':	/* POP_MARK */
		if (pop_mark(r, &mark) != 0)
			return -1;
		r->sp = mark;
		return 0;
	case '2':	/* DUP */
		if (need(r, 1) != 0)
			return -1;
		push(r, r->stack[r->sp - 1]);
		return 0;
	}
	return fail(r, "unknown pickle opcode 0x%02x", r->op);
}

/* LONG1, LONG4: a little-endian two's complement integer of n bytes. */
static int
op_long(struct rd *r)
{
	const unsigned char *a;
	uint64_t n;

	if (take(r, r->op == 0x8a ? 1 : 4, &a) != 0)
		return -1;
	if (r->op == 0x8a)
		n = a[0];
	else {
		int32_t s = (int32_t)(uint32_t)le(a, 4);

		if (s < 0)
			return fail(r, "LONG4 with a negative byte count");
		n = (uint64_t)s;
	}
	if (take(r, (size_t)n, &a) != 0)
		return -1;
	push(r, mklong(r, a, (size_t)n));
	return 0;
}

/* Strings and bytes with a length of 1, 4 or 8 bytes before them. */
static int
op_counted(struct rd *r)
{
	const unsigned char *a;
	int w;
	uint64_t n;
	nd_pktype t = ND_PK_BYTES;

	switch (r->op) {
	case 'U': case 'C': case 0x8c: w = 1; break;
	case 0x8d: case 0x8e: case 0x96: w = 8; break;
	default: w = 4;
	}
	if (r->op == 'T' || r->op == 'U' || r->op == 'X' ||
	    r->op == 0x8c || r->op == 0x8d)
		t = ND_PK_STR;
	if (take(r, (size_t)w, &a) != 0)
		return -1;
	n = le(a, w);
	if (r->op == 'T' && (int32_t)(uint32_t)n < 0)
		return fail(r, "BINSTRING with a negative length");
	if (n > (uint64_t)(r->end - r->p))
		return fail(r, "truncated pickle: %s of %llu bytes, %zu left",
		    curname(r), (unsigned long long)n,
		    (size_t)(r->end - r->p));
	push(r, mkstr(r, t, (const char *)r->p, (size_t)n));
	r->p += n;
	return 0;
}

/* The scalar values: None, booleans, numbers, strings and bytes. */
static int
op_value(struct rd *r)
{
	const unsigned char *a;

	switch (r->op) {
	case 'N':
		push(r, newv(r, ND_PK_NONE));
		return 0;
	case 0x88: case 0x89: {	/* NEWTRUE, NEWFALSE */
		nd_pkv *v = newv(r, ND_PK_BOOL);

		v->u.i = r->op == 0x88;
		push(r, v);
		return 0;
	}
	case 'I':
		return load_int_text(r, 0);
	case 'L':
		return load_int_text(r, 1);
	case 'F':
		return load_float_text(r);
	case 'J':	/* BININT: signed 32 */
		if (take(r, 4, &a) != 0)
			return -1;
		push(r, mkint(r, (int32_t)(uint32_t)le(a, 4)));
		return 0;
	case 'K':
		if (take(r, 1, &a) != 0)
			return -1;
		push(r, mkint(r, a[0]));
		return 0;
	case 'M':
		if (take(r, 2, &a) != 0)
			return -1;
		push(r, mkint(r, (int64_t)le(a, 2)));
		return 0;
	case 0x8a: case 0x8b:	/* LONG1, LONG4 */
		return op_long(r);
	case 'G': {	/* BINFLOAT: big-endian IEEE 754 double */
		uint64_t u = 0;
		nd_pkv *v;

		if (take(r, 8, &a) != 0)
			return -1;
		for (int i = 0; i < 8; i++)
			u = u << 8 | a[i];
		v = newv(r, ND_PK_FLOAT);
		memcpy(&v->u.f, &u, sizeof u);
		push(r, v);
		return 0;
	}
	case 'S':
		return load_string(r);
	case 'V':
		return load_unicode(r);
	case 'T': case 'U': case 'X': case 0x8c: case 0x8d:
	case 'B': case 'C': case 0x8e: case 0x96:
		return op_counted(r);
	}
	return fail(r, "unknown pickle opcode 0x%02x", r->op);
}

/* Building and filling lists, tuples, dicts and sets. */
static int
op_container(struct rd *r)
{
	size_t mark;

	switch (r->op) {
	case ']': case '}': case ')': case 0x8f: {
		nd_pkv *v = newv(r, r->op == ']' ? ND_PK_LIST :
		    r->op == '}' ? ND_PK_DICT : r->op == ')' ? ND_PK_TUPLE :
		    ND_PK_SET);

		v->depth = 1;
		push(r, v);
		return 0;
	}
	case 'l': case 't': case 0x91:	/* LIST, TUPLE, FROZENSET */
		if (pop_mark(r, &mark) != 0)
			return -1;
		return build_seq(r, r->op == 'l' ? ND_PK_LIST :
		    r->op == 't' ? ND_PK_TUPLE : ND_PK_SET, mark);
	case 0x85: case 0x86: case 0x87: {	/* TUPLE1..3 */
		size_t n = (size_t)(r->op - 0x84);

		if (need(r, n) != 0)
			return -1;
		return build_seq(r, ND_PK_TUPLE, r->sp - n);
	}
	case 'd': {	/* DICT */
		nd_pkv *d = newv(r, ND_PK_DICT);

		d->depth = 1;
		if (pop_mark(r, &mark) != 0 || set_pairs(r, d, mark) != 0)
			return -1;
		push(r, d);
		return 0;
	}
	case 'a':	/* APPEND */
		if (need(r, 2) != 0 ||
		    mutable_target(r, r->stack[r->sp - 2], ND_PK_LIST) != 0 ||
		    add_item(r, r->stack[r->sp - 2], r->stack[r->sp - 1]) != 0)
			return -1;
		r->sp--;
		return 0;
	case 'e': case 0x90: {	/* APPENDS, ADDITEMS */
		nd_pkv *t;

		if (pop_mark(r, &mark) != 0)
			return -1;
		if (mark == 0 || mark <= floor_sp(r))
			return fail(r, "%s without a %s below its MARK",
			    curname(r), r->op == 'e' ? "list" : "set");
		t = r->stack[mark - 1];
		if (mutable_target(r, t, r->op == 'e' ? ND_PK_LIST :
		    ND_PK_SET) != 0)
			return -1;
		for (size_t i = mark; i < r->sp; i++)
			if (add_item(r, t, r->stack[i]) != 0)
				return -1;
		r->sp = mark;
		return 0;
	}
	case 's':	/* SETITEM */
		if (need(r, 3) != 0 ||
		    mutable_target(r, r->stack[r->sp - 3], ND_PK_DICT) != 0 ||
		    add_pair(r, r->stack[r->sp - 3], r->stack[r->sp - 2],
		    r->stack[r->sp - 1]) != 0)
			return -1;
		r->sp -= 2;
		return 0;
	case 'u': {	/* SETITEMS */
		nd_pkv *t;

		if (pop_mark(r, &mark) != 0)
			return -1;
		if (mark == 0 || mark <= floor_sp(r))
			return fail(r, "SETITEMS without a dict below its MARK");
		t = r->stack[mark - 1];
		if (mutable_target(r, t, ND_PK_DICT) != 0)
			return -1;
		return set_pairs(r, t, mark);
	}
	}
	return fail(r, "unknown pickle opcode 0x%02x", r->op);
}

/* The memo: PUT, GET and MEMOIZE in their three widths. */
static int
op_memo(struct rd *r)
{
	const unsigned char *a;

	switch (r->op) {
	case 'p': case 'g': {	/* PUT, GET (text index) */
		const char *s;
		size_t n;
		int64_t idx;

		if (line(r, &s, &n) != 0)
			return -1;
		if (parse_dec(s, n, &idx) != 0 || idx < 0)
			return fail(r, "%s argument is not an index",
			    curname(r));
		return r->op == 'p' ? memo_put(r, (uint64_t)idx) :
		    memo_get(r, (uint64_t)idx);
	}
	case 'q': case 'h':
		if (take(r, 1, &a) != 0)
			return -1;
		return r->op == 'q' ? memo_put(r, a[0]) : memo_get(r, a[0]);
	case 'r': case 'j':
		if (take(r, 4, &a) != 0)
			return -1;
		return r->op == 'r' ? memo_put(r, le(a, 4)) :
		    memo_get(r, le(a, 4));
	case 0x94:	/* MEMOIZE */
		return memo_put(r, r->memo_count);
	}
	return fail(r, "unknown pickle opcode 0x%02x", r->op);
}

static int
step(struct rd *r, int *done)
{
	int k;

	r->op_off = (size_t)(r->p - r->base);
	r->op = *r->p++;
	k = opindex(r->op);
	if (k < 0)
		return fail(r, "unknown pickle opcode 0x%02x", r->op);
	if (opnames[k].refused != NULL)
		return fail(r, "refused pickle opcode %s (0x%02x): %s; only "
		    "plain data is read", opnames[k].name, r->op,
		    opnames[k].refused);
	switch (r->op) {
	case 0x80: case 0x95: case '.': case '(': case '0': case '1': case '2':
		return op_control(r, done);
	case ']': case '}': case ')': case 0x8f: case 'l': case 't': case 0x91:
	case 0x85: case 0x86: case 0x87: case 'd': case 'a': case 'e':
	case 0x90: case 's': case 'u':
		return op_container(r);
	case 'p': case 'g': case 'q': case 'h': case 'r': case 'j': case 0x94:
		return op_memo(r);
	default:
		return op_value(r);
	}
}

nd_pickle *
nd_pickle_load(const void *data, size_t n, nd_pkerr *err)
{
	struct rd r;
	int done = 0, rc = 0;
	nd_pickle *pk = nd_xcalloc(1, sizeof *pk);
	uint64_t limit;

	memset(&r, 0, sizeof r);
	memset(err, 0, sizeof *err);
	r.pk = pk;
	r.base = r.p = data;
	r.end = r.base + n;
	r.err = err;
	while (!done && rc == 0) {
		if (r.p == r.end) {
			r.op_off = n;
			r.op = '.';
			rc = fail(&r, "truncated pickle: the input ends "
			    "without a STOP opcode");
			break;
		}
		rc = step(&r, &done);
	}
	if (rc == 0) {
		pk->root = r.stack[r.sp - 1];
		limit = (uint64_t)n * ND_PICKLE_NODES_PER_BYTE + (1u << 20);
		if (pk->root->nodes > limit)
			rc = fail(&r, "the value expands to more than %llu "
			    "nodes through shared references (%llu per input "
			    "byte): refused", (unsigned long long)limit,
			    (unsigned long long)ND_PICKLE_NODES_PER_BYTE);
	}
	free(r.stack);
	free(r.marks);
	free(r.memo);
	if (rc != 0) {
		nd_pickle_free(pk);
		return NULL;
	}
	return pk;
}

const nd_pkv *
nd_pickle_root(const nd_pickle *pk)
{
	return pk->root;
}

void
nd_pickle_free(nd_pickle *pk)
{
	struct chunk *c, *next;

	if (pk == NULL)
		return;
	for (c = pk->chunks; c != NULL; c = next) {
		next = c->next;
		for (size_t i = 0; i < c->used; i++)
			if (is_container(&c->v[i]))
				free(c->v[i].u.items);
		free(c);
	}
	for (size_t i = 0; i < pk->nowned; i++)
		free(pk->owned[i]);
	free(pk->owned);
	free(pk);
}

/* ---- reading values ---- */

const nd_pkv *
nd_pk_get(const nd_pkv *d, const char *key)
{
	size_t kn;

	if (d == NULL || d->type != ND_PK_DICT)
		return NULL;
	kn = strlen(key);
	for (size_t i = d->n; i-- > 0;) {
		const nd_pkv *k = d->u.items[2 * i];

		if (k->type == ND_PK_STR && k->n == kn &&
		    memcmp(k->u.s, key, kn) == 0)
			return d->u.items[2 * i + 1];
	}
	return NULL;
}

int
nd_pk_isseq(const nd_pkv *v)
{
	return v != NULL && (v->type == ND_PK_LIST || v->type == ND_PK_TUPLE ||
	    v->type == ND_PK_SET);
}

size_t
nd_pk_len(const nd_pkv *v)
{
	return nd_pk_isseq(v) || (v != NULL && v->type == ND_PK_DICT) ?
	    v->n : 0;
}

const nd_pkv *
nd_pk_item(const nd_pkv *v, size_t i)
{
	return nd_pk_isseq(v) && i < v->n ? v->u.items[i] : NULL;
}

int
nd_pk_int(const nd_pkv *v, int64_t *out)
{
	if (v == NULL || (v->type != ND_PK_INT && v->type != ND_PK_BOOL))
		return -1;
	*out = v->u.i;
	return 0;
}

int
nd_pk_num(const nd_pkv *v, double *out)
{
	if (v != NULL && v->type == ND_PK_FLOAT) {
		*out = v->u.f;
		return 0;
	}
	if (v == NULL || (v->type != ND_PK_INT && v->type != ND_PK_BOOL))
		return -1;
	*out = (double)v->u.i;
	return 0;
}

int
nd_pk_str(const nd_pkv *v, const char **p, size_t *n)
{
	if (v == NULL || (v->type != ND_PK_STR && v->type != ND_PK_BYTES))
		return -1;
	*p = v->u.s;
	*n = v->n;
	return 0;
}

int
nd_pk_streq(const nd_pkv *v, const char *s)
{
	size_t n = strlen(s);

	return v != NULL && v->type == ND_PK_STR && v->n == n &&
	    memcmp(v->u.s, s, n) == 0;
}

const char *
nd_pk_typename(const nd_pkv *v)
{
	if (v == NULL)
		return "nothing";
	switch (v->type) {
	case ND_PK_NONE: return "None";
	case ND_PK_BOOL: return "a bool";
	case ND_PK_INT: case ND_PK_BIGINT: return "an int";
	case ND_PK_FLOAT: return "a float";
	case ND_PK_STR: return "a str";
	case ND_PK_BYTES: return "a bytes";
	case ND_PK_LIST: return "a list";
	case ND_PK_TUPLE: return "a tuple";
	case ND_PK_SET: return "a set";
	case ND_PK_DICT: return "a dict";
	}
	return "?";
}

/* ---- JSON ---- */

static void
put_base64(nd_buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	nd_buf_addc(b, '"');
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		char o[4];

		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		o[0] = tab[v >> 18 & 63];
		o[1] = tab[v >> 12 & 63];
		o[2] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		o[3] = i + 2 < n ? tab[v & 63] : '=';
		nd_buf_add(b, o, 4);
	}
	nd_buf_addc(b, '"');
}

/* nd_json_put_double, kept to the range where its integer test is
 * defined; beyond it the shortest "%g" text that reads back exactly. */
static void
put_double(nd_buf *b, double v)
{
	char t[40];

	if (isnan(v) || isinf(v) || fabs(v) < 9007199254740992.0) {
		nd_json_put_double(b, v);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(t, sizeof t, "%.*g", prec, v);
		if (strtod(t, NULL) == v)
			break;
	}
	nd_buf_adds(b, t);
}

/* Exact decimal of a little-endian two's complement integer. */
static void
put_bigint(nd_buf *b, const unsigned char *p, size_t n)
{
	unsigned char *mag = nd_xmalloc(n);
	char *dig = nd_xmalloc(n * 3 + 2);
	size_t nd = 0, len = n;
	int neg = (p[n - 1] & 0x80) != 0;
	unsigned carry = 1;

	for (size_t i = 0; i < n; i++) {
		unsigned v = neg ? (unsigned)(uint8_t)~p[i] + carry : p[i];

		if (neg)
			carry = v >> 8;
		mag[i] = (unsigned char)v;
	}
	while (len > 0 && mag[len - 1] == 0)
		len--;
	if (len == 0)
		dig[nd++] = '0';
	while (len > 0) {
		unsigned rem = 0;

		for (size_t i = len; i-- > 0;) {
			unsigned cur = rem << 8 | mag[i];

			mag[i] = (unsigned char)(cur / 10);
			rem = cur % 10;
		}
		dig[nd++] = (char)('0' + rem);
		while (len > 0 && mag[len - 1] == 0)
			len--;
	}
	if (neg)
		nd_buf_addc(b, '-');
	while (nd > 0)
		nd_buf_addc(b, dig[--nd]);
	free(mag);
	free(dig);
}

static void
put_key(nd_buf *b, const nd_pkv *k)
{
	nd_buf tmp = ND_BUF_INIT;

	switch (k->type) {
	case ND_PK_STR:
		nd_json_put_str(b, k->u.s, k->n);
		return;
	case ND_PK_NONE:
		nd_buf_adds(b, "\"null\"");
		return;
	case ND_PK_BOOL:
		nd_buf_adds(b, k->u.i ? "\"true\"" : "\"false\"");
		return;
	default:
		nd_pk_json(&tmp, k);
		if (tmp.len > 0 && tmp.p[0] == '"')
			nd_buf_add(b, tmp.p, tmp.len);
		else
			nd_json_put_str(b, tmp.p != NULL ? tmp.p : "",
			    tmp.len);
		nd_buf_free(&tmp);
	}
}

void
nd_pk_json(nd_buf *b, const nd_pkv *v)
{
	switch (v->type) {
	case ND_PK_NONE:
		nd_buf_adds(b, "null");
		break;
	case ND_PK_BOOL:
		nd_buf_adds(b, v->u.i ? "true" : "false");
		break;
	case ND_PK_INT:
		/* beyond 2^53 jq and awk would round: a decimal string */
		if (v->u.i > ND_JSON_MAX_SAFE_INT ||
		    v->u.i < -ND_JSON_MAX_SAFE_INT) {
			nd_buf_addc(b, '"');
			nd_json_put_i64(b, v->u.i);
			nd_buf_addc(b, '"');
		} else
			nd_json_put_i64(b, v->u.i);
		break;
	case ND_PK_BIGINT:
		nd_buf_addc(b, '"');
		if (v->text) {
			const char *s = v->u.s;
			size_t n = v->n;

			if (n > 0 && s[0] == '+') {
				s++;
				n--;
			}
			/* no leading zeros in JSON */
			if (n > 0 && s[0] == '-') {
				nd_buf_addc(b, '-');
				s++;
				n--;
			}
			while (n > 1 && s[0] == '0') {
				s++;
				n--;
			}
			nd_buf_add(b, s, n);
		} else
			put_bigint(b, (const unsigned char *)v->u.s, v->n);
		nd_buf_addc(b, '"');
		break;
	case ND_PK_FLOAT:
		put_double(b, v->u.f);
		break;
	case ND_PK_STR:
		nd_json_put_str(b, v->u.s, v->n);
		break;
	case ND_PK_BYTES:
		put_base64(b, (const unsigned char *)v->u.s, v->n);
		break;
	case ND_PK_LIST: case ND_PK_TUPLE: case ND_PK_SET:
		nd_buf_addc(b, '[');
		for (size_t i = 0; i < v->n; i++) {
			if (i > 0)
				nd_buf_addc(b, ',');
			nd_pk_json(b, v->u.items[i]);
		}
		nd_buf_addc(b, ']');
		break;
	case ND_PK_DICT:
		nd_buf_addc(b, '{');
		for (size_t i = 0; i < v->n; i++) {
			if (i > 0)
				nd_buf_addc(b, ',');
			put_key(b, v->u.items[2 * i]);
			nd_buf_addc(b, ':');
			nd_pk_json(b, v->u.items[2 * i + 1]);
		}
		nd_buf_addc(b, '}');
		break;
	}
}
