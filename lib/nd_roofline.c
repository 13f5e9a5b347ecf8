#include "nd_roofline.h"
#include "nd_agg.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_nest.h"
#include "nd_peak.h"
#include "nd_sort.h"
#include "nd_steps.h"
#include "nd_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Timeline classes, the first byte of a group's key. */
enum { C_DEVICE = 'd', C_HOST = 'h', C_ALL = 'a' };

struct nd_roof {
	nd_roof_opts o;
	const nd_by *by;
	nd_intern *keys;	/* class byte + nd_by key -> row */
	nd_roof_row *rows;
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
	nd_roof_row *out;
	size_t nout;
};

nd_roof *
nd_roof_new(const nd_roof_opts *o, const nd_by *by)
{
	nd_roof *r = nd_xcalloc(1, sizeof *r);

	r->o = *o;
	r->by = by;
	r->keys = nd_intern_new();
	r->names = nd_intern_new();
	r->dn = nd_devnames_new();
	r->cur = -1;
	r->csrc = -1;
	return r;
}

void
nd_roof_free(nd_roof *r)
{
	if (r == NULL)
		return;
	nd_intern_free(r->keys);
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
new_source(nd_roof *r, const nd_event *ev)
{
	if ((int64_t)ev->source == r->cur)
		return;
	r->cur = ev->source;
	r->sources++;
	r->csrc = -1;
	nd_devnames_reset(r->dn);
}

/* args.KEY as a number. */
static int
arg_num(const nd_event *ev, const char *key, double *out)
{
	nd_jval v;

	if (!nd_event_arg(ev, key, &v) || v.type != ND_JNUM)
		return 0;
	*out = nd_json_double(&v);
	return isfinite(*out);
}

/* The peaks and name of the span's device (cached for runs of spans of
 * one device). */
static void
resolve(nd_roof *r, const nd_event *ev)
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

void
nd_roof_record(nd_roof *r, const nd_event *ev, const nd_source_info *si)
{
	nd_roof_row *row;
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
	if (ev->args.type == ND_JOBJ && memmem(ev->args.raw, ev->args.len,
	    "flops\"", 6) != NULL) {
		hasf = arg_num(ev, "flops", &f) ||
		    arg_num(ev, "model_flops", &f);
		if (hasf)
			hasb = arg_num(ev, "bytes_accessed", &by);
	}
	nd_buf_reset(&r->key);
	nd_buf_addc(&r->key, cls);
	nd_by_key(r->by, ev, si, &r->key, &r->tmp);
	id = nd_intern_id(r->keys, r->key.p, r->key.len);
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
	row->flops += f;
	if (hasb) {
		row->bytes += by;
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
	const nd_roof_row *x = a, *y = b;
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
nd_roof_finish(nd_roof *r, const nd_roof_row **rows, nd_roof_sum *sum)
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
		nd_roof_row *x = &r->rows[i];
		size_t kl;
		const char *k = nd_intern_str(r->keys, i, &kl);

		if (x->kind != want)
			continue;
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
nd_roof_figures(const nd_roof_row *x, nd_roof_fig *f)
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
	f->ridge = x->peak_tflops * 1e3 / x->peak_gbps;
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
nd_roof_row_json(nd_jw *w, const nd_roof_row *x)
{
	nd_roof_fig f;

	nd_roof_figures(x, &f);
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
nd_roof_sum_json(nd_jw *w, const nd_roof_sum *sum)
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
