/*
 * nd_pb: a streaming reader of the protobuf wire format over a buffer in
 * memory.  It allocates nothing: a message is a slice of the buffer, a field
 * is returned with its payload as a slice, and a nested message is read by a
 * sub-reader over that slice (nd_pb_sub).  Memory stays that of the buffer,
 * whatever the number of messages in it.
 *
 *	nd_pb r, sub;
 *	nd_pb_field f;
 *
 *	nd_pb_init(&r, buf, len, "file.pb");
 *	while (nd_pb_next(&r, &f))
 *		switch (f.num) {
 *		case 1: nd_pb_want(&r, &f, ND_PB_LEN, "XSpace.planes");
 *			nd_pb_sub(&sub, &r, &f); ...
 *		default: break;		(unknown fields are skipped)
 *		}
 *
 * Checks: a varint is at most 10 bytes; a length-delimited payload, a
 * fixed64 or fixed32 must lie within the enclosing message; wire types 6 and
 * 7 and field number 0 are invalid; groups (wire types 3/4, deprecated) are
 * skipped with their nesting checked.  A violation is an error value
 * (nd_err.h): the first one is kept in the nd_err the reader was given,
 * "NAME: byte N: message" where N is the absolute offset in the buffer (of
 * the tag, or of the bad length), and every reader sharing that nd_err
 * (sub-readers, slices, iterators) then ends: nd_pb_next returns 0.  A
 * value read at the failure is 0 and a payload is empty, so callers stay
 * inside the buffer and ask nd_pb_failed() where they need to know.
 */
#ifndef ND_PB_H
#define ND_PB_H

#include "nd_err.h"
#include "nd_util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
	ND_PB_VARINT = 0,
	ND_PB_I64 = 1,
	ND_PB_LEN = 2,
	ND_PB_SGROUP = 3,
	ND_PB_EGROUP = 4,
	ND_PB_I32 = 5
};

#define ND_PB_MAX_GROUP_DEPTH 64

typedef struct nd_pb {
	const unsigned char *base;	/* start of the whole buffer */
	const unsigned char *p;		/* next byte */
	const unsigned char *end;	/* end of this message */
	size_t size;			/* size of the whole buffer */
	const char *name;		/* for messages ("-" for stdin) */
	nd_err *err;			/* shared with its sub-readers */
} nd_pb;

typedef struct nd_pb_field {
	uint32_t num;
	unsigned wt;
	uint64_t v;			/* VARINT/I64/I32 value; LEN: length */
	const unsigned char *data;	/* LEN: payload (v bytes) */
	const unsigned char *at;	/* the tag */
} nd_pb_field;

void nd_pb_init(nd_pb *r, const void *buf, size_t n, const char *name,
    nd_err *err);

static inline int
nd_pb_failed(const nd_pb *r)
{
	return r->err->code != 0;
}

/* A reader over the payload of length-delimited field f of r. */
static inline void
nd_pb_sub(nd_pb *sub, const nd_pb *r, const nd_pb_field *f)
{
	*sub = *r;
	sub->p = f->data;
	sub->end = f->data + f->v;
}

/* A reader over bytes [p, p+n) of the buffer r reads (n within it). */
static inline void
nd_pb_slice(nd_pb *sub, const nd_pb *r, const void *p, size_t n)
{
	*sub = *r;
	sub->p = p;
	sub->end = sub->p + n;
}

static inline size_t
nd_pb_off(const nd_pb *r, const void *at)
{
	return (size_t)((const unsigned char *)at - r->base);
}

/* An error at byte `at` of r's buffer (the first one is kept); r ends. */
void nd_pb_fail(nd_pb *r, const void *at, const char *fmt, ...)
    ND_PRINTF(3, 4);

/* The error of a length at lp (n, of field num) past the end of the
 * enclosing message; returns 0. */
int nd_pb_overrun(nd_pb *r, const unsigned char *lp, uint64_t n,
    unsigned num);
/* Slow paths (out of line). */
uint64_t nd_pb_varint_slow(nd_pb *r);
int nd_pb_next_slow(nd_pb *r, nd_pb_field *f, uint64_t tag);

/* Read a varint at r->p: one byte inline, longer ones out of line (an
 * unrolled inline loop measured slower: code size). */
static inline uint64_t
nd_pb_varint(nd_pb *r)
{
	if (ND_LIKELY(r->p < r->end && *r->p < 0x80))
		return *r->p++;
	return nd_pb_varint_slow(r);
}

/* Next field of the message: 1 with f filled, 0 at its end.  Groups are
 * skipped and reported with wt ND_PB_SGROUP (callers treat them as unknown). */
static inline int
nd_pb_next(nd_pb *r, nd_pb_field *f)
{
	uint64_t tag;

	if (r->p >= r->end || ND_UNLIKELY(nd_pb_failed(r)))
		return 0;
	f->at = r->p;
	tag = nd_pb_varint(r);
	f->num = (uint32_t)(tag >> 3);
	f->wt = (unsigned)(tag & 7);
	if (ND_LIKELY(f->wt == ND_PB_VARINT && f->num != 0 && tag >> 32 == 0)) {
		f->v = nd_pb_varint(r);
		return 1;
	}
	if (ND_LIKELY(f->wt == ND_PB_LEN && f->num != 0 && tag >> 32 == 0)) {
		const unsigned char *lp = r->p;

		f->v = nd_pb_varint(r);
		if (ND_UNLIKELY(f->v > (uint64_t)(r->end - r->p)))
			return nd_pb_overrun(r, lp, f->v, f->num);
		f->data = r->p;
		r->p += f->v;
		return 1;
	}
	return nd_pb_next_slow(r, f, tag);
}

/* An error unless field f has wire type wt (what names the field for
 * the message, e.g. "XLine.events"); f is then made an empty field of
 * that type, so what the caller does with it stays harmless. */
void nd_pb_want_fail(nd_pb *r, nd_pb_field *f, unsigned wt,
    const char *what);
static inline void
nd_pb_want(nd_pb *r, nd_pb_field *f, unsigned wt, const char *what)
{
	if (ND_UNLIKELY(f->wt != wt))
		nd_pb_want_fail(r, f, wt, what);
}

/* Reinterpretations of a scalar field's value. */
static inline int64_t nd_pb_i64(const nd_pb_field *f) { return (int64_t)f->v; }
static inline double
nd_pb_double(const nd_pb_field *f)
{
	double d;
	uint64_t v = f->v;

	memcpy(&d, &v, sizeof d);
	return d;
}

const char *nd_pb_wt_name(unsigned wt);

#endif
