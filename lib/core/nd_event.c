#include "nd_event.h"
#include "nd_ascend.h"
#include "nd_hash.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

/* Reserved keys, their field and kind.  Kept in one table so the decoder,
 * the writer and trace-check agree on the contract. */
enum kind { K_STR, K_INT, K_OBJ };
enum field {
	F_TYPE, F_TS, F_DUR, F_NAME, F_PID, F_TID, F_PROCESS, F_THREAD,
	F_DEVICE, F_RANK, F_STEP, F_CAT, F_CLASS, F_FAMILY, F_SCOPE, F_ARGS,
	F_VALUES, F_ORIGIN, F_HOST, F_SOURCE
};

static const struct reserved {
	const char *key;
	size_t len;
	enum field f;
	enum kind k;
} reserved[] = {
#define R(k, f, t) { k, sizeof(k) - 1, f, t }
	R("type", F_TYPE, K_STR), R("ts_ns", F_TS, K_INT),
	R("dur_ns", F_DUR, K_INT), R("name", F_NAME, K_STR),
	R("pid", F_PID, K_INT), R("tid", F_TID, K_INT),
	R("process", F_PROCESS, K_STR), R("thread", F_THREAD, K_STR),
	R("device", F_DEVICE, K_STR), R("rank", F_RANK, K_INT),
	R("step", F_STEP, K_INT), R("cat", F_CAT, K_STR),
	R("class", F_CLASS, K_STR), R("family", F_FAMILY, K_STR),
	R("scope", F_SCOPE, K_STR), R("args", F_ARGS, K_OBJ),
	R("values", F_VALUES, K_OBJ), R("origin_ns", F_ORIGIN, K_INT),
	R("host", F_HOST, K_STR), R("source", F_SOURCE, K_STR),
#undef R
};
#define NRESERVED (sizeof reserved / sizeof reserved[0])

/* The args keys noted while decoding, in ND_ARG_* order. */
static const nd_jkey arg_keys[ND_ARG_N] = {
#define K(s) { s, sizeof(s) - 1 }
	K("flops"), K("model_flops"), K("correlation"), K("correlation_id"),
	K("step_num"), K("group_id"), K("bytes_accessed"), K("bytes_allocated")
#undef K
};
_Static_assert(ND_ARG_N <= ND_JNOTE_MAX, "nd_jnote holds the args keys");

static const char *const type_names[] = {
	"other", "meta", "span", "instant", "counter", "flow", "end"
};

nd_evtype
nd_evtype_of(const char *s, size_t n)
{
	for (int t = ND_EV_META; t <= ND_EV_END; t++)
		if (strlen(type_names[t]) == n && memcmp(type_names[t], s, n) == 0)
			return (nd_evtype)t;
	return ND_EV_OTHER;
}

const char *
nd_evtype_name(nd_evtype t)
{
	return type_names[t];
}

int
nd_str_eq(nd_str a, const char *s)
{
	size_t n = strlen(s);

	return a.p != NULL && a.n == n && memcmp(a.p, s, n) == 0;
}

#define S(x) { x, sizeof(x) - 1 }
static const struct lit {
	const char *s;
	size_t n;
} annot_lines[] = {
	S("Steps"), S("XLA Modules"), S("XLA TraceMe"), S("TensorFlow Ops"),
	S("TensorFlow Name Scope"), S("Framework Ops"),
	S("Framework Name Scope"), S("Source code"), S("Launch Stats")
}, device_cats[] = {
	S("kernel"), S("gpu_memcpy"), S("gpu_memset"), S("cuda_sync"),
	S("gpu_op"), S("memcpy"), S("memset"), S("mtia_ccp_events"),
	S("hpu_op")
},
    /* a device annotation (record_function on the GPU lane) */
    dev_annot_cat = S("gpu_user_annotation"),
    /* the profiler's own span over the whole capture (Kineto's "PyTorch
     * Profiler (0)", cat "Trace", on the "Spans" process): bookkeeping,
     * not work (lower case, as ieq wants) */
    profiler_cat = S("trace");
#undef S

static int
ieq(nd_str s, const struct lit *l)
{
	/* the first letter (all are lower-case letters) rules out most
	 * categories without a call */
	return s.n == l->n && (s.p[0] | 0x20) == l->s[0] &&
	    strncasecmp(s.p, l->s, l->n) == 0;
}

int
nd_kind_of(nd_str cat, nd_str process, nd_str thread)
{
	if (cat.p != NULL) {
		for (size_t i = 0; i < sizeof device_cats / sizeof *device_cats;
		    i++)
			if (ieq(cat, &device_cats[i]))
				return ND_KIND_DEVICE;
		if (ieq(cat, &dev_annot_cat) || ieq(cat, &profiler_cat))
			return ND_KIND_ANNOT;
	}
	switch (nd_ascend_lane(process.p, process.n)) {
	case ND_ASC_DEVICE:
	case ND_ASC_COMM:
		return ND_KIND_DEVICE;
	case ND_ASC_DERIVED:
		return ND_KIND_ANNOT;
	}
	if (process.p == NULL || process.n < 8 ||
	    memcmp(process.p, "/device:", 8) != 0)
		return ND_KIND_HOST;
	if (thread.p != NULL)
		for (size_t i = 0; i < sizeof annot_lines / sizeof *annot_lines;
		    i++)
			if (thread.n == annot_lines[i].n &&
			    memcmp(thread.p, annot_lines[i].s, thread.n) == 0)
				return ND_KIND_ANNOT;
	return ND_KIND_DEVICE;
}

int
nd_cat_on_device(nd_str cat)
{
	if (cat.p == NULL)
		return 0;
	return ieq(cat, &dev_annot_cat) ||
	    nd_kind_of(cat, ND_STR_NONE, ND_STR_NONE) == ND_KIND_DEVICE;
}

void
nd_event_init(nd_event *ev)
{
	memset(ev, 0, sizeof *ev);
}

void
nd_event_free(nd_event *ev)
{
	free(ev->members);
	ev->members = NULL;
	ev->cap_members = 0;
}

static void
clear_fields(nd_event *ev)
{
	nd_member *m = ev->members;
	size_t cap = ev->cap_members;

	/* The decoded fields come first in nd_event: clear just those. */
	memset(ev, 0, offsetof(nd_event, line));
	/* argnote (last) is valid only with has_argnote: not cleared */
	memset(&ev->line, 0, offsetof(nd_event, argnote) -
	    offsetof(nd_event, line));
	ev->members = m;
	ev->cap_members = cap;
}

/* Find the reserved key for a raw key string (no escapes in reserved keys,
 * so an escaped key is never reserved: it is kept as an unknown member). */
static const struct reserved *
lookup(const nd_jval *key)
{
	const char *k = key->raw + 1;
	size_t n = key->len - 2;
	int i;

	if (key->esc)
		return NULL;
	/* By length, then one compare: this runs for every member. */
	switch (n) {
	case 3:
		i = k[0] == 'p' ? 4 : k[0] == 't' ? 5 : k[0] == 'c' ? 11 : -1;
		break;
	case 4:
		i = k[0] == 't' ? 0 : k[0] == 'n' ? 3 : k[0] == 'r' ? 9 :
		    k[0] == 's' ? 10 : k[0] == 'a' ? 15 : k[0] == 'h' ? 18 : -1;
		break;
	case 5:
		i = k[0] == 't' ? 1 : k[0] == 'c' ? 12 : k[0] == 's' ? 14 : -1;
		break;
	case 6:
		i = k[0] == 'd' ? (k[1] == 'u' ? 2 : 8) : k[0] == 't' ? 7 :
		    k[0] == 'f' ? 13 : k[0] == 'v' ? 16 : k[0] == 's' ? 19 : -1;
		break;
	case 7:
		i = 6;
		break;
	case 9:
		i = 17;
		break;
	default:
		return NULL;
	}
	if (i < 0 || reserved[i].len != n)
		return NULL;
	/* A compare of constant length is a few instructions, not a call. */
	switch (n) {
	case 3: return memcmp(reserved[i].key, k, 3) == 0 ? &reserved[i] : NULL;
	case 4: return memcmp(reserved[i].key, k, 4) == 0 ? &reserved[i] : NULL;
	case 5: return memcmp(reserved[i].key, k, 5) == 0 ? &reserved[i] : NULL;
	case 6: return memcmp(reserved[i].key, k, 6) == 0 ? &reserved[i] : NULL;
	case 7: return memcmp(reserved[i].key, k, 7) == 0 ? &reserved[i] : NULL;
	default: return memcmp(reserved[i].key, k, n) == 0 ? &reserved[i] : NULL;
	}
}

static void
seterr(nd_everr *err, size_t off, const char *fmt, const char *a)
{
	err->off = off;
	snprintf(err->msg, sizeof err->msg, fmt, a);
}

/* Where the string of a reserved key goes, or NULL (not kept typed). */
static nd_str *
str_field(nd_event *ev, enum field f)
{
	switch (f) {
	case F_TYPE: return &ev->type_name;
	case F_NAME: return &ev->name;
	case F_PROCESS: return &ev->process;
	case F_THREAD: return &ev->thread;
	case F_DEVICE: return &ev->device;
	case F_CAT: return &ev->cat;
	case F_CLASS: return &ev->cls;
	case F_FAMILY: return &ev->family;
	case F_SCOPE: return &ev->scope;
	case F_HOST: return &ev->host;
	case F_SOURCE: return &ev->source_path;
	default: return NULL;
	}
}

/* Where the integer of a reserved key goes, and its ND_HAS_* bit. */
static int64_t *
int_field(nd_event *ev, enum field f, unsigned *bit)
{
	switch (f) {
	case F_TS: *bit = ND_HAS_TS; return &ev->ts_ns;
	case F_DUR: *bit = ND_HAS_DUR; return &ev->dur_ns;
	case F_PID: *bit = ND_HAS_PID; return &ev->pid;
	case F_TID: *bit = ND_HAS_TID; return &ev->tid;
	case F_RANK: *bit = ND_HAS_RANK; return &ev->rank;
	case F_STEP: *bit = ND_HAS_STEP; return &ev->step;
	case F_ORIGIN: *bit = ND_HAS_ORIGIN; return &ev->origin_ns;
	default: *bit = 0; return NULL;
	}
}

static int
decode_str(nd_event *ev, const struct reserved *rk, const nd_jval *val,
    nd_member *m, nd_buf *scratch, const char *line, nd_everr *err)
{
	nd_str *dst;
	size_t at;

	if (val->type != ND_JSTR) {
		seterr(err, (size_t)(val->raw - line),
		    "\"%s\" must be a string", rk->key);
		return -1;
	}
	if ((dst = str_field(ev, rk->f)) == NULL)
		return 0;
	at = scratch->len;
	if (!val->esc) {
		/* room was reserved by nd_event_decode: copy directly */
		size_t n = val->len - 2;

		memcpy(scratch->p + at, val->raw + 1, n);
		scratch->p[at + n] = '\0';
		scratch->len = at + n + 1;
		dst->p = scratch->p + at;
		dst->n = n;
		m->known = 1;
		return 0;
	}
	nd_json_unescape(val, scratch);
	dst->p = scratch->p + at;
	dst->n = scratch->len - at;
	nd_buf_addc(scratch, '\0');
	m->known = 1;
	return 0;
}

static int
decode_int(nd_event *ev, const struct reserved *rk, const nd_jval *val,
    nd_member *m, const char *line, nd_everr *err)
{
	int64_t v, *dst;
	unsigned bit;

	if (rk->f == F_ORIGIN ? nd_json_int64(val, &v) != 0 :
	    nd_json_int(val, &v) != 0) {
		seterr(err, (size_t)(val->raw - line),
		    rk->f == F_ORIGIN ? "\"%s\" must be an integer" :
		    "\"%s\" must be an integer within +-2^53", rk->key);
		return -1;
	}
	if (rk->f == F_DUR && v < 0) {
		seterr(err, (size_t)(val->raw - line), "%s",
		    "\"dur_ns\" must not be negative");
		return -1;
	}
	dst = int_field(ev, rk->f, &bit);
	*dst = v;
	ev->has |= bit;
	m->known = 1;
	return 0;
}

/* Record one member; a reserved key gets its typed field checked and
 * filled.  0 ok, -1 error. */
static int
decode_member(nd_event *ev, const nd_jval *key, const nd_jval *val,
    nd_buf *scratch, const char *line, nd_everr *err)
{
	const struct reserved *rk = lookup(key);
	nd_member *m;

	if (ND_UNLIKELY(ev->nmembers == ev->cap_members))
		nd_grow(&ev->members, &ev->cap_members, ev->nmembers + 1,
		    sizeof *ev->members);
	m = &ev->members[ev->nmembers++];
	m->key = *key;
	m->val = *val;
	m->known = 0;
	if (rk == NULL) {
		m->field = 0;
		return 0;
	}
	m->field = (int)rk->f + 1;
	if (val->type == ND_JNULL)
		return 0;
	switch (rk->k) {
	case K_STR:
		return decode_str(ev, rk, val, m, scratch, line, err);
	case K_INT:
		return decode_int(ev, rk, val, m, line, err);
	case K_OBJ:
		if (val->type != ND_JOBJ) {
			seterr(err, (size_t)(val->raw - line),
			    "\"%s\" must be an object", rk->key);
			return -1;
		}
		if (rk->f == F_ARGS)
			ev->args = *val;
		else
			ev->values = *val;
		m->known = 1;
		break;
	}
	return 0;
}

/* Open the object a line holds; a line that is another JSON value is
 * named in the error rather than only said not to be an object. */
static int
open_record(nd_jiter *it, const char *line, const char *end, nd_everr *err)
{
	const char *p = line;
	nd_jval obj;
	nd_jerr je;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p != '{') {
		if (nd_json_value(&p, line, end, &obj, &je) != 0) {
			err->off = je.off;
			snprintf(err->msg, sizeof err->msg, "invalid JSON: %s",
			    je.msg);
			return -1;
		}
		seterr(err, (size_t)(obj.raw - line), "record is a JSON %s, "
		    "not an object", obj.type == ND_JARR ? "array" :
		    obj.type == ND_JSTR ? "string" : obj.type == ND_JNUM ?
		    "number" : "literal");
		return -1;
	}
	if (nd_jobj_open(it, p, end, line, &je) != 0) {
		err->off = je.off;
		snprintf(err->msg, sizeof err->msg, "invalid JSON: %s", je.msg);
		return -1;
	}
	return 0;
}

int
nd_event_decode(nd_event *ev, const char *line, size_t len, nd_buf *scratch,
    nd_everr *err)
{
	const char *p, *end = line + len;
	nd_jval key, val;
	nd_jerr je;
	nd_jiter it;
	int r;

	clear_fields(ev);
	ev->line = line;
	ev->len = len;
	nd_buf_reset(scratch);
	/* Decoded strings are never longer than their raw text, plus a NUL
	 * each: reserving this up front keeps the pointers stable. */
	nd_buf_reserve(scratch, len + 64);

	if (open_record(&it, line, end, err) != 0)
		return -1;
	if (ev->argnote.want == NULL)
		nd_jnote_init(&ev->argnote, arg_keys, ND_ARG_N);
	while ((r = nd_jobj_next_noting(&it, &key, &val, &je, "args", 4,
	    &ev->argnote)) > 0) {
		if (r == 2)
			ev->has_argnote = 1;
		if (decode_member(ev, &key, &val, scratch, line, err) != 0)
			return -1;
	}
	if (r < 0) {
		err->off = je.off;
		snprintf(err->msg, sizeof err->msg, "invalid JSON: %s", je.msg);
		return -1;
	}
	p = it.p;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	if (p < end) {
		seterr(err, (size_t)(p - line), "%s",
		    "trailing characters after the JSON object");
		return -1;
	}
	if (ev->type_name.p == NULL) {
		seterr(err, 0, "%s", "record has no \"type\" string");
		return -1;
	}
	ev->type = nd_evtype_of(ev->type_name.p, ev->type_name.n);
	ev->kind = nd_kind_of(ev->cat, ev->process, ev->thread);
	/* Keys of meta/end that share names with span keys keep their raw
	 * form only; a meta's "source" is a path, an end has counts. */
	return 0;
}

const nd_jval *
nd_event_get(const nd_event *ev, const char *key)
{
	size_t n = strlen(key);

	for (size_t i = 0; i < ev->nmembers; i++) {
		const nd_jval *k = &ev->members[i].key;

		if (!k->esc && k->len - 2 == n && memcmp(k->raw + 1, key, n) == 0)
			return &ev->members[i].val;
	}
	for (size_t i = 0; i < ev->nmembers; i++)
		if (ev->members[i].key.esc && nd_jstr_eq(&ev->members[i].key, key))
			return &ev->members[i].val;
	return NULL;
}

const char *
nd_event_dup_key(const nd_event *ev)
{
	uint32_t seen = 0;	/* reserved keys met, by field */

	for (size_t i = 0; i < ev->nmembers; i++) {
		int f = ev->members[i].field;

		if (f == 0)
			continue;
		if (seen & 1u << f) {
			for (size_t k = 0; k < NRESERVED; k++)
				if ((int)reserved[k].f + 1 == f)
					return reserved[k].key;
		}
		seen |= 1u << f;
	}
	return NULL;
}

int
nd_event_arg_noted(const nd_event *ev, int which, nd_jval *out)
{
	if (ev->args.type != ND_JOBJ)
		return 0;
	if (!ev->has_argnote || ev->argnote.esc)
		return -1;
	if (ev->argnote.count[which] > 0)
		*out = ev->argnote.val[which];
	return ev->argnote.count[which];
}

int
nd_event_arg(const nd_event *ev, const char *key, nd_jval *out)
{
	nd_jiter it;
	nd_jval k, v;
	nd_jerr je;
	size_t n = strlen(key);

	if (ev->args.type != ND_JOBJ)
		return 0;
	for (int i = 0; i < ND_ARG_N; i++)
		if (arg_keys[i].n == n && memcmp(arg_keys[i].s, key, n) == 0) {
			int c = nd_event_arg_noted(ev, i, out);

			if (c >= 0)
				return c > 0;
			break;
		}
	nd_jiter_init(&it, &ev->args, ev->args.raw);
	while (nd_jiter_next(&it, &k, &v, &je) == 1)
		if (nd_jstr_eq(&k, key)) {
			*out = v;
			return 1;
		}
	return 0;
}

_Static_assert(ND_SID_N == sizeof ((nd_event *)0)->sid /
    sizeof ((nd_event *)0)->sid[0], "a memo per field");

static nd_intern *sid_tab;	/* the program's; reachable until exit */

uint32_t
nd_sid_intern(const char *s, size_t n)
{
	if (sid_tab == NULL)
		sid_tab = nd_intern_new();
	return nd_intern_id(sid_tab, s, n);
}

const char *
nd_sid_str(uint32_t id, size_t *n)
{
	return nd_intern_str(sid_tab, id, n);
}

static nd_str
sid_field(const nd_event *ev, int field)
{
	switch (field) {
	case ND_SID_NAME: return ev->name;
	case ND_SID_FAMILY: return ev->family;
	case ND_SID_CLASS: return ev->cls;
	case ND_SID_SCOPE: return ev->scope;
	default: return ev->device;
	}
}

int
nd_event_sid_known(const nd_event *ev, int field, uint32_t *id)
{
	nd_str s = sid_field(ev, field);

	if (s.p == NULL) {
		*id = ND_SID_NONE;
		return 1;
	}
	if ((ev->sid_have >> field & 1) && ev->sidp[field] == s.p) {
		*id = ev->sid[field];
		return 1;
	}
	return 0;
}

uint32_t
nd_event_sid(const nd_event *cev, int field)
{
	nd_event *ev = (nd_event *)cev;	/* the memo only: see nd_event.h */
	nd_str s = sid_field(ev, field);

	if (s.p == NULL)
		return ND_SID_NONE;
	/* the pointer too: a caller may point a field elsewhere by hand */
	if ((ev->sid_have >> field & 1) && ev->sidp[field] == s.p)
		return ev->sid[field];
	ev->sid[field] = nd_sid_intern(s.p, s.n);
	ev->sidp[field] = s.p;
	ev->sid_have |= 1u << field;
	return ev->sid[field];
}

static void
put_kstr(nd_buf *b, const char *key, nd_str s)
{
	if (s.p == NULL)
		return;
	nd_buf_adds(b, key);
	nd_json_put_str(b, s.p, s.n);
}

static void
put_kint(nd_buf *b, const char *key, int64_t v)
{
	nd_buf_adds(b, key);
	nd_json_put_i64(b, v);
}

void
nd_event_write(nd_buf *b, const nd_event *ev)
{
	nd_str tn = ev->type_name.p ? ev->type_name :
	    nd_str_c(nd_evtype_name(ev->type));

	/* Records other than timed events (meta, end, derived types) are
	 * re-emitted member by member in their own order. */
	if (ev->nmembers > 0 && (ev->type == ND_EV_META ||
	    ev->type == ND_EV_END || ev->type == ND_EV_OTHER)) {
		nd_buf_addc(b, '{');
		for (size_t i = 0; i < ev->nmembers; i++) {
			const nd_member *m = &ev->members[i];

			if (i > 0)
				nd_buf_addc(b, ',');
			nd_buf_add(b, m->key.raw, m->key.len);
			nd_buf_addc(b, ':');
			nd_buf_add(b, m->val.raw, m->val.len);
		}
		if (ev->extra_len > 0)
			nd_buf_add(b, ev->extra, ev->extra_len);
		nd_buf_add(b, "}\n", 2);
		return;
	}
	nd_buf_add(b, "{\"type\":", 8);
	nd_json_put_str(b, tn.p, tn.n);
	if (ev->has & ND_HAS_TS)
		put_kint(b, ",\"ts_ns\":", ev->ts_ns);
	if (ev->has & ND_HAS_DUR)
		put_kint(b, ",\"dur_ns\":", ev->dur_ns);
	put_kstr(b, ",\"name\":", ev->name);
	if (ev->has & ND_HAS_PID)
		put_kint(b, ",\"pid\":", ev->pid);
	if (ev->has & ND_HAS_TID)
		put_kint(b, ",\"tid\":", ev->tid);
	put_kstr(b, ",\"process\":", ev->process);
	put_kstr(b, ",\"thread\":", ev->thread);
	put_kstr(b, ",\"device\":", ev->device);
	if (ev->has & ND_HAS_RANK)
		put_kint(b, ",\"rank\":", ev->rank);
	if (ev->has & ND_HAS_STEP)
		put_kint(b, ",\"step\":", ev->step);
	put_kstr(b, ",\"cat\":", ev->cat);
	put_kstr(b, ",\"class\":", ev->cls);
	put_kstr(b, ",\"family\":", ev->family);
	put_kstr(b, ",\"scope\":", ev->scope);
	if (ev->values.type == ND_JOBJ) {
		nd_buf_add(b, ",\"values\":", 10);
		nd_buf_add(b, ev->values.raw, ev->values.len);
	}
	if (ev->args.type == ND_JOBJ) {
		nd_buf_add(b, ",\"args\":", 8);
		nd_buf_add(b, ev->args.raw, ev->args.len);
	}
	for (size_t i = 0; i < ev->nmembers; i++) {
		const nd_member *m = &ev->members[i];

		/* Reserved keys were written above (or are null: dropped, as
		 * ndtrace(7) omits unknown values); the rest keep their order. */
		if (m->known || lookup(&m->key) != NULL)
			continue;
		nd_buf_addc(b, ',');
		nd_buf_add(b, m->key.raw, m->key.len);
		nd_buf_addc(b, ':');
		nd_buf_add(b, m->val.raw, m->val.len);
	}
	if (ev->extra_len > 0)
		nd_buf_add(b, ev->extra, ev->extra_len);
	nd_buf_add(b, "}\n", 2);
}

void
nd_meta_write(nd_buf *b, const char *source, const char *format,
    int64_t origin_ns, const char *host, int has_rank, int64_t rank)
{
	nd_meta_write_devices(b, source, format, origin_ns, host, has_rank,
	    rank, NULL, 0);
}

void
nd_meta_write_devices(nd_buf *b, const char *source, const char *format,
    int64_t origin_ns, const char *host, int has_rank, int64_t rank,
    const char *devices, size_t ndevices)
{
	nd_jw w;

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "meta");
	nd_jw_kcstr(&w, "schema", ND_SCHEMA);
	nd_jw_kcstr(&w, "source", source);
	nd_jw_kcstr(&w, "format", format);
	nd_jw_kint(&w, "origin_ns", origin_ns);
	nd_jw_key(&w, "host");
	if (host != NULL)
		nd_jw_cstr(&w, host);
	else
		nd_jw_null(&w);
	nd_jw_key(&w, "rank");
	if (has_rank)
		nd_jw_int(&w, rank);
	else
		nd_jw_null(&w);
	nd_jw_key(&w, "producer");
	nd_buf_addc(b, '"');
	nd_buf_adds(b, nd_progname);
	nd_buf_adds(b, " " ND_VERSION "\"");
	if (ndevices > 0) {
		nd_jw_key(&w, "devices");
		nd_buf_add(b, devices, ndevices);
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

/* One of the two keys, once: what the decoder noted; else walk (the
 * first of them that holds an integer). */
int
nd_event_corr(const nd_event *ev, int64_t *out)
{
	nd_jiter it;
	nd_jval k, v;
	nd_jerr je;

	int c1, c2;

	if (ev->args.type != ND_JOBJ)
		return 0;
	c1 = nd_event_arg_noted(ev, ND_ARG_CORRELATION, &v);
	c2 = nd_event_arg_noted(ev, ND_ARG_CORRELATION_ID, &k);
	if (c1 == 0 && c2 == 0)
		return 0;
	if (c1 + c2 == 1) {
		if (c2 == 1)
			v = k;
		return v.type == ND_JNUM && nd_json_int(&v, out) == 0;
	}
	/* not noted: a key spelled with an escape is still a key */
	if (memmem(ev->args.raw, ev->args.len, "correlation", 11) == NULL &&
	    memchr(ev->args.raw, '\\', ev->args.len) == NULL)
		return 0;
	nd_jiter_init(&it, &ev->args, ev->args.raw);
	while (nd_jiter_next(&it, &k, &v, &je) == 1)
		if ((nd_jstr_eq(&k, "correlation") ||
		    nd_jstr_eq(&k, "correlation_id")) && v.type == ND_JNUM &&
		    nd_json_int(&v, out) == 0)
			return 1;
	return 0;
}

int
nd_step_number(const char *p, size_t n, int64_t *out)
{
	int64_t v = 0;

	if (n == 0 || n > 10)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (p[i] - '0');
	}
	if (v > INT32_MAX)
		return 0;
	*out = v;
	return 1;
}
