#include "nd_pb.h"
#include "nd_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
nd_pb_init(nd_pb *r, const void *buf, size_t n, const char *name,
    nd_err *err)
{
	r->base = buf;
	r->p = buf;
	r->end = r->p + n;
	r->size = n;
	r->name = name;
	r->err = err;
}

const char *
nd_pb_wt_name(unsigned wt)
{
	static const char *const names[] = {
		"varint", "fixed64", "length-delimited", "start-group",
		"end-group", "fixed32", "invalid (6)", "invalid (7)"
	};

	return names[wt & 7];
}

/* A binary file that went through a text-encoding conversion has its
 * non-ASCII bytes replaced by U+FFFD (EF BF BD): say so, it is common. */
static int
looks_utf8_mangled(const nd_pb *r)
{
	size_t n = r->size < 65536 ? r->size : 65536, hits = 0;
	const unsigned char *b = r->base;

	for (size_t i = 0; i + 2 < n; i++)
		if (b[i] == 0xef && b[i + 1] == 0xbf && b[i + 2] == 0xbd) {
			if (++hits >= 4)
				return 1;
			i += 2;
		}
	return 0;
}

void
nd_pb_fail(nd_pb *r, const void *at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	r->p = r->end;
	if (nd_pb_failed(r))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nd_err_byte(r->err, r->name, nd_pb_off(r, at), "%s%s", msg,
	    looks_utf8_mangled(r) ? " (the file looks re-encoded as UTF-8 "
	    "text: its binary bytes were replaced by U+FFFD)" : "");
}

int
nd_pb_overrun(nd_pb *r, const unsigned char *lp, uint64_t n, unsigned num)
{
	nd_pb_fail(r, lp, "length %llu of field %u runs past the end of the "
	    "enclosing message (%llu bytes left)", (unsigned long long)n, num,
	    (unsigned long long)(r->end - r->p));
	return 0;
}

uint64_t
nd_pb_varint_slow(nd_pb *r)
{
	const unsigned char *p = r->p, *start = r->p;
	uint64_t v = 0;

	if (r->end - p >= 10) {
		/* No bounds check per byte. */
		for (int i = 0; i < 10; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (p[i] < 0x80) {
				r->p = p + i + 1;
				return v;
			}
		}
		nd_pb_fail(r, start, "varint longer than 10 bytes");
		return 0;
	}
	for (int i = 0; i < 10; i++) {
		if (p >= r->end) {
			nd_pb_fail(r, start, "truncated varint (the %s ends "
			    "after %d byte%s of it)", r->end == r->base + r->size ?
			    "input" : "enclosing message", i, i == 1 ? "" : "s");
			return 0;
		}
		v |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (*p++ < 0x80) {
			r->p = p;
			return v;
		}
	}
	nd_pb_fail(r, start, "varint longer than 10 bytes");
	return 0;
}

static void
skip_group(nd_pb *r, uint32_t num, const unsigned char *at, int depth)
{
	nd_pb_field f;

	if (depth > ND_PB_MAX_GROUP_DEPTH) {
		nd_pb_fail(r, at, "groups nested deeper than %d",
		    ND_PB_MAX_GROUP_DEPTH);
		return;
	}
	while (!nd_pb_failed(r)) {
		uint64_t tag;

		if (r->p >= r->end) {
			nd_pb_fail(r, at, "group (field %u) not closed before "
			    "the end of the enclosing message", (unsigned)num);
			return;
		}
		f.at = r->p;
		tag = nd_pb_varint(r);
		f.num = (uint32_t)(tag >> 3);
		f.wt = (unsigned)(tag & 7);
		if (nd_pb_failed(r))
			return;
		if (f.wt == ND_PB_EGROUP && tag >> 3 == num)
			return;
		if (f.wt == ND_PB_EGROUP) {
			nd_pb_fail(r, f.at, "end-group tag of field %llu does "
			    "not match the open group (field %u)",
			    (unsigned long long)(tag >> 3), (unsigned)num);
			return;
		}
		if (f.wt == ND_PB_SGROUP) {
			if (f.num == 0 || tag >> 32 != 0) {
				nd_pb_fail(r, f.at, "invalid field number %llu",
				    (unsigned long long)(tag >> 3));
				return;
			}
			skip_group(r, f.num, f.at, depth + 1);
			continue;
		}
		/* Reuse the scalar/LEN paths of nd_pb_next_slow. */
		r->p = f.at;
		if (!nd_pb_next(r, &f))
			nd_pb_fail(r, at, "group (field %u) not closed",
			    (unsigned)num);
	}
}

int
nd_pb_next_slow(nd_pb *r, nd_pb_field *f, uint64_t tag)
{
	uint64_t left;

	if (nd_pb_failed(r))
		return 0;	/* the tag's varint */
	if (tag >> 3 == 0 || tag >> 32 != 0) {
		nd_pb_fail(r, f->at, "invalid field number %llu (wire type %u)",
		    (unsigned long long)(tag >> 3), f->wt);
		return 0;
	}
	switch (f->wt) {
	case ND_PB_VARINT:
		f->v = nd_pb_varint(r);
		return !nd_pb_failed(r);
	case ND_PB_LEN: {
		const unsigned char *lp = r->p;

		f->v = nd_pb_varint(r);
		if (nd_pb_failed(r))
			return 0;
		if (f->v > (uint64_t)(r->end - r->p))
			return nd_pb_overrun(r, lp, f->v, f->num);
		f->data = r->p;
		r->p += f->v;
		return 1;
	}
	case ND_PB_I64:
	case ND_PB_I32: {
		unsigned n = f->wt == ND_PB_I64 ? 8 : 4;

		left = (uint64_t)(r->end - r->p);
		if (left < n) {
			nd_pb_fail(r, f->at, "%s field %u runs past the end of "
			    "the enclosing message (%llu bytes left)",
			    nd_pb_wt_name(f->wt), (unsigned)f->num,
			    (unsigned long long)left);
			return 0;
		}
		f->v = 0;
		for (unsigned i = 0; i < n; i++)
			f->v |= (uint64_t)r->p[i] << (8 * i);
		f->data = r->p;
		r->p += n;
		return 1;
	}
	case ND_PB_SGROUP:
		skip_group(r, f->num, f->at, 1);
		f->v = 0;
		f->data = NULL;
		return !nd_pb_failed(r);
	case ND_PB_EGROUP:
		nd_pb_fail(r, f->at, "end-group tag (field %u) without a "
		    "start-group", (unsigned)f->num);
		return 0;
	default:
		nd_pb_fail(r, f->at, "invalid wire type %u (field %u)", f->wt,
		    (unsigned)f->num);
		return 0;
	}
}

void
nd_pb_want_fail(nd_pb *r, nd_pb_field *f, unsigned wt, const char *what)
{
	nd_pb_fail(r, f->at, "%s (field %u) has wire type %s, expected %s",
	    what, (unsigned)f->num, nd_pb_wt_name(f->wt), nd_pb_wt_name(wt));
	f->wt = wt;
	f->v = 0;
	f->data = r->end;
}
