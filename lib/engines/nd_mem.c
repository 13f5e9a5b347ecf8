/*
 * nd_mem: memory timelines, peaks and attribution.  See nd_mem.h and
 * trace-mem(1).
 */
#include "nd_mem.h"
#include "nd_cli.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_name.h"
#include "nd_nest.h"
#include "nd_sort.h"
#include "nd_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX
#define MAX_ANCESTORS 1024	/* a sample's enclosing spans walked */
#define MAX_STACK_OUT 64	/* names in mem_peak "stack" */
#define MAX_DEVICES 65536	/* snapshot device indices */
#define SAFE_SIZE ((int64_t)1 << 53)

/* Sums wrap instead of overflowing (hostile input only). */
static int64_t
add64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t
sub64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

struct span {
	int64_t ts, end, step;
	uint32_t tl, name, scope, seq, parent;
	int has_step;
};

/* ordered mode: a span still open on its timeline, with its strings, kept
 * until a sample falls inside it (then it joins m->spans) or it ends */
struct open_span {
	struct span sp;
	int committed;
	int has_scope;
	size_t name_n;
	nd_buf text;		/* name, then scope */
};

struct tlstack {
	struct open_span *e;
	size_t n, cap;
	int64_t last;		/* latest start seen (has_last) */
	int has_last;
};

struct sample {
	int64_t ts, alloc, reserved, delta, apeak, pid, tid, step;
	uint32_t series, tl, seq, op, scope, span;
	unsigned char has_reserved, has_apeak, has_pid, has_tid, has_step;
};

struct series {
	uint32_t label;		/* id in m->labels */
	/* computed when the source ends */
	uint64_t samples, allocs, frees;
	int64_t alloc_bytes, free_bytes, max_reserved, apeak, final;
	int has_reserved, has_apeak;
	int64_t first_ts, last_ts;
	size_t peak;		/* index into samples */
};

struct label {
	char *device;		/* NULL if unknown */
	char *allocator;	/* NULL for Kineto */
};

struct toprow {
	uint32_t label, op;	/* op NONE32: not attributed */
	int64_t allocs, alloc_bytes, frees, free_bytes, total;
};

struct nd_mem {
	nd_mem_opts o;
	nd_buf *out;
	void (*commit)(void *);
	void *ctx;
	nd_buf tmp;
	nd_intern *names;	/* op names and scopes */
	uint32_t *stamp;	/* per name id: ancestor walk generation */
	size_t capstamp;
	uint32_t gen;

	/* the current stream source */
	int active;
	uint32_t cur;
	char *path, *format, *host;
	int has_rank;
	int64_t rank, origin;
	int has_start;
	int64_t start;		/* the source's earliest ts_ns: times of the
				 * text table count from it, as elsewhere */
	uint64_t records;
	nd_intern *tls;
	nd_intern *skeys;	/* series keys of this source */
	struct series *series;
	size_t nseries, capseries;
	struct span *spans;
	size_t nspans, capspans;
	struct tlstack *stacks;	/* ordered mode, by timeline id */
	size_t capstacks;
	int disordered;		/* ordered mode met a timeline out of order */
	struct sample *samples;
	size_t nsamples, capsamples;
	uint32_t seq;

	/* across sources */
	nd_intern *labels;
	struct label *lab;
	size_t caplab;
	nd_intern *rowkeys;
	struct toprow *rows;
	size_t nrows, caprows;
};

/* ---- output helpers ---- */

static void
done_line(nd_mem *m)
{
	nd_buf_addc(m->out, '\n');
	if (m->commit != NULL)
		m->commit(m->ctx);
}

static void
begin(nd_mem *m, nd_jw *w, const char *type)
{
	nd_jw_init(w, m->out);
	nd_jw_obj(w);
	nd_jw_kcstr(w, "type", type);
}

static void
end(nd_mem *m, nd_jw *w)
{
	nd_jw_obj_end(w);
	done_line(m);
}

static void
text(nd_mem *m, const char *fmt, ...) ND_PRINTF(2, 3);

static void
text(nd_mem *m, const char *fmt, ...)
{
	va_list ap;
	char line[2048];
	size_t n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	n = strlen(line);
	while (n > 0 && line[n - 1] == ' ')	/* an empty last column */
		n--;
	nd_text_visible(m->out, line, n);	/* names with controls */
	done_line(m);
}

/* A double for records (shares, fragmentation): nd_jw_dbl within the range
 * where its integer test is defined, else "%.17g" (hostile input only). */
static void
kdbl(nd_jw *w, const char *key, double v)
{
	char t[40];

	nd_jw_key(w, key);
	if (isnan(v) || isinf(v) || fabs(v) < 9007199254740992.0) {
		nd_jw_dbl(w, v);
		return;
	}
	snprintf(t, sizeof t, "%.17g", v);
	nd_jw_raw(w, t, strlen(t));
}

/* "1.23 GiB", "512 B" */
static const char *
human(char *buf, size_t n, int64_t b)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB",
	    "PiB", "EiB" };
	double v = (double)b;
	int u = -1;

	if (b > -1024 && b < 1024) {
		snprintf(buf, n, "%" PRId64 " B", b);
		return buf;
	}
	while ((v >= 1024 || v <= -1024) && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n, "%.2f %s", v, unit[u]);
	return buf;
}

/* ---- setup ---- */

nd_mem *
nd_mem_new(const nd_mem_opts *o, nd_buf *out, void (*commit)(void *),
    void *ctx)
{
	nd_mem *m = nd_xcalloc(1, sizeof *m);

	m->o = *o;
	m->out = out;
	m->commit = commit;
	m->ctx = ctx;
	m->names = nd_intern_new();
	m->labels = nd_intern_new();
	m->rowkeys = nd_intern_new();
	m->tls = nd_intern_new();
	m->skeys = nd_intern_new();
	return m;
}

static void
clear_source(nd_mem *m)
{
	free(m->path);
	free(m->format);
	free(m->host);
	m->path = m->format = m->host = NULL;
	m->active = 0;
	m->records = 0;
	m->nspans = m->nsamples = m->nseries = 0;
	for (size_t i = 0; i < m->capstacks; i++) {
		m->stacks[i].n = 0;
		m->stacks[i].has_last = 0;
	}
	m->seq = 0;
	nd_intern_free(m->tls);
	nd_intern_free(m->skeys);
	m->tls = nd_intern_new();
	m->skeys = nd_intern_new();
}

void
nd_mem_free(nd_mem *m)
{
	if (m == NULL)
		return;
	clear_source(m);
	nd_intern_free(m->tls);
	nd_intern_free(m->skeys);
	nd_intern_free(m->names);
	for (uint32_t i = 0; i < nd_intern_count(m->labels); i++) {
		free(m->lab[i].device);
		free(m->lab[i].allocator);
	}
	free(m->lab);
	nd_intern_free(m->labels);
	nd_intern_free(m->rowkeys);
	free(m->rows);
	free(m->series);
	free(m->spans);
	for (size_t i = 0; i < m->capstacks; i++) {
		for (size_t j = 0; j < m->stacks[i].cap; j++)
			nd_buf_free(&m->stacks[i].e[j].text);
		free(m->stacks[i].e);
	}
	free(m->stacks);
	free(m->samples);
	free(m->stamp);
	nd_buf_free(&m->tmp);
	free(m);
}

static uint32_t
name_id(nd_mem *m, const char *s, size_t n)
{
	return nd_intern_id(m->names, s, n);
}

/* A name and its length: names may hold NUL, so JSON takes both. */
static void
put_name(nd_jw *w, const char *k, nd_mem *m, uint32_t id)
{
	size_t n;
	const char *s = nd_intern_str(m->names, id, &n);

	if (k != NULL)
		nd_jw_key(w, k);
	nd_jw_str(w, s, n);
}

/* The same for text: its visible form (nd_text_visible) appended to b. */
static void
add_name(nd_buf *b, nd_mem *m, uint32_t id)
{
	size_t n;
	const char *s = nd_intern_str(m->names, id, &n);

	nd_text_visible(b, s, n);
}

/* A label: the series' device or allocator, shared by every source. */
static uint32_t
label_id(nd_mem *m, const char *device, const char *allocator)
{
	const char *l = allocator != NULL ? allocator :
	    device != NULL ? device : "unknown";
	uint32_t id;

	nd_buf_reset(&m->tmp);
	nd_buf_addc(&m->tmp, allocator != NULL ? 'a' : 'd');
	nd_buf_adds(&m->tmp, l);
	id = nd_intern_id(m->labels, m->tmp.p, m->tmp.len);
	if (id >= m->caplab) {
		size_t old = m->caplab;

		nd_grow(&m->lab, &m->caplab, (size_t)id + 1, sizeof *m->lab);
		memset(m->lab + old, 0, (m->caplab - old) * sizeof *m->lab);
	}
	if (m->lab[id].device == NULL && m->lab[id].allocator == NULL) {
		m->lab[id].device = device != NULL ? nd_xstrdup(device) :
		    allocator == NULL ? nd_xstrdup("unknown") : NULL;
		m->lab[id].allocator = allocator != NULL ?
		    nd_xstrdup(allocator) : NULL;
	}
	return id;
}

static const char *
label_str(nd_mem *m, uint32_t id)
{
	size_t n;

	return nd_intern_str(m->labels, id, &n) + 1;
}

/* ---- stream input ---- */

static void
source_begin(nd_mem *m, const nd_event *ev, const nd_source_info *si)
{
	m->active = 1;
	m->cur = ev->source;
	m->path = nd_xstrdup(si != NULL && si->path != NULL ? si->path : "-");
	m->format = nd_xstrdup(si != NULL && si->format != NULL ?
	    si->format : "ndjson");
	m->host = si != NULL && si->host != NULL ? nd_xstrdup(si->host) :
	    NULL;
	m->has_rank = si != NULL && si->has_rank;
	m->rank = si != NULL ? si->rank : 0;
	m->origin = si != NULL ? si->origin_ns : 0;
	m->has_start = 0;
	m->start = 0;
}

static uint32_t
timeline(nd_mem *m, const nd_event *ev)
{
	int64_t k[2];

	k[0] = (ev->has & ND_HAS_PID) ? ev->pid : 0;
	k[1] = (ev->has & ND_HAS_TID) ? ev->tid : 0;
	return nd_intern_id(m->tls, (const char *)k, sizeof k);
}

/* args.KEY as an integer (a fractional number is rounded); 1 if present. */
static int
arg_i64(const nd_event *ev, const char *key, int64_t *out)
{
	nd_jval v;
	double d;

	if (!nd_event_arg(ev, key, &v) || v.type != ND_JNUM)
		return 0;
	if (nd_json_int(&v, out) == 0)
		return 1;
	d = nd_json_double(&v);
	if (!(d > -9007199254740992.0 && d < 9007199254740992.0))
		return 0;
	*out = (int64_t)llround(d);
	return 1;
}

/* args.KEY as a string into b (reset first); 1 if a non-empty string. */
static int
arg_str(const nd_event *ev, const char *key, nd_buf *b)
{
	nd_jval v;

	if (!nd_event_arg(ev, key, &v) || v.type != ND_JSTR)
		return 0;
	nd_buf_reset(b);
	nd_json_unescape(&v, b);
	return b->len > 0;
}

/* c10::DeviceType of Kineto's "Device Type" as an ndtrace device name. */
static void
kineto_device(char *buf, size_t n, int has_type, int64_t type,
    int has_id, int64_t id)
{
	const char *t;

	if (!has_type) {
		snprintf(buf, n, "unknown");
		return;
	}
	switch (type) {
	case 0:
		snprintf(buf, n, "CPU");
		return;
	case 1: case 6: t = "GPU"; break;
	case 9: t = "XLA"; break;
	case 12: t = "XPU"; break;
	case 13: t = "MPS"; break;
	case 15: t = "HPU"; break;
	case 19: t = "MTIA"; break;
	case 20: t = "PrivateUse1"; break;
	default:
		snprintf(buf, n, "device_type%" PRId64 ":%" PRId64, type,
		    has_id ? id : 0);
		return;
	}
	snprintf(buf, n, "%s:%" PRId64, t, has_id && id >= 0 ? id : 0);
}

/* Device of an XPlane allocator: GPU_0_bfc -> GPU:0, *host* -> CPU. */
static int
allocator_device(char *buf, size_t n, const char *a)
{
	size_t i = 0, j;

	if (strstr(a, "host") != NULL || strncmp(a, "cpu", 3) == 0 ||
	    strncmp(a, "CPU", 3) == 0) {
		snprintf(buf, n, "CPU");
		return 1;
	}
	while ((a[i] >= 'A' && a[i] <= 'Z') || (a[i] >= 'a' && a[i] <= 'z'))
		i++;
	if (i == 0 || i > 8 || a[i] != '_' || a[i + 1] < '0' || a[i + 1] > '9')
		return 0;
	j = i + 1;
	while (a[j] >= '0' && a[j] <= '9')
		j++;
	if (j - i - 1 > 6 || (a[j] != '\0' && a[j] != '_'))
		return 0;
	if (n < i + (j - i) + 2)
		return 0;
	for (size_t k = 0; k < i; k++)
		buf[k] = (char)(a[k] >= 'a' && a[k] <= 'z' ? a[k] - 32 : a[k]);
	buf[i] = ':';
	memcpy(buf + i + 1, a + i + 1, j - i - 1);
	buf[j] = '\0';
	return 1;
}

static uint32_t
series_of(nd_mem *m, const char *device, const char *allocator)
{
	uint32_t lid = label_id(m, device, allocator);
	uint32_t id = nd_intern_id(m->skeys, (const char *)&lid, sizeof lid);

	if (id >= m->nseries) {
		nd_grow(&m->series, &m->capseries, (size_t)id + 1,
		    sizeof *m->series);
		memset(&m->series[id], 0, sizeof m->series[id]);
		m->series[id].label = lid;
		m->nseries = (size_t)id + 1;
	}
	return id;
}

/* 1 if ev is a memory sample (filled into s). */
static int
take_sample(nd_mem *m, const nd_event *ev, struct sample *s)
{
	char dev[64];
	int64_t v, type = 0, id = 0;
	int has_type, has_id;
	const char *device = NULL, *allocator = NULL;
	char *alloc_name = NULL;

	memset(s, 0, sizeof *s);
	if (!(ev->has & ND_HAS_TS))
		return 0;
	if (nd_str_eq(ev->name, "[memory]") &&
	    arg_i64(ev, "Total Allocated", &s->alloc)) {
		has_type = arg_i64(ev, "Device Type", &type);
		has_id = arg_i64(ev, "Device Id", &id);
		kineto_device(dev, sizeof dev, has_type, type, has_id, id);
		device = dev;
		s->has_reserved = (unsigned char)arg_i64(ev, "Total Reserved",
		    &s->reserved);
		if (!arg_i64(ev, "Bytes", &s->delta))
			s->delta = 0;
		s->op = NONE32;
	} else if (arg_i64(ev, "bytes_allocated", &s->alloc)) {
		s->has_reserved = (unsigned char)arg_i64(ev, "bytes_reserved",
		    &s->reserved);
		s->has_apeak = (unsigned char)arg_i64(ev, "peak_bytes_in_use",
		    &s->apeak);
		if (arg_str(ev, "allocator_name", &m->tmp)) {
			alloc_name = nd_xstrndup(m->tmp.p, m->tmp.len);
			allocator = alloc_name;
			if (allocator_device(dev, sizeof dev, allocator))
				device = dev;
		} else if (arg_i64(ev, "index_on_host", &v)) {
			snprintf(dev, sizeof dev, "TPU:%" PRId64, v);
			device = dev;
		} else if (arg_i64(ev, "device_ordinal", &v)) {
			snprintf(dev, sizeof dev, "device_ordinal %" PRId64, v);
			alloc_name = nd_xstrdup(dev);
			allocator = alloc_name;
		}
		if (!arg_i64(ev, "allocation_bytes", &v) &&
		    !arg_i64(ev, "requested_bytes", &v))
			v = 0;
		if (nd_str_eq(ev->name, "MemoryAllocation"))
			s->delta = v;
		else if (nd_str_eq(ev->name, "MemoryDeallocation"))
			s->delta = -v;
		s->op = arg_str(ev, "tf_op", &m->tmp) ?
		    name_id(m, m->tmp.p, m->tmp.len) : NONE32;
	} else
		return 0;
	s->series = series_of(m, device, allocator);
	free(alloc_name);
	s->ts = ev->ts_ns;
	s->tl = timeline(m, ev);
	s->has_pid = (ev->has & ND_HAS_PID) != 0;
	s->pid = ev->pid;
	s->has_tid = (ev->has & ND_HAS_TID) != 0;
	s->tid = ev->tid;
	s->has_step = (ev->has & ND_HAS_STEP) != 0;
	s->step = ev->step;
	s->scope = ev->scope.p != NULL ? name_id(m, ev->scope.p, ev->scope.n) :
	    NONE32;
	s->span = NONE32;
	return 1;
}

static void
source_end(nd_mem *m);

/* Ordered mode (nd_mem_opts.ordered): every timeline comes in start order,
 * so a span that ended before a later record of its timeline starts cannot
 * hold a later sample.  Each timeline keeps only its open spans; the ones a
 * sample falls in join m->spans, and memory follows the samples and the
 * nesting depth instead of the number of spans. */
static struct tlstack *
stack_of(nd_mem *m, uint32_t tl, int64_t ts)
{
	struct tlstack *st;

	if (tl >= m->capstacks) {
		size_t old = m->capstacks;

		nd_grow(&m->stacks, &m->capstacks, (size_t)tl + 1,
		    sizeof *m->stacks);
		memset(m->stacks + old, 0,
		    (m->capstacks - old) * sizeof *m->stacks);
	}
	st = &m->stacks[tl];
	if (st->has_last && ts < st->last)
		m->disordered = 1;	/* nd_mem_disordered */
	st->last = ts;
	st->has_last = 1;
	while (st->n > 0 && !nd_nest_holds(st->e[st->n - 1].sp.end, ts))
		st->n--;
	return st;
}

static void
push_open(nd_mem *m, const nd_event *ev)
{
	struct tlstack *st = stack_of(m, timeline(m, ev), ev->ts_ns);
	struct open_span *o;

	if (st->n == st->cap) {
		size_t old = st->cap;

		nd_grow(&st->e, &st->cap, st->n + 1, sizeof *st->e);
		memset(st->e + old, 0, (st->cap - old) * sizeof *st->e);
	}
	o = &st->e[st->n++];
	o->sp.ts = ev->ts_ns;
	o->sp.end = add64(ev->ts_ns, ev->dur_ns);
	o->sp.tl = (uint32_t)(st - m->stacks);
	o->sp.has_step = (ev->has & ND_HAS_STEP) != 0;
	o->sp.step = ev->step;
	o->sp.seq = m->seq++;
	o->sp.parent = NONE32;
	o->committed = 0;
	nd_buf_reset(&o->text);
	if (ev->name.p != NULL)
		nd_buf_add(&o->text, ev->name.p, ev->name.n);
	o->name_n = o->text.len;
	o->has_scope = ev->scope.p != NULL;
	if (o->has_scope)
		nd_buf_add(&o->text, ev->scope.p, ev->scope.n);
}

static void
commit_open(nd_mem *m, uint32_t tl, int64_t ts)
{
	struct tlstack *st = stack_of(m, tl, ts);

	for (size_t i = 0; i < st->n; i++) {
		struct open_span *o = &st->e[i];
		struct span *p;

		if (o->committed)
			continue;
		o->committed = 1;
		nd_grow(&m->spans, &m->capspans, m->nspans + 1,
		    sizeof *m->spans);
		p = &m->spans[m->nspans++];
		*p = o->sp;
		p->name = name_id(m, o->text.p != NULL ? o->text.p : "",
		    o->name_n);
		p->scope = o->has_scope ? name_id(m, o->text.p + o->name_n,
		    o->text.len - o->name_n) : NONE32;
	}
}

void
nd_mem_record(nd_mem *m, const nd_event *ev, const nd_source_info *si)
{
	struct sample s;

	if (!m->active)
		source_begin(m, ev, si);
	m->records++;
	if (ev->type == ND_EV_META || ev->type == ND_EV_END)
		return;
	if ((ev->has & ND_HAS_TS) && (!m->has_start || ev->ts_ns < m->start)) {
		m->start = ev->ts_ns;
		m->has_start = 1;
	}
	if (take_sample(m, ev, &s)) {
		s.seq = m->seq++;
		nd_grow(&m->samples, &m->capsamples, m->nsamples + 1,
		    sizeof *m->samples);
		m->samples[m->nsamples++] = s;
		if (m->o.ordered)
			commit_open(m, s.tl, s.ts);
		return;
	}
	if (m->o.ordered && ev->type == ND_EV_SPAN &&
	    (ev->has & ND_HAS_TS) && (ev->has & ND_HAS_DUR)) {
		push_open(m, ev);
		return;
	}
	if (ev->type == ND_EV_SPAN && (ev->has & ND_HAS_TS) &&
	    (ev->has & ND_HAS_DUR)) {
		struct span *p;

		nd_grow(&m->spans, &m->capspans, m->nspans + 1,
		    sizeof *m->spans);
		p = &m->spans[m->nspans++];
		p->ts = ev->ts_ns;
		p->end = add64(ev->ts_ns, ev->dur_ns);
		p->tl = timeline(m, ev);
		p->name = ev->name.p != NULL ?
		    name_id(m, ev->name.p, ev->name.n) : name_id(m, "", 0);
		p->scope = ev->scope.p != NULL ?
		    name_id(m, ev->scope.p, ev->scope.n) : NONE32;
		p->has_step = (ev->has & ND_HAS_STEP) != 0;
		p->step = ev->step;
		p->seq = m->seq++;
		p->parent = NONE32;
	}
}

int
nd_mem_disordered(const nd_mem *m)
{
	return m->disordered;
}

void
nd_mem_end_source(nd_mem *m)
{
	if (m->active)
		source_end(m);
}

/* ---- attribution ---- */

static int
cmp_span(const void *a, const void *b, void *ctx)
{
	const struct span *x = a, *y = b;
	int c;

	(void)ctx;
	if (x->tl != y->tl)
		return x->tl < y->tl ? -1 : 1;
	if ((c = nd_span_order(x->ts, x->end - x->ts, y->ts,
	    y->end - y->ts)) != 0)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
cmp_sample_tl(const void *a, const void *b, void *ctx)
{
	const struct sample *s = ctx;
	const struct sample *x = &s[*(const uint32_t *)a];
	const struct sample *y = &s[*(const uint32_t *)b];

	if (x->tl != y->tl)
		return x->tl < y->tl ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
cmp_sample_ts(const void *a, const void *b, void *ctx)
{
	const struct sample *s = ctx;
	const struct sample *x = &s[*(const uint32_t *)a];
	const struct sample *y = &s[*(const uint32_t *)b];

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Innermost enclosing span of every sample, and span parents. */
static void
attribute(nd_mem *m, uint32_t *idx)
{
	uint32_t *stack = NULL;
	size_t sp = 0, cap = 0, j = 0;
	uint32_t cur = NONE32;

	nd_sort(m->spans, m->nspans, sizeof *m->spans, cmp_span, NULL);
	for (size_t i = 0; i < m->nsamples; i++)
		idx[i] = (uint32_t)i;
	nd_sort(idx, m->nsamples, sizeof *idx, cmp_sample_tl, m->samples);
	for (size_t i = 0; i < m->nsamples; i++) {
		struct sample *s = &m->samples[idx[i]];

		if (s->tl != cur) {
			cur = s->tl;
			sp = 0;
			while (j < m->nspans && m->spans[j].tl < cur)
				j++;
		}
		while (j < m->nspans && m->spans[j].tl == cur &&
		    m->spans[j].ts <= s->ts) {
			struct span *p = &m->spans[j];

			while (sp > 0 &&
			    !nd_nest_holds(m->spans[stack[sp - 1]].end, p->ts))
				sp--;
			p->parent = sp > 0 ? stack[sp - 1] : NONE32;
			if (p->end > p->ts) {
				nd_grow(&stack, &cap, sp + 1, sizeof *stack);
				stack[sp++] = (uint32_t)j;
			}
			j++;
		}
		while (sp > 0 &&
		    !nd_nest_holds(m->spans[stack[sp - 1]].end, s->ts))
			sp--;
		s->span = sp > 0 ? stack[sp - 1] : NONE32;
	}
	free(stack);
}

/* Enclosing spans of a sample, innermost first; returns the count. */
static size_t
ancestors(nd_mem *m, const struct sample *s, uint32_t *out, size_t max)
{
	size_t n = 0;

	for (uint32_t a = s->span; a != NONE32 && n < max;
	    a = m->spans[a].parent)
		if (m->spans[a].ts <= s->ts &&
		    nd_nest_holds(m->spans[a].end, s->ts))
			out[n++] = a;
	return n;
}

static struct toprow *
row_of(nd_mem *m, uint32_t label, uint32_t op)
{
	uint32_t k[2] = { label, op };
	uint32_t id = nd_intern_id(m->rowkeys, (const char *)k, sizeof k);

	if (id >= m->nrows) {
		nd_grow(&m->rows, &m->caprows, (size_t)id + 1,
		    sizeof *m->rows);
		memset(&m->rows[id], 0, sizeof m->rows[id]);
		m->rows[id].label = label;
		m->rows[id].op = op;
		m->nrows = (size_t)id + 1;
	}
	return &m->rows[id];
}

static uint32_t
sample_op(nd_mem *m, const struct sample *s)
{
	if (s->op != NONE32)
		return s->op;
	return s->span != NONE32 ? m->spans[s->span].name : NONE32;
}

static void
account(nd_mem *m, const struct sample *s, uint32_t *anc)
{
	uint32_t label = m->series[s->series].label;
	uint32_t op = sample_op(m, s);
	struct toprow *r;
	size_t n;

	if (s->delta == 0)
		return;
	r = row_of(m, label, op);
	if (s->delta < 0) {
		r->frees++;
		r->free_bytes = sub64(r->free_bytes, s->delta);
		return;
	}
	r->allocs++;
	r->alloc_bytes = add64(r->alloc_bytes, s->delta);
	r->total = add64(r->total, s->delta);
	/* inclusive: every distinct enclosing op once */
	if (nd_intern_count(m->names) > m->capstamp) {
		size_t old = m->capstamp;

		nd_grow(&m->stamp, &m->capstamp, nd_intern_count(m->names),
		    sizeof *m->stamp);
		memset(m->stamp + old, 0, (m->capstamp - old) *
		    sizeof *m->stamp);
	}
	if (++m->gen == 0) {
		memset(m->stamp, 0, m->capstamp * sizeof *m->stamp);
		m->gen = 1;
	}
	if (op != NONE32)
		m->stamp[op] = m->gen;
	n = ancestors(m, s, anc, MAX_ANCESTORS);
	for (size_t i = 0; i < n; i++) {
		uint32_t nm = m->spans[anc[i]].name;

		if (m->stamp[nm] == m->gen)
			continue;
		m->stamp[nm] = m->gen;
		r = row_of(m, label, nm);
		r->total = add64(r->total, s->delta);
	}
}

/* ---- stream records ---- */

static void
put_source_keys(nd_mem *m, nd_jw *w)
{
	nd_jw_kcstr(w, "source", m->path);
	if (m->has_rank)
		nd_jw_kint(w, "rank", m->rank);
}

static void
put_label_keys(nd_mem *m, nd_jw *w, uint32_t label)
{
	if (m->lab[label].device != NULL)
		nd_jw_kcstr(w, "device", m->lab[label].device);
	if (m->lab[label].allocator != NULL)
		nd_jw_kcstr(w, "allocator", m->lab[label].allocator);
}

static void
write_counter(nd_mem *m, const struct sample *s)
{
	const struct series *se = &m->series[s->series];
	nd_jw w;

	begin(m, &w, "counter");
	nd_jw_kint(&w, "ts_ns", s->ts);
	nd_buf_reset(&m->tmp);
	nd_buf_adds(&m->tmp, "memory ");
	nd_buf_adds(&m->tmp, label_str(m, se->label));
	nd_jw_kstr(&w, "name", m->tmp.p, m->tmp.len);
	nd_jw_kint(&w, "pid", s->has_pid ? s->pid : 0);
	if (m->lab[se->label].device != NULL)
		nd_jw_kcstr(&w, "device", m->lab[se->label].device);
	if (m->has_rank)
		nd_jw_kint(&w, "rank", m->rank);
	nd_jw_key(&w, "values");
	nd_jw_obj(&w);
	nd_jw_kint(&w, "allocated_bytes", s->alloc);
	if (s->has_reserved)
		nd_jw_kint(&w, "reserved_bytes", s->reserved);
	nd_jw_obj_end(&w);
	if (m->lab[se->label].allocator != NULL)
		nd_jw_kcstr(&w, "allocator", m->lab[se->label].allocator);
	end(m, &w);
}

static int
cmp_series(const void *a, const void *b, void *ctx)
{
	nd_mem *m = ctx;
	const struct series *x = &m->series[*(const uint32_t *)a];
	const struct series *y = &m->series[*(const uint32_t *)b];

	return strcmp(label_str(m, x->label), label_str(m, y->label));
}

/* The step and scope of a sample: its own, else its enclosing spans'. */
static void
step_scope(nd_mem *m, const struct sample *s, const uint32_t *anc, size_t n,
    int *has_step, int64_t *step, uint32_t *scope)
{
	*has_step = s->has_step;
	*step = s->step;
	*scope = s->scope;
	for (size_t i = 0; i < n && (!*has_step || *scope == NONE32); i++) {
		const struct span *p = &m->spans[anc[i]];

		if (!*has_step && p->has_step) {
			*has_step = 1;
			*step = p->step;
		}
		if (*scope == NONE32)
			*scope = p->scope;
	}
}

static void
write_peak(nd_mem *m, const struct series *se, uint32_t *anc)
{
	const struct sample *s = &m->samples[se->peak];
	size_t n = ancestors(m, s, anc, MAX_ANCESTORS);
	uint32_t op = sample_op(m, s), scope;
	int has_step;
	int64_t step;
	char b1[32], b2[32], b3[32], t[40];

	step_scope(m, s, anc, n, &has_step, &step, &scope);
	if (m->o.table) {
		text(m, "memory %s, %s", m->path, label_str(m, se->label));
		if (m->lab[se->label].allocator != NULL &&
		    m->lab[se->label].device != NULL)
			text(m, "  device        %s", m->lab[se->label].device);
		text(m, "  peak          %s allocated at %s%s%s",
		    human(b1, sizeof b1, s->alloc), nd_fmt_at_ms(t, sizeof t,
		    s->ts - m->start),
		    s->has_reserved ? ", reserved " : "",
		    s->has_reserved ? human(b2, sizeof b2, s->reserved) : "");
		nd_buf_reset(&m->tmp);
		if (has_step)
			nd_buf_addf(&m->tmp, "step %" PRId64, step);
		if (op != NONE32) {
			nd_buf_adds(&m->tmp, m->tmp.len ? ", op " : "op ");
			add_name(&m->tmp, m, op);
		}
		if (scope != NONE32) {
			nd_buf_adds(&m->tmp, m->tmp.len ? ", scope " :
			    "scope ");
			add_name(&m->tmp, m, scope);
		}
		if (m->tmp.len > 0)
			text(m, "  running       %s", m->tmp.p);
		text(m, "  samples       %" PRIu64 ": %" PRIu64 " allocs (%s), "
		    "%" PRIu64 " frees (%s)", se->samples, se->allocs,
		    human(b1, sizeof b1, se->alloc_bytes), se->frees,
		    human(b2, sizeof b2, se->free_bytes));
		if (se->has_reserved || se->has_apeak) {
			nd_buf_reset(&m->tmp);
			if (se->has_reserved)
				nd_buf_addf(&m->tmp, "max reserved %s",
				    human(b3, sizeof b3, se->max_reserved));
			if (se->has_apeak)
				nd_buf_addf(&m->tmp, "%sallocator's own peak "
				    "%s", m->tmp.len ? ", " : "",
				    human(b3, sizeof b3, se->apeak));
			text(m, "  also          %s", m->tmp.p);
		}
		return;
	}
	{
		nd_jw w;

		begin(m, &w, "mem_peak");
		put_source_keys(m, &w);
		put_label_keys(m, &w, se->label);
		nd_jw_kint(&w, "ts_ns", s->ts);
		nd_jw_kint(&w, "allocated_bytes", s->alloc);
		if (s->has_reserved)
			nd_jw_kint(&w, "reserved_bytes", s->reserved);
		if (s->has_pid)
			nd_jw_kint(&w, "pid", s->pid);
		if (s->has_tid)
			nd_jw_kint(&w, "tid", s->tid);
		if (has_step)
			nd_jw_kint(&w, "step", step);
		if (op != NONE32)
			put_name(&w, "op", m, op);
		if (scope != NONE32)
			put_name(&w, "scope", m, scope);
		if (n > 0) {
			size_t k = n < MAX_STACK_OUT ? n : MAX_STACK_OUT;

			nd_jw_key(&w, "stack");
			nd_jw_arr(&w);
			for (size_t i = k; i-- > 0;)
				put_name(&w, NULL, m, m->spans[anc[i]].name);
			nd_jw_arr_end(&w);
		}
		nd_jw_kuint(&w, "samples", se->samples);
		nd_jw_kuint(&w, "allocs", se->allocs);
		nd_jw_kint(&w, "alloc_bytes", se->alloc_bytes);
		nd_jw_kuint(&w, "frees", se->frees);
		nd_jw_kint(&w, "free_bytes", se->free_bytes);
		nd_jw_kint(&w, "first_ts_ns", se->first_ts);
		nd_jw_kint(&w, "last_ts_ns", se->last_ts);
		nd_jw_kint(&w, "final_allocated_bytes", se->final);
		if (se->has_reserved)
			nd_jw_kint(&w, "max_reserved_bytes", se->max_reserved);
		if (se->has_apeak)
			nd_jw_kint(&w, "allocator_peak_bytes", se->apeak);
		end(m, &w);
	}
}

static void
source_end(nd_mem *m)
{
	uint32_t *idx, *order, *anc;

	if (m->nsamples == 0) {
		if (m->o.table)
			text(m, "memory %s: no memory data (no [memory] "
			    "events, no allocator statistics)", m->path);
		else {
			nd_jw w;

			begin(m, &w, "mem_none");
			put_source_keys(m, &w);
			nd_jw_kcstr(&w, "reason", "no [memory] events and no "
			    "allocator statistics");
			nd_jw_kuint(&w, "records", m->records);
			end(m, &w);
		}
		clear_source(m);
		return;
	}
	idx = nd_xmalloc(m->nsamples * sizeof *idx);
	anc = nd_xmalloc(MAX_ANCESTORS * sizeof *anc);
	attribute(m, idx);
	/* time order (then input order) for series and the timeline */
	nd_sort(idx, m->nsamples, sizeof *idx, cmp_sample_ts, m->samples);
	for (size_t i = 0; i < m->nsamples; i++) {
		const struct sample *s = &m->samples[idx[i]];
		struct series *se = &m->series[s->series];

		if (se->samples == 0 || s->alloc > m->samples[se->peak].alloc)
			se->peak = idx[i];
		if (se->samples == 0)
			se->first_ts = s->ts;
		se->samples++;
		se->last_ts = s->ts;
		se->final = s->alloc;
		if (s->delta > 0) {
			se->allocs++;
			se->alloc_bytes = add64(se->alloc_bytes, s->delta);
		} else if (s->delta < 0) {
			se->frees++;
			se->free_bytes = sub64(se->free_bytes, s->delta);
		}
		if (s->has_reserved && (!se->has_reserved ||
		    s->reserved > se->max_reserved)) {
			se->max_reserved = s->reserved;
			se->has_reserved = 1;
		}
		if (s->has_apeak && (!se->has_apeak || s->apeak > se->apeak)) {
			se->apeak = s->apeak;
			se->has_apeak = 1;
		}
		account(m, s, anc);
	}
	if (m->o.timeline && !m->o.table) {
		nd_meta_write(m->out, m->path, m->format, m->origin, m->host,
		    m->has_rank, m->rank);
		if (m->commit != NULL)
			m->commit(m->ctx);
		for (size_t i = 0; i < m->nsamples; i++)
			write_counter(m, &m->samples[idx[i]]);
	}
	order = nd_xmalloc(m->nseries * sizeof *order);
	for (size_t i = 0; i < m->nseries; i++)
		order[i] = (uint32_t)i;
	nd_sort(order, m->nseries, sizeof *order, cmp_series, m);
	for (size_t i = 0; i < m->nseries; i++)
		write_peak(m, &m->series[order[i]], anc);
	free(order);
	free(idx);
	free(anc);
	clear_source(m);
}

/* ---- mem_top ---- */

static int64_t
row_key(const nd_mem *m, const struct toprow *r)
{
	return m->o.sort_total ? r->total : r->alloc_bytes;
}

static int
cmp_row(const void *a, const void *b, void *ctx)
{
	nd_mem *m = ctx;
	const struct toprow *x = &m->rows[*(const uint32_t *)a];
	const struct toprow *y = &m->rows[*(const uint32_t *)b];
	int c;
	int64_t kx, ky;

	if (x->label != y->label) {
		c = strcmp(label_str(m, x->label), label_str(m, y->label));
		if (c != 0)
			return c;
		return x->label < y->label ? -1 : 1;
	}
	kx = row_key(m, x);
	ky = row_key(m, y);
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	if (x->op == NONE32 || y->op == NONE32)
		return x->op == y->op ? 0 : x->op == NONE32 ? 1 : -1;
	{
		size_t xn, yn;
		const char *xs = nd_intern_str(m->names, x->op, &xn);
		const char *ys = nd_intern_str(m->names, y->op, &yn);

		return nd_bytes_cmp(xs, xn, ys, yn);
	}
}

static int
row_listed(const nd_mem *m, const struct toprow *r)
{
	return m->o.sort_total ? r->total > 0 : r->allocs > 0 || r->frees > 0;
}

static void
write_row(nd_mem *m, const struct toprow *r, int64_t row, int other,
    int64_t ops, int64_t label_total)
{
	double share = label_total > 0 ? (double)row_key(m, r) /
	    (double)label_total : 0;	/* of all the series' allocations */
	char b1[32], b2[32], b3[32];

	if (m->o.table) {
		char sh[16];

		snprintf(sh, sizeof sh, "%.1f%%", 100 * share);
		nd_buf_reset(&m->tmp);
		if (other)
			nd_buf_addf(&m->tmp, "(%" PRId64 " other ops)", ops);
		else if (r->op == NONE32)
			nd_buf_adds(&m->tmp, "(no op)");
		else {
			size_t n;
			const char *op = nd_intern_str(m->names, r->op, &n);
			nd_buf t = ND_BUF_INIT;

			nd_name_short(op, n, ND_NAME_WIDTH, &t);
			nd_text_visible(&m->tmp, t.p != NULL ? t.p : "", t.len);
			nd_buf_free(&t);
		}
		text(m, "  %-14s %10" PRId64 " %12s %10" PRId64 " %12s %7s "
		    "%12s  %s", label_str(m, r->label), r->allocs,
		    human(b1, sizeof b1, r->alloc_bytes), r->frees,
		    human(b2, sizeof b2, r->free_bytes), sh,
		    human(b3, sizeof b3, r->total), m->tmp.p);
		return;
	}
	{
		nd_jw w;

		begin(m, &w, "mem_top");
		nd_jw_kint(&w, "row", row);
		put_label_keys(m, &w, r->label);
		if (other) {
			nd_jw_kbool(&w, "other", 1);
			nd_jw_kint(&w, "ops", ops);
		} else if (r->op != NONE32)
			put_name(&w, "op", m, r->op);
		nd_jw_kint(&w, "allocs", r->allocs);
		nd_jw_kint(&w, "alloc_bytes", r->alloc_bytes);
		nd_jw_kint(&w, "frees", r->frees);
		nd_jw_kint(&w, "free_bytes", r->free_bytes);
		nd_jw_kint(&w, "total_alloc_bytes", r->total);
		kdbl(&w, "share", share);
		end(m, &w);
	}
}

void
nd_mem_finish(nd_mem *m)
{
	uint32_t *ix;
	size_t n = 0;

	nd_mem_end_source(m);
	if (m->o.top <= 0 || m->nrows == 0)
		return;
	ix = nd_xmalloc(m->nrows * sizeof *ix);
	for (size_t i = 0; i < m->nrows; i++)
		if (row_listed(m, &m->rows[i]))
			ix[n++] = (uint32_t)i;
	nd_sort(ix, n, sizeof *ix, cmp_row, m);
	if (m->o.table && n > 0) {
		text(m, "top allocating ops by %s bytes:", m->o.sort_total ?
		    "total" : "self");
		text(m, "  %-14s %10s %12s %10s %12s %7s %12s  %s", "memory",
		    "allocs", "self_bytes", "frees", "freed", "share",
		    "total_bytes", "op");
	}
	for (size_t i = 0; i < n;) {
		uint32_t label = m->rows[ix[i]].label;
		size_t j = i, k;
		int64_t total = 0;
		struct toprow other;

		while (j < n && m->rows[ix[j]].label == label) {
			total = add64(total, m->rows[ix[j]].alloc_bytes);
			j++;
		}
		for (k = i; k < j && k - i < (size_t)m->o.top; k++)
			write_row(m, &m->rows[ix[k]], (int64_t)(k - i + 1), 0,
			    0, total);
		if (k < j) {
			memset(&other, 0, sizeof other);
			other.label = label;
			other.op = NONE32;
			for (size_t q = k; q < j; q++) {
				const struct toprow *r = &m->rows[ix[q]];

				other.allocs += r->allocs;
				other.alloc_bytes = add64(other.alloc_bytes,
				    r->alloc_bytes);
				other.frees += r->frees;
				other.free_bytes = add64(other.free_bytes,
				    r->free_bytes);
				other.total = add64(other.total, r->total);
			}
			write_row(m, &other, (int64_t)(k - i + 1), 1,
			    (int64_t)(j - k), total);
		}
		i = j;
	}
	free(ix);
}

/* ---- snapshots ---- */

enum { A_ALLOC, A_FREE_REQ, A_FREE_DONE, A_SEG_ALLOC, A_SEG_FREE,
	A_SEG_MAP, A_SEG_UNMAP, A_OOM, A_OTHER };
static const char *const action_names[] = { "alloc", "free_requested",
	"free_completed", "segment_alloc", "segment_free", "segment_map",
	"segment_unmap", "oom" };

struct blk {
	int64_t addr, size, req, stream, seg_addr;
	const nd_pkv *frames;
	const char *state;
	size_t state_n;
	int live;		/* 1 active_allocated, 2 active_pending_free */
};

struct ent {
	int64_t ts, addr, size, stream, dfree;
	const nd_pkv *frames;
	const char *name;	/* the action as written */
	size_t name_n;
	uint8_t act, unmatched, has_dfree;
};

/* A live allocation while replaying to the peak. */
struct liveb {
	int64_t addr, size, stream;
	int64_t seq;		/* the alloc entry, -1 before the trace */
	const nd_pkv *frames;
	int alive;
};

#define MAX_TYPES 8		/* segment types counted by name */
#define MAX_ACTIONS 16		/* trace actions counted by name */

struct dev {
	int64_t d;
	char name[32];
	struct blk *blk;
	size_t nblk;
	struct ent *ent;
	size_t nent;
	nd_map64 *req_end;	/* addr -> alloc entry + 1, live at the end */
	/* from the segments */
	int64_t segments, nactive, npending, ninactive;
	int64_t reserved, allocated, active, requested, inactive;
	int64_t split, free_seg, largest_free;
	const char *types[MAX_TYPES];
	size_t types_n[MAX_TYPES];
	int64_t types_count[MAX_TYPES];
	int ntypes;
	int64_t types_other;
	/* the replay */
	int64_t A0, X0, R0, live0;
	int64_t peakA, peakX, peakR, peak_live, peak;	/* peak -1: start */
	int64_t A, X, R;	/* at the end */
	int64_t ooms;
};

struct snap {
	nd_mem *m;
	const char *source;
	char *msg;
	size_t msgsz;
	int has_time;
	int64_t origin_us;
	nd_buf b;
};

static int
serr(struct snap *S, const char *fmt, ...) ND_PRINTF(2, 3);

static int
serr(struct snap *S, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(S->msg, S->msgsz, fmt, ap);
	va_end(ap);
	return -1;
}

static int
pk_i64(const nd_pkv *d, const char *key, int64_t *out)
{
	return nd_pk_int(nd_pk_get(d, key), out) == 0;
}

/* A size: absent is 0; else an integer in 0 .. 2^53.  Anything else (a
 * float, a string, a negative or larger number) is -1: a snapshot with
 * such a size is not one PyTorch wrote, and 0 would be a wrong answer. */
static int
pk_size(const nd_pkv *d, const char *key, int64_t *out)
{
	const nd_pkv *v = nd_pk_get(d, key);

	*out = 0;
	if (v == NULL)
		return 0;
	if (nd_pk_int(v, out) != 0 || *out < 0 || *out > SAFE_SIZE) {
		*out = 0;
		return -1;
	}
	return 0;
}

/* A block's size and requested size (its size when absent). */
static int
block_sizes(struct snap *S, const nd_pkv *bk, struct blk *b, size_t i,
    size_t j)
{
	if (pk_size(bk, "size", &b->size) != 0 ||
	    pk_size(bk, "requested_size", &b->req) != 0)
		return serr(S, "segments[%zu].blocks[%zu]: a size or "
		    "requested_size that is not an integer from 0 to 2^53",
		    i, j);
	if (nd_pk_get(bk, "requested_size") == NULL)
		b->req = b->size;
	return 0;
}

static int
is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static void
put_frames(nd_mem *m, nd_jw *w, const nd_pkv *frames)
{
	size_t k = 0;

	if (m->o.frames <= 0 || !nd_pk_isseq(frames))
		return;
	nd_jw_key(w, "frames");
	nd_jw_arr(w);
	for (size_t i = 0; i < nd_pk_len(frames) && k < (size_t)m->o.frames;
	    i++) {
		const nd_pkv *f = nd_pk_item(frames, i);
		const char *s;
		size_t n;
		int64_t line;

		if (f == NULL || f->type != ND_PK_DICT)
			continue;
		nd_jw_obj(w);
		if (nd_pk_str(nd_pk_get(f, "name"), &s, &n) == 0)
			nd_jw_kstr(w, "name", s, n);
		if (nd_pk_str(nd_pk_get(f, "filename"), &s, &n) == 0)
			nd_jw_kstr(w, "filename", s, n);
		if (pk_i64(f, "line", &line))
			nd_jw_kint(w, "line", line);
		nd_jw_obj_end(w);
		k++;
	}
	nd_jw_arr_end(w);
}

/* "name (file:line)" of the first frame, for tables. */
static const char *
top_frame(struct snap *S, const nd_pkv *frames)
{
	const nd_pkv *f = nd_pk_item(frames, 0);
	const char *s;
	size_t n;
	int64_t line;

	nd_buf_reset(&S->b);
	nd_buf_adds(&S->b, "");
	if (f == NULL || f->type != ND_PK_DICT)
		return S->b.p;
	if (nd_pk_str(nd_pk_get(f, "name"), &s, &n) == 0)
		nd_buf_add(&S->b, s, n);
	if (nd_pk_str(nd_pk_get(f, "filename"), &s, &n) == 0) {
		const char *base = s + n;

		/* the file's base name keeps the table narrow */
		while (base > s && base[-1] != '/' && base[-1] != '\\')
			base--;
		nd_buf_adds(&S->b, " (");
		nd_buf_add(&S->b, base, (size_t)(s + n - base));
		if (pk_i64(f, "line", &line))
			nd_buf_addf(&S->b, ":%" PRId64, line);
		nd_buf_addc(&S->b, ')');
	}
	for (size_t i = 0; i < S->b.len; i++)
		if ((unsigned char)S->b.p[i] < 0x20)
			S->b.p[i] = ' ';
	return S->b.p;
}

static int64_t
ts_of(const struct snap *S, const struct ent *e, int64_t seq)
{
	return S->has_time ? (e->ts - S->origin_us) * 1000 : seq;
}

/* "at 1.234 ms (entry 5)", "at entry 5", "before the trace" (seq -1). */
static const char *
when(const struct snap *S, char *buf, size_t n, const struct ent *e,
    int64_t seq)
{
	char t[40];

	if (seq < 0)
		snprintf(buf, n, "before the trace");
	else if (S->has_time)
		snprintf(buf, n, "at %s (entry %" PRId64 ")",
		    nd_fmt_at_ms(t, sizeof t, ts_of(S, e, seq)), seq);
	else
		snprintf(buf, n, "at entry %" PRId64, seq);
	return buf;
}

/* The segments and blocks of device D->d. */
static int
dev_blocks(struct snap *S, const nd_pkv *segs, struct dev *D)
{
	size_t cap = 0;

	for (size_t i = 0; i < nd_pk_len(segs); i++) {
		const nd_pkv *sg = nd_pk_item(segs, i), *blocks;
		int64_t dev = 0, total, addr = 0, stream = 0, live = 0;
		int64_t inactive = 0, off;
		const char *s;
		size_t n;

		if (sg->type != ND_PK_DICT)
			return serr(S, "segments[%zu] is %s, not a dict", i,
			    nd_pk_typename(sg));
		(void)pk_i64(sg, "device", &dev);
		if (dev != D->d)
			continue;
		D->segments++;
		if (pk_size(sg, "total_size", &total) != 0)
			return serr(S, "segments[%zu].total_size: not an "
			    "integer from 0 to 2^53", i);
		D->reserved = add64(D->reserved, total);
		(void)pk_i64(sg, "address", &addr);
		(void)pk_i64(sg, "stream", &stream);
		if (nd_pk_str(nd_pk_get(sg, "segment_type"), &s, &n) == 0) {
			int k;

			for (k = 0; k < D->ntypes; k++)
				if (D->types_n[k] == n &&
				    memcmp(D->types[k], s, n) == 0)
					break;
			if (k == D->ntypes && k < MAX_TYPES) {
				D->types[k] = s;
				D->types_n[k] = n;
				D->ntypes++;
			}
			if (k < MAX_TYPES)
				D->types_count[k]++;
			else
				D->types_other++;
		}
		blocks = nd_pk_get(sg, "blocks");
		if (blocks != NULL && !nd_pk_isseq(blocks))
			return serr(S, "segments[%zu].blocks is %s, not a "
			    "list", i, nd_pk_typename(blocks));
		off = addr;
		for (size_t j = 0; j < nd_pk_len(blocks); j++) {
			const nd_pkv *bk = nd_pk_item(blocks, j);
			struct blk *b;

			if (bk->type != ND_PK_DICT)
				return serr(S, "segments[%zu].blocks[%zu] is a "
				    "%s, not a dict", i, j, nd_pk_typename(bk));
			nd_grow(&D->blk, &cap, D->nblk + 1, sizeof *D->blk);
			b = &D->blk[D->nblk++];
			memset(b, 0, sizeof *b);
			if (block_sizes(S, bk, b, i, j) != 0)
				return -1;
			/* old snapshots have no block addresses */
			if (!pk_i64(bk, "address", &b->addr) &&
			    !pk_i64(bk, "addr", &b->addr))
				b->addr = off;
			off = add64(off, b->size);
			b->stream = stream;
			b->seg_addr = addr;
			b->frames = nd_pk_get(bk, "frames");
			if (nd_pk_str(nd_pk_get(bk, "state"), &b->state,
			    &b->state_n) != 0) {
				b->state = "";
				b->state_n = 0;
			}
			if (is(b->state, b->state_n, "active_allocated")) {
				b->live = 1;
				D->nactive++;
				D->allocated = add64(D->allocated, b->size);
				D->requested = add64(D->requested, b->req);
			} else if (is(b->state, b->state_n,
			    "active_pending_free")) {
				b->live = 2;
				D->npending++;
			} else {
				D->ninactive++;
				D->inactive = add64(D->inactive, b->size);
				inactive = add64(inactive, b->size);
				if (b->size > D->largest_free)
					D->largest_free = b->size;
			}
			if (b->live) {
				D->active = add64(D->active, b->size);
				live++;
			}
		}
		if (live == 0)
			D->free_seg = add64(D->free_seg, total);
		else
			D->split = add64(D->split, inactive);
	}
	return 0;
}

static int
dev_trace(struct snap *S, const nd_pkv *tr, struct dev *D)
{
	D->nent = nd_pk_len(tr);
	D->ent = D->nent > 0 ? nd_xcalloc(D->nent, sizeof *D->ent) : NULL;
	for (size_t i = 0; i < D->nent; i++) {
		const nd_pkv *e = nd_pk_item(tr, i);
		struct ent *x = &D->ent[i];

		if (e->type != ND_PK_DICT)
			return serr(S, "device_traces[%" PRId64 "][%zu] is a "
			    "%s, not a dict", D->d, i, nd_pk_typename(e));
		if (nd_pk_str(nd_pk_get(e, "action"), &x->name,
		    &x->name_n) != 0) {
			x->name = "";
			x->name_n = 0;
		}
		x->act = A_OTHER;
		for (int k = 0; k < A_OTHER; k++)
			if (is(x->name, x->name_n, action_names[k]))
				x->act = (uint8_t)k;
		(void)pk_i64(e, "addr", &x->addr);
		if (pk_size(e, "size", &x->size) != 0)
			return serr(S, "device_traces[%" PRId64 "][%zu].size: "
			    "not an integer from 0 to 2^53", D->d, i);
		(void)pk_i64(e, "stream", &x->stream);
		x->has_dfree = (uint8_t)pk_i64(e, "device_free", &x->dfree);
		x->frames = nd_pk_get(e, "frames");
		(void)pk_i64(e, "time_us", &x->ts);
	}
	return 0;
}

/*
 * The state at the start of the trace, as memory_viz reconstructs it:
 * blocks live at the snapshot that the trace did not allocate, and
 * allocations the trace frees without having allocated them, existed
 * before it began.  Reserved bytes at the start are the segments' total
 * minus what segment events added during the trace.
 */
static void
dev_match(struct dev *D)
{
	nd_map64 *act = nd_map64_new();
	int64_t seg = 0;

	D->req_end = nd_map64_new();
	for (size_t i = 0; i < D->nent; i++) {
		struct ent *e = &D->ent[i];
		uint64_t *p;
		nd_map64 *mp;

		switch (e->act) {
		case A_ALLOC:
			*nd_map64_put(D->req_end, (uint64_t)e->addr, NULL) =
			    i + 1;
			*nd_map64_put(act, (uint64_t)e->addr, NULL) = i + 1;
			break;
		case A_FREE_REQ: case A_FREE_DONE:
			mp = e->act == A_FREE_REQ ? D->req_end : act;
			if ((p = nd_map64_get(mp, (uint64_t)e->addr)) != NULL) {
				e->size = D->ent[*p - 1].size;
				nd_map64_del(mp, (uint64_t)e->addr);
			} else
				e->unmatched = 1;
			break;
		case A_SEG_ALLOC: case A_SEG_MAP:
			seg = add64(seg, e->size);
			break;
		case A_SEG_FREE: case A_SEG_UNMAP:
			seg = sub64(seg, e->size);
			break;
		}
	}
	for (size_t i = 0; i < D->nent; i++) {
		const struct ent *e = &D->ent[i];

		if (!e->unmatched)
			continue;
		if (e->act == A_FREE_REQ) {
			D->A0 = add64(D->A0, e->size);
			D->live0++;
		} else
			D->X0 = add64(D->X0, e->size);
	}
	for (size_t i = 0; i < D->nblk; i++) {
		const struct blk *b = &D->blk[i];

		if (b->live == 1 &&
		    nd_map64_get(D->req_end, (uint64_t)b->addr) == NULL) {
			D->A0 = add64(D->A0, b->req);
			D->live0++;
		}
		if (b->live && nd_map64_get(act, (uint64_t)b->addr) == NULL)
			D->X0 = add64(D->X0, b->req);
	}
	D->R0 = sub64(D->reserved, seg);
	nd_map64_free(act);
}

/* Replay the trace: the peak, and the counter records when asked. */
static void
dev_replay(struct snap *S, struct dev *D, int counters)
{
	nd_mem *m = S->m;
	int64_t A = D->A0, X = D->X0, R = D->R0, live = D->live0;

	D->peakA = A;
	D->peakX = X;
	D->peakR = R;
	D->peak_live = live;
	D->peak = -1;
	for (size_t i = 0; i < D->nent; i++) {
		const struct ent *e = &D->ent[i];
		nd_jw w;

		switch (e->act) {
		case A_ALLOC:
			A = add64(A, e->size);
			X = add64(X, e->size);
			live++;
			break;
		case A_FREE_REQ:
			A = sub64(A, e->size);
			live--;
			break;
		case A_FREE_DONE:
			X = sub64(X, e->size);
			break;
		case A_SEG_ALLOC: case A_SEG_MAP:
			R = add64(R, e->size);
			break;
		case A_SEG_FREE: case A_SEG_UNMAP:
			R = sub64(R, e->size);
			break;
		case A_OOM:
			D->ooms++;
			continue;
		default:
			continue;
		}
		if (A > D->peakA) {
			D->peakA = A;
			D->peakX = X;
			D->peakR = R;
			D->peak_live = live;
			D->peak = (int64_t)i;
		}
		if (!counters)
			continue;
		begin(m, &w, "counter");
		nd_jw_kint(&w, "ts_ns", ts_of(S, e, (int64_t)i));
		nd_buf_reset(&S->b);
		nd_buf_addf(&S->b, "memory %s", D->name);
		nd_jw_kstr(&w, "name", S->b.p, S->b.len);
		nd_jw_kint(&w, "pid", D->d);
		nd_jw_kcstr(&w, "device", D->name);
		nd_jw_key(&w, "values");
		nd_jw_obj(&w);
		nd_jw_kint(&w, "allocated_bytes", A);
		nd_jw_kint(&w, "active_bytes", X);
		nd_jw_kint(&w, "reserved_bytes", R);
		nd_jw_obj_end(&w);
		nd_jw_kint(&w, "seq", (int64_t)i);
		nd_jw_kstr(&w, "action", e->name, e->name_n);
		end(m, &w);
	}
	D->A = A;
	D->X = X;
	D->R = R;
}

static int
cmp_live(const void *a, const void *b, void *ctx)
{
	const struct liveb *x = a, *y = b;

	(void)ctx;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
cmp_blk(const void *a, const void *b, void *ctx)
{
	const struct blk *x = *(const struct blk *const *)a;
	const struct blk *y = *(const struct blk *const *)b;

	(void)ctx;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The allocations live at the peak, largest first. */
static struct liveb *
live_at_peak(struct dev *D, size_t *nout)
{
	struct liveb *lv = NULL;
	size_t n = 0, cap = 0;
	nd_map64 *at = nd_map64_new();
	uint64_t *p;

#define ADD(A_, S_, ST_, Q_, F_) do { \
	nd_grow(&lv, &cap, n + 1, sizeof *lv); \
	lv[n].addr = (A_); lv[n].size = (S_); lv[n].stream = (ST_); \
	lv[n].seq = (Q_); lv[n].frames = (F_); lv[n].alive = 1; \
	*nd_map64_put(at, (uint64_t)(A_), NULL) = n + 1; \
	n++; \
} while (0)

	for (size_t i = 0; i < D->nblk; i++) {
		const struct blk *b = &D->blk[i];

		if (b->live == 1 &&
		    nd_map64_get(D->req_end, (uint64_t)b->addr) == NULL)
			ADD(b->addr, b->req, b->stream, -1, b->frames);
	}
	for (size_t i = 0; i < D->nent; i++) {
		const struct ent *e = &D->ent[i];

		if (e->unmatched && e->act == A_FREE_REQ)
			ADD(e->addr, e->size, e->stream, -1, NULL);
	}
	for (int64_t i = 0; i <= D->peak; i++) {
		const struct ent *e = &D->ent[i];

		if (e->act == A_ALLOC)
			ADD(e->addr, e->size, e->stream, i, e->frames);
		else if (e->act == A_FREE_REQ &&
		    (p = nd_map64_get(at, (uint64_t)e->addr)) != NULL) {
			lv[*p - 1].alive = 0;
			nd_map64_del(at, (uint64_t)e->addr);
		}
	}
#undef ADD
	nd_map64_free(at);
	{
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (lv[i].alive)
				lv[k++] = lv[i];
		n = k;
	}
	nd_sort(lv, n, sizeof *lv, cmp_live, NULL);
	*nout = n;
	return lv;
}

/* The counts of the trace entries by action, in order of first
 * appearance (the first MAX_ACTIONS; the rest as "(other)"). */
static void
put_actions(nd_jw *w, const struct dev *D)
{
	/* counts by action, in order of first appearance */
	const char *nm[MAX_ACTIONS];
	size_t nl[MAX_ACTIONS];
	int64_t cnt[MAX_ACTIONS], other = 0;
	int k = 0, j;

	for (size_t i = 0; i < D->nent; i++) {
		const struct ent *e = &D->ent[i];

		for (j = 0; j < k; j++)
			if (nl[j] == e->name_n && memcmp(nm[j],
			    e->name, e->name_n) == 0)
				break;
		if (j == k && k < MAX_ACTIONS) {
			nm[k] = e->name;
			nl[k] = e->name_n;
			cnt[k++] = 0;
		}
		if (j < k)
			cnt[j]++;
		else
			other++;
	}
	for (j = 0; j < k; j++) {
		nd_jw_keyn(w, nm[j], nl[j]);
		nd_jw_int(w, cnt[j]);
	}
	if (other > 0)
		nd_jw_kint(w, "(other)", other);
}

/* mem_snapshot: the state of the device's memory in the snapshot. */
static void
report_state(struct snap *S, struct dev *D)
{
	nd_mem *m = S->m;
	double frag = D->reserved > 0 ? 1.0 - (double)D->allocated /
	    (double)D->reserved : 0;
	char b1[32], b2[32], b3[32];
	nd_jw w;

	if (m->o.table) {
		text(m, "snapshot %s, %s", S->source, D->name);
		nd_buf_reset(&m->tmp);
		nd_buf_adds(&m->tmp, "");
		for (int k = 0; k < D->ntypes; k++) {
			nd_buf_adds(&m->tmp, k ? ", " : " (");
			nd_buf_add(&m->tmp, D->types[k], D->types_n[k]);
			nd_buf_addf(&m->tmp, " %" PRId64, D->types_count[k]);
		}
		if (D->ntypes > 0)
			nd_buf_addc(&m->tmp, ')');
		text(m, "  reserved      %s in %" PRId64 " segments%s",
		    human(b1, sizeof b1, D->reserved), D->segments, m->tmp.p);
		text(m, "  allocated     %s in %" PRId64 " blocks (requested "
		    "%s)%s", human(b1, sizeof b1, D->allocated), D->nactive,
		    human(b2, sizeof b2, D->requested), D->npending > 0 ?
		    "; some blocks pending free" : "");
		text(m, "  inactive      %s in %" PRId64 " blocks: %s split in "
		    "segments in use, %s in free segments", human(b1,
		    sizeof b1, D->inactive), D->ninactive, human(b2, sizeof b2,
		    D->split), human(b3, sizeof b3, D->free_seg));
		text(m, "  fragmentation %.1f%% (1 - allocated/reserved); "
		    "largest free block %s", 100 * frag, human(b1, sizeof b1,
		    D->largest_free));
		return;
	}
	begin(m, &w, "mem_snapshot");
	nd_jw_kcstr(&w, "source", S->source);
	nd_jw_kcstr(&w, "device", D->name);
	nd_jw_kint(&w, "segments", D->segments);
	nd_jw_key(&w, "segment_types");
	nd_jw_obj(&w);
	for (int k = 0; k < D->ntypes; k++) {
		nd_jw_keyn(&w, D->types[k], D->types_n[k]);
		nd_jw_int(&w, D->types_count[k]);
	}
	if (D->types_other > 0)
		nd_jw_kint(&w, "(other)", D->types_other);
	nd_jw_obj_end(&w);
	nd_jw_kint(&w, "blocks", (int64_t)D->nblk);
	nd_jw_kint(&w, "active_blocks", D->nactive);
	nd_jw_kint(&w, "pending_free_blocks", D->npending);
	nd_jw_kint(&w, "inactive_blocks", D->ninactive);
	nd_jw_kint(&w, "reserved_bytes", D->reserved);
	nd_jw_kint(&w, "allocated_bytes", D->allocated);
	nd_jw_kint(&w, "active_bytes", D->active);
	nd_jw_kint(&w, "requested_bytes", D->requested);
	nd_jw_kint(&w, "inactive_bytes", D->inactive);
	nd_jw_kint(&w, "inactive_split_bytes", D->split);
	nd_jw_kint(&w, "free_segment_bytes", D->free_seg);
	nd_jw_kint(&w, "largest_inactive_bytes", D->largest_free);
	kdbl(&w, "fragmentation", frag);
	nd_jw_kint(&w, "trace_entries", (int64_t)D->nent);
	nd_jw_key(&w, "actions");
	nd_jw_obj(&w);
	put_actions(&w, D);
	nd_jw_obj_end(&w);
	end(m, &w);
}

/* mem_peak: the entry of the trace at which most was allocated. */
static void
report_peak(struct snap *S, struct dev *D)
{
	nd_mem *m = S->m;
	char b1[32], b2[32], t1[96];
	nd_jw w;
	const struct ent *pe = D->peak >= 0 ? &D->ent[D->peak] :
	    &D->ent[0];
	int64_t ts = ts_of(S, pe, D->peak >= 0 ? D->peak : 0);

	if (m->o.table) {
		text(m, "  trace         %zu entries; allocated %s at the "
		    "start, %s at the end", D->nent, human(b1,
		    sizeof b1, D->A0), human(b2, sizeof b2, D->A));
		text(m, "  peak          %s allocated %s, %" PRId64
		    " live blocks; reserved %s", human(b1, sizeof b1,
		    D->peakA), when(S, t1, sizeof t1, pe, D->peak),
		    D->peak_live, human(b2, sizeof b2, D->peakR));
		if (D->peak >= 0 && nd_pk_len(pe->frames) > 0)
			text(m, "                by %s",
			    top_frame(S, pe->frames));
	} else {
		begin(m, &w, "mem_peak");
		nd_jw_kcstr(&w, "source", S->source);
		nd_jw_kcstr(&w, "device", D->name);
		nd_jw_kint(&w, "ts_ns", ts);
		if (D->peak >= 0)
			nd_jw_kint(&w, "seq", D->peak);
		else
			nd_jw_kbool(&w, "at_start", 1);
		nd_jw_kint(&w, "allocated_bytes", D->peakA);
		nd_jw_kint(&w, "active_bytes", D->peakX);
		nd_jw_kint(&w, "reserved_bytes", D->peakR);
		nd_jw_kint(&w, "live_blocks", D->peak_live);
		if (D->peak >= 0) {
			nd_jw_kstr(&w, "action", pe->name, pe->name_n);
			nd_jw_kint(&w, "size", pe->size);
			put_frames(m, &w, pe->frames);
		}
		nd_jw_kint(&w, "start_allocated_bytes", D->A0);
		nd_jw_kint(&w, "final_allocated_bytes", D->A);
		nd_jw_kint(&w, "final_active_bytes", D->X);
		nd_jw_kint(&w, "final_reserved_bytes", D->R);
		nd_jw_kint(&w, "trace_entries", (int64_t)D->nent);
		nd_jw_kint(&w, "ooms", D->ooms);
		end(m, &w);
	}
}

/* mem_oom: the out-of-memory events. */
static void
report_ooms(struct snap *S, struct dev *D)
{
	nd_mem *m = S->m;
	char b1[32], b2[32], t1[96];
	nd_jw w;

	for (size_t i = 0; i < D->nent; i++) {
		const struct ent *e = &D->ent[i];

		if (e->act != A_OOM)
			continue;
		if (m->o.table) {
			text(m, "  out of memory %s: %s requested%s%s",
			    when(S, t1, sizeof t1, e, (int64_t)i), human(b1,
			    sizeof b1, e->size), e->has_dfree ?
			    ", free on the device " : "", e->has_dfree ?
			    human(b2, sizeof b2, e->dfree) : "");
			continue;
		}
		begin(m, &w, "mem_oom");
		nd_jw_kcstr(&w, "source", S->source);
		nd_jw_kcstr(&w, "device", D->name);
		nd_jw_kint(&w, "ts_ns", ts_of(S, e, (int64_t)i));
		nd_jw_kint(&w, "seq", (int64_t)i);
		nd_jw_kint(&w, "size", e->size);
		if (e->has_dfree)
			nd_jw_kint(&w, "device_free", e->dfree);
		nd_jw_kint(&w, "stream", e->stream);
		put_frames(m, &w, e->frames);
		end(m, &w);
	}
}

/* mem_block at "peak": the largest blocks live at the peak. */
static void
report_peak_blocks(struct snap *S, struct dev *D)
{
	nd_mem *m = S->m;
	char b1[32], t1[96];
	nd_jw w;
	size_t n, k;
	struct liveb *lv = live_at_peak(D, &n);

	k = n < (size_t)m->o.top ? n : (size_t)m->o.top;
	if (m->o.table && k > 0) {
		text(m, "  largest live blocks at the peak:");
		text(m, "  %12s  %-16s %-16s  %s", "size", "address",
		    "allocated at", "top frame");
	}
	for (size_t i = 0; i < k; i++) {
		const struct liveb *l = &lv[i];

		if (m->o.table) {
			text(m, "  %12s  0x%-14" PRIx64 " %-16s  %s",
			    human(b1, sizeof b1, l->size),
			    (uint64_t)l->addr, l->seq < 0 ?
			    "before the trace" : S->has_time ?
			    nd_fmt_at_ms(t1, sizeof t1, ts_of(S,
			    &D->ent[l->seq], l->seq)) :
			    (snprintf(t1, sizeof t1, "entry %" PRId64,
			    l->seq), t1), top_frame(S, l->frames));
			continue;
		}
		begin(m, &w, "mem_block");
		nd_jw_kcstr(&w, "source", S->source);
		nd_jw_kcstr(&w, "device", D->name);
		nd_jw_kcstr(&w, "at", "peak");
		nd_jw_kint(&w, "row", (int64_t)i + 1);
		nd_jw_kint(&w, "address", l->addr);
		nd_jw_kint(&w, "size", l->size);
		nd_jw_kint(&w, "stream", l->stream);
		if (l->seq >= 0) {
			nd_jw_kint(&w, "ts_ns", ts_of(S,
			    &D->ent[l->seq], l->seq));
			nd_jw_kint(&w, "seq", l->seq);
		} else
			nd_jw_kbool(&w, "before_trace", 1);
		put_frames(m, &w, l->frames);
		end(m, &w);
	}
	free(lv);
}

/* mem_block at "snapshot": the largest blocks live in the snapshot. */
static void
report_snapshot_blocks(struct snap *S, struct dev *D)
{
	nd_mem *m = S->m;
	char b1[32], b2[32];
	nd_jw w;
	const struct blk **ix = nd_xmalloc((D->nblk + 1) * sizeof *ix);
	size_t n = 0, k;

	for (size_t i = 0; i < D->nblk; i++)
		if (D->blk[i].live)
			ix[n++] = &D->blk[i];
	nd_sort(ix, n, sizeof *ix, cmp_blk, NULL);
	k = n < (size_t)m->o.top ? n : (size_t)m->o.top;
	if (m->o.table && k > 0) {
		text(m, "  largest live blocks in the snapshot:");
		text(m, "  %12s  %-16s %-16s  %s", "size", "address",
		    "requested", "top frame");
	}
	for (size_t i = 0; i < k; i++) {
		const struct blk *b = ix[i];

		if (m->o.table) {
			text(m, "  %12s  0x%-14" PRIx64 " %-16s  %s",
			    human(b1, sizeof b1, b->size),
			    (uint64_t)b->addr, human(b2, sizeof b2,
			    b->req), top_frame(S, b->frames));
			continue;
		}
		begin(m, &w, "mem_block");
		nd_jw_kcstr(&w, "source", S->source);
		nd_jw_kcstr(&w, "device", D->name);
		nd_jw_kcstr(&w, "at", "snapshot");
		nd_jw_kint(&w, "row", (int64_t)i + 1);
		nd_jw_kint(&w, "address", b->addr);
		nd_jw_kint(&w, "size", b->size);
		nd_jw_kint(&w, "requested_size", b->req);
		nd_jw_kstr(&w, "state", b->state, b->state_n);
		nd_jw_kint(&w, "stream", b->stream);
		nd_jw_kint(&w, "segment_address", b->seg_addr);
		put_frames(m, &w, b->frames);
		end(m, &w);
	}
	free(ix);
}

static void
dev_report(struct snap *S, struct dev *D)
{
	report_state(S, D);
	if (D->nent > 0)
		report_peak(S, D);
	report_ooms(S, D);
	if (S->m->o.top <= 0)
		return;
	if (D->nent > 0)
		report_peak_blocks(S, D);
	report_snapshot_blocks(S, D);
}

/* Scan every trace for the clock: time_us on every entry, in range. */
static void
find_origin(struct snap *S, const nd_pkv *traces)
{
	int any = 0;
	int64_t lo = 0, hi = 0;

	S->has_time = 0;
	for (size_t d = 0; d < nd_pk_len(traces); d++) {
		const nd_pkv *tr = nd_pk_item(traces, d);

		for (size_t i = 0; i < nd_pk_len(tr); i++) {
			int64_t t;

			if (!pk_i64(nd_pk_item(tr, i), "time_us", &t))
				return;
			if (!any || t < lo)
				lo = t;
			if (!any || t > hi)
				hi = t;
			any = 1;
		}
	}
	if (!any || lo < 0 || lo > INT64_MAX / 1000 ||
	    (uint64_t)hi - (uint64_t)lo > (uint64_t)(SAFE_SIZE / 1000))
		return;
	S->has_time = 1;
	S->origin_us = lo;
}

static int
cmp_i64(const void *a, const void *b, void *ctx)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	(void)ctx;
	return x < y ? -1 : x > y;
}

/* The devices of a snapshot, sorted, once each: those of the segments and
 * of non-empty traces (*devsp, the caller frees); SIZE_MAX after an
 * error. */
static size_t
snap_devices(struct snap *S, const nd_pkv *segs, const nd_pkv *traces,
    int64_t **devsp)
{
	int64_t *devs = NULL;
	size_t ndev = 0, capdev = 0;

	for (size_t i = 0; i < nd_pk_len(segs); i++) {
		int64_t d = 0;

		(void)pk_i64(nd_pk_item(segs, i), "device", &d);
		nd_grow(&devs, &capdev, ndev + 1, sizeof *devs);
		devs[ndev++] = d;
	}
	for (size_t i = 0; i < nd_pk_len(traces); i++)
		if (nd_pk_len(nd_pk_item(traces, i)) > 0 ||
		    !nd_pk_isseq(nd_pk_item(traces, i))) {
			nd_grow(&devs, &capdev, ndev + 1, sizeof *devs);
			devs[ndev++] = (int64_t)i;
		}
	nd_sort(devs, ndev, sizeof *devs, cmp_i64, NULL);
	{
		size_t k = 0;

		for (size_t i = 0; i < ndev; i++)
			if (k == 0 || devs[k - 1] != devs[i])
				devs[k++] = devs[i];
		ndev = k;
	}
	if (ndev > 0 && (devs[0] < 0 || devs[ndev - 1] >= MAX_DEVICES)) {
		serr(S, "device index %" PRId64 " is out of range",
		    devs[0] < 0 ? devs[0] : devs[ndev - 1]);
		*devsp = devs;
		return SIZE_MAX;
	}
	*devsp = devs;
	return ndev;
}

int
nd_mem_snapshot(nd_mem *m, const char *source, const nd_pkv *root,
    char *msg, size_t msgsz)
{
	struct snap S;
	const nd_pkv *segs, *traces = NULL;
	int64_t *devs = NULL;
	size_t ndev = 0;
	struct dev *D = NULL;
	int rc = -1;

	nd_mem_end_source(m);
	memset(&S, 0, sizeof S);
	S.m = m;
	S.source = source;
	S.msg = msg;
	S.msgsz = msgsz;
	if (root->type == ND_PK_LIST)
		segs = root;	/* torch.cuda.memory_snapshot(): segments only */
	else if ((segs = nd_pk_get(root, "segments")) == NULL ||
	    !nd_pk_isseq(segs)) {
		serr(&S, "not a PyTorch memory snapshot: %s without a "
		    "\"segments\" list", nd_pk_typename(root));
		goto out;
	} else {
		traces = nd_pk_get(root, "device_traces");
		if (traces != NULL && traces->type == ND_PK_NONE)
			traces = NULL;
		if (traces != NULL && !nd_pk_isseq(traces)) {
			serr(&S, "\"device_traces\" is %s, not a list",
			    nd_pk_typename(traces));
			goto out;
		}
	}
	if ((ndev = snap_devices(&S, segs, traces, &devs)) == SIZE_MAX)
		goto out;
	find_origin(&S, traces);
	D = nd_xcalloc(ndev + 1, sizeof *D);
	for (size_t i = 0; i < ndev; i++) {
		D[i].d = devs[i];
		snprintf(D[i].name, sizeof D[i].name, "GPU:%" PRId64, devs[i]);
		if (dev_blocks(&S, segs, &D[i]) != 0)
			goto out;
		if (nd_pk_item(traces, (size_t)devs[i]) != NULL &&
		    !nd_pk_isseq(nd_pk_item(traces, (size_t)devs[i]))) {
			serr(&S, "device_traces[%" PRId64 "] is %s, not a "
			    "list", devs[i], nd_pk_typename(nd_pk_item(traces,
			    (size_t)devs[i])));
			goto out;
		}
		if (dev_trace(&S, nd_pk_item(traces, (size_t)devs[i]),
		    &D[i]) != 0)
			goto out;
		dev_match(&D[i]);
	}
	if (m->o.timeline && !m->o.table) {
		nd_meta_write(m->out, source, "torch_memory_snapshot",
		    S.has_time ? S.origin_us * 1000 : 0, NULL, 0, 0);
		if (m->commit != NULL)
			m->commit(m->ctx);
	}
	for (size_t i = 0; i < ndev; i++)
		dev_replay(&S, &D[i], m->o.timeline && !m->o.table);
	if (ndev == 0) {
		if (m->o.table)
			text(m, "snapshot %s: no segments and no trace entries",
			    source);
		else {
			nd_jw w;

			begin(m, &w, "mem_none");
			nd_jw_kcstr(&w, "source", source);
			nd_jw_kcstr(&w, "reason", "a memory snapshot with no "
			    "segments and no trace entries");
			nd_jw_kint(&w, "records", 0);
			end(m, &w);
		}
	}
	for (size_t i = 0; i < ndev; i++)
		dev_report(&S, &D[i]);
	rc = 0;
out:
	if (D != NULL)
		for (size_t i = 0; i < ndev; i++) {
			free(D[i].blk);
			free(D[i].ent);
			nd_map64_free(D[i].req_end);
		}
	free(D);
	free(devs);
	nd_buf_free(&S.b);
	return rc;
}

/* ---- PyTorch memory timelines (nd_memtl) ---- */

static void
tl_counter(nd_mem *m, const nd_memtl_point *p)
{
	nd_jw w;
	char k[40];

	begin(m, &w, "counter");
	nd_jw_kint(&w, "ts_ns", p->ts_ns);
	nd_jw_kcstr(&w, "name", "memory");
	nd_jw_kint(&w, "pid", 0);
	nd_jw_key(&w, "values");
	nd_jw_obj(&w);
	nd_jw_kint(&w, "allocated_bytes", p->total);
	for (int c = 0; c < ND_MEMTL_NCAT; c++) {
		snprintf(k, sizeof k, "%s_bytes", nd_memtl_category[c]);
		nd_jw_kint(&w, k, p->bytes[c]);
	}
	nd_jw_obj_end(&w);
	end(m, &w);
}

/* The first point of the largest total, and of each category's largest
 * value. */
static size_t
tl_peaks(const nd_memtl *tl, size_t cpk[ND_MEMTL_NCAT])
{
	size_t pk = 0;

	for (int c = 0; c < ND_MEMTL_NCAT; c++)
		cpk[c] = 0;
	for (size_t i = 1; i < tl->npt; i++) {
		if (tl->pt[i].total > tl->pt[pk].total)
			pk = i;
		for (int c = 0; c < ND_MEMTL_NCAT; c++)
			if (tl->pt[i].bytes[c] > tl->pt[cpk[c]].bytes[c])
				cpk[c] = i;
	}
	return pk;
}

static void
tl_table(nd_mem *m, const char *source, const nd_memtl *tl, size_t pk,
    const size_t cpk[ND_MEMTL_NCAT])
{
	const nd_memtl_point *p = &tl->pt[pk], *f = &tl->pt[tl->npt - 1];
	char b1[40], b2[40], b3[40], t[40];

	text(m, "memory timeline %s (PyTorch %s, %" PRIu64 " %s at %zu "
	    "times)", source, tl->raw ? "export_memory_timeline_raw" :
	    "export_memory_timeline", tl->events, tl->raw ? "events" :
	    "points", tl->npt);
	text(m, "  peak          %s at %s", human(b1, sizeof b1, p->total),
	    nd_fmt_at_ms(t, sizeof t, p->ts_ns));
	text(m, "  final         %s at %s", human(b1, sizeof b1, f->total),
	    nd_fmt_at_ms(t, sizeof t, f->ts_ns));
	text(m, "  %-16s %12s %12s  %-14s %12s", "category", "at peak",
	    "peak", "peak at", "final");
	for (int c = 0; c < ND_MEMTL_NCAT; c++)
		text(m, "  %-16s %12s %12s  %-14s %12s", nd_memtl_category[c],
		    human(b1, sizeof b1, p->bytes[c]), human(b2, sizeof b2,
		    tl->pt[cpk[c]].bytes[c]), nd_fmt_at_ms(t, sizeof t,
		    tl->pt[cpk[c]].ts_ns), human(b3, sizeof b3, f->bytes[c]));
}

static void
tl_records(nd_mem *m, const char *source, const nd_memtl *tl, size_t pk,
    const size_t cpk[ND_MEMTL_NCAT])
{
	const nd_memtl_point *p = &tl->pt[pk], *f = &tl->pt[tl->npt - 1];
	nd_jw w;

	begin(m, &w, "mem_peak");
	nd_jw_kcstr(&w, "source", source);
	nd_jw_kint(&w, "ts_ns", p->ts_ns);
	nd_jw_kint(&w, "allocated_bytes", p->total);
	nd_jw_key(&w, "categories");
	nd_jw_obj(&w);
	for (int c = 0; c < ND_MEMTL_NCAT; c++)
		nd_jw_kint(&w, nd_memtl_category[c], p->bytes[c]);
	nd_jw_obj_end(&w);
	nd_jw_kint(&w, "samples", (int64_t)tl->npt);
	nd_jw_kint(&w, "events", (int64_t)tl->events);
	nd_jw_kint(&w, "first_ts_ns", tl->pt[0].ts_ns);
	nd_jw_kint(&w, "last_ts_ns", f->ts_ns);
	nd_jw_kint(&w, "final_allocated_bytes", f->total);
	end(m, &w);
	for (int c = 0; c < ND_MEMTL_NCAT; c++) {
		begin(m, &w, "mem_category");
		nd_jw_kcstr(&w, "source", source);
		nd_jw_kcstr(&w, "category", nd_memtl_category[c]);
		nd_jw_kint(&w, "peak_bytes", tl->pt[cpk[c]].bytes[c]);
		nd_jw_kint(&w, "ts_ns", tl->pt[cpk[c]].ts_ns);
		nd_jw_kint(&w, "at_peak_bytes", p->bytes[c]);
		nd_jw_kint(&w, "final_bytes", f->bytes[c]);
		end(m, &w);
	}
}

void
nd_mem_timeline(nd_mem *m, const char *source, const nd_memtl *tl)
{
	size_t pk, cpk[ND_MEMTL_NCAT];

	if (tl->npt == 0) {
		nd_jw w;

		if (m->o.table) {
			text(m, "memory timeline %s: no events", source);
			return;
		}
		begin(m, &w, "mem_none");
		nd_jw_kcstr(&w, "source", source);
		nd_jw_kcstr(&w, "reason", "an empty memory timeline");
		nd_jw_kint(&w, "records", 0);
		end(m, &w);
		return;
	}
	pk = tl_peaks(tl, cpk);
	if (m->o.table) {
		tl_table(m, source, tl, pk, cpk);
		return;
	}
	if (m->o.timeline) {
		nd_meta_write(m->out, source, "torch_memory_timeline",
		    tl->origin_ns, NULL, 0, 0);
		if (m->commit != NULL)
			m->commit(m->ctx);
		for (size_t i = 0; i < tl->npt; i++)
			tl_counter(m, &tl->pt[i]);
	}
	tl_records(m, source, tl, pk, cpk);
}
