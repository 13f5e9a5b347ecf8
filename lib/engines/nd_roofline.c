#include "nd_roofline.h"
#include "nd_agg.h"
#include "nd_cli.h"
#include "nd_name.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_nest.h"
#include "nd_peak.h"
#include "nd_sort.h"
#include "nd_steps.h"
#include "nd_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Timeline classes, the first byte of a group's key. */
enum { C_DEVICE = 'd', C_HOST = 'h', C_ALL = 'a' };

struct nd_roofline {
	nd_err err;		/* no answer (eng_error) */
	nd_roofline_opts o;
	const nd_by *by;
	nd_intern *keys;	/* class byte + nd_by key -> row */
	nd_idmemo *memo;	/* class + nd_by_sids -> row */
	nd_roofline_row *rows;
	size_t caprows;
	nd_intern *names;	/* device names */
	nd_devnames *dn;
	int64_t cur;		/* current source, -1 before the first */
	uint32_t sources;
	int dev_flops;		/* a device op had flops */
	int host_flops;		/* a host span had flops */
	int dev_spans;		/* there were device ops */
	/* the device of the last span, resolved */
	nd_buf dkey, ckey;
	int64_t csrc;
	double ctf, cbw;
	uint32_t cname;		/* UINT32_MAX: none */
	nd_buf key, tmp;
	nd_roofline_row *out;
	size_t nout;
	/* as an engine (nd_roofline_engine): the answer */
	int fmt, k, check_by;
	const nd_roofline_row *show;
	size_t nshow;
	nd_roofline_sum showsum;
};

nd_roofline *
nd_roofline_new(const nd_roofline_opts *o, const nd_by *by)
{
	nd_roofline *r = nd_xcalloc(1, sizeof *r);

	r->o = *o;
	r->by = by;
	r->keys = nd_intern_new();
	r->memo = nd_idmemo_new();
	r->names = nd_intern_new();
	r->dn = nd_devnames_new();
	r->cur = -1;
	r->csrc = -1;
	return r;
}

void
nd_roofline_free(nd_roofline *r)
{
	if (r == NULL)
		return;
	nd_intern_free(r->keys);
	nd_idmemo_free(r->memo);
	nd_intern_free(r->names);
	nd_devnames_free(r->dn);
	free(r->rows);
	free(r->out);
	nd_buf_free(&r->dkey);
	nd_buf_free(&r->ckey);
	nd_buf_free(&r->key);
	nd_buf_free(&r->tmp);
	free(r);
}

static void
new_source(nd_roofline *r, const nd_event *ev)
{
	if ((int64_t)ev->source == r->cur)
		return;
	r->cur = ev->source;
	r->sources++;
	r->csrc = -1;
	nd_devnames_reset(r->dn);
}

/* args.KEY (noted by the decoder as `which`) as a number. */
static int
arg_num(const nd_event *ev, int which, const char *key, double *out)
{
	nd_jval v;
	int64_t i;
	int c = nd_event_arg_noted(ev, which, &v);

	if (c < 0)
		c = nd_event_arg(ev, key, &v);
	if (c == 0 || v.type != ND_JNUM)
		return 0;
	/* flops and bytes are integers: exact as doubles below 2^53, the
	 * value strtod gives, for a third of the cost */
	if (nd_json_int(&v, &i) == 0) {
		*out = (double)i;
		return 1;
	}
	*out = nd_json_double(&v);
	return isfinite(*out);
}

/* Whether args may have flops or model_flops: the decoder's notes; when
 * it has none (a key with an escape: "fl\u006fps" is flops too), the
 * walk of arg_num decides. */
static int
has_flops(const nd_event *ev)
{
	nd_jval v;
	int f = nd_event_arg_noted(ev, ND_ARG_FLOPS, &v),
	    m = nd_event_arg_noted(ev, ND_ARG_MODEL_FLOPS, &v);

	if (f >= 0 && m >= 0)
		return f > 0 || m > 0;
	return ev->args.type == ND_JOBJ;
}

/* The peaks and name of the span's device (cached for runs of spans of
 * one device). */
static void
resolve(nd_roofline *r, const nd_event *ev)
{
	const char *name;
	const nd_peak *p = NULL;
	double ttf = 0, tbw = 0;

	nd_span_device_key(ev, &r->dkey);
	if (r->csrc == (int64_t)ev->source && r->dkey.len == r->ckey.len &&
	    memcmp(r->dkey.p, r->ckey.p, r->dkey.len) == 0)
		return;
	nd_buf_reset(&r->ckey);
	nd_buf_add(&r->ckey, r->dkey.p, r->dkey.len);
	r->csrc = ev->source;
	name = r->o.device != NULL ? r->o.device :
	    nd_devnames_get(r->dn, r->dkey.p, r->dkey.len, &ttf, &tbw);
	if (name != NULL)
		p = nd_peak_find(name, strlen(name));
	r->ctf = r->o.peak_tflops > 0 ? r->o.peak_tflops : p ? p->tflops : ttf;
	r->cbw = r->o.peak_gbps > 0 ? r->o.peak_gbps : p ? p->gbps : tbw;
	r->cname = name != NULL ? nd_intern_id(r->names, name, strlen(name)) :
	    UINT32_MAX;
}

/* x (128 bits) += v when v is an integer that fits 64 bits, else rest. */
static void
xadd(uint64_t x[2], double *rest, double v)
{
	if (v >= 0 && v < 18446744073709551616.0 && v == floor(v)) {
		uint64_t u = (uint64_t)v;

		x[0] += u;
		x[1] += x[0] < u;
	} else
		*rest += v;
}

static double
xval(const uint64_t x[2], double rest)
{
	return ldexp((double)x[1], 64) + (double)x[0] + rest;
}

/* The row of a span: by the ids of its key's fields when it has them
 * (r->memo), else by the key bytes. */
static uint32_t
key_id(nd_roofline *r, const nd_event *ev, const nd_source_info *si, char cls)
{
	uint32_t id;
	uint64_t ik;
	int memo = nd_by_memo(r->by, ev, r->memo, (unsigned char)cls, &id, &ik);

	if (memo == 1)
		return id;
	/* a new key (nd_by_key's bookkeeping twice is the same) */
	nd_buf_reset(&r->key);
	nd_buf_addc(&r->key, cls);
	nd_by_key(r->by, ev, si, &r->key, &r->tmp);
	id = nd_intern_id(r->keys, r->key.p, r->key.len);
	if (memo == 0)
		nd_idmemo_put(r->memo, ik, id);
	return id;
}

void
nd_roofline_record(nd_roofline *r, const nd_event *ev, const nd_source_info *si)
{
	nd_roofline_row *row;
	uint32_t id;
	double f = 0, by = 0;
	int hasf = 0, hasb = 0, kind;
	char cls;

	new_source(r, ev);
	if (ev->type == ND_EV_META) {
		nd_devnames_meta(r->dn, ev);
		r->csrc = -1;
		return;
	}
	if (ev->type != ND_EV_SPAN || !(ev->has & ND_HAS_DUR))
		return;
	kind = nd_event_kind(ev);
	switch (r->o.timelines) {
	case ND_TL_DEVICE:
		if (kind != ND_KIND_DEVICE)
			return;
		cls = C_DEVICE;
		break;
	case ND_TL_HOST:
		if (kind != ND_KIND_HOST)
			return;
		cls = C_HOST;
		break;
	case ND_TL_ALL:
		cls = C_ALL;
		break;
	default:
		if (kind == ND_KIND_ANNOT)
			return;
		cls = kind == ND_KIND_DEVICE ? C_DEVICE : C_HOST;
	}
	if (has_flops(ev)) {
		hasf = arg_num(ev, ND_ARG_FLOPS, "flops", &f) ||
		    arg_num(ev, ND_ARG_MODEL_FLOPS, "model_flops", &f);
		if (hasf)
			hasb = arg_num(ev, ND_ARG_BYTES_ACCESSED,
			    "bytes_accessed", &by);
	}
	id = key_id(r, ev, si, cls);
	if (id >= r->caprows) {
		size_t old = r->caprows;

		nd_grow(&r->rows, &r->caprows, (size_t)id + 1, sizeof *r->rows);
		memset(r->rows + old, 0, (r->caprows - old) * sizeof *r->rows);
	}
	row = &r->rows[id];
	row->kind = cls;
	if (cls == C_DEVICE)
		r->dev_spans = 1;
	row->count++;
	row->total_ns += ev->dur_ns;
	if (!hasf)
		return;
	if (cls == C_DEVICE)
		r->dev_flops = 1;
	else
		r->host_flops = 1;
	row->flops_count++;
	row->flops_ns += ev->dur_ns;
	xadd(row->flops_x, &row->flops_r, f);
	if (hasb) {
		xadd(row->bytes_x, &row->bytes_r, by);
		row->bytes_count++;
	}
	resolve(r, ev);
	if (row->flops_count == 1) {
		row->peak_tflops = r->ctf;
		row->peak_gbps = r->cbw;
		row->peak = r->ctf > 0 || r->cbw > 0;
		row->device_name = r->cname == UINT32_MAX ? NULL :
		    nd_intern_str(r->names, r->cname, NULL);
	} else {
		const char *nm = r->cname == UINT32_MAX ? NULL :
		    nd_intern_str(r->names, r->cname, NULL);

		if (row->peak_tflops != r->ctf || row->peak_gbps != r->cbw)
			row->peak = 2;
		if (nm != row->device_name)
			row->name_mixed = 1;
	}
}

static int
row_cmp(const void *a, const void *b, void *ctx)
{
	const nd_roofline_row *x = a, *y = b;
	size_t n;
	int c;

	(void)ctx;
	if (x->flops_ns != y->flops_ns)
		return x->flops_ns > y->flops_ns ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	n = x->keylen < y->keylen ? x->keylen : y->keylen;
	if ((c = memcmp(x->key, y->key, n)) != 0)
		return c;
	return (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

size_t
nd_roofline_finish(nd_roofline *r, const nd_roofline_row **rows, nd_roofline_sum *sum)
{
	uint32_t n = nd_intern_count(r->keys);
	char want;

	switch (r->o.timelines) {
	case ND_TL_DEVICE:
		want = C_DEVICE;
		break;
	case ND_TL_HOST:
		want = C_HOST;
		break;
	case ND_TL_ALL:
		want = C_ALL;
		break;
	default:
		want = r->dev_flops || (!r->host_flops && r->dev_spans) ?
		    C_DEVICE : C_HOST;
	}
	memset(sum, 0, sizeof *sum);
	sum->timelines = want == C_DEVICE ? "device" : want == C_HOST ?
	    "host" : "all";
	sum->sources = r->sources;
	free(r->out);
	r->out = nd_xcalloc(n > 0 ? n : 1, sizeof *r->out);
	r->nout = 0;
	for (uint32_t i = 0; i < n; i++) {
		nd_roofline_row *x = &r->rows[i];
		size_t kl;
		const char *k = nd_intern_str(r->keys, i, &kl);

		if (x->kind != want)
			continue;
		x->flops = xval(x->flops_x, x->flops_r);
		x->bytes = xval(x->bytes_x, x->bytes_r);
		sum->spans += x->count;
		sum->total_ns += x->total_ns;
		if (x->flops_count == 0)
			continue;
		sum->flops_spans += x->flops_count;
		sum->flops_ns += x->flops_ns;
		sum->flops += x->flops;
		sum->bytes += x->bytes;
		r->out[r->nout] = *x;
		r->out[r->nout].key = k + 1;
		r->out[r->nout].keylen = kl - 1;
		if (x->name_mixed)
			r->out[r->nout].device_name = NULL;
		r->nout++;
	}
	nd_sort(r->out, r->nout, sizeof *r->out, row_cmp, NULL);
	sum->rows = r->nout;
	*rows = r->out;
	return r->nout;
}

void
nd_roofline_figures(const nd_roofline_row *x, nd_roofline_fig *f)
{
	memset(f, 0, sizeof *f);
	if (x->flops_count == 0 || x->flops_ns <= 0)
		return;
	f->has_tflops = 1;
	f->tflops = x->flops / (double)x->flops_ns / 1e3;
	if (x->bytes_count == x->flops_count && x->bytes > 0) {
		f->has_bytes = 1;
		f->gbps = x->bytes / (double)x->flops_ns;
		f->intensity = x->flops / x->bytes;
	}
	if (x->peak != 1)
		return;
	if (x->peak_tflops > 0) {
		f->has_tpeak = 1;
		f->pct_of_peak = f->tflops / x->peak_tflops * 100.0;
	}
	if (!f->has_bytes || x->peak_tflops <= 0 || x->peak_gbps <= 0)
		return;
	f->has_roof = 1;
	f->ridge = nd_roofline_ridge(x->peak_tflops, x->peak_gbps);
	if (f->intensity < f->ridge) {
		f->bound = "memory";
		f->attainable = f->intensity * x->peak_gbps / 1e3;
		f->pct = f->gbps / x->peak_gbps * 100.0;
	} else {
		f->bound = "compute";
		f->attainable = x->peak_tflops;
		f->pct = f->tflops / x->peak_tflops * 100.0;
	}
}

void
nd_roofline_row_json(nd_jw *w, const nd_roofline_row *x)
{
	nd_roofline_fig f;

	nd_roofline_figures(x, &f);
	nd_jw_kuint(w, "count", x->count);
	nd_jw_kint(w, "total_ns", x->total_ns);
	nd_jw_kuint(w, "flops_count", x->flops_count);
	nd_jw_kint(w, "flops_ns", x->flops_ns);
	nd_jw_kdbl(w, "flops", x->flops);
	if (x->bytes_count == x->flops_count)
		nd_jw_kdbl(w, "bytes", x->bytes);
	if (f.has_tflops)
		nd_jw_kdbl(w, "tflops", f.tflops);
	if (f.has_bytes) {
		nd_jw_kdbl(w, "gbps", f.gbps);
		nd_jw_kdbl(w, "intensity", f.intensity);
	}
	if (x->device_name != NULL)
		nd_jw_kcstr(w, "device_name", x->device_name);
	if (x->peak == 1) {
		if (x->peak_tflops > 0)
			nd_jw_kdbl(w, "peak_tflops", x->peak_tflops);
		if (x->peak_gbps > 0)
			nd_jw_kdbl(w, "peak_gbps", x->peak_gbps);
	}
	if (f.has_tpeak)
		nd_jw_kdbl(w, "pct_of_peak", f.pct_of_peak);
	if (f.has_roof) {
		nd_jw_kdbl(w, "ridge", f.ridge);
		nd_jw_kcstr(w, "bound", f.bound);
		nd_jw_kdbl(w, "attainable_tflops", f.attainable);
		nd_jw_kdbl(w, "pct_of_roofline", f.pct);
	}
}

void
nd_roofline_sum_json(nd_jw *w, const nd_roofline_sum *sum)
{
	nd_jw_kcstr(w, "timelines", sum->timelines);
	nd_jw_kuint(w, "sources", sum->sources);
	nd_jw_kuint(w, "spans", sum->spans);
	nd_jw_kint(w, "total_ns", sum->total_ns);
	nd_jw_kuint(w, "flops_spans", sum->flops_spans);
	nd_jw_kint(w, "flops_ns", sum->flops_ns);
	nd_jw_kuint(w, "no_flops_spans", sum->spans - sum->flops_spans);
	nd_jw_kint(w, "no_flops_ns", sum->total_ns - sum->flops_ns);
	nd_jw_kdbl(w, "flops", sum->flops);
	nd_jw_kdbl(w, "bytes", sum->bytes);
	nd_jw_kuint(w, "rows", sum->rows);
}

/* ---- partial results ---- */


static void
put_x(nd_jw *w, const char *key, const uint64_t x[2])
{
	char t[40];

	snprintf(t, sizeof t, "%016llx%016llx", (unsigned long long)x[1],
	    (unsigned long long)x[0]);
	nd_jw_kcstr(w, key, t);
}

static int
get_x(const nd_event *ev, const char *key, uint64_t x[2])
{
	const nd_jval *v = nd_event_get(ev, key);
	char t[17];

	if (v == NULL || v->type != ND_JSTR || v->len != 34 ||
	    strspn(v->raw + 1, "0123456789abcdef") < 32)
		return -1;
	for (int i = 0; i < 2; i++) {
		memcpy(t, v->raw + 1 + 16 * i, 16);
		t[16] = '\0';
		x[1 - i] = strtoull(t, NULL, 16);
	}
	return 0;
}

static void
group_json(const nd_roofline *r, size_t i, nd_jw *w)
{
	const nd_roofline_row *x = &r->rows[i];
	size_t kl;
	const char *k = nd_intern_str(r->keys, (uint32_t)i, &kl);

	nd_jw_kstr(w, "cls", k, 1);
	nd_jw_key(w, "key");
	nd_aggkey_json(w, k + 1, kl - 1);
	nd_jw_kuint(w, "count", x->count);
	nd_jw_kint(w, "total_ns", x->total_ns);
	nd_jw_kuint(w, "flops_count", x->flops_count);
	nd_jw_kint(w, "flops_ns", x->flops_ns);
	put_x(w, "flops_x", x->flops_x);
	nd_jw_kdbl(w, "flops_r", x->flops_r);
	put_x(w, "bytes_x", x->bytes_x);
	nd_jw_kdbl(w, "bytes_r", x->bytes_r);
	nd_jw_kuint(w, "bytes_count", x->bytes_count);
	nd_jw_kint(w, "peak", x->peak);
	nd_jw_kdbl(w, "peak_tflops", x->peak_tflops);
	nd_jw_kdbl(w, "peak_gbps", x->peak_gbps);
	nd_jw_key(w, "device_name");
	if (x->device_name != NULL)
		nd_jw_cstr(w, x->device_name);
	else
		nd_jw_null(w);
	nd_jw_kbool(w, "name_mixed", x->name_mixed);
}

static int
get_num(const nd_event *ev, const char *key, int64_t *i, double *d)
{
	const nd_jval *v = nd_event_get(ev, key);

	if (v == NULL || v->type != ND_JNUM)
		return -1;
	if (d != NULL) {
		*d = nd_json_double(v);
		return isfinite(*d) ? 0 : -1;
	}
	/* within 2^53, as the stream's durations: sums stay exact */
	return nd_json_int(v, i) == 0 && *i >= 0 ? 0 : -1;
}

/* dst += src, the peaks and device name by the rule of nd_roofline_record. */
static void
row_merge(nd_roofline *r, nd_roofline_row *dst, const nd_roofline_row *src)
{
	if (src->flops_count > 0 && dst->flops_count == 0) {
		dst->peak = src->peak;
		dst->peak_tflops = src->peak_tflops;
		dst->peak_gbps = src->peak_gbps;
		dst->device_name = src->device_name == NULL ? NULL :
		    nd_intern_str(r->names, nd_intern_id(r->names,
		    src->device_name, strlen(src->device_name)), NULL);
		dst->name_mixed = src->name_mixed;
	} else if (src->flops_count > 0) {
		if (src->peak == 2 || src->peak_tflops != dst->peak_tflops ||
		    src->peak_gbps != dst->peak_gbps)
			dst->peak = 2;
		if (src->name_mixed || (src->device_name == NULL) !=
		    (dst->device_name == NULL) || (src->device_name != NULL &&
		    strcmp(src->device_name, dst->device_name) != 0))
			dst->name_mixed = 1;
	}
	dst->count += src->count;
	dst->total_ns += src->total_ns;
	dst->flops_count += src->flops_count;
	dst->flops_ns += src->flops_ns;
	dst->bytes_count += src->bytes_count;
	dst->flops_x[0] += src->flops_x[0];
	dst->flops_x[1] += src->flops_x[1] + (dst->flops_x[0] < src->flops_x[0]);
	dst->bytes_x[0] += src->bytes_x[0];
	dst->bytes_x[1] += src->bytes_x[1] + (dst->bytes_x[0] < src->bytes_x[0]);
	dst->flops_r += src->flops_r;
	dst->bytes_r += src->bytes_r;
}

static int
group_read(nd_roofline *r, const nd_event *ev)
{
	const nd_jval *cls = nd_event_get(ev, "cls");
	const nd_jval *dn = nd_event_get(ev, "device_name");
	nd_roofline_row x;
	int64_t v[7];
	static const char *const key[] = { "count", "total_ns", "flops_count",
	    "flops_ns", "bytes_count", "peak", "name_mixed" };
	nd_buf t = ND_BUF_INIT;
	uint32_t id;

	memset(&x, 0, sizeof x);
	nd_buf_reset(&r->key);
	if (cls == NULL || cls->type != ND_JSTR || cls->len != 3 ||
	    dn == NULL || (dn->type != ND_JSTR && dn->type != ND_JNULL))
		return -1;
	nd_buf_addc(&r->key, cls->raw[1]);
	if (nd_aggkey_read(&r->key, nd_event_get(ev, "key")) != 0)
		return -1;
	for (int i = 0; i < 6; i++)
		if (get_num(ev, key[i], &v[i], NULL) != 0)
			return -1;
	v[6] = nd_event_get(ev, key[6]) != NULL &&
	    nd_event_get(ev, key[6])->type == ND_JTRUE;
	if (get_x(ev, "flops_x", x.flops_x) != 0 ||
	    get_x(ev, "bytes_x", x.bytes_x) != 0 ||
	    get_num(ev, "flops_r", NULL, &x.flops_r) != 0 ||
	    get_num(ev, "bytes_r", NULL, &x.bytes_r) != 0 ||
	    get_num(ev, "peak_tflops", NULL, &x.peak_tflops) != 0 ||
	    get_num(ev, "peak_gbps", NULL, &x.peak_gbps) != 0 || v[5] > 2)
		return -1;
	x.count = (uint64_t)v[0];
	x.total_ns = v[1];
	x.flops_count = (uint64_t)v[2];
	x.flops_ns = v[3];
	x.bytes_count = (uint64_t)v[4];
	x.peak = (int)v[5];
	x.name_mixed = (int)v[6];
	if (dn->type == ND_JSTR) {
		nd_json_unescape(dn, &t);
		nd_buf_addc(&t, '\0');
		x.device_name = t.p;
	}
	id = nd_intern_id(r->keys, r->key.p, r->key.len);
	if (id >= r->caprows) {
		size_t old = r->caprows;

		nd_grow(&r->rows, &r->caprows, (size_t)id + 1, sizeof *r->rows);
		memset(r->rows + old, 0, (r->caprows - old) * sizeof *r->rows);
	}
	r->rows[id].kind = cls->raw[1];
	row_merge(r, &r->rows[id], &x);
	nd_buf_free(&t);
	return 0;
}

static void
state_json(const nd_roofline *r, nd_jw *w)
{
	nd_jw_kbool(w, "roof_dev_flops", r->dev_flops);
	nd_jw_kbool(w, "roof_host_flops", r->host_flops);
	nd_jw_kbool(w, "roof_dev_spans", r->dev_spans);
	nd_jw_kuint(w, "roof_sources", r->sources);
}

static int
state_read(nd_roofline *r, const nd_event *ev)
{
	int64_t n;
	const nd_jval *v;

	if (get_num(ev, "roof_sources", &n, NULL) != 0 ||
	    n > UINT32_MAX - r->sources)
		return -1;
	r->sources += (uint32_t)n;
	r->dev_flops |= (v = nd_event_get(ev, "roof_dev_flops")) != NULL &&
	    v->type == ND_JTRUE;
	r->host_flops |= (v = nd_event_get(ev, "roof_host_flops")) != NULL &&
	    v->type == ND_JTRUE;
	r->dev_spans |= (v = nd_event_get(ev, "roof_dev_spans")) != NULL &&
	    v->type == ND_JTRUE;
	return 0;
}

const char *const nd_roofline_partial_types[] = { "roof_state",
	"roof_group" };
const size_t nd_roofline_partial_ntypes = 2;

void
nd_roofline_write_partial(const nd_roofline *r, nd_partial_w *pw)
{
	nd_jw w;

	state_json(r, nd_partial_rec(pw, &w, "roof_state"));
	nd_partial_rec_end(pw, &w);
	for (size_t i = 0; i < nd_intern_count(r->keys); i++) {
		group_json(r, i, nd_partial_rec(pw, &w, "roof_group"));
		nd_partial_rec_end(pw, &w);
	}
}

int
nd_roofline_read_partial(nd_roofline *r, nd_stream *st, const nd_event *ev)
{
	static const char *const sum[] = { "count", "total_ns",
	    "flops_count", "flops_ns", "bytes_count" };

	if (nd_str_eq(ev->type_name, "roof_state")) {
		if (state_read(r, ev) != 0)
			nd_partial_bad(st, ev, "roof_sources");
		return 1;
	}
	if (!nd_str_eq(ev->type_name, "roof_group"))
		return 0;
	/* the figures count towards the merge's sums */
	for (size_t i = 0; i < sizeof sum / sizeof *sum; i++)
		(void)nd_partial_usum(st, ev, sum[i]);
	if (!nd_stream_failed(st) && group_read(r, ev) != 0)
		nd_partial_bad(st, ev, "key");
	return 1;
}

double
nd_roofline_ridge(double peak_tflops, double peak_gbps)
{
	if (peak_tflops <= 0 || peak_gbps <= 0)
		return 0;
	return peak_tflops * 1e3 / peak_gbps;
}

int
nd_roofline_uniform(const nd_roofline_row *rows, size_t n)
{
	if (n == 0 || rows[0].peak != 1)
		return 0;
	for (size_t i = 1; i < n; i++)
		if (rows[i].peak != 1 ||
		    rows[i].peak_tflops != rows[0].peak_tflops ||
		    rows[i].peak_gbps != rows[0].peak_gbps)
			return 0;
	return 1;
}

/* ---- the answer: rows as records, an aligned table or CSV ---- */

/* Output keys of a roofline row: a --by key may not take one of these. */
static const char *const row_keys[] = {
	"type", "row", "args", "count", "total_ns", "flops_count", "flops_ns",
	"flops", "bytes", "tflops", "gbps", "intensity", "device_name",
	"peak_tflops", "peak_gbps", "pct_of_peak", "ridge", "bound",
	"attainable_tflops", "pct_of_roofline"
};

static void
write_json(nd_out *o, const nd_by *by, const nd_roofline_row *rows, size_t n,
    const nd_roofline_sum *sum)
{
	nd_buf *b = nd_out_buf(o);
	nd_jw w;

	for (size_t i = 0; i < n; i++) {
		const nd_roofline_row *x = &rows[i];

		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", "roofline");
		nd_jw_kuint(&w, "row", i + 1);
		nd_by_json(by, &w, x->key, x->keylen);
		nd_roofline_row_json(&w, x);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		nd_out_commit(o);
	}
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "roofline_summary");
	nd_roofline_sum_json(&w, sum);
	nd_jw_kuint(&w, "shown", n);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_out_commit(o);
}

#define NCOL 8

static void
cells_of(const nd_roofline_row *x, char cell[NCOL][32])
{
	nd_roofline_fig f;

	nd_roofline_figures(x, &f);
	for (int c = 0; c < NCOL; c++)
		snprintf(cell[c], 32, "-");
	nd_fmt_dur(cell[0], 32, x->flops_ns, 0);
	snprintf(cell[1], 32, "%llu", (unsigned long long)x->flops_count);
	if (f.has_tflops)
		snprintf(cell[2], 32, "%.3f", f.tflops);
	if (f.has_bytes) {
		snprintf(cell[3], 32, "%.1f", f.gbps);
		snprintf(cell[4], 32, "%.2f", f.intensity);
	}
	if (f.has_roof) {
		snprintf(cell[5], 32, "%s", f.bound);
		snprintf(cell[6], 32, "%.3f", f.attainable);
		snprintf(cell[7], 32, "%.1f%%", f.pct);
	}
}

static void
write_table(nd_out *o, const nd_by *by, const nd_roofline_row *rows, size_t n,
    const nd_roofline_sum *sum)
{
	static const char *const head[NCOL] = { "Time", "Count", "TFLOP/s",
	    "GB/s", "FLOP/B", "Bound", "Roof TF/s", "% roof" };
	size_t wd[NCOL], nk = nd_by_count(by), *kw;
	char cell[NCOL][32], d1[32], d2[32];
	nd_buf *b = nd_out_buf(o), txt = ND_BUF_INIT;
	const nd_roofline_row *first = n > 0 ? &rows[0] : NULL;
	int uniform = nd_roofline_uniform(rows, n);

	kw = nd_xcalloc(nk, sizeof *kw);
	for (size_t c = 0; c < NCOL; c++)
		wd[c] = strlen(head[c]);
	for (size_t k = 0; k < nk; k++) {
		const char *name = nd_by_name(by, k, NULL);

		kw[k] = nd_text_width(name, strlen(name));
	}
	for (size_t i = 0; i < n; i++) {
		cells_of(&rows[i], cell);
		for (size_t c = 0; c < NCOL; c++)
			if (strlen(cell[c]) > wd[c])
				wd[c] = strlen(cell[c]);
		for (size_t k = 0; k < nk; k++) {
			nd_by_text(rows[i].key, rows[i].keylen, k, &txt);
			if (nd_text_width(txt.p, txt.len) > kw[k])
				kw[k] = nd_text_width(txt.p, txt.len);
		}
	}
	nd_by_table_head(by, b, head, wd, NCOL, kw);
	for (size_t i = 0; i < n; i++) {
		cells_of(&rows[i], cell);
		for (size_t c = 0; c < NCOL; c++)
			nd_buf_addf(b, "%s%*s", c ? "  " : "", (int)wd[c],
			    cell[c]);
		for (size_t k = 0; k < nk; k++) {
			nd_by_text(rows[i].key, rows[i].keylen, k, &txt);
			nd_by_table_key(b, txt.p, txt.len, k, nk, kw);
		}
		nd_by_table_eol(b);
		nd_out_commit(o);
	}
	nd_fmt_dur(d1, sizeof d1, sum->flops_ns, 0);
	nd_fmt_dur(d2, sizeof d2, sum->total_ns, 0);
	nd_buf_addf(b, "\n%llu of %llu spans (%s of %s) on %s timelines "
	    "had flops; %zu groups, %zu shown\n",
	    (unsigned long long)sum->flops_spans,
	    (unsigned long long)sum->spans, d1, d2, sum->timelines,
	    sum->rows, n);
	if (uniform) {
		nd_buf_addf(b, "peak %g TFLOP/s, %g GB/s", first->peak_tflops,
		    first->peak_gbps);
		if (nd_roofline_ridge(first->peak_tflops, first->peak_gbps) > 0)
			nd_buf_addf(b, ", ridge %.1f FLOP/B", nd_roofline_ridge(
			    first->peak_tflops, first->peak_gbps));
		if (first->device_name != NULL)
			nd_buf_addf(b, " (%s)", first->device_name);
		nd_buf_addc(b, '\n');
	} else if (n > 0)
		nd_buf_adds(b, "no single device peak: see --device, "
		    "--peak-tflops and --peak-gbps\n");
	nd_out_commit(o);
	nd_buf_free(&txt);
	free(kw);
}

static void
csv_dbl(nd_buf *b, int has, double v)
{
	nd_buf_addc(b, ',');
	if (has)
		nd_json_put_double(b, v);
}

static void
write_csv(nd_out *o, const nd_by *by, const nd_roofline_row *rows, size_t n)
{
	nd_buf *b = nd_out_buf(o);
	size_t nk = nd_by_count(by);

	for (size_t k = 0; k < nk; k++) {
		const char *name = nd_by_name(by, k, NULL);

		nd_csv_field(b, name, strlen(name));
		nd_buf_addc(b, ',');
	}
	nd_buf_adds(b, "count,total_ns,flops_count,flops_ns,flops,bytes,"
	    "tflops,gbps,intensity,device_name,peak_tflops,peak_gbps,"
	    "pct_of_peak,ridge,bound,attainable_tflops,pct_of_roofline\n");
	for (size_t i = 0; i < n; i++) {
		const nd_roofline_row *x = &rows[i];
		nd_roofline_fig f;

		nd_roofline_figures(x, &f);
		for (size_t k = 0; k < nk; k++) {
			int tag;
			const char *s;
			size_t len;

			if (nd_by_field(x->key, x->keylen, k, &tag, &s, &len))
				nd_csv_field(b, s, len);
			nd_buf_addc(b, ',');
		}
		nd_buf_addf(b, "%llu,%lld,%llu,%lld",
		    (unsigned long long)x->count, (long long)x->total_ns,
		    (unsigned long long)x->flops_count,
		    (long long)x->flops_ns);
		csv_dbl(b, 1, x->flops);
		csv_dbl(b, x->bytes_count == x->flops_count, x->bytes);
		csv_dbl(b, f.has_tflops, f.tflops);
		csv_dbl(b, f.has_bytes, f.gbps);
		csv_dbl(b, f.has_bytes, f.intensity);
		nd_buf_addc(b, ',');
		if (x->device_name != NULL)
			nd_csv_field(b, x->device_name, strlen(x->device_name));
		csv_dbl(b, x->peak == 1 && x->peak_tflops > 0, x->peak_tflops);
		csv_dbl(b, x->peak == 1 && x->peak_gbps > 0, x->peak_gbps);
		csv_dbl(b, f.has_tpeak, f.pct_of_peak);
		csv_dbl(b, f.has_roof, f.ridge);
		nd_buf_addc(b, ',');
		if (f.has_roof)
			nd_buf_adds(b, f.bound);
		csv_dbl(b, f.has_roof, f.attainable);
		csv_dbl(b, f.has_roof, f.pct);
		nd_buf_addc(b, '\n');
		nd_out_commit(o);
	}
}

nd_by *
nd_roofline_by(const char *spec)
{
	const char *bad;
	nd_by *by = nd_by_parse(spec != NULL ? spec : "name", row_keys,
	    sizeof row_keys / sizeof *row_keys, &bad);

	if (by == NULL) {
		if (bad[0] == '\0')
			nd_die(ND_EXIT_ERROR, "--by: no key in '%s'", spec);
		nd_die(ND_EXIT_ERROR, "--by %s: '%s' is an output key of "
		    "roofline rows; it cannot be a group key", spec, bad);
	}
	return by;
}

/* ---- the engine (nd_engine.h) ---- */

static void
eng_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	nd_roofline_record(self, ev, si);
}

static void
eng_finish(void *self, const nd_run_res *rr)
{
	nd_roofline *r = self;

	(void)rr;
	if (r->check_by && nd_by_check(r->by, "--by", &r->err) != 0)
		return;
	r->nshow = nd_roofline_finish(r, &r->show, &r->showsum);
	if (r->k > 0 && (size_t)r->k < r->nshow)
		r->nshow = (size_t)r->k;
}

static const nd_err *
eng_error(void *self)
{
	nd_roofline *r = self;

	return r->err.code != 0 ? &r->err : NULL;
}

static void
eng_write(void *self, nd_out *o)
{
	nd_roofline *r = self;

	if (r->fmt == ND_ROOF_TABLE)
		write_table(o, r->by, r->show, r->nshow, &r->showsum);
	else if (r->fmt == ND_ROOF_CSV)
		write_csv(o, r->by, r->show, r->nshow);
	else
		write_json(o, r->by, r->show, r->nshow, &r->showsum);
}

nd_engine
nd_roofline_engine(nd_roofline *r, int fmt, int k, int check_by)
{
	/* durations only, no nesting: one reading in any order */
	nd_engine e = {
		.name = "roofline",
		.self = r,
		.record = eng_record,
		.finish = eng_finish,
		.write = eng_write,
		.error = eng_error,
	};

	r->fmt = fmt;
	r->k = k;
	r->check_by = check_by;
	return e;
}
