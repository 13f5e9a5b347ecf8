/*
 * nd_report: the rules of the findings, their thresholds, which run and
 * which fire, the time each finding explains, its evidence and advice
 * (see nd_report.h and trace-report(1), Findings).
 *
 * The window: what r->dbd covers (r->window): the steady steps, else the
 * profile window of each device (first to last device op), summed over
 * devices.  A rule that needs what the stream lacks (steps, two ranks,
 * device ops) does not run and says why (r->notrun).
 *
 * Time explained, as a share of the window: the breakdown part a rule
 * measures (comm_exposed, device_idle, host_bound, memory_ops); for
 * launch_gaps the device idle time (nothing running or the host working)
 * times the launch share of gap time; for dominant_op the device busy
 * time of the window times the op's share of exclusive time (all of
 * exclusive time without a window); for step_variance the time the steady
 * steps take beyond the median, % of the steady time; for straggler its
 * largest lag, % of the median step.  Findings are ranked by that share
 * (rule id on ties), except that a straggler goes before comm_exposed:
 * the late rank makes the others wait in their collectives.
 */
#include "nd_report_int.h"
#include "nd_cli.h"

#include "nd_name.h"
#include "nd_sort.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* --- rules of the findings --- */

const nd_report_rule nd_rep_rules[] = {
	{ "comm_exposed", 15, "exposed communication, % of the window" },
	{ "device_idle", 10, "device idle, nothing runs (no host span "
	    "either), % of the window" },
	{ "host_bound", 10, "device idle while the host works (a host span, "
	    "no device op), % of the window" },
	{ "memory_ops", 10, "memory ops (copies) not hidden by compute, "
	    "% of the window" },
	{ "step_variance", 10, "steady step time stddev, % of the mean" },
	{ "straggler", 5, "largest straggler lag, % of the steady median "
	    "step" },
	{ "dominant_op", 30, "one op's exclusive time, % of all exclusive "
	    "time" },
	{ "launch_gaps", 50, "gaps of cause host_wait or kernel_wait, % of "
	    "all gap time (fires only when device idle time, with or without "
	    "host work, reaches the device_idle threshold)" },
	{ NULL, 0, NULL }
};

const nd_report_rule *
nd_report_rules(void)
{
	return nd_rep_rules;
}

/* A share of gap time at least this (percent) before pageable
 * host-to-device copies or during data loading changes the advice of
 * device_idle and host_bound; a kind of memory op with at least this share
 * of memory-op time gets its advice in memory_ops. */
#define RF_CAUSE_PCT 25
#define RF_KIND_PCT 20

/* --- text helpers --- */

static char *
xfmt(const char *fmt, ...) ND_PRINTF(1, 2);

static char *
xfmt(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = nd_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* A duration as text, in slot i of r->durs (valid until reused). */
static const char *
fdur(nd_report *r, int i, int64_t ns)
{
	nd_buf b = { 0 };

	nd_fmt_dur_spaced(&b, ns);
	snprintf(r->durs[i], sizeof r->durs[i], "%.*s", (int)b.len, b.p);
	nd_buf_free(&b);
	return r->durs[i];
}

/* A name as the tables show it (nd_name_short), in slot i of r->fnames
 * (valid until reused): statements are read by people; the JSON evidence
 * keeps the full name. */
static const char *
fnamen(nd_report *r, int i, const char *s, size_t n)
{
	nd_buf b = ND_BUF_INIT, v = ND_BUF_INIT;

	if (s == NULL)
		return "none";
	nd_name_short(s, n, ND_NAME_WIDTH, &b);
	/* a sentence for people: controls (NUL too) as visible escapes */
	nd_text_visible(&v, b.p != NULL ? b.p : "", b.len);
	snprintf(r->fnames[i], sizeof r->fnames[i], "%.*s", (int)v.len,
	    v.p != NULL ? v.p : "");
	nd_buf_free(&b);
	nd_buf_free(&v);
	return r->fnames[i];
}

static const char *
fname(nd_report *r, int i, const char *s)
{
	return fnamen(r, i, s, s != NULL ? strlen(s) : 0);
}

static const char *
fname_id(nd_report *r, int i, uint32_t id)
{
	size_t n;
	const char *s = nd_rep_name_ofn(r, id, &n);

	return fnamen(r, i, s, n);
}

/* "of step time" or "of the profile window": what the shares are of. */
static const char *
wof(const nd_report *r)
{
	return r->window == RW_PROFILE ? "of the profile window" :
	    "of step time";
}

/* A finding being built: its evidence as JSON (the writer's object is
 * open until fire adds the text). */
struct fb {
	nd_buf json;
	nd_jw w;
};

static nd_jw *
fb_new(struct fb *e)
{
	memset(e, 0, sizeof *e);
	nd_jw_init(&e->w, &e->json);
	nd_jw_obj(&e->w);
	return &e->w;
}

static void
fire(nd_report *r, int rule, struct fb *e, int64_t ns, double pct,
    char *statement, char *evidence, char *suggestion)
{
	struct finding *f = &r->fnd[r->nfnd++];

	nd_jw_kcstr(&e->w, "text", evidence);
	nd_jw_obj_end(&e->w);
	f->rule = rule;
	f->value = r->val[rule];
	f->explains_ns = ns;
	f->explains_pct = pct;
	f->statement = statement;
	f->evidence = evidence;
	f->suggestion = suggestion;
	f->ev_json = nd_xstrndup(e->json.p, e->json.len);
	nd_buf_free(&e->json);
}

static int
fires(const nd_report *r, int rule)
{
	return r->notrun[rule] == NULL && r->has_val[rule] &&
	    r->val[rule] >= r->thr[rule];
}

/* --- the kinds of memory ops and of the top op --- */

enum { MK_PAGEABLE, MK_HTOD, MK_DTOH, MK_DTOD, MK_MEMSET, MK_KERNEL,
	MK_N };

static const char *const mk_name[MK_N] = {
	"pageable HtoD copies", "other HtoD copies", "DtoH copies",
	"DtoD copies", "memsets", "copy kernels and ops on the device's cores"
};

#define COPY_ADVICE "avoid needless copies (layout changes and " \
	"transposes, dtype casts, .contiguous() in PyTorch) and fuse them " \
	"into their consumers (torch.compile, XLA fusion)"

static const char *const mk_advice[MK_N] = {
	"pin host memory (pin_memory=True in the DataLoader, or "
	    "tensor.pin_memory()) and copy with non_blocking=True so that "
	    "the copies overlap compute",
	"copy ahead on a side stream (non_blocking=True, prefetch the next "
	    "batch) so that transfers overlap compute",
	"avoid host round trips in the step (.item(), .cpu(), .tolist(), "
	    "printing tensors)",
	COPY_ADVICE,
	"avoid needless fills (torch.empty instead of torch.zeros when every "
	    "element is written; zero_grad(set_to_none=True))",
	COPY_ADVICE
};

/* The kind of a memory op by its name: copy-engine transfers (CUPTI and
 * Kineto name them Memcpy... and Memset...) by direction, else a kernel or
 * op that copies on the device's own cores (SM copy kernels such as
 * direct_copy_kernel_cuda, XLA copy ops). */
static int
mem_kind(const char *s, size_t n)
{
	if (n >= 6 && strncasecmp(s, "memset", 6) == 0)
		return MK_MEMSET;
	if (n < 6 || strncasecmp(s, "memcpy", 6) != 0)
		return MK_KERNEL;
	if (nd_rep_has_ci(s, n, "htod") || nd_rep_has_ci(s, n, "h2d"))
		return nd_rep_has_ci(s, n, "pageable") ? MK_PAGEABLE : MK_HTOD;
	if (nd_rep_has_ci(s, n, "dtoh") || nd_rep_has_ci(s, n, "d2h"))
		return MK_DTOH;
	return MK_DTOD;
}

/* Exclusive time by op name of the ops of one class (device ops, or every
 * span without any), summed over the leaves of that name. */
struct byname {
	nd_intern *names;
	int64_t *ns;
	size_t cap;
};

static int
class_is(const char *c, size_t n, const char *want)
{
	return c != NULL && n == strlen(want) && memcmp(c, want, n) == 0;
}

/* comm: communication and stall (nd_steps' ND_CAT_COMM), else memory */
static void
byname_of(const nd_report *r, int comm, struct byname *o)
{
	uint32_t n = nd_agg_count(r->leaf);

	memset(o, 0, sizeof *o);
	o->names = nd_intern_new();
	for (uint32_t i = 0; i < n; i++) {
		size_t kn, len, nlen;
		const char *k = nd_agg_key(r->leaf, i, &kn);
		const nd_agg_row *row = nd_agg_row_of(r->leaf, i);
		const char *c, *name;
		uint32_t id;

		if (row->count == 0 || (!r->fallback && k[5] != 'd'))
			continue;
		c = nd_rep_leaf_field(k, kn, F_CLASS, &len);
		name = nd_rep_leaf_field(k, kn, F_NAME, &nlen);
		if (name == NULL || !(comm ? class_is(c, len, "communication") ||
		    class_is(c, len, "stall") : class_is(c, len, "memory")))
			continue;
		id = nd_intern_id(o->names, name, nlen);
		if (id >= o->cap) {
			size_t old = o->cap;

			nd_grow(&o->ns, &o->cap, (size_t)id + 1, sizeof *o->ns);
			memset(o->ns + old, 0, (o->cap - old) * sizeof *o->ns);
		}
		o->ns[id] += row->self_ns;
	}
}

/* The name with the most time (the smaller name on ties), or NULL. */
static const char *
byname_top(const struct byname *o, int (*keep)(const char *, size_t, int),
    int arg, int64_t *ns)
{
	uint32_t n = nd_intern_count(o->names);
	const char *best = NULL;

	*ns = 0;
	for (uint32_t i = 0; i < n; i++) {
		size_t len;
		const char *s = nd_intern_str(o->names, i, &len);

		if (keep != NULL && !keep(s, len, arg))
			continue;
		if (best == NULL || o->ns[i] > *ns || (o->ns[i] == *ns &&
		    strcmp(s, best) < 0)) {
			best = s;
			*ns = o->ns[i];
		}
	}
	return best;
}

static void
byname_free(struct byname *o)
{
	nd_intern_free(o->names);
	free(o->ns);
}

struct mkinds {
	int64_t ns[MK_N], top_ns[MK_N], total;
	const char *top[MK_N];	/* the op with most time, in m->ops */
	struct byname ops;
};

static int
kind_is(const char *s, size_t n, int kind)
{
	return mem_kind(s, n) == kind;
}

/* Exclusive time of the memory ops by kind. */
static void
mem_kinds(const nd_report *r, struct mkinds *m)
{
	uint32_t n;

	memset(m, 0, sizeof *m);
	byname_of(r, 0, &m->ops);
	n = nd_intern_count(m->ops.names);
	for (uint32_t i = 0; i < n; i++) {
		size_t len;
		const char *s = nd_intern_str(m->ops.names, i, &len);

		m->ns[mem_kind(s, len)] += m->ops.ns[i];
		m->total += m->ops.ns[i];
	}
	for (int k = 0; k < MK_N; k++)
		m->top[k] = byname_top(&m->ops, kind_is, k, &m->top_ns[k]);
}

/* The kinds by time, largest first (index order on ties). */
static void
mk_order(const struct mkinds *m, int ord[MK_N])
{
	for (int i = 0; i < MK_N; i++)
		ord[i] = i;
	for (int i = 1; i < MK_N; i++)
		for (int j = i; j > 0 && m->ns[ord[j]] > m->ns[ord[j - 1]];
		    j--) {
			int t = ord[j];

			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
}

/* The copy advice for the kinds with at least RF_KIND_PCT of memory-op
 * time (the largest always), each piece once. */
static void
mk_advice_of(const struct mkinds *m, nd_buf *b)
{
	int ord[MK_N];
	const char *said[MK_N];
	int nsaid = 0;

	mk_order(m, ord);
	for (int i = 0; i < MK_N && m->ns[ord[i]] > 0; i++) {
		const char *a = mk_advice[ord[i]];
		int dup = 0;

		if (i > 0 && nd_rep_pct(m->ns[ord[i]], m->total) < RF_KIND_PCT)
			break;
		for (int j = 0; j < nsaid; j++)
			dup |= said[j] == a || strcmp(said[j], a) == 0;
		if (dup)
			continue;
		nd_buf_addf(b, "%s%s: %s", nsaid ? "; " : "", mk_name[ord[i]],
		    a);
		said[nsaid++] = a;
	}
}

/* The class of op `name`: of its leaf with the most exclusive time. */
static const char *
op_class(const nd_report *r, const char *name, size_t *clen)
{
	uint32_t n = nd_agg_count(r->leaf);
	size_t want = strlen(name);
	const char *best = NULL;
	int64_t best_ns = -1;

	*clen = 0;
	for (uint32_t i = 0; i < n; i++) {
		size_t kn, len, nlen;
		const char *k = nd_agg_key(r->leaf, i, &kn);
		const nd_agg_row *row = nd_agg_row_of(r->leaf, i);
		const char *s;

		if (row->count == 0 || (!r->fallback && k[5] != 'd'))
			continue;
		s = nd_rep_leaf_field(k, kn, F_NAME, &nlen);
		if (s == NULL || nlen != want || memcmp(s, name, nlen) != 0 ||
		    row->self_ns <= best_ns)
			continue;
		best = nd_rep_leaf_field(k, kn, F_CLASS, &len);
		*clen = best ? len : 0;
		best_ns = row->self_ns;
	}
	return best;
}

/* --- values, and whether each rule can run --- */

static const char *
no_window(const nd_report *r)
{
	return r->has_device ? "no steps" : "no device op";
}

static void
rule_values(nd_report *r)
{
	/* without device ops the windows hold no device time to judge */
	if (r->has_device && r->dbd_total > 0 && r->window != RW_NONE) {
		r->val[R_COMM] = nd_rep_pct(r->dbd.communication_ns,
		    r->dbd_total);
		r->val[R_IDLE] = nd_rep_pct(r->dbd.idle_ns, r->dbd_total);
		r->val[R_HOST] = nd_rep_pct(r->dbd.host_ns, r->dbd_total);
		r->val[R_MEMORY] = nd_rep_pct(r->dbd.memory_ns, r->dbd_total);
		r->has_val[R_COMM] = r->has_val[R_IDLE] = 1;
		r->has_val[R_HOST] = r->has_val[R_MEMORY] = 1;
	} else
		r->notrun[R_COMM] = r->notrun[R_IDLE] = r->notrun[R_HOST] =
		    r->notrun[R_MEMORY] = r->notrun[R_SMALLGAPS] =
		    no_window(r);
	if (r->steady.count >= 2 && r->steady.mean > 0) {
		r->val[R_VARIANCE] = nd_rep_pct(r->steady.stddev,
		    r->steady.mean);
		r->has_val[R_VARIANCE] = 1;
	} else
		r->notrun[R_VARIANCE] = r->nsteps == 0 ? "no steps" :
		    "fewer than 2 steady steps";
	if (r->rank_steps > 0 && r->steady.median > 0) {
		r->val[R_STRAGGLER] = nd_rep_pct(r->lag_max, r->steady.median);
		r->has_val[R_STRAGGLER] = 1;
	} else
		r->notrun[R_STRAGGLER] = r->nsteps == 0 ? "no steps" :
		    r->nsrc < 2 ? "one rank" : "no step on two ranks";
	if (r->nops > 0 && r->self_total > 0) {
		r->val[R_TOPOP] = nd_rep_pct(r->ops[0].self, r->self_total);
		r->has_val[R_TOPOP] = 1;
	} else
		r->notrun[R_TOPOP] = "no spans";
	if (r->gap_total > 0) {
		int64_t launch = 0;

		for (size_t i = 0; i < r->ncauses; i++) {
			const char *c = nd_rep_name_of(r, r->causes[i].id);

			if (strcmp(c, "host_wait") == 0 ||
			    strcmp(c, "kernel_wait") == 0)
				launch += r->causes[i].ns;
		}
		r->val[R_SMALLGAPS] = nd_rep_pct(launch, r->gap_total);
		r->has_val[R_SMALLGAPS] = 1;
	} else if (r->notrun[R_SMALLGAPS] == NULL)
		r->has_val[R_SMALLGAPS] = 1;	/* no gap: none waits */
}

/* --- the rules --- */

static void
f_comm(nd_report *r)
{
	struct fb e;
	nd_jw *w = fb_new(&e);
	double v = r->val[R_COMM];
	struct byname ops;
	int64_t top_ns, all = 0;
	const char *top, *fam = r->ncolls && strcmp(r->colls[0].key,
	    "(none)") != 0 ? r->colls[0].key : NULL;
	nd_buf ev = ND_BUF_INIT;

	byname_of(r, 1, &ops);
	top = byname_top(&ops, NULL, 0, &top_ns);
	for (uint32_t i = 0; i < nd_intern_count(ops.names); i++)
		all += ops.ns[i];
	nd_jw_kint(w, "exposed_ns", r->dbd.communication_ns);
	nd_jw_kint(w, "overlap_ns", r->dbd.overlap_ns);
	nd_jw_key(w, "top_op");
	if (top != NULL)
		nd_jw_cstr(w, top);
	else
		nd_jw_null(w);
	nd_jw_kint(w, "top_op_ns", top_ns);
	nd_jw_key(w, "top_collective");
	if (fam != NULL)
		nd_jw_cstr(w, fam);
	else
		nd_jw_null(w);
	nd_jw_kint(w, "top_collective_ns", fam ? r->colls[0].self : 0);
	nd_buf_addf(&ev, "exposed communication %.1f %%, overlapped with "
	    "compute %.1f %% %s; top communication op: %s, %s exclusive "
	    "(%.1f %% of communication op time)", v,
	    nd_rep_pct(r->dbd.overlap_ns, r->dbd_total), wof(r),
	    fname(r, 0, top), fdur(r, 0, top_ns), nd_rep_pct(top_ns, all));
	if (fam != NULL)
		nd_buf_addf(&ev, "; top collective kind: %s, %s", fam,
		    fdur(r, 1, r->colls[0].self));
	byname_free(&ops);
	fire(r, R_COMM, &e, r->dbd.communication_ns, v,
	    xfmt("communication is highly exposed: %.1f %% %s, threshold "
	    "%g %%", v, wof(r), r->thr[R_COMM]), nd_xstrndup(ev.p, ev.len),
	    xfmt("overlap collectives with compute (async collectives, "
	    "latency-hiding scheduler, gradient bucketing), reduce what is "
	    "communicated (sharding, bf16 gradients), or check the "
	    "interconnect"));
	nd_buf_free(&ev);
}

/* The top payload op after the gaps (the first row of section 6). */
static uint32_t
top_payload(nd_report *r)
{
	return r->npayids > 0 ? r->payids[0] : UINT32_MAX;
}

/* What the gaps precede or overlap, when it is a large share of gap time:
 * pageable host-to-device copies, data loading; evidence to ev, advice to
 * sg; how many apply. */
static int
gap_causes(const nd_report *r, nd_buf *ev, nd_buf *sg)
{
	double pg = nd_rep_pct(r->rf.pageable_gap_ns, r->gap_total);
	double dl = nd_rep_pct(r->rf.dl_gap_ns, r->gap_total);
	int n = 0;

	if (pg >= RF_CAUSE_PCT) {
		nd_buf_addf(ev, "; %.1f %% of gap time precedes pageable HtoD "
		    "copies", pg);
		nd_buf_adds(sg, "pin host memory (pin_memory=True) and copy "
		    "with non_blocking=True, so that input copies overlap "
		    "compute; ");
		n++;
	}
	if (dl >= RF_CAUSE_PCT) {
		nd_buf_addf(ev, "; %.1f %% of gap time is during data loading "
		    "(DataLoader spans)", dl);
		nd_buf_adds(sg, "load data ahead: more DataLoader workers "
		    "(num_workers), prefetch_factor, persistent_workers=True; ");
		n++;
	}
	return n;
}

/* device_idle and host_bound: the gaps behind the idle time, and advice
 * that fits what precedes them. */
static void
f_idle(nd_report *r, int rule, int64_t ns)
{
	struct fb e;
	nd_jw *w = fb_new(&e);
	uint32_t tp = top_payload(r);
	const struct payload *p = tp != UINT32_MAX ? &r->pay[tp] : NULL;
	double v = r->val[rule];
	nd_buf ev = ND_BUF_INIT, sg = ND_BUF_INIT;

	nd_jw_kint(w, rule == R_IDLE ? "idle_ns" : "host_ns", ns);
	nd_jw_kuint(w, "gaps", r->ngaps);
	nd_jw_kint(w, "gap_ns", r->gap_total);
	nd_jw_kdbl(w, "launch_pct", r->val[R_SMALLGAPS]);
	nd_jw_key(w, "top_payload");
	if (p != NULL) {
		size_t n;
		const char *s = nd_rep_name_ofn(r, tp, &n);

		nd_jw_str(w, s != NULL ? s : "", n);
	}
	else
		nd_jw_null(w);
	nd_jw_kint(w, "top_payload_gap_ns", p ? p->total : 0);
	nd_jw_kuint(w, "top_payload_gaps", p ? p->n : 0);
	nd_jw_kint(w, "pageable_htod_gap_ns", r->rf.pageable_gap_ns);
	nd_jw_kint(w, "data_loading_gap_ns", r->rf.dl_gap_ns);
	nd_jw_kuint(w, "ops", r->ops_spans);
	nd_jw_kint(w, "ops_ns", r->self_total);
	if (r->ngaps == 0)	/* idle only before the first or after the last op */
		nd_buf_addf(&ev, "no gaps between device ops: the device is "
		    "idle before its first or after its last op in the window; "
		    "%llu device ops, %s exclusive in total",
		    (unsigned long long)r->ops_spans, fdur(r, 0, r->self_total));
	else
		nd_buf_addf(&ev, "%llu gap%s, %s in total, %.1f %% of it (by "
		    "time) host_wait or kernel_wait",
		    (unsigned long long)r->ngaps, nd_rep_s(r->ngaps),
		    fdur(r, 0, r->gap_total), r->val[R_SMALLGAPS]);
	if (p != NULL)
		nd_buf_addf(&ev, "; top payload op after the gaps: %s, %s of "
		    "gap time in %llu gap%s", fname_id(r, 0, tp),
		    fdur(r, 1, p->total), (unsigned long long)p->n,
		    nd_rep_s(p->n));
	gap_causes(r, &ev, &sg);
	if (rule == R_IDLE)
		nd_buf_adds(&sg, "feed the device ahead (prefetch inputs, "
		    "avoid host synchronisation, larger or fused kernels, CUDA "
		    "graphs)");
	else
		nd_buf_adds(&sg, "move input processing off the training loop "
		    "(more data-loader workers, prefetch), avoid per-step "
		    "Python work and .item()/host synchronisation");
	fire(r, rule, &e, ns, v, rule == R_IDLE ? xfmt("the device is often "
	    "idle with nothing running: %.1f %% %s, threshold %g %%", v,
	    wof(r), r->thr[rule]) : xfmt("the device waits for the host: "
	    "the host works while no device op runs for %.1f %% %s, "
	    "threshold %g %%", v, wof(r), r->thr[rule]),
	    nd_xstrndup(ev.p, ev.len), nd_xstrndup(sg.p, sg.len));
	nd_buf_free(&ev);
	nd_buf_free(&sg);
}

static void
f_launch(nd_report *r)
{
	struct fb e;
	nd_jw *w = fb_new(&e);
	int64_t hw = 0, kw = 0, idle = r->dbd.idle_ns + r->dbd.host_ns;
	double v = r->val[R_SMALLGAPS];
	int64_t ns = (int64_t)((double)idle * v / 100.0);
	nd_buf ev = ND_BUF_INIT, sg = ND_BUF_INIT;

	for (size_t i = 0; i < r->ncauses; i++) {
		const char *c = nd_rep_name_of(r, r->causes[i].id);

		if (strcmp(c, "host_wait") == 0)
			hw = r->causes[i].ns;
		else if (strcmp(c, "kernel_wait") == 0)
			kw = r->causes[i].ns;
	}
	nd_jw_kuint(w, "gaps", r->ngaps);
	nd_jw_kint(w, "gap_ns", r->gap_total);
	nd_jw_kint(w, "host_wait_ns", hw);
	nd_jw_kint(w, "kernel_wait_ns", kw);
	nd_buf_addf(&ev, "%llu gap%s, %s in total: host_wait %s, kernel_wait "
	    "%s", (unsigned long long)r->ngaps, nd_rep_s(r->ngaps),
	    fdur(r, 0, r->gap_total), fdur(r, 1, hw), fdur(r, 2, kw));
	/* the host launches late because it loads data: not launch cost */
	if (gap_causes(r, &ev, &sg) > 0)
		nd_buf_adds(&sg, "the launches are late because the host is "
		    "busy with input, so fusing ops would not help much");
	else
		nd_buf_adds(&sg, "launch overhead dominates: fuse small ops "
		    "(torch.compile, XLA fusion), use CUDA graphs, raise the "
		    "batch size per launch");
	fire(r, R_SMALLGAPS, &e, ns, nd_rep_pct(ns, r->dbd_total),
	    xfmt("the device waits for launches: %.1f %% of gap time is "
	    "host_wait or kernel_wait, threshold %g %%", v,
	    r->thr[R_SMALLGAPS]), nd_xstrndup(ev.p, ev.len),
	    nd_xstrndup(sg.p, sg.len));
	nd_buf_free(&ev);
	nd_buf_free(&sg);
}

static void
f_memory(nd_report *r)
{
	struct fb e;
	nd_jw *w = fb_new(&e);
	struct mkinds m;
	int ord[MK_N];
	double v = r->val[R_MEMORY];
	nd_buf ev = ND_BUF_INIT, sg = ND_BUF_INIT;

	mem_kinds(r, &m);
	mk_order(&m, ord);
	nd_jw_kint(w, "memory_ns", r->dbd.memory_ns);
	nd_jw_key(w, "kinds");
	nd_jw_arr(w);
	nd_buf_addf(&ev, "copies and memsets not overlapped by compute or "
	    "communication: %.1f %% %s; memory ops by exclusive time:", v,
	    wof(r));
	for (int i = 0; i < MK_N && m.ns[ord[i]] > 0; i++) {
		int k = ord[i];

		nd_jw_obj(w);
		nd_jw_kcstr(w, "kind", mk_name[k]);
		nd_jw_kint(w, "self_ns", m.ns[k]);
		nd_jw_kcstr(w, "top_op", m.top[k]);
		nd_jw_obj_end(w);
		nd_buf_addf(&ev, "%s %s %s (top: %s, %s)", i ? "," : "",
		    mk_name[k], fdur(r, 0, m.ns[k]), fname(r, 0, m.top[k]),
		    fdur(r, 1, m.top_ns[k]));
	}
	nd_jw_arr_end(w);
	if (m.total == 0)
		nd_buf_adds(&ev, " none");
	mk_advice_of(&m, &sg);
	byname_free(&m.ops);
	if (sg.len == 0)
		nd_buf_adds(&sg, "keep tensors on the device, avoid host round "
		    "trips and needless copies");
	fire(r, R_MEMORY, &e, r->dbd.memory_ns, v, xfmt("memory ops are "
	    "exposed: %.1f %% %s, threshold %g %%", v, wof(r),
	    r->thr[R_MEMORY]), nd_xstrndup(ev.p, ev.len),
	    nd_xstrndup(sg.p, sg.len));
	nd_buf_free(&ev);
	nd_buf_free(&sg);
}

/* The steady steps' time beyond the median, and the slowest step. */
static int64_t
beyond_median(const nd_report *r, size_t *slow)
{
	size_t n = r->steady.count;
	int64_t ns = 0;

	*slow = 0;
	for (size_t i = 0; i < n; i++) {
		if (r->cl_dur[i] > r->steady.median)
			ns += r->cl_dur[i] - r->steady.median;
		if (r->cl_dur[i] > r->cl_dur[*slow])
			*slow = i;
	}
	return ns;
}

static char *
variance_evidence(nd_report *r, const nd_step_class *h, size_t slow)
{
	char tail[96];

	snprintf(tail, sizeof tail, "; slowest steady step %lld, %s",
	    (long long)r->cl_num[slow], fdur(r, 4, r->cl_dur[slow]));
	if (h != NULL && h->has_period)
		return xfmt("two classes: %llu heavy step%s every %lld steps "
		    "(phase %lld), heavy median %s vs light %s%s",
		    (unsigned long long)h->st.count, nd_rep_s(h->st.count),
		    (long long)h->period,
		    (long long)h->phase, fdur(r, 0, h->st.median),
		    fdur(r, 1, r->cl.c[0].st.median), tail);
	if (h != NULL)
		return xfmt("two classes: %llu heavy steps, heavy median %s "
		    "vs light %s%s", (unsigned long long)h->st.count,
		    fdur(r, 0, h->st.median),
		    fdur(r, 1, r->cl.c[0].st.median), tail);
	return xfmt("steady steps: mean %s, stddev %s, min %s, max %s%s",
	    fdur(r, 0, r->steady.mean), fdur(r, 1, r->steady.stddev),
	    fdur(r, 2, r->steady.min), fdur(r, 3, r->steady.max), tail);
}

static void
f_variance(nd_report *r)
{
	struct fb e;
	nd_jw *w = fb_new(&e);
	const nd_step_class *h = r->cl.nclass == 2 ? &r->cl.c[1] : NULL;
	double v = r->val[R_VARIANCE];
	size_t slow;
	int64_t ns = beyond_median(r, &slow);

	nd_jw_kint(w, "mean_ns", r->steady.mean);
	nd_jw_kint(w, "stddev_ns", r->steady.stddev);
	nd_jw_kint(w, "median_ns", r->steady.median);
	nd_jw_kint(w, "slowest_step", r->cl_num[slow]);
	nd_jw_kint(w, "slowest_ns", r->cl_dur[slow]);
	nd_jw_kint(w, "beyond_median_ns", ns);
	fire(r, R_VARIANCE, &e, ns, nd_rep_pct(ns, r->steady.total),
	    xfmt("step time varies: stddev %.1f %% of the mean, threshold "
	    "%g %%", v, r->thr[R_VARIANCE]), variance_evidence(r, h, slow),
	    xfmt(h != NULL && h->has_period ? "periodic heavy steps are "
	    "usually checkpointing, evaluation or logging: make them "
	    "asynchronous or less frequent" : "look at the slowest steps "
	    "(trace-steps) for data-loading stalls, recompilation or "
	    "garbage collection"));
}

static void
f_straggler(nd_report *r)
{
	struct fb e;
	nd_jw *w = fb_new(&e);
	double v = r->val[R_STRAGGLER];

	nd_jw_kint(w, "rank", r->lag_max_rank);
	nd_jw_kint(w, "step", r->lag_max_step);
	nd_jw_kint(w, "lag_ns", r->lag_max);
	nd_jw_kuint(w, "steps_compared", r->rank_steps);
	nd_jw_kcstr(w, "clock", r->rank_abs ? "absolute" : "relative");
	fire(r, R_STRAGGLER, &e, r->lag_max, v, xfmt("rank %lld is a "
	    "straggler: it is ready %s after the median rank, %.1f %% of the "
	    "median step, threshold %g %%", (long long)r->lag_max_rank,
	    fdur(r, 0, r->lag_max), v, r->thr[R_STRAGGLER]),
	    xfmt("rank %lld, step %lld, lag %s; %zu step%s compared across "
	    "ranks (%s clock); the other ranks wait for it in their "
	    "collectives", (long long)r->lag_max_rank,
	    (long long)r->lag_max_step, fdur(r, 0, r->lag_max),
	    r->rank_steps, nd_rep_s(r->rank_steps),
	    r->rank_abs ? "absolute" : "relative"),
	    xfmt("look at that rank's input pipeline, host and device "
	    "(thermal throttling, noisy neighbours), and at load balance "
	    "across ranks"));
}

static void
f_topop(nd_report *r)
{
	struct fb e;
	nd_jw *w = fb_new(&e);
	const struct trow *op = &r->ops[0];
	double v = r->val[R_TOPOP];
	size_t cl;
	const char *c = op_class(r, op->key, &cl);
	int comm = c != NULL && ((cl == 13 && memcmp(c, "communication",
	    13) == 0) || (cl == 5 && memcmp(c, "stall", 5) == 0));
	int mem = c != NULL && cl == 6 && memcmp(c, "memory", 6) == 0;
	int mk = mem ? mem_kind(op->key, strlen(op->key)) : -1;
	const char *kind = comm ? "a collective" : mk == MK_KERNEL ?
	    "a copy kernel" : mem ? "a copy-engine transfer" : "a compute op";
	int64_t busy = r->dbd_total - r->dbd.idle_ns - r->dbd.host_ns;
	int64_t ns = r->window != RW_NONE && r->dbd_total > 0 ?
	    (int64_t)((double)busy * v / 100.0) : op->self;
	double pct = r->window != RW_NONE && r->dbd_total > 0 ?
	    nd_rep_pct(ns, r->dbd_total) : v;

	nd_jw_kcstr(w, "op", op->key);
	nd_jw_kcstr(w, "kind", comm ? "collective" : mem ? "memory" :
	    "compute");
	nd_jw_kuint(w, "count", op->count);
	nd_jw_kint(w, "self_ns", op->self);
	fire(r, R_TOPOP, &e, ns, pct, xfmt("one op dominates: %s, %s, takes "
	    "%.1f %% of exclusive time, threshold %g %%",
	    fname(r, 0, op->key), kind, v,
	    r->thr[R_TOPOP]), xfmt("%llu calls, %s exclusive in total",
	    (unsigned long long)op->count, fdur(r, 0, op->self)),
	    comm ? xfmt("the work is collective-bound: overlap the "
	    "collective with compute (async collectives, latency-hiding "
	    "scheduler), tune bucket sizes (DDP bucket_cap_mb, FSDP), send "
	    "less (bf16 gradients, sharding) and check the interconnect") :
	    mem ? xfmt("%s", mk_advice[mk]) : xfmt("optimise that op first: "
	    "check its shapes, precision and fusion (trace-topk --by "
	    "name,scope)"));
}

/* Largest share first, rule id on ties; then a straggler before the
 * exposed communication it causes. */
static int
fnd_cmp(const void *a, const void *b, void *ctx)
{
	const struct finding *x = a, *y = b;

	(void)ctx;
	if (x->explains_pct != y->explains_pct)
		return x->explains_pct > y->explains_pct ? -1 : 1;
	return strcmp(nd_rep_rules[x->rule].id, nd_rep_rules[y->rule].id);
}

static void
rank_findings(nd_report *r)
{
	size_t s = r->nfnd, c = r->nfnd;

	nd_sort(r->fnd, r->nfnd, sizeof *r->fnd, fnd_cmp, NULL);
	for (size_t i = 0; i < r->nfnd; i++) {
		if (r->fnd[i].rule == R_STRAGGLER)
			s = i;
		if (r->fnd[i].rule == R_COMM)
			c = i;
	}
	if (s < r->nfnd && c < s) {
		struct finding t = r->fnd[s];

		memmove(&r->fnd[c + 1], &r->fnd[c], (s - c) * sizeof t);
		r->fnd[c] = t;
	}
}

void
nd_rep_model_findings(nd_report *r)
{
	int idle_gate;

	rule_values(r);
	idle_gate = r->notrun[R_IDLE] == NULL && nd_rep_pct(r->dbd.idle_ns +
	    r->dbd.host_ns, r->dbd_total) >= r->thr[R_IDLE];
	if (fires(r, R_COMM))
		f_comm(r);
	if (fires(r, R_IDLE))
		f_idle(r, R_IDLE, r->dbd.idle_ns);
	if (fires(r, R_HOST))
		f_idle(r, R_HOST, r->dbd.host_ns);
	if (idle_gate && fires(r, R_SMALLGAPS))
		f_launch(r);
	if (fires(r, R_MEMORY))
		f_memory(r);
	if (fires(r, R_VARIANCE))
		f_variance(r);
	if (fires(r, R_STRAGGLER))
		f_straggler(r);
	if (fires(r, R_TOPOP))
		f_topop(r);
	rank_findings(r);
}
