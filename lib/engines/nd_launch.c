#include "nd_launch.h"

#include "nd_hash.h"
#include "nd_nest.h"
#include "nd_sort.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX		/* no CPU op encloses the launch */
#define UNPLACED (UINT32_MAX - 1)	/* its thread was out of order */

struct open_op {
	int64_t end;
	uint32_t name;
};

struct thread {
	struct open_op *st;
	size_t n, cap;
	size_t lo;		/* st[0..lo) have ended (a child can outlive
				 * its parent): the top-level op is the first
				 * open one from lo; starts only grow, so lo
				 * only moves up, and finding it is amortised
				 * O(1) */
	int64_t last, lastdur;
	int disordered;
};

/* What a launch is counted under: name ids, NONE or UNPLACED; packed in
 * a map value (inner | top << 32). */
struct pending {
	uint32_t inner, top;
};

struct early {			/* device ops before their launch */
	uint64_t ops;
	int64_t ns;
};

struct fig {
	uint64_t ops;
	int64_t ns;
};

/* A host span held by a buffered nd_launch until its source ends. */
struct held {
	int64_t pid, tid, ts, dur, corr;
	uint64_t seq;		/* its place in the stream: ties keep it */
	uint32_t name;		/* a CPU op's name id */
	int has_corr;
};

struct nd_launch {
	nd_intern *names;	/* CPU op names */
	int buffered;		/* host spans held and sorted per source */
	int disordered;		/* a thread was out of order */
	struct held *held;
	size_t nheld, capheld;
	struct fig *fig[2];	/* per name id, ND_LAUNCH_INNER and _TOP */
	size_t cap[2];
	struct fig none[2];	/* launched outside every CPU op */
	nd_intern *tids;	/* (pid, tid) of the current source */
	struct thread *th;
	size_t nth, capth;
	int64_t lastk[2];	/* the thread of the last host span */
	uint32_t lastth;	/* UINT32_MAX: none yet */
	/* correlation -> packed struct pending, kept until the source ends
	 * (every device op of the id is the launch's, whatever the order);
	 * correlation -> index in pend (device ops before their launch) */
	nd_map64 *launch, *early;
	struct early *pend;
	size_t npend, cappend;
	uint32_t *freed;	/* free slots of pend */
	size_t nfreed, capfreed;
	nd_launch_sum sum;
	nd_launch_row *rows;
	size_t caprows;
};

nd_launch *
nd_launch_new(int buffered)
{
	nd_launch *l = nd_xcalloc(1, sizeof *l);

	l->buffered = buffered;
	l->names = nd_intern_new();
	l->tids = nd_intern_new();
	l->launch = nd_map64_new();
	l->early = nd_map64_new();
	l->lastth = UINT32_MAX;
	return l;
}

static void
forget_source(nd_launch *l)
{
	for (size_t i = 0; i < l->nth; i++)
		free(l->th[i].st);
	free(l->th);
	l->th = NULL;
	l->nth = l->capth = 0;
	nd_intern_free(l->tids);
	nd_map64_free(l->launch);
	nd_map64_free(l->early);
	free(l->pend);
	free(l->freed);
	l->pend = NULL;
	l->freed = NULL;
	l->npend = l->cappend = l->nfreed = l->capfreed = 0;
}

void
nd_launch_free(nd_launch *l)
{
	if (l == NULL)
		return;
	forget_source(l);
	nd_intern_free(l->names);
	free(l->held);
	free(l->fig[0]);
	free(l->fig[1]);
	free(l->rows);
	free(l);
}

static void host_span(nd_launch *l, int64_t pid, int64_t tid, int64_t ts,
    int64_t dur, uint32_t name, int has_corr, int64_t corr);

static int
held_cmp(const void *a, const void *b, void *ctx)
{
	const struct held *x = a, *y = b;
	int c;

	(void)ctx;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if ((c = nd_span_order(x->ts, x->dur, y->ts, y->dur)) != 0)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The held host spans of a source, in order per thread: the device ops
 * have all come, so each launch takes what waits for it. */
static void
replay(nd_launch *l)
{
	nd_sort(l->held, l->nheld, sizeof *l->held, held_cmp, NULL);
	for (size_t i = 0; i < l->nheld; i++) {
		const struct held *h = &l->held[i];

		host_span(l, h->pid, h->tid, h->ts, h->dur, h->name,
		    h->has_corr, h->corr);
	}
	l->nheld = 0;
}

void
nd_launch_end_source(nd_launch *l)
{
	size_t pos = 0;
	uint64_t key, val;

	if (l->buffered)
		replay(l);
	while (nd_map64_next(l->early, &pos, &key, &val)) {
		l->sum.unmatched_ops += l->pend[val].ops;
		l->sum.unmatched_ns += l->pend[val].ns;
	}
	forget_source(l);
	l->tids = nd_intern_new();
	l->launch = nd_map64_new();
	l->early = nd_map64_new();
	l->lastth = UINT32_MAX;
}

static uint32_t
slot_new(nd_launch *l)
{
	uint32_t i;

	if (l->nfreed > 0)
		i = l->freed[--l->nfreed];
	else {
		nd_grow(&l->pend, &l->cappend, l->npend + 1, sizeof *l->pend);
		i = (uint32_t)l->npend++;
	}
	memset(&l->pend[i], 0, sizeof l->pend[i]);
	return i;
}

static void
slot_free(nd_launch *l, nd_map64 *m, uint64_t corr, uint32_t i)
{
	nd_map64_del(m, corr);
	nd_grow(&l->freed, &l->capfreed, l->nfreed + 1, sizeof *l->freed);
	l->freed[l->nfreed++] = i;
}

static void
fig_add(nd_launch *l, int which, uint32_t name, uint64_t ops, int64_t ns)
{
	struct fig *f;

	if (name == NONE)
		f = &l->none[which];
	else {
		if (name >= l->cap[which]) {
			size_t old = l->cap[which];

			nd_grow(&l->fig[which], &l->cap[which], name + 1,
			    sizeof *l->fig[which]);
			memset(l->fig[which] + old, 0, (l->cap[which] - old) *
			    sizeof *l->fig[which]);
		}
		f = &l->fig[which][name];
	}
	f->ops += ops;
	f->ns += ns;
}

/* Device ops (ops, ns) of the launch p. */
static void
attribute(nd_launch *l, const struct pending *p, uint64_t ops, int64_t ns)
{
	if (p->inner == UNPLACED) {
		l->sum.unplaced += ops;
		return;
	}
	fig_add(l, ND_LAUNCH_INNER, p->inner, ops, ns);
	fig_add(l, ND_LAUNCH_TOP, p->top, ops, ns);
	l->sum.ops += ops;
	l->sum.ns += ns;
}

static uint64_t
pack(const struct pending *p)
{
	return (uint64_t)p->inner | (uint64_t)p->top << 32;
}

static struct pending
unpack(uint64_t v)
{
	struct pending p = { (uint32_t)v, (uint32_t)(v >> 32) };

	return p;
}

static void
device_op(nd_launch *l, uint64_t corr, int64_t dur)
{
	uint64_t *v = nd_map64_get(l->launch, corr);
	struct pending p;
	int isnew;

	if (v != NULL) {
		p = unpack(*v);
		attribute(l, &p, 1, dur);
		return;
	}
	v = nd_map64_put(l->early, corr, &isnew);
	if (isnew)
		*v = slot_new(l);
	l->pend[*v].ops++;
	l->pend[*v].ns += dur;
}

static struct thread *
thread_of(nd_launch *l, int64_t pid, int64_t tid)
{
	int64_t k[2] = { pid, tid };
	uint32_t id;

	/* host spans come in runs of one thread */
	if (l->lastth != UINT32_MAX && k[0] == l->lastk[0] &&
	    k[1] == l->lastk[1])
		return &l->th[l->lastth];
	id = nd_intern_id(l->tids, (const char *)k, sizeof k);
	l->lastk[0] = k[0];
	l->lastk[1] = k[1];
	l->lastth = id;
	if (id == l->nth) {
		nd_grow(&l->th, &l->capth, l->nth + 1, sizeof *l->th);
		memset(&l->th[l->nth], 0, sizeof l->th[l->nth]);
		l->th[l->nth].last = INT64_MIN;
		l->nth++;
	}
	return &l->th[id];
}

static int
is_cpu_op(const nd_event *ev)
{
	return ev->cat.p != NULL && ((ev->cat.n == 6 &&
	    memcmp(ev->cat.p, "cpu_op", 6) == 0) || (ev->cat.n == 8 &&
	    memcmp(ev->cat.p, "Operator", 8) == 0));
}

static void
launch(nd_launch *l, int64_t ts, struct thread *t, uint64_t corr)
{
	struct pending p;
	uint64_t *v;
	int isnew;

	p.inner = p.top = NONE;
	if (t->disordered)
		p.inner = p.top = UNPLACED;
	else if (t->n > 0) {
		p.inner = t->st[t->n - 1].name;
		while (!nd_nest_holds(t->st[t->lo].end, ts))
			t->lo++;	/* stops at the open top */
		p.top = t->st[t->lo].name;
	}
	if (nd_map64_count(l->early) > 0 &&
	    (v = nd_map64_get(l->early, corr)) != NULL) {
		uint32_t i = (uint32_t)*v;

		attribute(l, &p, l->pend[i].ops, l->pend[i].ns);
		slot_free(l, l->early, corr, i);
	}
	v = nd_map64_put(l->launch, corr, &isnew);
	*v = pack(&p);
	(void)isnew;
}

/* A host span of a thread, in its order: the stack of open CPU ops
 * follows it; a launch takes the innermost and the top-level one. */
static void
host_span(nd_launch *l, int64_t pid, int64_t tid, int64_t ts, int64_t dur,
    uint32_t name, int has_corr, int64_t corr)
{
	struct thread *t = thread_of(l, pid, tid);

	if (t->last != INT64_MIN &&
	    nd_span_order(t->last, t->lastdur, ts, dur) > 0)
		t->disordered = l->disordered = 1;
	t->last = ts;
	t->lastdur = dur;
	while (t->n > 0 && !nd_nest_holds(t->st[t->n - 1].end, ts))
		t->n--;
	if (t->lo > t->n)
		t->lo = t->n;
	if (has_corr)
		launch(l, ts, t, (uint64_t)corr);
	else if (dur > 0) {
		nd_grow(&t->st, &t->cap, t->n + 1, sizeof *t->st);
		t->st[t->n].end = ts + dur;
		t->st[t->n].name = name;
		t->n++;
	}
}

void
nd_launch_add(nd_launch *l, const nd_event *ev)
{
	int64_t corr;
	int has = nd_event_corr(ev, &corr);
	uint32_t name = NONE;

	if (!(ev->has & ND_HAS_TS) || !(ev->has & ND_HAS_DUR) ||
	    ev->dur_ns < 0)
		return;
	if (nd_event_kind(ev) == ND_KIND_DEVICE) {
		if (has)
			device_op(l, (uint64_t)corr, ev->dur_ns);
		return;
	}
	if (!has && !is_cpu_op(ev))
		return;
	if (!has && ev->dur_ns > 0)
		name = nd_intern_id(l->names, ev->name.p != NULL ?
		    ev->name.p : "", ev->name.p != NULL ? ev->name.n : 0);
	if (l->buffered) {
		struct held *h;

		nd_grow(&l->held, &l->capheld, l->nheld + 1, sizeof *l->held);
		h = &l->held[l->nheld];
		h->pid = ev->pid;
		h->tid = ev->tid;
		h->ts = ev->ts_ns;
		h->dur = ev->dur_ns;
		h->corr = corr;
		h->seq = l->nheld++;
		h->name = name;
		h->has_corr = has;
		return;
	}
	host_span(l, ev->pid, ev->tid, ev->ts_ns, ev->dur_ns, name, has,
	    corr);
}

int
nd_launch_disordered(const nd_launch *l)
{
	return l->disordered;
}

static int
row_cmp(const void *a, const void *b, void *ctx)
{
	const nd_launch_row *x = a, *y = b;

	(void)ctx;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	if (x->ops != y->ops)
		return x->ops > y->ops ? -1 : 1;
	if ((x->name == NULL) != (y->name == NULL))
		return x->name == NULL ? 1 : -1;
	return x->name == NULL ? 0 : strcmp(x->name, y->name);
}

size_t
nd_launch_rows(nd_launch *l, int which, const nd_launch_row **rows)
{
	size_t n = 0, nn = nd_intern_count(l->names);

	nd_grow(&l->rows, &l->caprows, nn + 1, sizeof *l->rows);
	for (size_t i = 0; i < nn && i < l->cap[which]; i++)
		if (l->fig[which][i].ops > 0) {
			l->rows[n].name = nd_intern_str(l->names, (uint32_t)i,
			    NULL);
			l->rows[n].ops = l->fig[which][i].ops;
			l->rows[n++].ns = l->fig[which][i].ns;
		}
	if (l->none[which].ops > 0) {
		l->rows[n].name = NULL;
		l->rows[n].ops = l->none[which].ops;
		l->rows[n++].ns = l->none[which].ns;
	}
	nd_sort(l->rows, n, sizeof *l->rows, row_cmp, NULL);
	*rows = l->rows;
	return n;
}

void
nd_launch_totals(const nd_launch *l, nd_launch_sum *s)
{
	*s = l->sum;
}

const char *const nd_launch_partial_types[] = { "launch_sum", "launch_row" };
const size_t nd_launch_partial_ntypes = 2;

void
nd_launch_write_partial(nd_launch *l, nd_partial_w *pw)
{
	nd_jw w;

	nd_partial_rec(pw, &w, "launch_sum");
	nd_jw_kint(&w, "ops", (int64_t)l->sum.ops);
	nd_jw_kint(&w, "ns", l->sum.ns);
	nd_jw_kint(&w, "unmatched_ops", (int64_t)l->sum.unmatched_ops);
	nd_jw_kint(&w, "unmatched_ns", l->sum.unmatched_ns);
	nd_jw_kint(&w, "unplaced", (int64_t)l->sum.unplaced);
	nd_partial_rec_end(pw, &w);
	for (int which = 0; which < 2; which++) {
		const nd_launch_row *row;
		size_t m = nd_launch_rows(l, which, &row);

		for (size_t i = 0; i < m; i++) {
			nd_partial_rec(pw, &w, "launch_row");
			nd_jw_kint(&w, "which", which);
			nd_jw_key(&w, "name");
			if (row[i].name != NULL)
				nd_jw_cstr(&w, row[i].name);
			else
				nd_jw_null(&w);
			nd_jw_kint(&w, "ops", (int64_t)row[i].ops);
			nd_jw_kint(&w, "ns", row[i].ns);
			nd_partial_rec_end(pw, &w);
		}
	}
}

int
nd_launch_read_partial(nd_launch *l, nd_stream *st, const nd_event *ev)
{
	if (nd_str_eq(ev->type_name, "launch_sum")) {
		nd_launch_sum s;

		s.ops = nd_partial_usum(st, ev, "ops");
		s.ns = nd_partial_isum(st, ev, "ns");
		s.unmatched_ops = nd_partial_usum(st, ev, "unmatched_ops");
		s.unmatched_ns = nd_partial_isum(st, ev, "unmatched_ns");
		s.unplaced = nd_partial_usum(st, ev, "unplaced");
		if (nd_stream_failed(st))
			return 1;
		l->sum.ops += s.ops;
		l->sum.ns += s.ns;
		l->sum.unmatched_ops += s.unmatched_ops;
		l->sum.unmatched_ns += s.unmatched_ns;
		l->sum.unplaced += s.unplaced;
		return 1;
	}
	if (nd_str_eq(ev->type_name, "launch_row")) {
		int64_t which = nd_partial_int(st, ev, "which");
		char *name;
		uint64_t ops;
		int64_t ns;

		if (which != ND_LAUNCH_INNER && which != ND_LAUNCH_TOP)
			nd_partial_bad(st, ev, "which");
		if (nd_stream_failed(st))
			return 1;
		name = nd_partial_str(st, ev, "name");
		ops = nd_partial_usum(st, ev, "ops");
		ns = nd_partial_isum(st, ev, "ns");
		if (!nd_stream_failed(st))
			fig_add(l, (int)which, name == NULL ? NONE :
			    nd_intern_id(l->names, name, strlen(name)), ops,
			    ns);
		free(name);
		return 1;
	}
	return 0;
}
