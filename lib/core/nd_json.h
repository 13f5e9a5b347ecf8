/*
 * nd_json: JSON text in and out, for one record at a time.
 *
 * Why our own decoder rather than a library: a stream record is a flat object
 * whose handful of known keys we need typed and whose other members we only
 * have to validate and carry through byte for byte.  A DOM parser (jansson,
 * json-c) allocates a node per value; jsmn (libjsmn-dev) tokenises without
 * validating strings, numbers or UTF-8, so it would still need a second pass.
 * This decoder validates and locates every value in one pass over the bytes,
 * allocates nothing, and leaves values as slices of the input ("raw"), which
 * re-emission copies unchanged.  Measured by `make bench` (bench/README.md).
 *
 * Limits that make hostile input harmless: nesting deeper than ND_JSON_MAX_DEPTH
 * is an error; integers read as integers must lie within +-2^53 so that jq and
 * awk (doubles) see the same value.
 *
 * Writing: nd_jw appends to an nd_buf, inserting commas itself.  Strings are
 * escaped per RFC 8259; invalid UTF-8 is replaced by U+FFFD, never copied raw.
 * Doubles are written in the shortest form that reads back exactly; NaN and
 * infinities become null.
 */
#ifndef ND_JSON_H
#define ND_JSON_H

#include "nd_buf.h"

#include <stddef.h>
#include <stdint.h>

#define ND_JSON_MAX_DEPTH 128
#define ND_JSON_MAX_SAFE_INT 9007199254740992LL	/* 2^53 */

typedef enum {
	ND_JNONE = 0, ND_JNULL, ND_JFALSE, ND_JTRUE, ND_JNUM, ND_JSTR, ND_JARR,
	ND_JOBJ
} nd_jtype;

/* A value as a slice of the input: raw covers the whole JSON text (strings
 * with their quotes). */
typedef struct nd_jval {
	nd_jtype type;
	const char *raw;
	size_t len;
	int esc;		/* strings: contains a backslash escape */
} nd_jval;

typedef struct nd_jerr {
	size_t off;		/* byte offset from the start of the text */
	const char *msg;	/* static string */
} nd_jerr;

/* A number longer than ND_JSON_MAX_NUMBER characters is an error ("number
 * too long") unless nd_json_long_numbers is set: nd_chrome sets it, since
 * foreign JSON may hold such numbers where their value is not needed, and
 * chrome2ndjson writes them as strings, so no stream holds one. */
#define ND_JSON_MAX_NUMBER 400
extern int nd_json_long_numbers;

/* Validate one value starting at *p (leading white space allowed); on
 * success fill v, advance *p past it and return 0; else fill e, return -1. */
int nd_json_value(const char **p, const char *base, const char *end,
    nd_jval *v, nd_jerr *e);

/* Iterate the members of an object value.  next() returns 1 with key (a
 * string value) and val, 0 at the end, -1 on error (cannot happen for a value
 * that nd_json_value accepted). */
typedef struct nd_jiter {
	const char *p, *end, *base;
	int first;
} nd_jiter;
void nd_jiter_init(nd_jiter *it, const nd_jval *obj, const char *base);
int nd_jiter_next(nd_jiter *it, nd_jval *key, nd_jval *val, nd_jerr *e);

/* Single pass over an object not validated beforehand (the fast path for
 * records): open at the '{' (leading white space allowed), then next()
 * validates and returns each member, 0 after the closing '}' with it->p
 * just past it, -1 on any error. */
int nd_jobj_open(nd_jiter *it, const char *p, const char *end,
    const char *base, nd_jerr *e);
int nd_jobj_next(nd_jiter *it, nd_jval *key, nd_jval *val, nd_jerr *e);

/* Keys to note among the top-level members of an object while it is
 * validated, so that a reader of a few members need not walk it again:
 * for each wanted key (no escapes in it), how many members have it (2: two
 * or more) and the first one's value.  esc is set when a member's key has
 * an escape (it is not compared: the notes may then miss a key). */
#define ND_JNOTE_MAX 8
typedef struct nd_jkey {
	const char *s;
	size_t n;
} nd_jkey;
typedef struct nd_jnote {
	const nd_jkey *want;
	unsigned nwant;		/* at most ND_JNOTE_MAX */
	uint8_t bylen[32];	/* 1 + the first wanted key of length n */
	uint8_t next[ND_JNOTE_MAX];	/* 1 + the next one of its length */
	unsigned esc;
	uint8_t count[ND_JNOTE_MAX];
	nd_jval val[ND_JNOTE_MAX];
} nd_jnote;

/* Set want and nwant, and index the wanted keys by length. */
void nd_jnote_init(nd_jnote *note, const nd_jkey *want, unsigned nwant);
/* nd_jobj_next that, when the member's key is `on` (a key of onlen bytes,
 * no escapes) and its value an object, notes that object's members in
 * note (counts reset first) and returns 2 instead of 1. */
int nd_jobj_next_noting(nd_jiter *it, nd_jval *key, nd_jval *val,
    nd_jerr *e, const char *on, size_t onlen, nd_jnote *note);

/* Array elements likewise. */
void nd_jaiter_init(nd_jiter *it, const nd_jval *arr, const char *base);
int nd_jaiter_next(nd_jiter *it, nd_jval *val, nd_jerr *e);

/* String value contents: the bytes between the quotes when esc == 0. */
static inline const char *nd_jstr_ptr(const nd_jval *v) { return v->raw + 1; }
static inline size_t nd_jstr_len(const nd_jval *v) { return v->len - 2; }
/* Decode a string value (quotes, escapes, surrogate pairs) into out
 * (appended).  The value must have been validated. */
void nd_json_unescape(const nd_jval *v, nd_buf *out);
/* A string value decoded into a new C string (caller frees); NULL when v
 * is NULL or not a string. */
char *nd_jstr_dup(const nd_jval *v);
/* Compare a string value with a C string, decoding escapes if needed. */
int nd_jstr_eq(const nd_jval *v, const char *s);

/* Exact integer of a number value; -1 when not an integer or |x| > 2^53. */
int nd_json_int(const nd_jval *v, int64_t *out);
/* Exact integer in the whole int64 range (for absolute epoch ns). */
int nd_json_int64(const nd_jval *v, int64_t *out);
/* Any number, as a double. */
double nd_json_double(const nd_jval *v);
/* Decimal text of a number scaled by 10^scale, exact, rounded half away from
 * zero past `scale` fractional digits (microseconds with scale 3 give ns).
 * -1 if not a number or out of int64 range. */
int nd_json_fixed(const char *s, size_t n, int scale, int64_t *out);

/* --- writing --- */
void nd_json_put_str(nd_buf *b, const char *s, size_t n);
void nd_json_put_i64(nd_buf *b, int64_t v);
void nd_json_put_u64(nd_buf *b, uint64_t v);
void nd_json_put_double(nd_buf *b, double v);

typedef struct nd_jw {
	nd_buf *b;
	int depth;
	uint64_t nonempty;	/* bit d: level d has an element */
	int after_key;
} nd_jw;

void nd_jw_init(nd_jw *w, nd_buf *b);
void nd_jw_obj(nd_jw *w);
void nd_jw_obj_end(nd_jw *w);
void nd_jw_arr(nd_jw *w);
void nd_jw_arr_end(nd_jw *w);
void nd_jw_key(nd_jw *w, const char *k);
void nd_jw_keyn(nd_jw *w, const char *k, size_t n);
void nd_jw_str(nd_jw *w, const char *s, size_t n);
void nd_jw_cstr(nd_jw *w, const char *s);
void nd_jw_int(nd_jw *w, int64_t v);
void nd_jw_uint(nd_jw *w, uint64_t v);
void nd_jw_dbl(nd_jw *w, double v);
void nd_jw_bool(nd_jw *w, int v);
void nd_jw_null(nd_jw *w);
void nd_jw_raw(nd_jw *w, const char *json, size_t n);	/* a valid value */

/* key + value shorthands */
#define nd_jw_kstr(w, k, s, n) (nd_jw_key((w), (k)), nd_jw_str((w), (s), (n)))
#define nd_jw_kcstr(w, k, s) (nd_jw_key((w), (k)), nd_jw_cstr((w), (s)))
#define nd_jw_kint(w, k, v) (nd_jw_key((w), (k)), nd_jw_int((w), (v)))
#define nd_jw_kuint(w, k, v) (nd_jw_key((w), (k)), nd_jw_uint((w), (v)))
#define nd_jw_kdbl(w, k, v) (nd_jw_key((w), (k)), nd_jw_dbl((w), (v)))
#define nd_jw_kbool(w, k, v) (nd_jw_key((w), (k)), nd_jw_bool((w), (v)))

#endif
