#include "nd_steps.h"
#include "nd_hash.h"
#include "nd_ivlog.h"
#include "nd_json.h"
#include "nd_nest.h"
#include "nd_name.h"
#include "nd_peak.h"
#include "nd_rx.h"
#include "nd_sort.h"
#include "nd_sum.h"
#include "nd_util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *
nd_ss_name(int step_source)
{
	static const char *const n[] = {
		"none", "inferred", "xla_module", "marker"
	};

	return step_source >= 0 && step_source <= ND_SS_MARKER ?
	    n[step_source] : "none";
}

int
nd_ss_of(const nd_jval *v)
{
	if (v != NULL && v->type == ND_JSTR)
		for (int k = ND_SS_NONE; k < ND_SS_MARKER; k++)
			if (nd_jstr_eq(v, nd_ss_name(k)))
				return k;
	return ND_SS_MARKER;
}

const char *
nd_sm_name(int marker)
{
	switch (marker) {
	case ND_SM_OPSTEP: return "op_step";
	case ND_SM_STEPNUM: return "step_num";
	case ND_SM_PROFILER: return "profiler_step";
	case ND_SM_STEPSLINE: return "steps_line";
	case ND_SM_REGEX: return "regex";
	default: return "none";
	}
}

/* ---- what a span is ---- */

/* s equals the string literal lit */
#define SEQ(s, lit) ((s).p != NULL && (s).n == sizeof(lit) - 1 && \
	memcmp((s).p, lit, sizeof(lit) - 1) == 0)

/* s equals the literal, ignoring case; s starts with the literal */
#define ieq(s, lit) ((s).p != NULL && (s).n == sizeof(lit) - 1 && \
	strncasecmp((s).p, lit, sizeof(lit) - 1) == 0)
#define has_prefix(s, lit) ((s).p != NULL && (s).n >= sizeof(lit) - 1 && \
	memcmp((s).p, lit, sizeof(lit) - 1) == 0)

/* A whole string of decimal digits (optional '-') as an integer: a value
 * of args (a step number in a name is nd_step_number's). */
static int
parse_int(const char *p, size_t n, int64_t *out)
{
	int neg = 0;
	int64_t v = 0;

	if (n > 0 && *p == '-') {
		neg = 1;
		p++;
		n--;
	}
	if (n == 0 || n > 15)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (p[i] - '0');
	}
	*out = neg ? -v : v;
	return 1;
}

/* args.KEY as an integer (a number, or a string of digits). */
static int
arg_int(const nd_event *ev, const char *key, int64_t *out)
{
	nd_jval v;

	if (!nd_event_arg(ev, key, &v))
		return 0;
	if (v.type == ND_JNUM)
		return nd_json_int(&v, out) == 0;
	if (v.type == ND_JSTR && !v.esc)
		return parse_int(nd_jstr_ptr(&v), nd_jstr_len(&v), out);
	return 0;
}

/* args may have a step_num member: what the decoder noted, else a search
 * (a cheap test before arg_int's walk). */
static int
args_mention_step_num(const nd_event *ev)
{
	nd_jval v;
	int c = nd_event_arg_noted(ev, ND_ARG_STEP_NUM, &v);

	if (c >= 0)
		return c > 0;
	return memmem(ev->args.raw, ev->args.len, "\"step_num\"", 10) != NULL;
}

/* A host span that waits for the device to drain: CUDA/HIP
 * *Synchronize calls, JAX block_until_ready and PjRt's
 * BlockHostUntilReady.  (Kineto's cuda_sync events are device ops.) */
static int
is_sync(const nd_event *ev)
{
	return ev->name.p != NULL &&
	    (memmem(ev->name.p, ev->name.n, "Synchronize", 11) != NULL ||
	    memmem(ev->name.p, ev->name.n, "block_until_ready", 17) != NULL ||
	    memmem(ev->name.p, ev->name.n, "BlockHostUntilReady", 19) != NULL);
}

/*
 * Length of the XLA module name in a module span's name, 0 when it is not
 * one: device (host 0) "NAME(fingerprint)" or "NAME"; host
 * "NAME:XLA <platform> module".
 */
static size_t
module_name_len(const char *p, size_t n, int host)
{
	if (host) {
		if (n < 7 || memcmp(p + n - 7, " module", 7) != 0)
			return 0;
		for (size_t i = n - 7; i-- > 0;)
			if (n - 7 - i >= 5 && memcmp(p + i, ":XLA ", 5) == 0)
				return i;
		return 0;
	}
	if (n > 2 && p[n - 1] == ')') {
		size_t i = n - 1;

		while (i > 0 && isdigit((unsigned char)p[i - 1]))
			i--;
		if (i > 1 && i < n - 1 && p[i - 1] == '(')
			return i - 1;
	}
	return n;
}

/* 1: a span of the "XLA Modules" line of a device (xplane2ndjson's cat
 * xla_module, or the line's name in a Chrome/Perfetto export); 2: a host
 * span that runs a module; 0: neither. */
static int
xla_module(const nd_event *ev, int kind)
{
	if (SEQ(ev->cat, "xla_module") || (SEQ(ev->thread, "XLA Modules") &&
	    has_prefix(ev->process, "/device:")))
		return module_name_len(ev->name.p, ev->name.n, 0) > 0;
	if (kind == ND_KIND_HOST &&
	    module_name_len(ev->name.p, ev->name.n, 1) > 0)
		return 2;
	return 0;
}

void
nd_span_role_of(const nd_event *ev, const regex_t *re, nd_span_role *r)
{
	memset(r, 0, sizeof *r);
	r->kind = nd_event_kind(ev);
	if (ev->dur_ns > 0 && ev->name.p != NULL) {
		regmatch_t m[2];

		if (re != NULL && nd_rx_exec(re, ev->name.p, ev->name.n, 2,
		    m) == 0) {
			r->marker = ND_SM_REGEX;
			if (m[1].rm_so >= 0 && nd_step_number(ev->name.p +
			    m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so),
			    &r->num))
				r->has_num = 1;
			else if (args_mention_step_num(ev) &&
			    arg_int(ev, "step_num", &r->num))
				r->has_num = 1;
			else {
				size_t e = ev->name.n, b;

				while (e > 0 && !isdigit((unsigned char)ev->name.p[e - 1]))
					e--;
				b = e;
				while (b > 0 && isdigit((unsigned char)ev->name.p[b - 1]))
					b--;
				if (e > b && nd_step_number(ev->name.p + b, e - b,
				    &r->num))
					r->has_num = 1;
			}
		} else if (r->kind == ND_KIND_ANNOT && SEQ(ev->thread, "Steps") &&
		    has_prefix(ev->process, "/device:")) {
			r->marker = ND_SM_STEPSLINE;
			r->has_num = nd_step_number(ev->name.p, ev->name.n,
			    &r->num) ||
			    arg_int(ev, "step_num", &r->num) ||
			    arg_int(ev, "group_id", &r->num);
		} else if (r->kind == ND_KIND_HOST &&
		    has_prefix(ev->name, "ProfilerStep#")) {
			r->marker = ND_SM_PROFILER;
			r->has_num = nd_step_number(ev->name.p + 13,
			    ev->name.n - 13, &r->num);
		} else if (r->kind == ND_KIND_HOST &&
		    args_mention_step_num(ev) &&
		    arg_int(ev, "step_num", &r->num)) {
			r->marker = ND_SM_STEPNUM;
			r->has_num = 1;
		}
	}
	if (ev->dur_ns <= 0)
		return;
	if (r->marker == ND_SM_NONE && r->kind != ND_KIND_DEVICE &&
	    ev->name.p != NULL)
		r->xla = xla_module(ev, r->kind);
	if (r->kind == ND_KIND_DEVICE) {
		r->role = ND_ROLE_DEVICE;
		if (SEQ(ev->cls, "communication") ||
		    SEQ(ev->cls, "stall"))
			r->cat = ND_CAT_COMM;
		else if (SEQ(ev->cls, "memory"))
			r->cat = ND_CAT_MEMORY;
		else
			r->cat = ND_CAT_COMPUTE;
	} else if (r->kind == ND_KIND_HOST && r->marker == ND_SM_NONE) {
		r->sync = is_sync(ev);
		if (ieq(ev->cat, "python_function") ||
		    ieq(ev->cat, "user_annotation") ||
		    SEQ(ev->family, "python") || SEQ(ev->cls, "other"))
			return;
		r->role = ND_ROLE_HOST;
		r->comm = SEQ(ev->cls, "communication");
	}
}

void
nd_span_device_key(const nd_event *ev, nd_buf *b)
{
	nd_buf_reset(b);
	if (ev->device.p != NULL)
		nd_buf_add(b, ev->device.p, ev->device.n);
	else if (ev->process.p != NULL)
		nd_buf_add(b, ev->process.p, ev->process.n);
	else
		nd_buf_addf(b, "pid %lld", (long long)ev->pid);
}

void
nd_span_device_ref(const nd_event *ev, nd_buf *b, const char **k, size_t *n)
{
	if (ev->device.p != NULL) {
		*k = ev->device.p;
		*n = ev->device.n;
	} else if (ev->process.p != NULL) {
		*k = ev->process.p;
		*n = ev->process.n;
	} else {
		nd_span_device_key(ev, b);
		*k = b->p;
		*n = b->len;
	}
}

int
nd_op_is_light(const char *name, size_t n)
{
#define L(x) { x, sizeof(x) - 1 }
	static const struct {
		const char *s;
		size_t n;
	} base[] = {
		L("iota"), L("constant"), L("bitcast"), L("get-tuple-element"),
		L("parameter"), L("tuple"), L("after-all"),
		/* Kineto's GPU synchronisation activities: waits, no work */
		L("Stream Sync"), L("Event Sync"), L("Context Sync"),
		L("Stream Wait Event")
	};
#undef L

	if ((n >= 10 && memcmp(name, "copy-start", 10) == 0) ||
	    (n >= 9 && memcmp(name, "copy-done", 9) == 0))
		return 1;
	/* strip ".N" suffixes */
	for (;;) {
		size_t e = n;

		while (e > 0 && isdigit((unsigned char)name[e - 1]))
			e--;
		if (e < n && e > 0 && name[e - 1] == '.')
			n = e - 1;
		else
			break;
	}
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
		if (base[i].n == n && memcmp(base[i].s, name, n) == 0)
			return 1;
	return 0;
}

/* ---- collecting one source ---- */

/* What the ops with one `step` key did: extent and flops. */
struct ext {
	int64_t num, lo, hi;
	double flops;
};

/* An op with flops but no step key. */
struct flop {
	int64_t ts;
	double f;
};

/* Per-step-key bookkeeping of a device (or of the host). */
struct keyed {
	struct ext *ext;
	size_t next, capext;
	nd_map64 *extmap;	/* step -> index + 1, from EXT_MAP_MIN keys
				 * (a table per device costs 4 KiB) */
	int64_t last_num;	/* cache of the last lookup */
	size_t last_idx;	/* index + 1, 0: none */
	uint32_t *orph;		/* at finish: the ext whose num is no
				 * window's, by (lo, index) */
	size_t norph;
	struct flop *fl;	/* flops of ops without a step key, from
				 * timelines out of order */
	size_t nfl, capfl;
	int has_flops;
	nd_ivlog flog;		/* at finish: all of them by ts (lo: ts,
				 * hi: the double's bits) */
};

/*
 * One timeline (pid, tid) of a device (dev -1: of the host).  Its ops come
 * by start, so its busy stretches per category are appended to union logs
 * on the spool as they close, and its flops without a step key to a log by
 * time.  A log that receives an op out of order keeps the rest in memory
 * (ooo, the keyed fl array), as before.
 */
enum { TL_COMPUTE, TL_COMM, TL_MEMORY, TL_HOST, TL_HOSTCOMM, TL_NLOG };

struct tl {
	int64_t pid, tid;
	int dev;
	nd_ivlog log[TL_NLOG];
	nd_ivset ooo[TL_NLOG];
	int bad[TL_NLOG];
	nd_ivlog fl;
	int flbad;
	/* top-level spans of the thread (dev CAND): (start, candidate) */
	nd_ivlog top;
	int64_t top_hi;		/* end of the last top-level span */
	int topbad;		/* out of order: no candidate here */
	uint32_t top_id;	/* candidate of the last one, + 1 (0: none) */
};

struct dev {
	char *key;
	size_t keylen;
	int is_device;		/* key from the `device` field */
	uint32_t sid;		/* nd_event_sid of key in dsid, or ND_SID_NONE */
	uint64_t nops;		/* device ops seen */
	int64_t op_lo, op_hi;	/* first device op start, last end */
	char *model;		/* from the meta record, or NULL */
	double trace_peak;	/* peak the trace states, 0 if none */
	nd_ivlog cat[3];	/* at finish, with -d or one device */
	nd_ivlog wait;		/* cat[COMM] + host communication */
	struct keyed k;		/* op step keys and flops */
};

#define DEV_CACHE 16
#define TL_CACHE 64

struct marker {
	int kind, has_num, dev;	/* dev -1: host */
	int64_t num, lo, hi;
};

/* A repeating top-level span: (thread, name) and its executions' sum. */
struct cand {
	uint32_t tl;		/* index in tls */
	uint64_t n;
	int64_t sum, lo, hi;	/* summed duration, first start, last end */
};

/* An XLA module execution (the steps when there is no marker). */
struct mod {
	uint32_t name;		/* in modnames, without the span name's suffix */
	int dev;		/* -1: a host span */
	int64_t pid, tid;	/* its thread (a host span's) */
	int64_t lo, hi;
};

struct nd_steps {
	nd_steps_opts o;
	nd_intern *devkeys;
	struct dev *devs;
	size_t ndevs, capdevs;
	int dcache[DEV_CACHE];	/* key hash -> device index + 1 */
	uint32_t *dsid;		/* nd_event_sid of `device` -> index + 1 */
	size_t capdsid;
	nd_spool *sp;		/* the logs' records */
	size_t chunk;		/* records per log chunk */
	struct tl *tls;
	size_t ntl, captl;
	nd_intern *tlkeys;	/* (pid, tid, dev) -> index */
	size_t last_tl;		/* index + 1 of the last one used */
	uint32_t tlcache[TL_CACHE];	/* key hash -> index + 1 */
	nd_ivlog host, hostcomm;	/* at finish */
	struct marker *mk;
	size_t nmk, capmk;
	struct keyed hk;	/* host ops: flops (Kineto with_flops) */
	nd_map64 *nums;		/* numbers of the windows (at finish) */
	nd_devnames *dn;	/* device names from the meta records */
	nd_step *out;
	size_t nout, capout;
	nd_ivlog uni[3], uniwait;	/* unions over devices, at finish */
	struct mod *mods;
	size_t nmods, capmods;
	struct cand *cands;
	size_t ncands, capcands;
	nd_intern *candkeys;	/* (tl index, name) -> index in cands */
	nd_intern *modnames;
	int has_what;		/* the windows come from module (or span) what */
	uint32_t what;		/* in modnames */
	int nosteps;		/* finished without steps: per-device sets */
	int need_dev, need_uni;	/* the records read per-device sets, unions */
	nd_buf kb;
	size_t nopdevs;		/* devices with device ops */
	uint32_t *tmp;		/* keyed_flops' scratch */
	size_t captmp;
};

nd_steps *
nd_steps_new(const nd_steps_opts *o)
{
	nd_steps *s = nd_xcalloc(1, sizeof *s);

	s->o = *o;
	s->chunk = nd_ivlog_chunk_env();
	s->devkeys = nd_intern_new();
	s->tlkeys = nd_intern_new();
	s->modnames = nd_intern_new();
	s->candkeys = nd_intern_new();
	s->dn = nd_devnames_new();
	return s;
}

static void
keyed_free(struct keyed *k)
{
	free(k->ext);
	nd_map64_free(k->extmap);
	free(k->orph);
	free(k->fl);
	nd_ivlog_free(&k->flog);
	memset(k, 0, sizeof *k);
}

static void
tl_free(struct tl *t)
{
	for (int k = 0; k < TL_NLOG; k++) {
		nd_ivlog_free(&t->log[k]);
		nd_ivset_free(&t->ooo[k]);
	}
	nd_ivlog_free(&t->fl);
	nd_ivlog_free(&t->top);
}

static void
free_source(nd_steps *s)
{
	for (size_t i = 0; i < s->ndevs; i++) {
		struct dev *d = &s->devs[i];

		if (d->sid != ND_SID_NONE)
			s->dsid[d->sid] = 0;
		free(d->key);
		free(d->model);
		for (int k = 0; k < 3; k++)
			nd_ivlog_free(&d->cat[k]);
		nd_ivlog_free(&d->wait);
		keyed_free(&d->k);
	}
	for (size_t i = 0; i < s->ntl; i++)
		tl_free(&s->tls[i]);
	s->ntl = 0;
	s->last_tl = 0;
	memset(s->tlcache, 0, sizeof s->tlcache);
	nd_intern_free(s->tlkeys);
	s->tlkeys = nd_intern_new();
	keyed_free(&s->hk);
	nd_map64_free(s->nums);
	s->nums = NULL;
	s->ndevs = 0;
	s->nopdevs = 0;
	memset(s->dcache, 0, sizeof s->dcache);
	nd_ivlog_free(&s->host);
	nd_ivlog_free(&s->hostcomm);
	for (int k = 0; k < 3; k++)
		nd_ivlog_free(&s->uni[k]);
	nd_ivlog_free(&s->uniwait);
	/* the logs are gone: so is their spool (and its file) */
	nd_spool_free(s->sp);
	s->sp = NULL;
	s->nmk = s->nout = 0;
	s->nmods = 0;
	nd_intern_free(s->modnames);
	s->modnames = nd_intern_new();
	s->ncands = 0;
	nd_intern_free(s->candkeys);
	s->candkeys = nd_intern_new();
	s->has_what = 0;
	s->nosteps = s->need_dev = s->need_uni = 0;
	nd_devnames_reset(s->dn);
	nd_intern_free(s->devkeys);
	s->devkeys = nd_intern_new();
}

void
nd_steps_free(nd_steps *s)
{
	if (s == NULL)
		return;
	free_source(s);
	nd_intern_free(s->devkeys);
	nd_intern_free(s->tlkeys);
	free(s->tls);
	free(s->devs);
	free(s->dsid);
	free(s->mk);
	free(s->mods);
	free(s->cands);
	nd_intern_free(s->modnames);
	nd_intern_free(s->candkeys);
	nd_devnames_free(s->dn);
	free(s->out);
	nd_buf_free(&s->kb);
	free(s->tmp);
	free(s);
}

void
nd_steps_reset(nd_steps *s)
{
	free_source(s);
}

void
nd_steps_meta(nd_steps *s, const nd_event *meta)
{
	nd_devnames_meta(s->dn, meta);
}

/* The device index of a span: by the id of its `device` (one load, the id
 * shared with the program's other analyses) when it has one, else by its
 * key's bytes. */
static int
dev_of(nd_steps *s, const nd_event *ev)
{
	const char *k;
	size_t n;
	uint32_t id, slot;
	struct dev *d;
	uint32_t sid = ev->device.p != NULL ?
	    nd_event_sid(ev, ND_SID_DEVICE) : ND_SID_NONE;

	if (sid < s->capdsid && s->dsid[sid] != 0)
		return (int)s->dsid[sid] - 1;
	nd_span_device_ref(ev, &s->kb, &k, &n);
	slot = (uint32_t)nd_hash_bytes(k, n) & (DEV_CACHE - 1);
	if (s->dcache[slot] > 0) {
		d = &s->devs[s->dcache[slot] - 1];
		if (d->keylen == n && memcmp(d->key, k, n) == 0) {
			id = (uint32_t)s->dcache[slot] - 1;
			goto found;
		}
	}
	id = nd_intern_id(s->devkeys, k, n);
	s->dcache[slot] = (int)id + 1;
	if (id < s->ndevs)
		goto found;
	if (s->ndevs == s->capdevs)
		nd_grow(&s->devs, &s->capdevs, s->ndevs + 1, sizeof *s->devs);
	d = &s->devs[s->ndevs++];
	memset(d, 0, sizeof *d);
	d->key = nd_xstrndup(k, n);
	d->keylen = n;
	d->is_device = ev->device.p != NULL;
	d->sid = ND_SID_NONE;
found:
	if (sid != ND_SID_NONE) {
		/* the key is the device string: one id per device */
		if (sid >= s->capdsid) {
			size_t old = s->capdsid;

			nd_grow(&s->dsid, &s->capdsid, (size_t)sid + 1,
			    sizeof *s->dsid);
			memset(s->dsid + old, 0,
			    (s->capdsid - old) * sizeof *s->dsid);
		}
		s->dsid[sid] = id + 1;
		s->devs[id].sid = sid;
	}
	return (int)id;
}

static void
add_marker(nd_steps *s, const nd_span_role *r, int dev, int64_t lo,
    int64_t hi)
{
	struct marker *m;

	if (s->nmk == s->capmk)
		nd_grow(&s->mk, &s->capmk, s->nmk + 1, sizeof *s->mk);
	m = &s->mk[s->nmk++];
	m->kind = r->marker;
	m->has_num = r->has_num;
	m->num = r->num;
	m->dev = dev;
	m->lo = lo;
	m->hi = hi;
}

static void
add_mod(nd_steps *s, const nd_event *ev, int dev)
{
	struct mod *m;
	size_t n = module_name_len(ev->name.p, ev->name.n, dev < 0);

	if (s->nmods == s->capmods)
		nd_grow(&s->mods, &s->capmods, s->nmods + 1, sizeof *s->mods);
	m = &s->mods[s->nmods++];
	m->name = nd_intern_id(s->modnames, ev->name.p, n);
	m->dev = dev;
	/* a device's executions are in order of start whatever its lines */
	m->pid = dev < 0 ? ev->pid : 0;
	m->tid = dev < 0 ? ev->tid : 0;
	m->lo = ev->ts_ns;
	m->hi = ev->ts_ns + ev->dur_ns;
}

/* Skip a string at p (at its opening quote) of validated JSON. */
static const char *
skip_str(const char *p, const char *end)
{
	for (p++; p < end;) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		const char *b;

		if (q == NULL)
			return end;
		/* escaped when preceded by an odd number of backslashes */
		for (b = q; b > p && b[-1] == '\\'; b--)
			;
		if (((q - b) & 1) == 0)
			return q + 1;
		p = q + 1;
	}
	return end;
}

/* Skip the validated JSON value at p. */
static const char *
skip_val(const char *p, const char *end)
{
	int depth = 0;

	if (*p == '"')
		return skip_str(p, end);
	if (*p != '{' && *p != '[') {
		while (p < end && *p != ',' && *p != '}' && *p != ']' &&
		    *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		return p;
	}
	while (p < end) {
		if (*p == '"') {
			p = skip_str(p, end);
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if ((*p == '}' || *p == ']') && --depth == 0)
			return p + 1;
		p++;
	}
	return end;
}

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* A JSON number as a double: plain integers (the usual flops counts)
 * directly, anything else through strtod. */
static double
num_value(const char *v, size_t n)
{
	uint64_t x = 0;
	size_t i = 0;
	nd_jval jv = { ND_JNUM, v, n, 0 };

	if (n > 0 && n <= 18) {
		for (i = 0; i < n && v[i] >= '0' && v[i] <= '9'; i++)
			x = x * 10 + (uint64_t)(v[i] - '0');
		if (i == n)
			return (double)x;
	}
	return nd_json_double(&jv);
}

/*
 * args.model_flops, else args.flops, when a number.  The args object was
 * validated by the decoder, so a light walk over its top-level members
 * (no second validation of the long strings it often holds) is enough.
 */
static int
op_flops(const nd_event *ev, double *out)
{
	const char *p, *end;
	int got = 0;

	nd_jval v1 = { ND_JNONE, NULL, 0, 0 }, v2 = v1;
	int cm, cf;

	if (ev->args.type != ND_JOBJ)
		return 0;
	/* at most one of each key: what the decoder noted; else walk (the
	 * first numeric model_flops, else the last numeric flops) */
	cm = nd_event_arg_noted(ev, ND_ARG_MODEL_FLOPS, &v1);
	cf = nd_event_arg_noted(ev, ND_ARG_FLOPS, &v2);
	if (cm >= 0 && cf >= 0 && cm < 2 && cf < 2) {
		if (cm == 1 && v1.type == ND_JNUM) {
			*out = num_value(v1.raw, v1.len);
			return 1;
		}
		if (cf == 1 && v2.type == ND_JNUM) {
			*out = num_value(v2.raw, v2.len);
			return 1;
		}
		return 0;
	}
	if (memmem(ev->args.raw, ev->args.len, "flops\"", 6) == NULL)
		return 0;
	p = ev->args.raw + 1;
	end = ev->args.raw + ev->args.len - 1;
	for (;;) {
		const char *k, *ke, *v;
		size_t kn;

		p = skip_ws(p, end);
		if (p >= end || *p != '"')
			break;
		k = p + 1;
		ke = skip_str(p, end) - 1;
		kn = (size_t)(ke - k);
		p = skip_ws(ke + 1, end);
		if (p < end && *p == ':')
			p++;
		v = p = skip_ws(p, end);
		p = skip_val(p, end);
		if (v < end && (*v == '-' || (*v >= '0' && *v <= '9'))) {
			int model = kn == 11 && memcmp(k, "model_flops", 11) == 0;

			if (model || (kn == 5 && memcmp(k, "flops", 5) == 0)) {
				*out = num_value(v, (size_t)(p - v));
				got = 1;
				if (model)
					return 1;
			}
		}
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p++;
	}
	return got;
}

/* The timeline of ev on device dev (-1: the host), created on first
 * use with its logs on the source's spool. */
static struct tl *
tl_of(nd_steps *s, const nd_event *ev, int dev)
{
	struct tl *t;
	char key[2 * sizeof(int64_t) + sizeof(int)];
	uint32_t id, slot;

	if (s->last_tl > 0) {
		t = &s->tls[s->last_tl - 1];
		if (t->pid == ev->pid && t->tid == ev->tid && t->dev == dev)
			return t;
	}
	/* interleaved timelines: a small cache before the hash table */
	slot = (uint32_t)nd_hash_u64((uint64_t)ev->pid * 31 +
	    (uint64_t)ev->tid * 7 + (uint64_t)(int64_t)dev) & (TL_CACHE - 1);
	if (s->tlcache[slot] > 0) {
		t = &s->tls[s->tlcache[slot] - 1];
		if (t->pid == ev->pid && t->tid == ev->tid && t->dev == dev) {
			s->last_tl = s->tlcache[slot];
			return t;
		}
	}
	memcpy(key, &ev->pid, sizeof ev->pid);
	memcpy(key + sizeof ev->pid, &ev->tid, sizeof ev->tid);
	memcpy(key + 2 * sizeof ev->pid, &dev, sizeof dev);
	id = nd_intern_id(s->tlkeys, key, sizeof key);
	s->last_tl = (size_t)id + 1;
	s->tlcache[slot] = id + 1;
	if (id < s->ntl)
		return &s->tls[id];
	if (s->sp == NULL)
		s->sp = nd_spool_new();
	if (s->ntl == s->captl)
		nd_grow(&s->tls, &s->captl, s->ntl + 1, sizeof *s->tls);
	t = &s->tls[s->ntl++];
	memset(t, 0, sizeof *t);
	t->pid = ev->pid;
	t->tid = ev->tid;
	t->dev = dev;
	for (int k = 0; k < TL_NLOG; k++)
		nd_ivlog_init(&t->log[k], s->sp, s->chunk);
	nd_ivlog_init(&t->fl, s->sp, s->chunk);
	nd_ivlog_init(&t->top, s->sp, s->chunk);
	t->top_hi = INT64_MIN;
	return t;
}

/* [lo, hi) busy in log k of t: on the spool while in order. */
static void
tl_add(struct tl *t, int k, int64_t lo, int64_t hi)
{
	if (t->bad[k] || nd_ivlog_add(&t->log[k], lo, hi) != 0) {
		t->bad[k] = 1;
		nd_ivset_add(&t->ooo[k], lo, hi);
	}
}

/* Step keys a keyed looks up by a scan before it has a table. */
#define EXT_MAP_MIN 8

/* The index + 1 of step key num in k, 0: none. */
static size_t
ext_find(const struct keyed *k, int64_t num)
{
	uint64_t *slot;

	if (k->extmap != NULL)
		return (slot = nd_map64_get(k->extmap, (uint64_t)num)) ?
		    (size_t)*slot : 0;
	for (size_t i = 0; i < k->next; i++)
		if (k->ext[i].num == num)
			return i + 1;
	return 0;
}

/* A new step key num in k, first op [lo, hi); its index + 1. */
static size_t
ext_new(struct keyed *k, int64_t num, int64_t lo, int64_t hi)
{
	struct ext *x;

	if (k->next == k->capext)
		nd_grow(&k->ext, &k->capext, k->next + 1, sizeof *k->ext);
	x = &k->ext[k->next++];
	x->num = num;
	x->lo = lo;
	x->hi = hi;
	x->flops = 0;
	if (k->extmap == NULL && k->next >= EXT_MAP_MIN) {
		k->extmap = nd_map64_new();
		for (size_t i = 0; i + 1 < k->next; i++)
			*nd_map64_put(k->extmap, (uint64_t)k->ext[i].num,
			    NULL) = i + 1;
	}
	if (k->extmap != NULL)
		*nd_map64_put(k->extmap, (uint64_t)num, NULL) = k->next;
	return k->next;
}

/* An op with its step key and flops (has_f) into k; t: its timeline. */
static void
keyed_add(struct keyed *k, struct tl *t, const nd_event *ev, int64_t lo,
    int64_t hi, int has_f, double f)
{
	if (has_f)
		k->has_flops = 1;
	if (ev->has & ND_HAS_STEP) {
		struct ext *x;

		if (k->last_idx == 0 || k->last_num != ev->step) {
			size_t i = ext_find(k, ev->step);

			k->last_num = ev->step;
			k->last_idx = i > 0 ? i : ext_new(k, ev->step, lo, hi);
		}
		x = &k->ext[k->last_idx - 1];
		if (lo < x->lo)
			x->lo = lo;
		if (hi > x->hi)
			x->hi = hi;
		if (has_f)
			x->flops += f;
	} else if (has_f) {
		int64_t bits;

		memcpy(&bits, &f, sizeof bits);
		if (!t->flbad && nd_ivlog_push(&t->fl, lo, bits) == 0)
			return;
		t->flbad = 1;
		if (k->nfl == k->capfl)
			nd_grow(&k->fl, &k->capfl, k->nfl + 1, sizeof *k->fl);
		k->fl[k->nfl].ts = lo;
		k->fl[k->nfl].f = f;
		k->nfl++;
	}
}

/* The timelines of the step candidates: their own, apart from a thread's
 * host activity (dev -1) and device ops (dev >= 0). */
#define CAND_DEV (-3)

/* A host span or device annotation: a candidate step when it is top-level
 * on its thread (starts at or after the end of the last top-level one). */
static void
add_top(nd_steps *s, const nd_event *ev)
{
	struct tl *t = tl_of(s, ev, CAND_DEV);
	uint32_t tli = (uint32_t)(t - s->tls), id;
	struct cand *c;

	if (t->topbad || ev->ts_ns < t->top_hi)
		return;
	/* a loop repeats a name: the last one's id without a lookup */
	if (t->top_id > 0) {
		size_t n;
		const char *k = nd_intern_str(s->candkeys, t->top_id - 1, &n);

		id = n - sizeof tli == ev->name.n &&
		    memcmp(k + sizeof tli, ev->name.p, ev->name.n) == 0 ?
		    t->top_id - 1 : UINT32_MAX;
	} else
		id = UINT32_MAX;
	if (id == UINT32_MAX) {
		nd_buf_reset(&s->kb);
		nd_buf_add(&s->kb, &tli, sizeof tli);
		nd_buf_add(&s->kb, ev->name.p, ev->name.n);
		/* memory: no new candidate past the cap (names that never
		 * repeat are no steps) */
		id = s->ncands < ND_INFER_MAX_CANDS ?
		    nd_intern_id(s->candkeys, s->kb.p, s->kb.len) :
		    nd_intern_find(s->candkeys, s->kb.p, s->kb.len);
	}
	if (id == UINT32_MAX) {
		t->top_hi = ev->ts_ns + ev->dur_ns;
		t->top_id = 0;
		return;
	}
	t->top_id = id + 1;
	if (nd_ivlog_push(&t->top, ev->ts_ns, (int64_t)id) != 0) {
		t->topbad = 1;	/* out of order */
		return;
	}
	t->top_hi = ev->ts_ns + ev->dur_ns;
	if (id == s->ncands) {
		if (s->ncands == s->capcands)
			nd_grow(&s->cands, &s->capcands, s->ncands + 1,
			    sizeof *s->cands);
		c = &s->cands[s->ncands++];
		memset(c, 0, sizeof *c);
		c->tl = tli;
		c->lo = ev->ts_ns;
	}
	c = &s->cands[id];
	c->n++;
	c->sum += ev->dur_ns;
	c->hi = t->top_hi;
}

void
nd_steps_add(nd_steps *s, const nd_event *ev, const nd_span_role *r)
{
	int64_t lo = ev->ts_ns, hi = ev->ts_ns + ev->dur_ns;
	double f = 0;

	if (r->marker != ND_SM_NONE) {
		int dev = -1;

		if (r->kind != ND_KIND_HOST ||
		    has_prefix(ev->process, "/device:"))
			dev = dev_of(s, ev);
		add_marker(s, r, dev, lo, hi);
	}
	if (r->xla)
		add_mod(s, ev, r->xla == 1 ? dev_of(s, ev) : -1);
	if (r->marker == ND_SM_NONE && ev->dur_ns > 0 && ev->name.p != NULL &&
	    (r->kind == ND_KIND_HOST || r->kind == ND_KIND_ANNOT))
		add_top(s, ev);
	if (r->role == ND_ROLE_DEVICE) {
		int dev = dev_of(s, ev);
		struct dev *d = &s->devs[dev];
		int has_f = 0;

		struct tl *t = NULL;

		if (d->nops == 0)
			s->nopdevs++;
		if (d->nops == 0 || lo < d->op_lo)
			d->op_lo = lo;
		if (d->nops == 0 || hi > d->op_hi)
			d->op_hi = hi;
		d->nops++;
		if (!s->o.markers_only) {
			t = tl_of(s, ev, dev);
			tl_add(t, r->cat, lo, hi);
			has_f = s->o.flops && op_flops(ev, &f);
		}
		keyed_add(&d->k, t, ev, lo, hi, has_f, f);
	} else if (r->role == ND_ROLE_HOST && !s->o.markers_only) {
		struct tl *t = tl_of(s, ev, -1);

		tl_add(t, TL_HOST, lo, hi);
		if (r->comm)
			tl_add(t, TL_HOSTCOMM, lo, hi);
		if (s->o.flops && op_flops(ev, &f))
			keyed_add(&s->hk, t, ev, lo, hi, 1, f);
	}
}

/* ---- finishing a source ---- */

static int
marker_cmp(const void *a, const void *b, void *ctx)
{
	const struct marker *x = a, *y = b;

	(void)ctx;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int
win_cmp(const void *a, const void *b, void *ctx)
{
	const struct marker *x = a, *y = b;

	(void)ctx;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int
flop_cmp(const void *a, const void *b, void *ctx)
{
	const struct flop *x = a, *y = b;

	(void)ctx;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int
step_cmp(const void *a, const void *b, void *ctx)
{
	const nd_step *x = a, *y = b;
	const uint32_t *rank = ctx;

	if (x->dev != y->dev) {
		uint32_t rx = x->dev < 0 ? 0 : rank[x->dev] + 1;
		uint32_t ry = y->dev < 0 ? 0 : rank[y->dev] + 1;

		/* ranks are distinct: devices differ, so do they */
		return rx < ry ? -1 : 1;
	}
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->num > y->num) - (x->num < y->num);
}

static int
dev_cmp(const void *a, const void *b, void *ctx)
{
	const struct dev *d = ctx;
	const struct dev *x = &d[*(const uint32_t *)a];
	const struct dev *y = &d[*(const uint32_t *)b];
	int c = nd_name_natcmp(x->key, x->keylen, y->key, y->keylen);

	if (c != 0)
		return c;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* rank[dev]: the place of each device in natural order of its key. */
static uint32_t *
dev_ranks(const nd_steps *s)
{
	size_t n = s->ndevs;
	uint32_t *ord = nd_xmalloc((n ? n : 1) * sizeof *ord);
	uint32_t *rank = nd_xmalloc((n ? n : 1) * sizeof *rank);

	for (size_t i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	nd_sort(ord, n, sizeof *ord, dev_cmp, s->devs);
	for (size_t i = 0; i < n; i++)
		rank[ord[i]] = (uint32_t)i;
	free(ord);
	return rank;
}

static nd_step *
new_out(nd_steps *s)
{
	nd_step *o;

	if (s->nout == s->capout)
		nd_grow(&s->out, &s->capout, s->nout + 1, sizeof *s->out);
	o = &s->out[s->nout++];
	memset(o, 0, sizeof *o);
	return o;
}

/* Windows from the markers s->mk (one kind), merged per (scope, number),
 * into s->out; unnumbered markers are numbered 1, 2, ... in order of start
 * per scope. */
static void
merge_marks(nd_steps *s, int marker, int source)
{
	nd_sort(s->mk, s->nmk, sizeof *s->mk, marker_cmp, NULL);
	for (size_t i = 0, ord = 0; i < s->nmk; i++) {
		if (i == 0 || s->mk[i].dev != s->mk[i - 1].dev)
			ord = 0;
		if (!s->mk[i].has_num)
			s->mk[i].num = (int64_t)++ord;
	}
	nd_sort(s->mk, s->nmk, sizeof *s->mk, win_cmp, NULL);
	for (size_t i = 0; i < s->nmk; i++) {
		struct marker *m = &s->mk[i];
		nd_step *o;

		if (i > 0 && m->dev == m[-1].dev && m->num == m[-1].num) {
			o = &s->out[s->nout - 1];
			if (m->lo < o->ts) {
				o->dur += o->ts - m->lo;
				o->ts = m->lo;
			}
			if (m->hi > o->ts + o->dur)
				o->dur = m->hi - o->ts;
			continue;
		}
		o = new_out(s);
		o->num = m->num;
		o->ts = m->lo;
		o->dur = m->hi - m->lo;
		o->marker = marker;
		o->source = source;
		o->dev = m->dev;
	}
}

/* A numbered window [lo, hi) of scope dev for merge_marks, from steps
 * without markers. */
static void
push_mark(nd_steps *s, int64_t num, int dev, int64_t lo, int64_t hi)
{
	struct marker *mk;

	if (s->nmk == s->capmk)
		nd_grow(&s->mk, &s->capmk, s->nmk + 1, sizeof *s->mk);
	mk = &s->mk[s->nmk++];
	mk->kind = ND_SM_NONE;
	mk->has_num = 1;
	mk->num = num;
	mk->dev = dev;
	mk->lo = lo;
	mk->hi = hi;
}

static int
mod_cmp(const void *a, const void *b, void *ctx)
{
	const struct mod *x = a, *y = b;

	(void)ctx;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/*
 * No marker: the executions of the step module as markers in s->mk.  The
 * step module takes the most time on the devices' "XLA Modules" lines, else
 * (no such line) in host spans; the first seen on ties.  The k-th execution
 * on a device (on a host thread) is step k; a device's window is the
 * execution, a host thread's runs to its next execution's start, the last
 * to the end of the source's last device op (or its own end, if later).
 */
static void
xla_marks(nd_steps *s)
{
	uint32_t nn = nd_intern_count(s->modnames), best = 0;
	int64_t *tot = nd_xcalloc((size_t)nn * 2 + 1, sizeof *tot), end = 0;
	int side = 1;		/* 0: device lines, 1: host spans */
	size_t n = 0;

	for (size_t i = 0; i < s->nmods; i++) {
		tot[s->mods[i].name * 2 + (s->mods[i].dev < 0)] +=
		    s->mods[i].hi - s->mods[i].lo;
		if (s->mods[i].dev >= 0)
			side = 0;
	}
	for (uint32_t i = 1; i < nn; i++)
		if (tot[i * 2 + side] > tot[best * 2 + side])
			best = i;
	free(tot);
	for (size_t i = 0; i < s->nmods; i++)
		if (s->mods[i].name == best && (s->mods[i].dev < 0) == side)
			s->mods[n++] = s->mods[i];
	s->nmods = n;	/* only the step module is needed from here on */
	nd_sort(s->mods, n, sizeof *s->mods, mod_cmp, NULL);
	for (size_t d = 0; d < s->ndevs; d++)
		if (s->devs[d].nops > 0 && s->devs[d].op_hi > end)
			end = s->devs[d].op_hi;
	s->nmk = 0;
	for (size_t i = 0, k = 0; i < n; i++) {
		const struct mod *m = &s->mods[i];
		int same = i + 1 < n && m[1].dev == m->dev &&
		    m[1].pid == m->pid && m[1].tid == m->tid;

		k = i > 0 && m[-1].dev == m->dev && m[-1].pid == m->pid &&
		    m[-1].tid == m->tid ? k + 1 : 1;
		push_mark(s, (int64_t)k, m->dev, m->lo, m->dev >= 0 ? m->hi :
		    same ? m[1].lo : end > m->hi ? end : m->hi);
	}
	s->has_what = n > 0;
	s->what = best;
}

/* Does candidate c make convincing steps (nd_steps.h, ND_INFER_*) on
 * device ops from dlo to dhi? */
static int
cand_ok(const nd_steps *s, const struct cand *c, int64_t dlo, int64_t dhi)
{
	int64_t from = c->lo > dlo ? c->lo : dlo;

	return c->n >= ND_INFER_MIN_REPEATS && !s->tls[c->tl].topbad &&
	    (double)c->sum >= ND_INFER_MIN_BUSY * (double)(c->hi - c->lo) &&
	    c->lo < dhi &&
	    (double)(dhi - from) >= ND_INFER_MIN_COVER * (double)(dhi - dlo);
}

/*
 * No marker and no XLA module: the executions of the best candidate as
 * markers in s->mk, if any is convincing (cand_ok); the one with the
 * largest summed duration, the first seen on ties.  Execution k is step
 * k, from its start to the next one's start, the last to the end of the
 * source's last device op (or its own end, if later).
 */
static void
infer_marks(nd_steps *s)
{
	int64_t dlo = INT64_MAX, dhi = INT64_MIN, end;
	size_t best = SIZE_MAX, n;
	const char *key;
	struct tl *t;
	nd_ivcur cur;
	int64_t k = 0;

	s->nmk = 0;
	for (size_t d = 0; d < s->ndevs; d++)
		if (s->devs[d].nops > 0) {
			if (s->devs[d].op_lo < dlo)
				dlo = s->devs[d].op_lo;
			if (s->devs[d].op_hi > dhi)
				dhi = s->devs[d].op_hi;
		}
	for (size_t i = 0; i < s->ncands && dhi > dlo; i++)
		if (cand_ok(s, &s->cands[i], dlo, dhi) && (best == SIZE_MAX ||
		    s->cands[i].sum > s->cands[best].sum))
			best = i;
	if (best == SIZE_MAX)
		return;
	t = &s->tls[s->cands[best].tl];
	end = dhi > s->cands[best].hi ? dhi : s->cands[best].hi;
	nd_ivlog_close(&t->top);
	nd_ivcur_init(&cur, &t->top);
	for (uint64_t i = 0; i < nd_ivlog_count(&t->top); i++) {
		nd_iv v = nd_ivcur_at(&cur, i);

		if (v.hi != (int64_t)best)
			continue;
		if (k > 0)
			s->mk[s->nmk - 1].hi = v.lo;
		push_mark(s, ++k, -1, v.lo, end);
	}
	nd_ivcur_free(&cur);
	key = nd_intern_str(s->candkeys, (uint32_t)best, &n);
	s->what = nd_intern_id(s->modnames, key + sizeof(uint32_t),
	    n - sizeof(uint32_t));
	s->has_what = 1;
}

/*
 * The windows of the source into s->out (num, ts, dur, marker, source,
 * dev): dev is the scope (-1 host) here.  The strongest marker kind; else
 * the op step keys; else the XLA module executions; else the inferred
 * steps.
 */
static void
build_windows(nd_steps *s)
{
	int best = ND_SM_NONE;
	size_t w = 0;

	s->nout = 0;
	s->has_what = 0;
	for (size_t i = 0; i < s->nmk; i++)
		if (s->mk[i].kind > best)
			best = s->mk[i].kind;
	if (best != ND_SM_NONE) {
		/* keep the best kind only */
		for (size_t i = 0; i < s->nmk; i++)
			if (s->mk[i].kind == best)
				s->mk[w++] = s->mk[i];
		s->nmk = w;
		merge_marks(s, best, ND_SS_MARKER);
		return;
	}
	for (size_t d = 0; d < s->ndevs; d++)
		for (size_t i = 0; i < s->devs[d].k.next; i++) {
			nd_step *o = new_out(s);
			struct ext *x = &s->devs[d].k.ext[i];

			o->num = x->num;
			o->ts = x->lo;
			o->dur = x->hi - x->lo;
			o->marker = ND_SM_OPSTEP;
			o->source = ND_SS_MARKER;
			o->dev = (int)d;
		}
	if (s->nout == 0 && s->nmods > 0) {
		xla_marks(s);
		merge_marks(s, ND_SM_NONE, ND_SS_XLA_MODULE);
	}
	if (s->nout == 0 && s->ncands > 0) {
		infer_marks(s);
		merge_marks(s, ND_SM_NONE, ND_SS_INFERRED);
	}
}

size_t
nd_steps_windows(nd_steps *s, const nd_step **out)
{
	build_windows(s);
	*out = s->out;
	return s->nout;
}

static double
dev_peak(const nd_steps *s, int dev)
{
	const struct dev *d = &s->devs[dev];
	const nd_peak *p;

	if (s->o.peak_tflops > 0)
		return s->o.peak_tflops;
	if (d->model != NULL && (p = nd_peak_find(d->model, strlen(d->model))))
		return p->tflops;
	return d->trace_peak;
}

static void
resolve_models(nd_steps *s)
{
	for (size_t i = 0; i < s->ndevs; i++) {
		struct dev *d = &s->devs[i];
		double gbps;
		const char *name = nd_devnames_get(s->dn, d->key, strlen(d->key),
		    &d->trace_peak, &gbps);

		if (name != NULL && d->model == NULL)
			d->model = nd_xstrdup(name);
	}
}

static int
orph_cmp(const void *a, const void *b, void *ctx)
{
	const struct keyed *k = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (k->ext[x].lo != k->ext[y].lo)
		return k->ext[x].lo < k->ext[y].lo ? -1 : 1;
	return (x > y) - (x < y);
}

/* k->orph: the step keys of k that are no window's number (s->nums). */
static void
orphans_of(const nd_steps *s, struct keyed *k)
{
	size_t n = 0;

	for (size_t i = 0; i < k->next; i++)
		n += nd_map64_get(s->nums, (uint64_t)k->ext[i].num) == NULL;
	free(k->orph);
	k->orph = nd_xmalloc((n ? n : 1) * sizeof *k->orph);
	k->norph = 0;
	for (size_t i = 0; i < k->next; i++)
		if (nd_map64_get(s->nums, (uint64_t)k->ext[i].num) == NULL)
			k->orph[k->norph++] = (uint32_t)i;
	nd_sort(k->orph, k->norph, sizeof *k->orph, orph_cmp, k);
}

/* The first of k->orph whose op starts at or after t. */
static size_t
orph_at(const struct keyed *k, int64_t t)
{
	size_t a = 0, b = k->norph;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (k->ext[k->orph[m]].lo < t)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Flops of the window [lo, hi) numbered num in k: the ops whose step key is
 * num; the ops whose key is no window's number (s->nums) when their key's
 * first op starts in the window (k->orph), added in the order of the keys
 * as always; the ops without a key that start in it (fc: a cursor on
 * k->flog).
 */
static double
keyed_flops(nd_steps *s, const struct keyed *k, nd_ivcur *fc, int64_t num,
    int64_t lo, int64_t hi)
{
	double sum = 0;
	size_t i = ext_find(k, num), a = orph_at(k, lo), b = orph_at(k, hi);

	if (i > 0)
		sum += k->ext[i - 1].flops;
	if (b > a + 1) {
		nd_grow(&s->tmp, &s->captmp, b - a, sizeof *s->tmp);
		memcpy(s->tmp, k->orph + a, (b - a) * sizeof *s->tmp);
		qsort(s->tmp, b - a, sizeof *s->tmp, u32_cmp);
		for (size_t j = 0; j < b - a; j++)
			sum += k->ext[s->tmp[j]].flops;
	} else if (b > a)
		sum += k->ext[k->orph[a]].flops;
	for (uint64_t j = nd_ivcur_seek_lo(fc, lo);
	    j < nd_ivlog_count(&k->flog); j++) {
		nd_iv v = nd_ivcur_at(fc, j);
		double f;

		if (v.lo >= hi)
			break;
		memcpy(&f, &v.hi, sizeof f);
		sum += f;
	}
	return sum;
}

/* Close the timelines' logs; a log that had ops out of order takes in its
 * part kept in memory. */
static void
close_timelines(nd_steps *s)
{
	for (size_t i = 0; i < s->ntl; i++) {
		struct tl *t = &s->tls[i];

		for (int k = 0; k < TL_NLOG; k++) {
			nd_ivlog mem, all, *src[2];

			nd_ivlog_close(&t->log[k]);
			if (!t->bad[k])
				continue;
			nd_ivset_norm(&t->ooo[k]);
			nd_ivlog_init(&mem, s->sp, s->chunk);
			nd_ivlog_from_set(&mem, &t->ooo[k]);
			nd_ivset_free(&t->ooo[k]);
			src[0] = &t->log[k];
			src[1] = &mem;
			nd_ivlog_init(&all, s->sp, s->chunk);
			nd_ivlog_union(&all, src, 2);
			nd_ivlog_free(&mem);
			nd_ivlog_free(&t->log[k]);
			t->log[k] = all;
		}
		nd_ivlog_close(&t->fl);
	}
}

/*
 * The timelines grouped by device, so that each device's sets read only
 * its own (a scan of every timeline per device is quadratic in devices):
 * tl[at[d + 1] .. at[d + 2]) are the indexes of device d's (d -1: the
 * host's), in order; the devices' together run from at[1] to at[nd + 1].
 * Candidate timelines (CAND_DEV) are in none.
 */
struct tlgroups {
	uint32_t *tl;
	size_t *at;
};

static void
tl_group(const nd_steps *s, struct tlgroups *g)
{
	size_t nd = s->ndevs;

	g->tl = nd_xmalloc((s->ntl ? s->ntl : 1) * sizeof *g->tl);
	g->at = nd_xcalloc(nd + 3, sizeof *g->at);
	/* a counting sort by dev + 1, stable */
	for (size_t i = 0; i < s->ntl; i++)
		if (s->tls[i].dev >= -1)
			g->at[(size_t)(s->tls[i].dev + 1) + 1]++;
	for (size_t d = 1; d < nd + 3; d++)
		g->at[d] += g->at[d - 1];
	for (size_t i = 0; i < s->ntl; i++)
		if (s->tls[i].dev >= -1)
			g->tl[g->at[(size_t)(s->tls[i].dev + 1)]++] = (uint32_t)i;
	/* the loop moved each start to the next group's: shift back */
	memmove(g->at + 1, g->at, (nd + 1) * sizeof *g->at);
	g->at[0] = 0;
}

/* dst = the union of log k of the timelines tl[a .. b) (a tlgroups range),
 * and of extra unless NULL. */
static void
union_of(nd_steps *s, nd_ivlog *dst, const struct tlgroups *g, size_t a,
    size_t b, int k, nd_ivlog *extra)
{
	nd_ivlog **src = nd_xmalloc((b - a + 1) * sizeof *src);
	size_t n = 0;

	for (size_t i = a; i < b; i++) {
		struct tl *t = &s->tls[g->tl[i]];

		if (nd_ivlog_count(&t->log[k]) > 0)
			src[n++] = &t->log[k];
	}
	if (extra != NULL && nd_ivlog_count(extra) > 0)
		src[n++] = extra;
	nd_ivlog_init(dst, s->sp, s->chunk);
	nd_ivlog_union(dst, src, n);
	free(src);
}

/* k->flog = the flops without a step key of device dev (-1: the host) by
 * time: its timelines' logs, and k->fl sorted. */
static void
flops_of(nd_steps *s, const struct tlgroups *g, struct keyed *k, int dev)
{
	size_t a = g->at[dev + 1], b = g->at[dev + 2], n = 0;
	nd_ivlog mem, **src = nd_xmalloc((b - a + 1) * sizeof *src);

	for (size_t i = a; i < b; i++)
		if (nd_ivlog_count(&s->tls[g->tl[i]].fl) > 0)
			src[n++] = &s->tls[g->tl[i]].fl;
	nd_ivlog_init(&mem, s->sp, s->chunk);
	if (k->nfl > 0) {
		nd_sort(k->fl, k->nfl, sizeof *k->fl, flop_cmp, NULL);
		for (size_t i = 0; i < k->nfl; i++) {
			int64_t bits;

			memcpy(&bits, &k->fl[i].f, sizeof bits);
			nd_ivlog_push(&mem, k->fl[i].ts, bits);
		}
		nd_ivlog_close(&mem);
		src[n++] = &mem;
	}
	nd_ivlog_init(&k->flog, s->sp, s->chunk);
	nd_ivlog_merge(&k->flog, src, n);
	nd_ivlog_free(&mem);
	free(src);
}

/* The merged sets the records read (build_records says which): the
 * host's; per device for records of one device, a single device or no
 * steps (the profile windows); the unions over devices for the others. */
static void
build_sets(nd_steps *s)
{
	int nd = (int)s->ndevs;
	struct tlgroups g;

	close_timelines(s);
	tl_group(s, &g);
	union_of(s, &s->host, &g, g.at[0], g.at[1], TL_HOST, NULL);
	union_of(s, &s->hostcomm, &g, g.at[0], g.at[1], TL_HOSTCOMM, NULL);
	for (int d = 0; d < nd && s->need_dev; d++) {
		struct dev *dv = &s->devs[d];

		for (int k = 0; k < 3; k++)
			union_of(s, &dv->cat[k], &g, g.at[d + 1], g.at[d + 2],
			    k, NULL);
		union_of(s, &dv->wait, &g, g.at[d + 1], g.at[d + 2], TL_COMM,
		    &s->hostcomm);
	}
	if (s->need_uni) {
		for (int k = 0; k < 3; k++)
			union_of(s, &s->uni[k], &g, g.at[1], g.at[nd + 1], k,
			    NULL);
		union_of(s, &s->uniwait, &g, g.at[1], g.at[nd + 1], TL_COMM,
		    &s->hostcomm);
	}
	for (int d = 0; d < nd; d++)
		flops_of(s, &g, &s->devs[d].k, d);
	flops_of(s, &g, &s->hk, -1);
	free(g.tl);
	free(g.at);
	/* the timelines are in the sets now */
	for (size_t i = 0; i < s->ntl; i++)
		tl_free(&s->tls[i]);
}

static int
num_cmp(const void *a, const void *b, void *ctx)
{
	const nd_step *x = a, *y = b;

	(void)ctx;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->dev > y->dev) - (x->dev < y->dev);
}

/* Per step number, one record over the scopes' windows win[0..n): their
 * span; but device windows out of phase (their union is not one
 * interval) stay one record per device. */
static void
merge_scopes(nd_steps *s, nd_step *win, size_t n)
{
	nd_sort(win, n, sizeof *win, num_cmp, NULL);
	for (size_t i = 0, j; i < n; i = j) {
		int64_t end = win[i].ts + win[i].dur;
		int apart = 0, host = win[i].dev < 0;
		nd_step *o;

		for (j = i + 1; j < n && win[j].num == win[i].num; j++) {
			if (win[j].ts > end)
				apart = 1;
			if (win[j].ts + win[j].dur > end)
				end = win[j].ts + win[j].dur;
			host |= win[j].dev < 0;
		}
		if (apart && !host) {
			for (size_t k = i; k < j; k++)
				*new_out(s) = win[k];
			continue;
		}
		o = new_out(s);
		*o = win[i];
		o->dev = -1;
		o->dur = end - o->ts;
	}
}

/* The records: the windows per step number (merge_scopes), or per device
 * with -d; the set of their numbers; and which sets they read. */
static void
build_records(nd_steps *s)
{
	size_t nwin;
	nd_step *win;
	int nd = (int)s->ndevs;

	build_windows(s);
	/* Copy the windows aside: records are rebuilt in s->out. */
	nwin = s->nout;
	win = nd_xmalloc((nwin ? nwin : 1) * sizeof *win);
	if (nwin > 0)
		memcpy(win, s->out, nwin * sizeof *win);
	s->nout = 0;
	if (!s->o.per_device)
		merge_scopes(s, win, nwin);
	else {
		for (size_t i = 0; i < nwin; i++) {
			if (win[i].dev >= 0 || !nd_steps_has_devices(s)) {
				*new_out(s) = win[i];
				continue;
			}
			for (int d = 0; d < nd; d++) {
				nd_step *o;

				if (s->devs[d].nops == 0)
					continue;
				o = new_out(s);
				*o = win[i];
				o->dev = d;
			}
		}
	}
	free(win);
	nd_map64_free(s->nums);
	s->nums = nd_map64_new();
	s->nosteps = s->nout == 0;
	s->need_dev = nd == 1 || s->nosteps;
	s->need_uni = 0;
	for (size_t i = 0; i < s->nout; i++) {
		int isnew;

		nd_map64_put(s->nums, (uint64_t)s->out[i].num, &isnew);
		if (s->out[i].dev >= 0)
			s->need_dev = 1;
		else if (nd > 1)
			s->need_uni = 1;
	}
}

/* The sets of record o: categories and wait. */
static void
sets_of(nd_steps *s, const nd_step *o, const nd_ivlog *cat[ND_NCAT],
    const nd_ivlog **wait)
{
	int nd = (int)s->ndevs;

	if (o->dev >= 0 || nd == 1) {
		const struct dev *dv = &s->devs[o->dev >= 0 ? o->dev : 0];

		for (int k = 0; k < 3; k++)
			cat[k] = &dv->cat[k];
		*wait = &dv->wait;
	} else if (nd > 1) {
		for (int k = 0; k < 3; k++)
			cat[k] = &s->uni[k];
		*wait = &s->uniwait;
	} else {
		for (int k = 0; k < 3; k++)
			cat[k] = NULL;
		*wait = &s->hostcomm;
	}
	cat[ND_CAT_HOST] = &s->host;
}

/* Cursor c on l (NULL: none), kept when it already reads l. */
static nd_ivcur *
cur_on(nd_ivcur *c, const nd_ivlog *l)
{
	if (l == NULL)
		return NULL;
	if (c->l != l) {
		nd_ivcur_free(c);
		nd_ivcur_init(c, l);
	}
	return c;
}

/* Breakdown and wait of every record (sorted by device and start, so
 * that each cursor moves forward).  The wait has a pass of its own: the
 * spool's read cache follows about four cursors at once. */
static void
fill_parts(nd_steps *s)
{
	nd_ivcur c[ND_NCAT + 1];

	memset(c, 0, sizeof c);
	for (size_t i = 0; i < s->nout; i++) {
		nd_step *o = &s->out[i];
		const nd_ivlog *l[ND_NCAT], *w;
		nd_ivcur *cc[ND_NCAT];

		sets_of(s, o, l, &w);
		for (int k = 0; k < ND_NCAT; k++)
			cc[k] = cur_on(&c[k], l[k]);
		nd_ivcur_breakdown(cc, o->ts, o->ts + o->dur, &o->bd);
	}
	for (int k = 0; k < ND_NCAT; k++)
		nd_ivcur_free(&c[k]);
	for (size_t i = 0; i < s->nout; i++) {
		nd_step *o = &s->out[i];
		const nd_ivlog *l[ND_NCAT], *w;

		sets_of(s, o, l, &w);
		o->wait_ns = nd_ivcur_measure(cur_on(&c[ND_NCAT], w), o->ts,
		    o->ts + o->dur);
	}
	nd_ivcur_free(&c[ND_NCAT]);
}

/*
 * The flops of a record over all devices sum each device's flops in its
 * window (keyed_flops), in the order of the devices.  Most devices have
 * none in a given window when there are many devices and many steps, and
 * a look at each would be quadratic: the devices that have some come from
 * an index instead, and the others are skipped (their sum is +0, which
 * changes no sum that starts at +0).  A device has flops in a window when
 * it has the window's number as a step key (byn), a key that is no
 * window's number whose first op starts in the window (byo), or an op
 * without a key that starts in it (h: each device's next such op, from
 * the current window's start on; the records come by start).
 */
struct fdev {
	int64_t key;
	uint32_t dev;
};

struct fnext {
	int64_t ts;
	uint32_t dev;
};

struct fidx {
	struct fdev *byn, *byo;	/* (step key, device), (first op, device) */
	size_t nbyn, nbyo;
	struct fnext *h;	/* a min-heap by ts */
	size_t nh;
	size_t *stk;		/* the walk of the heap */
	size_t *seen;		/* per device: last record listing it, + 1 */
	uint32_t *dev;		/* the devices of a record, ascending */
	size_t ndev;
};

static int
fdev_cmp(const void *a, const void *b)
{
	const struct fdev *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->dev > y->dev) - (x->dev < y->dev);
}

/* The first of v[0..n) whose key is at least key. */
static size_t
fdev_at(const struct fdev *v, size_t n, int64_t key)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m].key < key)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static void
heap_down(struct fnext *h, size_t n, size_t j)
{
	for (;;) {
		size_t m = j, l = 2 * j + 1, r = l + 1;
		struct fnext t;

		if (l < n && h[l].ts < h[m].ts)
			m = l;
		if (r < n && h[r].ts < h[m].ts)
			m = r;
		if (m == j)
			return;
		t = h[j];
		h[j] = h[m];
		h[m] = t;
		j = m;
	}
}

/* The index of the devices' flops; fc: a cursor on each one's flog. */
static void
fidx_init(const nd_steps *s, struct fidx *x, nd_ivcur *fc)
{
	size_t nn = 0, no = 0, nd = s->ndevs;

	memset(x, 0, sizeof *x);
	for (size_t d = 0; d < nd; d++) {
		nn += s->devs[d].k.next;
		no += s->devs[d].k.norph;
	}
	x->byn = nd_xmalloc((nn ? nn : 1) * sizeof *x->byn);
	x->byo = nd_xmalloc((no ? no : 1) * sizeof *x->byo);
	x->h = nd_xmalloc((nd ? nd : 1) * sizeof *x->h);
	x->stk = nd_xmalloc((nd ? nd : 1) * sizeof *x->stk);
	x->seen = nd_xcalloc(nd, sizeof *x->seen);
	x->dev = nd_xmalloc((nd ? nd : 1) * sizeof *x->dev);
	for (size_t d = 0; d < nd; d++) {
		const struct keyed *k = &s->devs[d].k;

		for (size_t i = 0; i < k->next; i++) {
			x->byn[x->nbyn].key = k->ext[i].num;
			x->byn[x->nbyn++].dev = (uint32_t)d;
		}
		for (size_t i = 0; i < k->norph; i++) {
			x->byo[x->nbyo].key = k->ext[k->orph[i]].lo;
			x->byo[x->nbyo++].dev = (uint32_t)d;
		}
		if (nd_ivlog_count(&k->flog) > 0) {
			x->h[x->nh].ts = nd_ivcur_at(&fc[d], 0).lo;
			x->h[x->nh++].dev = (uint32_t)d;
		}
	}
	qsort(x->byn, x->nbyn, sizeof *x->byn, fdev_cmp);
	qsort(x->byo, x->nbyo, sizeof *x->byo, fdev_cmp);
	for (size_t j = x->nh; j-- > 0;)
		heap_down(x->h, x->nh, j);
}

static void
fidx_free(struct fidx *x)
{
	free(x->byn);
	free(x->byo);
	free(x->h);
	free(x->stk);
	free(x->seen);
	free(x->dev);
}

static void
fidx_mark(struct fidx *x, size_t rec, uint32_t d)
{
	if (x->seen[d] != rec + 1) {
		x->seen[d] = rec + 1;
		x->dev[x->ndev++] = d;
	}
}

/* x->dev: the devices with flops in record rec (num, [lo, hi)), by
 * index; lo does not decrease from one call to the next. */
static void
fidx_devices(const nd_steps *s, struct fidx *x, nd_ivcur *fc, size_t rec,
    int64_t num, int64_t lo, int64_t hi)
{
	size_t ns = 0;

	/* each device's next op without a key: at or after lo */
	while (x->nh > 0 && x->h[0].ts < lo) {
		uint32_t d = x->h[0].dev;
		uint64_t i = nd_ivcur_seek_lo(&fc[d], lo);

		if (i < nd_ivlog_count(&s->devs[d].k.flog))
			x->h[0].ts = nd_ivcur_at(&fc[d], i).lo;
		else
			x->h[0] = x->h[--x->nh];
		heap_down(x->h, x->nh, 0);
	}
	x->ndev = 0;
	for (size_t i = fdev_at(x->byn, x->nbyn, num);
	    i < x->nbyn && x->byn[i].key == num; i++)
		fidx_mark(x, rec, x->byn[i].dev);
	for (size_t i = fdev_at(x->byo, x->nbyo, lo);
	    i < x->nbyo && x->byo[i].key < hi; i++)
		fidx_mark(x, rec, x->byo[i].dev);
	/* the heap's entries before hi: a walk that stops at later ones */
	if (x->nh > 0 && x->h[0].ts < hi)
		x->stk[ns++] = 0;
	while (ns > 0) {
		size_t j = x->stk[--ns];

		fidx_mark(x, rec, x->h[j].dev);
		for (size_t c = 2 * j + 1; c <= 2 * j + 2 && c < x->nh; c++)
			if (x->h[c].ts < hi)
				x->stk[ns++] = c;
	}
	qsort(x->dev, x->ndev, sizeof *x->dev, u32_cmp);
}

/* Devices with ops in [d0, d1) (at least 1) and their summed peak (0:
 * one's is unknown; without device ops, the option's). */
static void
domain_of(const nd_steps *s, int d0, int d1, uint32_t *ndev, double *peak)
{
	*ndev = 0;
	for (int d = d0; d < d1; d++)
		*ndev += s->devs[d].nops > 0;
	if (*ndev == 0)
		*ndev = 1;
	*peak = 0;
	if (!nd_steps_has_devices(s)) {
		*peak = s->o.peak_tflops;
		return;
	}
	for (int d = d0; d < d1; d++) {
		double p;

		if (s->devs[d].nops == 0)
			continue;
		if ((p = dev_peak(s, d)) <= 0) {
			*peak = 0;
			break;
		}
		*peak += p;
	}
}

/* Flops of record i (o) from the devices' ops: by index when over all of
 * many devices (x), else a look at each of its devices. */
static void
rec_flops(nd_steps *s, struct fidx *x, nd_ivcur *fc, size_t i, nd_step *o)
{
	int64_t lo = o->ts, hi = o->ts + o->dur;
	int nd = (int)s->ndevs, d0 = o->dev < 0 ? 0 : o->dev;
	int d1 = o->dev < 0 ? nd : o->dev + 1;

	o->has_flops = 1;
	if (o->dev < 0 && nd > 1) {
		fidx_devices(s, x, fc, i, o->num, lo, hi);
		for (size_t j = 0; j < x->ndev; j++)
			o->flops += keyed_flops(s, &s->devs[x->dev[j]].k,
			    &fc[x->dev[j]], o->num, lo, hi);
		return;
	}
	for (int d = d0; d < d1; d++)
		o->flops += keyed_flops(s, &s->devs[d].k, &fc[d], o->num, lo,
		    hi);
}

/* Devices, flops and peak of every record (sorted by step_cmp: those over
 * all devices first, by start). */
static void
fill_rest(nd_steps *s)
{
	int nd = (int)s->ndevs, dev_flops = 0;
	nd_ivcur *fc = nd_xcalloc((size_t)nd + 1, sizeof *fc);
	struct fidx x;
	uint32_t all_ndev;
	double all_peak;

	for (int d = 0; d < nd; d++) {
		nd_ivcur_init(&fc[d], &s->devs[d].k.flog);
		orphans_of(s, &s->devs[d].k);
		dev_flops |= s->devs[d].k.has_flops;
	}
	nd_ivcur_init(&fc[nd], &s->hk.flog);
	orphans_of(s, &s->hk);
	memset(&x, 0, sizeof x);
	if (dev_flops && nd > 1)
		fidx_init(s, &x, fc);
	domain_of(s, 0, nd, &all_ndev, &all_peak);
	for (size_t i = 0; i < s->nout; i++) {
		nd_step *o = &s->out[i];

		if (o->dev < 0) {
			o->ndev = all_ndev;
			o->peak_tflops = all_peak;
		} else
			domain_of(s, o->dev, o->dev + 1, &o->ndev,
			    &o->peak_tflops);
		/* flops: device ops, else host ops (Kineto with_flops) */
		if (dev_flops)
			rec_flops(s, &x, fc, i, o);
		else if (s->hk.has_flops && (o->dev < 0 || nd <= 1)) {
			o->has_flops = 1;
			o->flops = keyed_flops(s, &s->hk, &fc[nd], o->num,
			    o->ts, o->ts + o->dur);
		}
	}
	fidx_free(&x);
	for (int d = 0; d <= nd; d++)
		nd_ivcur_free(&fc[d]);
	free(fc);
}

size_t
nd_steps_end_source(nd_steps *s, const nd_step **out)
{
	resolve_models(s);
	/* the windows first: the sets they need depend on them */
	build_records(s);
	build_sets(s);
	/* the final order, and the order of the sweeps: devices in natural
	 * order of their names, whatever order their spans came in */
	{
		uint32_t *rank = dev_ranks(s);

		nd_sort(s->out, s->nout, sizeof *s->out, step_cmp, rank);
		free(rank);
	}
	fill_parts(s);
	fill_rest(s);
	*out = s->out;
	return s->nout;
}

size_t
nd_steps_profile(nd_steps *s, const nd_step **out)
{
	*out = s->out;
	if (!s->nosteps || s->o.markers_only)
		return 0;
	s->nout = 0;
	for (size_t d = 0; d < s->ndevs; d++) {
		const struct dev *dv = &s->devs[d];
		nd_step *o;

		if (dv->nops == 0)
			continue;
		o = new_out(s);
		o->ts = dv->op_lo;
		o->dur = dv->op_hi - dv->op_lo;
		o->marker = ND_SM_NONE;
		o->source = ND_SS_NONE;
		o->dev = (int)d;
	}
	/* once: the windows now hold the profile */
	s->nosteps = 0;
	fill_parts(s);
	fill_rest(s);
	*out = s->out;
	return s->nout;
}

const char *
nd_steps_device(const nd_steps *s, int i, const char **model,
    int *is_device)
{
	int ok = i >= 0 && (size_t)i < s->ndevs;

	if (model != NULL)
		*model = ok ? s->devs[i].model : NULL;
	if (is_device != NULL)
		*is_device = ok ? s->devs[i].is_device : 0;
	return ok ? s->devs[i].key : NULL;
}

const char *
nd_steps_what(const nd_steps *s)
{
	return s->has_what ? nd_intern_str(s->modnames, s->what, NULL) : NULL;
}

uint32_t
nd_steps_ndevices(const nd_steps *s)
{
	return (uint32_t)s->ndevs;
}

int
nd_steps_has_devices(const nd_steps *s)
{
	return s->nopdevs > 0;
}

/* ---- statistics ---- */

static int
i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* nearest rank: the ceil(q n)-th smallest of sorted v (n > 0) */
static int64_t
rank_q(const int64_t *v, size_t n, double q)
{
	size_t r = (size_t)ceil(q * (double)n - 1e-9);

	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return v[r - 1];
}

void
nd_stat_of(const int64_t *dur, size_t n, nd_stat *st)
{
	int64_t *v;
	long double sum = 0, ss = 0, mean;

	memset(st, 0, sizeof *st);
	if (n == 0)
		return;
	v = nd_xmalloc(n * sizeof *v);
	memcpy(v, dur, n * sizeof *v);
	qsort(v, n, sizeof *v, i64_cmp);
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		st->total += v[i];
	}
	mean = sum / (long double)n;
	for (size_t i = 0; i < n; i++)
		ss += ((long double)v[i] - mean) * ((long double)v[i] - mean);
	st->count = n;
	st->mean = (int64_t)llroundl(mean);
	st->stddev = (int64_t)llroundl(sqrtl(ss / (long double)n));
	st->min = v[0];
	st->max = v[n - 1];
	st->median = rank_q(v, n, 0.5);
	st->p90 = rank_q(v, n, 0.9);
	free(v);
}

struct cls_ctx {
	const int64_t *num, *dur;
};

static int
by_dur(const void *a, const void *b, void *ctx)
{
	const struct cls_ctx *c = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (c->dur[x] != c->dur[y])
		return c->dur[x] < c->dur[y] ? -1 : 1;
	return (c->num[x] > c->num[y]) - (c->num[x] < c->num[y]);
}

static void
fill_class(nd_step_class *c, const char *name, const int64_t *num,
    const int64_t *dur, const size_t *idx, size_t first, size_t n)
{
	int64_t *d = nd_xmalloc(n * sizeof *d), *k;
	int64_t best = INT64_MAX;

	memset(c, 0, sizeof *c);
	c->name = name;
	c->first = first;
	c->n = n;
	for (size_t i = 0; i < n; i++)
		d[i] = dur[idx[first + i]];
	nd_stat_of(d, n, &c->st);
	/* representative: closest to the median, the earliest on ties */
	for (size_t i = 0; i < n; i++) {
		int64_t dist = llabs(d[i] - c->st.median);
		int64_t sn = num[idx[first + i]];

		if (dist < best || (dist == best && sn < c->representative)) {
			best = dist;
			c->representative = sn;
		}
	}
	/* periodicity: evenly spaced numbers, spacing >= 2 */
	k = d;		/* reuse for the sorted numbers */
	for (size_t i = 0; i < n; i++)
		k[i] = num[idx[first + i]];
	qsort(k, n, sizeof *k, i64_cmp);
	if (n >= 2 && k[1] - k[0] >= 2) {
		int64_t p = k[1] - k[0];
		size_t i;

		for (i = 2; i < n; i++)
			if (k[i] - k[i - 1] != p)
				break;
		if (i == n) {
			c->has_period = 1;
			c->period = p;
			c->phase = ((k[0] % p) + p) % p;
		}
	}
	free(d);
}

void
nd_step_classify(const int64_t *num, const int64_t *dur, size_t n,
    nd_step_classes *out)
{
	struct cls_ctx ctx = { num, dur };
	size_t *idx, best_k = 0;
	double *x, tot = 0, tot2 = 0, best = INFINITY, sse_all;

	memset(out, 0, sizeof *out);
	idx = nd_xmalloc((n ? n : 1) * sizeof *idx);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	nd_sort(idx, n, sizeof *idx, by_dur, &ctx);
	out->idx = idx;
	if (n == 0) {
		out->nclass = 0;
		return;
	}
	x = nd_xmalloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++) {
		x[i] = log((double)(dur[idx[i]] > 1 ? dur[idx[i]] : 1));
		tot += x[i];
		tot2 += x[i] * x[i];
	}
	sse_all = tot2 - tot * tot / (double)n;
	if (n >= ND_CLASS_MIN_STEPS && sse_all > 1e-12) {
		double s1 = 0, q1 = 0;

		for (size_t k = 1; k < n; k++) {
			double s2, q2, sse;

			s1 += x[k - 1];
			q1 += x[k - 1] * x[k - 1];
			s2 = tot - s1;
			q2 = tot2 - q1;
			sse = (q1 - s1 * s1 / (double)k) +
			    (q2 - s2 * s2 / (double)(n - k));
			if (sse < best) {
				best = sse;
				best_k = k;
			}
		}
		out->r2 = 1 - best / sse_all;
		if (out->r2 < 0)
			out->r2 = 0;
		if (out->r2 > 1)
			out->r2 = 1;
		out->gap = dur[idx[best_k - 1]] > 0 ?
		    (double)dur[idx[best_k]] / (double)dur[idx[best_k - 1]] :
		    INFINITY;
	}
	free(x);
	if (best_k > 0) {
		nd_step_class l, h;

		fill_class(&l, "light", num, dur, idx, 0, best_k);
		fill_class(&h, "heavy", num, dur, idx, best_k, n - best_k);
		out->ratio = l.st.median > 0 ?
		    (double)h.st.median / (double)l.st.median : INFINITY;
		if (out->r2 >= ND_CLASS_MIN_R2 && out->gap >= ND_CLASS_MIN_GAP &&
		    out->ratio >= ND_CLASS_MIN_RATIO) {
			out->nclass = 2;
			out->c[0] = l;
			out->c[1] = h;
			return;
		}
	}
	out->nclass = 1;
	fill_class(&out->c[0], "typical", num, dur, idx, 0, n);
	out->c[0].has_period = 0;
}

void
nd_step_classes_free(nd_step_classes *c)
{
	free(c->idx);
	c->idx = NULL;
}

void
nd_step_straggler(const nd_rank_step *r, size_t n, int abs,
    nd_straggler *out)
{
	int64_t *ready, med, second = INT64_MIN;

	memset(out, 0, sizeof *out);
	if (n == 0)
		return;
	ready = nd_xmalloc(n * sizeof *ready);
	out->dur_min = INT64_MAX;
	out->dur_max = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		int64_t dur = r[i].end - r[i].start;
		int64_t end = abs ? r[i].end : dur;
		int64_t lend = abs ? r[out->last].end :
		    r[out->last].end - r[out->last].start;

		ready[i] = end - r[i].wait;
		if (ready[i] > ready[out->straggler])
			out->straggler = i;
		if (end > lend)
			out->last = i;
		if (dur < out->dur_min)
			out->dur_min = dur;
		if (dur > out->dur_max)
			out->dur_max = dur;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t end = abs ? r[i].end : r[i].end - r[i].start;

		if (i != out->last && end > second)
			second = end;
	}
	if (n > 1) {
		int64_t lend = abs ? r[out->last].end :
		    r[out->last].end - r[out->last].start;

		out->last_by_ns = lend - second;
	}
	if (abs) {
		int64_t lo = r[0].end, hi = r[0].end;

		for (size_t i = 1; i < n; i++) {
			if (r[i].end < lo)
				lo = r[i].end;
			if (r[i].end > hi)
				hi = r[i].end;
		}
		out->end_spread = hi - lo;
	}
	/* lag behind the median ready time (nearest rank, lower middle) */
	{
		int64_t rs = ready[out->straggler];

		qsort(ready, n, sizeof *ready, i64_cmp);
		med = ready[(n - 1) / 2];
		out->lag_ns = rs - med;
	}
	free(ready);
}

size_t
nd_rank_wins_merge(nd_rank_win *w, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		nd_rank_win *p = m > 0 ? &w[m - 1] : NULL;

		if (p != NULL && p->num == w[i].num &&
		    p->source == w[i].source) {
			/* several devices of one rank: its whole window */
			int64_t end = p->ts + p->dur;

			/* what the window grows by is a time of its own
			 * (nd_sum.h) */
			if (w[i].ts + w[i].dur > end) {
				nd_sum_add("step window",
				    w[i].ts + w[i].dur - end);
				end = w[i].ts + w[i].dur;
			}
			p->dur = end - p->ts;
			if (w[i].wait > p->wait)
				p->wait = w[i].wait;
			continue;
		}
		w[m++] = w[i];
	}
	return m;
}

/* The windows w[0..n) of one step on its ranks, with abs on one clock:
 * origin_ns + start_ns less the earliest's (nd_sum_apart), so that every
 * time and difference the straggler takes stays in int64 (origin_ns may be
 * any int64, a merged start_ns +-2^62). */
static void
rank_times(const nd_rank_win *w, size_t n, int abs, nd_rank_step *rs)
{
	size_t m = 0;

	for (size_t k = 1; abs && k < n; k++)
		if (nd_abstime_cmp(nd_abstime_of(w[k].origin, w[k].ts),
		    nd_abstime_of(w[m].origin, w[m].ts)) < 0)
			m = k;
	for (size_t k = 0; k < n; k++) {
		rs[k].rank = w[k].rank;
		rs[k].start = !abs ? w[k].ts : nd_sum_apart("step starts "
		    "(origin_ns+start_ns)", w[k].origin, w[k].ts, w[m].origin,
		    w[m].ts);
		rs[k].end = rs[k].start + w[k].dur;
		rs[k].wait = w[k].wait;
	}
}

void
nd_rank_steps(const nd_rank_win *w, size_t n, nd_rank_fn *fn, void *ctx)
{
	nd_rank_step *rs = nd_xmalloc((n ? n : 1) * sizeof *rs);

	for (size_t i = 0; i < n;) {
		size_t j = i;
		int abs = 1;
		nd_straggler sg;

		while (j < n && w[j].num == w[i].num)
			j++;
		if (j - i < 2) {
			i = j;
			continue;
		}
		for (size_t k = i; k < j; k++)
			abs &= w[k].has_origin;
		rank_times(w + i, j - i, abs, rs);
		nd_step_straggler(rs, j - i, abs, &sg);
		fn(ctx, w + i, j - i, abs, &sg);
		i = j;
	}
	free(rs);
}
