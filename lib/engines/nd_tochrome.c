/*
 * nd_tochrome: an ndtrace stream as Chrome trace JSON (nd_tochrome.h).
 */
#include "nd_tochrome.h"

#include "nd_cli.h"
#include "nd_drive.h"
#include "nd_hash.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys of the stream that are not carried into args. */
static const char *const reserved[] = {
	"type", "ts_ns", "dur_ns", "name", "pid", "tid", "process", "thread",
	"device", "rank", "step", "cat", "class", "family", "scope", "args",
	"values", "flow_id", "flow_phase", NULL
};

typedef struct proc {
	uint32_t source;
	int64_t pid, out;
	char *name, *device;
} proc;

typedef struct thr {
	uint32_t proc;
	int64_t tid;
	char *name;
} thr;

struct nd_tochrome {
	int keep;
	nd_out *out;
	nd_buf *b;
	uint64_t nout;
	nd_intern *pkeys, *tkeys;
	proc *procs;
	size_t nprocs, capprocs;
	thr *thrs;
	size_t nthrs, capthrs;
	nd_map64 *used;		/* output pids */
	int64_t maxpid;
	int have_base;
	int64_t base;
	uint64_t skipped;
	nd_buf tmp;
};

static int
is_reserved(const nd_jval *k)
{
	for (int i = 0; reserved[i] != NULL; i++)
		if (nd_jstr_eq(k, reserved[i]))
			return 1;
	return 0;
}

static char *
dup_str(nd_str s)
{
	return s.p != NULL ? nd_xstrndup(s.p, s.n) : NULL;
}

static uint32_t
proc_of(struct nd_tochrome *st, uint32_t source, int64_t pid, const nd_event *ev)
{
	int64_t key[2] = { source, pid };
	uint32_t n = nd_intern_count(st->pkeys);
	uint32_t id = nd_intern_id(st->pkeys, (const char *)key, sizeof key);
	proc *p;

	if (id == n) {
		nd_grow(&st->procs, &st->capprocs, (size_t)id + 1,
		    sizeof *st->procs);
		p = &st->procs[id];
		memset(p, 0, sizeof *p);
		p->source = source;
		p->pid = pid;
		if (nd_map64_get(st->used, (uint64_t)pid) == NULL)
			p->out = pid;
		else
			p->out = st->maxpid + 1;
		nd_map64_put(st->used, (uint64_t)p->out, NULL);
		if (id == 0 || p->out > st->maxpid)
			st->maxpid = p->out;
		st->nprocs = (size_t)id + 1;
	}
	p = &st->procs[id];
	if (p->name == NULL && ev->process.p != NULL)
		p->name = dup_str(ev->process);
	if (p->device == NULL && ev->device.p != NULL)
		p->device = dup_str(ev->device);
	return id;
}

static void
thread_of(struct nd_tochrome *st, uint32_t proc, int64_t tid, const nd_event *ev)
{
	int64_t key[2] = { proc, tid };
	uint32_t n = nd_intern_count(st->tkeys);
	uint32_t id = nd_intern_id(st->tkeys, (const char *)key, sizeof key);
	thr *t;

	if (id == n) {
		nd_grow(&st->thrs, &st->capthrs, (size_t)id + 1,
		    sizeof *st->thrs);
		t = &st->thrs[id];
		memset(t, 0, sizeof *t);
		t->proc = proc;
		t->tid = tid;
		st->nthrs = (size_t)id + 1;
	}
	t = &st->thrs[id];
	if (t->name == NULL && ev->thread.p != NULL)
		t->name = dup_str(ev->thread);
}

/* ns -> microseconds with exactly the digits needed (ns precision). */
static void
put_us(nd_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	unsigned frac = (unsigned)(a % 1000);

	if (ns < 0)
		nd_buf_addc(b, '-');
	nd_json_put_u64(b, a / 1000);
	if (frac != 0) {
		char t[5] = { '.', (char)('0' + frac / 100),
		    (char)('0' + frac / 10 % 10), (char)('0' + frac % 10), 0 };
		size_t n = 4;

		while (t[n - 1] == '0')
			n--;
		nd_buf_add(b, t, n);
	}
}

static void
begin_event(struct nd_tochrome *st)
{
	nd_buf_adds(st->b, st->nout++ ? ",\n" : "\n");
}

/* Members of args (raw object) plus the record's unknown members, minus
 * `drop` (a key moved to the top level), as one object; NULL drop keeps
 * all.  Returns 0 when the object would be empty and nothing was written
 * (only when !always). */
static void
put_args(struct nd_tochrome *st, const nd_event *ev, const nd_jval *obj,
    const char *drop, int always)
{
	nd_buf *b = st->b;
	size_t mark = b->len;
	int n = 0;
	nd_jiter it;
	nd_jval k, v;
	nd_jerr je;

	nd_buf_adds(b, ",\"args\":{");
	if (obj != NULL && obj->type == ND_JOBJ) {
		nd_jiter_init(&it, obj, obj->raw);
		while (nd_jiter_next(&it, &k, &v, &je) == 1) {
			if (drop != NULL && nd_jstr_eq(&k, drop))
				continue;
			if (n++)
				nd_buf_addc(b, ',');
			nd_buf_add(b, k.raw, k.len);
			nd_buf_addc(b, ':');
			nd_buf_add(b, v.raw, v.len);
		}
	}
	for (size_t i = 0; i < ev->nmembers; i++) {
		const nd_member *m = &ev->members[i];
		int dup = 0;

		if (is_reserved(&m->key))
			continue;
		if (obj != NULL && obj->type == ND_JOBJ) {
			nd_jiter_init(&it, obj, obj->raw);
			while (!dup && nd_jiter_next(&it, &k, &v, &je) == 1)
				dup = k.len == m->key.len &&
				    memcmp(k.raw, m->key.raw, k.len) == 0;
		}
		if (dup)
			continue;
		if (n++)
			nd_buf_addc(b, ',');
		nd_buf_add(b, m->key.raw, m->key.len);
		nd_buf_addc(b, ':');
		nd_buf_add(b, m->val.raw, m->val.len);
	}
	if (st->keep && ev->type != ND_EV_COUNTER) {
		nd_jw w;
		int any = (ev->has & (ND_HAS_STEP | ND_HAS_RANK)) ||
		    ev->scope.p || ev->cls.p || ev->family.p || ev->device.p;

		if (any) {
			if (n++)
				nd_buf_addc(b, ',');
			nd_buf_adds(b, "\"ndtrace\":");
			nd_jw_init(&w, b);
			nd_jw_obj(&w);
			if (ev->has & ND_HAS_STEP)
				nd_jw_kint(&w, "step", ev->step);
			if (ev->scope.p)
				nd_jw_kstr(&w, "scope", ev->scope.p, ev->scope.n);
			if (ev->cls.p)
				nd_jw_kstr(&w, "class", ev->cls.p, ev->cls.n);
			if (ev->family.p)
				nd_jw_kstr(&w, "family", ev->family.p,
				    ev->family.n);
			if (ev->device.p)
				nd_jw_kstr(&w, "device", ev->device.p,
				    ev->device.n);
			if (ev->has & ND_HAS_RANK)
				nd_jw_kint(&w, "rank", ev->rank);
			nd_jw_obj_end(&w);
		}
	}
	if (n == 0 && !always) {
		b->len = mark;
		b->p[b->len] = '\0';
		return;
	}
	nd_buf_addc(b, '}');
}

/* A string member of args (for "s" and "bp"), copied raw. */
static int
arg_str(const nd_event *ev, const char *key, nd_jval *out)
{
	return nd_event_arg(ev, key, out) && out->type == ND_JSTR;
}

/* The Trace Event phase of a record, or NULL: not written (a flow
 * without flow_id is counted as skipped). */
static const char *
phase_of(struct nd_tochrome *st, const nd_event *ev)
{
	const char *ph;

	switch (ev->type) {
	case ND_EV_SPAN:
	case ND_EV_OTHER:
		ph = "X";
		break;
	case ND_EV_INSTANT:
		ph = "i";
		break;
	case ND_EV_COUNTER:
		ph = "C";
		break;
	case ND_EV_FLOW: {
		const nd_jval *fp = nd_event_get(ev, "flow_phase");

		if (nd_event_get(ev, "flow_id") == NULL) {
			st->skipped++;
			return NULL;
		}
		ph = fp != NULL && nd_jstr_eq(fp, "t") ? "t" :
		    fp != NULL && nd_jstr_eq(fp, "f") ? "f" : "s";
		break;
	}
	default:
		return NULL;
	}
	return ph;
}

/* The members of the event that depend on its type: dur and args, s,
 * counter values, or a flow's id and binding point. */
static void
put_members(struct nd_tochrome *st, const nd_event *ev)
{
	nd_buf *b = st->b;
	nd_jval sv;

	switch (ev->type) {
	case ND_EV_SPAN:
	case ND_EV_OTHER:
		nd_buf_adds(b, ",\"dur\":");
		put_us(b, ev->dur_ns);
		put_args(st, ev, &ev->args, NULL, 0);
		break;
	case ND_EV_INSTANT:
		if (arg_str(ev, "s", &sv)) {
			nd_buf_adds(b, ",\"s\":");
			nd_buf_add(b, sv.raw, sv.len);
		}
		put_args(st, ev, &ev->args, "s", 0);
		break;
	case ND_EV_COUNTER:
		put_args(st, ev, &ev->values, NULL, 1);
		break;
	case ND_EV_FLOW: {
		const nd_jval *id = nd_event_get(ev, "flow_id");

		nd_buf_adds(b, ",\"id\":");
		nd_buf_add(b, id->raw, id->len);
		if (arg_str(ev, "bp", &sv)) {
			nd_buf_adds(b, ",\"bp\":");
			nd_buf_add(b, sv.raw, sv.len);
		}
		put_args(st, ev, &ev->args, "bp", 0);
		break;
	}
	default:
		break;
	}
}

static void
record(struct nd_tochrome *st, const nd_event *ev, const nd_source_info *si)
{
	nd_buf *b = st->b;
	int64_t delta = 0, ts;
	const char *ph;
	uint32_t p;

	if (ev->type == ND_EV_META || ev->type == ND_EV_END)
		return;
	if (!(ev->has & ND_HAS_TS) || !(ev->has & ND_HAS_PID) ||
	    ((ev->type == ND_EV_SPAN || ev->type == ND_EV_OTHER) &&
	    !(ev->has & ND_HAS_DUR))) {
		if (ev->type != ND_EV_OTHER)
			st->skipped++;
		return;
	}
	if (!st->have_base) {
		st->have_base = 1;
		st->base = si->origin_ns;
	}
	if (st->base != 0 && si->origin_ns != 0 &&
	    __builtin_sub_overflow(si->origin_ns, st->base, &delta)) {
		st->skipped++;
		return;
	}
	if (__builtin_add_overflow(ev->ts_ns, delta, &ts)) {
		st->skipped++;
		return;
	}
	p = proc_of(st, ev->source, ev->pid, ev);
	if (ev->has & ND_HAS_TID)
		thread_of(st, p, ev->tid, ev);
	if ((ph = phase_of(st, ev)) == NULL)
		return;
	begin_event(st);
	nd_buf_adds(b, "{\"ph\":\"");
	nd_buf_adds(b, ph);
	nd_buf_adds(b, "\",\"name\":");
	if (ev->name.p != NULL)
		nd_json_put_str(b, ev->name.p, ev->name.n);
	else if (ev->type == ND_EV_OTHER)
		nd_json_put_str(b, ev->type_name.p, ev->type_name.n);
	else
		nd_buf_adds(b, "\"\"");
	if (ev->cat.p != NULL) {
		nd_buf_adds(b, ",\"cat\":");
		nd_json_put_str(b, ev->cat.p, ev->cat.n);
	} else if (ev->type == ND_EV_OTHER) {
		nd_buf_adds(b, ",\"cat\":");
		nd_json_put_str(b, ev->type_name.p, ev->type_name.n);
	}
	nd_buf_adds(b, ",\"pid\":");
	nd_json_put_i64(b, st->procs[p].out);
	if (ev->has & ND_HAS_TID) {
		nd_buf_adds(b, ",\"tid\":");
		nd_json_put_i64(b, ev->tid);
	}
	nd_buf_adds(b, ",\"ts\":");
	put_us(b, ts);
	put_members(st, ev);
	nd_buf_addc(b, '}');
	nd_out_commit(st->out);
}

/* "GPU:0" -> "GPU 0", the form Kineto writes in process_labels. */
static void
put_labels(nd_buf *b, const char *dev)
{
	const char *c = strrchr(dev, ':');

	nd_buf_reset(b);
	if (c != NULL && c[1] >= '0' && c[1] <= '9') {
		nd_buf_add(b, dev, (size_t)(c - dev));
		nd_buf_addc(b, ' ');
		nd_buf_adds(b, c + 1);
	} else
		nd_buf_adds(b, dev);
}

static void
meta_event(struct nd_tochrome *st, const char *what, int64_t pid, int64_t tid,
    const char *key, const char *val, size_t n)
{
	nd_buf *b = st->b;

	begin_event(st);
	nd_buf_adds(b, "{\"ph\":\"M\",\"name\":\"");
	nd_buf_adds(b, what);
	nd_buf_adds(b, "\",\"pid\":");
	nd_json_put_i64(b, pid);
	nd_buf_adds(b, ",\"tid\":");
	nd_json_put_i64(b, tid);
	nd_buf_adds(b, ",\"args\":{\"");
	nd_buf_adds(b, key);
	nd_buf_adds(b, "\":");
	nd_json_put_str(b, val, n);
	nd_buf_adds(b, "}}");
	nd_out_commit(st->out);
}

static void
finish(struct nd_tochrome *st, nd_stream *sm)
{
	uint32_t ns = nd_stream_nsources(sm);
	nd_buf *b = st->b;
	nd_buf name = ND_BUF_INIT;
	int one_rank = 1, has_rank = 0;
	int64_t rank = 0;
	nd_jw w;

	for (size_t i = 0; i < st->nprocs; i++) {
		const proc *p = &st->procs[i];
		const nd_source_info *si = nd_stream_meta(sm, p->source);

		nd_buf_reset(&name);
		if (p->name != NULL)
			nd_buf_adds(&name, p->name);
		if (ns > 1) {
			if (name.len > 0)
				nd_buf_addc(&name, ' ');
			if (si->has_rank)
				nd_buf_addf(&name, "[rank %lld]",
				    (long long)si->rank);
			else
				nd_buf_addf(&name, "[source %u]", p->source);
		}
		if (name.len > 0)
			meta_event(st, "process_name", p->out, 0, "name",
			    name.p, name.len);
		if (p->device != NULL) {
			put_labels(&st->tmp, p->device);
			meta_event(st, "process_labels", p->out, 0, "labels",
			    st->tmp.p, st->tmp.len);
		}
	}
	for (size_t i = 0; i < st->nthrs; i++) {
		const thr *t = &st->thrs[i];

		if (t->name != NULL)
			meta_event(st, "thread_name", st->procs[t->proc].out,
			    t->tid, "name", t->name, strlen(t->name));
	}
	nd_buf_free(&name);
	nd_buf_adds(b, "\n],\"displayTimeUnit\":\"ns\"");
	if (st->have_base && st->base != 0) {
		nd_buf_adds(b, ",\"baseTimeNanoseconds\":");
		nd_json_put_i64(b, st->base);
	}
	for (uint32_t i = 0; i < ns; i++) {
		const nd_source_info *si = nd_stream_meta(sm, i);

		if (!si->has_rank)
			continue;
		if (has_rank && si->rank != rank)
			one_rank = 0;
		has_rank = 1;
		rank = si->rank;
	}
	if (has_rank && one_rank) {
		nd_buf_adds(b, ",\"distributedInfo\":{\"rank\":");
		nd_json_put_i64(b, rank);
		nd_buf_addc(b, '}');
	}
	nd_buf_adds(b, ",\"otherData\":");
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_key(&w, "producer");
	nd_buf_addc(b, '"');
	nd_buf_adds(b, nd_progname);
	nd_buf_adds(b, " " ND_VERSION "\"");
	nd_jw_key(&w, "sources");
	nd_jw_arr(&w);
	for (uint32_t i = 0; i < ns; i++) {
		const nd_source_info *si = nd_stream_meta(sm, i);

		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "source", si->path != NULL ? si->path : "");
		if (si->format != NULL)
			nd_jw_kcstr(&w, "format", si->format);
		nd_jw_kint(&w, "origin_ns", si->origin_ns);
		if (si->has_rank)
			nd_jw_kint(&w, "rank", si->rank);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	if (st->skipped > 0)
		nd_jw_kuint(&w, "records_not_converted", st->skipped);
	nd_jw_obj_end(&w);
	nd_buf_adds(b, "}\n");
}

/* ---- the engine ---- */

static void
eng_start(void *self, nd_out *o)
{
	struct nd_tochrome *st = self;

	st->out = o;
	st->b = nd_out_buf(o);
	nd_buf_adds(st->b, "{\"traceEvents\":[");
}

static void
eng_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	record(self, ev, si);
}

/* The metadata of every process and thread, and the top-level members:
 * the stream still knows every source (nd_drive_stream). */
static int
eng_end_input(void *self)
{
	struct nd_tochrome *st = self;

	finish(st, nd_drive_stream());
	nd_out_commit(st->out);
	if (st->skipped > 0)
		nd_warn("%llu records without the keys a trace event needs "
		    "were left out", (unsigned long long)st->skipped);
	return ND_ENGINE_OK;
}

nd_tochrome *
nd_tochrome_new(int keep_derived)
{
	struct nd_tochrome *st = nd_xcalloc(1, sizeof *st);

	st->keep = keep_derived;
	st->pkeys = nd_intern_new();
	st->tkeys = nd_intern_new();
	st->used = nd_map64_new();
	return st;
}

nd_engine
nd_tochrome_engine(nd_tochrome *st)
{
	nd_engine e = {
		.name = "chrome",
		.self = st,
		.record = eng_record,
		.end_input = eng_end_input,
		.start = eng_start,
	};

	return e;
}

void
nd_tochrome_free(nd_tochrome *st)
{
	if (st == NULL)
		return;
	for (size_t i = 0; i < st->nprocs; i++) {
		free(st->procs[i].name);
		free(st->procs[i].device);
	}
	for (size_t i = 0; i < st->nthrs; i++)
		free(st->thrs[i].name);
	free(st->procs);
	free(st->thrs);
	nd_intern_free(st->pkeys);
	nd_intern_free(st->tkeys);
	nd_map64_free(st->used);
	nd_buf_free(&st->tmp);
	free(st);
}
