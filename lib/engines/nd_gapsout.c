#include "nd_gapsout.h"

#include "nd_gapsum.h"
#include "nd_out.h"
#include "nd_partial.h"
#include "nd_json.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The options that decide which gaps a run finds and what they say. */
typedef struct nd_gaps_coll {
	int level;		/* ND_GAP_TIMELINE or ND_GAP_DEVICE */
	int64_t min_ns, kernel_wait_ns;
	int host_context, within_steps;
	char *step_regex;	/* NULL: none (owned) */
} nd_gaps_coll;

typedef struct nd_gapsout {
	nd_out *o;
	int partial, summary;
	nd_partial_w pw;
	nd_gapsum *sum;		/* NULL when neither summary nor partial */
	nd_gaps_coll coll;
	unsigned nheaders;	/* merge: partial headers read */
} nd_gapsout;

#define HEADER "gaps_partial"
/* A record passed through, in a partial: this, the record, '}'. */
#define PASS_HEAD "{\"type\":\"gap_pass\",\"line\":"

static void
commit(void *ctx)
{
	nd_gapsout *g = ctx;

	if (g->partial)
		nd_partial_commit(&g->pw);
	else
		nd_out_commit(g->o);
}

static void
write_header(nd_gapsout *g)
{
	const nd_gaps_coll *c = &g->coll;
	nd_jw w;

	nd_partial_begin(&g->pw, g->o, &w, HEADER);
	nd_jw_kcstr(&w, "level", c->level == ND_GAP_DEVICE ? "device" :
	    "timeline");
	nd_jw_kint(&w, "min_ns", c->min_ns);
	nd_jw_kint(&w, "kernel_wait_ns", c->kernel_wait_ns);
	nd_jw_kbool(&w, "host_context", c->host_context);
	nd_jw_kbool(&w, "within_steps", c->within_steps);
	nd_jw_key(&w, "step_regex");
	if (c->step_regex != NULL)
		nd_jw_cstr(&w, c->step_regex);
	else
		nd_jw_null(&w);
	nd_jw_obj_end(&w);
	nd_buf_addc(nd_out_buf(g->o), '\n');
	nd_partial_commit(&g->pw);
}

static void
start(nd_gapsout *g, nd_out *o, int partial, int summary, int sum)
{
	memset(g, 0, sizeof *g);
	g->o = o;
	g->partial = partial;
	g->summary = summary;
	if (sum)
		g->sum = nd_gapsum_new();
}

static void
nd_gapsout_begin(nd_gapsout *g, nd_out *o, int partial, int summary,
    const nd_gaps_opts *go, const char *step_regex)
{
	start(g, o, partial, summary, partial || summary);
	g->coll.level = go->level;
	g->coll.min_ns = go->min_ns;
	g->coll.kernel_wait_ns = go->kernel_wait_ns;
	g->coll.host_context = go->host_context > 0;
	g->coll.within_steps = go->within_steps != 0;
	if (step_regex != NULL)
		g->coll.step_regex = nd_xstrdup(step_regex);
	if (partial)
		write_header(g);
}

static void
nd_gapsout_gap(nd_gapsout *g, const nd_gap *gap)
{
	if (g->sum != NULL)
		nd_gapsum_add(g->sum, gap);
	commit(g);
}

static void
nd_gapsout_pass(nd_gapsout *g, const char *line, size_t len)
{
	nd_buf *b = nd_out_buf(g->o);

	if (g->partial)
		nd_buf_adds(b, PASS_HEAD);
	nd_buf_add(b, line, len);
	if (g->partial)
		nd_buf_addc(b, '}');
	nd_buf_addc(b, '\n');
	commit(g);
}

static void
nd_gapsout_end(nd_gapsout *g)
{
	if (g->partial) {
		nd_gapsum_write_partial(g->sum, nd_out_buf(g->o), commit, g);
		nd_partial_end(&g->pw);
	} else if (g->summary) {
		nd_gapsum_write(g->sum, nd_out_buf(g->o));
		nd_out_commit(g->o);
	}
	nd_gapsum_free(g->sum);
	free(g->coll.step_regex);
	memset(g, 0, sizeof *g);
}

/* ---- merge ---- */

static int
need_bool(nd_stream *st, const nd_event *ev, const char *key)
{
	const nd_jval *v = nd_event_get(ev, key);

	if (v != NULL && v->type == ND_JFALSE)
		return 0;
	(void)nd_stream_need(st, ev, key, ND_JTRUE);
	return 1;
}

static int64_t
need_dur(nd_stream *st, const nd_event *ev, const char *key)
{
	int64_t v = nd_stream_need_int(st, ev, key);

	if (v < 0) {
		nd_stream_fail(st, "\"%s\" must be an integer >= 0", key);
		return 0;
	}
	return v;
}

static void
read_coll(nd_stream *st, const nd_event *ev, nd_gaps_coll *c)
{
	const nd_jval *v = nd_stream_need(st, ev, "level", ND_JSTR);

	if (nd_jstr_eq(v, "device"))
		c->level = ND_GAP_DEVICE;
	else if (nd_jstr_eq(v, "timeline"))
		c->level = ND_GAP_TIMELINE;
	else
		nd_stream_fail(st, "\"level\" must be \"device\" or "
		    "\"timeline\"");
	c->min_ns = need_dur(st, ev, "min_ns");
	c->kernel_wait_ns = need_dur(st, ev, "kernel_wait_ns");
	c->host_context = need_bool(st, ev, "host_context");
	c->within_steps = need_bool(st, ev, "within_steps");
	v = nd_event_get(ev, "step_regex");
	c->step_regex = v != NULL && v->type == ND_JNULL ? NULL :
	    nd_jstr_dup(nd_stream_need(st, ev, "step_regex", ND_JSTR));
}

enum { C_LEVEL, C_MIN, C_KW, C_CTX, C_STEPS, C_RE, C_N };

/* Option `which` of c as it is given on the command line. */
static void
coll_text(const nd_gaps_coll *c, int which, nd_buf *b)
{
	char t[64];

	switch (which) {
	case C_LEVEL:
		nd_buf_adds(b, c->level == ND_GAP_DEVICE ? "--level device" :
		    "--level timeline");
		break;
	case C_MIN:
	case C_KW:
		snprintf(t, sizeof t, "%s %lldns", which == C_MIN ? "--min" :
		    "--kernel-wait", (long long)(which == C_MIN ? c->min_ns :
		    c->kernel_wait_ns));
		nd_buf_adds(b, t);
		break;
	case C_CTX:
		nd_buf_adds(b, c->host_context ? "--host-context" :
		    "no --host-context");
		break;
	case C_STEPS:
		nd_buf_adds(b, c->within_steps ? "--within-steps" :
		    "no --within-steps");
		break;
	default:
		if (c->step_regex == NULL)
			nd_buf_adds(b, "no --step-regex");
		else {
			nd_buf_adds(b, "--step-regex '");
			nd_buf_adds(b, c->step_regex);
			nd_buf_addc(b, '\'');
		}
	}
}

/* The first option in which a and b differ, or -1. */
static int
coll_diff(const nd_gaps_coll *a, const nd_gaps_coll *b)
{
	if (a->level != b->level)
		return C_LEVEL;
	if (a->min_ns != b->min_ns)
		return C_MIN;
	if (a->kernel_wait_ns != b->kernel_wait_ns)
		return C_KW;
	if (a->host_context != b->host_context)
		return C_CTX;
	if (a->within_steps != b->within_steps)
		return C_STEPS;
	if ((a->step_regex == NULL) != (b->step_regex == NULL) ||
	    (a->step_regex != NULL && strcmp(a->step_regex, b->step_regex)))
		return C_RE;
	return -1;
}

static void
merge_header(nd_gapsout *g, nd_stream *st, const nd_event *ev)
{
	nd_gaps_coll c;
	int d;

	read_coll(st, ev, &c);
	if (nd_stream_failed(st)) {
		free(c.step_regex);
		return;
	}
	if (g->nheaders++ == 0) {
		g->coll = c;
		if (g->partial)
			write_header(g);
		return;
	}
	if ((d = coll_diff(&c, &g->coll)) >= 0) {
		nd_buf mine = ND_BUF_INIT, first = ND_BUF_INIT;

		coll_text(&c, d, &mine);
		coll_text(&g->coll, d, &first);
		nd_buf_addc(&mine, '\0');
		nd_buf_addc(&first, '\0');
		nd_stream_fail(st, "partial results made with %s cannot be "
		    "merged with those made with %s: make every partial with "
		    "the same options", mine.p, first.p);
		nd_buf_free(&mine);
		nd_buf_free(&first);
	}
	free(c.step_regex);
}

/* A line of a partial, as a run writes it: a gap record (read as one),
 * or a record passed through, which is one only once checked. */
static void
merge_line(nd_gapsout *g, nd_stream *st, const nd_event *ev)
{
	size_t hl = sizeof PASS_HEAD - 1;
	const char *p = ev->line;
	size_t n = ev->len;

	if (nd_str_eq(ev->type_name, "gap_pass")) {
		if (n < hl + 1 || memcmp(p, PASS_HEAD, hl) != 0 ||
		    p[n - 1] != '}') {
			nd_stream_fail(st, "gap_pass record not as --partial "
			    "writes it (" PASS_HEAD "RECORD})");
			return;
		}
		nd_partial_record("line", p + hl, n - hl - 1,
		    nd_partial_passed, "a record trace-gaps passes through");
		if (nd_stream_failed(st))
			return;
		if (!g->partial) {
			p += hl;
			n -= hl + 1;
		}
	}
	nd_buf_add(nd_out_buf(g->o), p, n);
	nd_buf_addc(nd_out_buf(g->o), '\n');
	commit(g);
}

/* One record of a partial whose framing checked out (nd_partial). */
static void
merge_record(void *ctx, nd_stream *st, const nd_event *ev)
{
	nd_gapsout *g = ctx;

	if (nd_str_eq(ev->type_name, HEADER))
		merge_header(g, st, ev);
	else if (nd_str_eq(ev->type_name, "gap_sum"))
		nd_gapsum_read(g->sum, st, ev);
	else
		merge_line(g, st, ev);
}

/* ---- a run: the gaps of every source, in input order ---- */

static void
put_op_name(nd_jw *w, const char *key, const nd_gap_op *op)
{
	nd_jw_kstr(w, key, op->name, op->name_n);
}

/* The source a gap record names (copied: the stream's is gone when the
 * last source is flushed). */
struct gsrc {
	char *path;
	int has_rank;
	int64_t rank;
};

static void
write_gap(nd_buf *b, const nd_gaps *g, const nd_gap *gap,
    const struct gsrc *si, int level)
{
	nd_gap_where wh;
	nd_jw w;
	int64_t rank;

	nd_gaps_where(g, gap, &wh);
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "gap");
	if (si != NULL && si->path != NULL)
		nd_jw_kcstr(&w, "source", si->path);
	nd_jw_kint(&w, "ts_ns", gap->ts);
	nd_jw_kint(&w, "dur_ns", gap->dur);
	if (wh.has_pid)
		nd_jw_kint(&w, "pid", wh.pid);
	if (wh.has_tid)
		nd_jw_kint(&w, "tid", wh.tid);
	if (wh.process != NULL)
		nd_jw_kcstr(&w, "process", wh.process);
	if (wh.thread != NULL)
		nd_jw_kcstr(&w, "thread", wh.thread);
	if (wh.device != NULL)
		nd_jw_kcstr(&w, "device", wh.device);
	if (si != NULL && si->has_rank)
		nd_jw_kint(&w, "rank", si->rank);
	else if (nd_gaps_rank(g, &rank))
		nd_jw_kint(&w, "rank", rank);
	if (gap->has_wstep)
		nd_jw_kint(&w, "step", gap->wstep);
	else if (gap->payload.has_step)
		nd_jw_kint(&w, "step", gap->payload.step);
	if (gap->payload.scope != NULL)
		nd_jw_kstr(&w, "scope", gap->payload.scope,
		    gap->payload.scope_n);
	nd_jw_kcstr(&w, "level", level == ND_GAP_DEVICE ? "device" : "timeline");
	put_op_name(&w, "before", &gap->before);
	put_op_name(&w, "marker", &gap->marker);
	put_op_name(&w, "payload", &gap->payload);
	nd_jw_kint(&w, "payload_index", gap->payload_index);
	nd_jw_kcstr(&w, "cause", gap->cause);
	if (nd_gaps_fallback(g))
		nd_jw_kbool(&w, "host_timelines", 1);
	if (gap->nctx > 0) {
		nd_jw_key(&w, "host_context");
		nd_jw_arr(&w);
		for (int i = 0; i < gap->nctx; i++) {
			const nd_gap_ctx *c = &gap->ctx[i];

			nd_jw_obj(&w);
			nd_jw_kstr(&w, "name", c->name != NULL ? c->name : "",
			    c->name_n);
			if (c->thread != NULL)
				nd_jw_kstr(&w, "thread", c->thread, c->thread_n);
			nd_jw_kint(&w, "ts_ns", c->ts);
			nd_jw_kint(&w, "dur_ns", c->dur);
			nd_jw_kint(&w, "overlap_ns", c->overlap);
			nd_jw_obj_end(&w);
		}
		nd_jw_arr_end(&w);
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

struct sink {
	nd_gaps *g;
	nd_gapsout *out;
	const struct gsrc *si;
	int level;
};

static void
one_gap(void *ctx, const nd_gap *gap)
{
	struct sink *k = ctx;

	write_gap(nd_out_buf(k->out->o), k->g, gap, k->si, k->level);
	nd_gapsout_gap(k->out, gap);
}

/*
 * The order policy (nd_drive.h).  Gaps are handed out when their source
 * ends, after the records it passes through, which are held until then.
 * A span out of order on its timeline (without --unordered) makes this
 * source and every later one wait: the first reading writes the sources
 * before it and ignores the rest; the second writes the rest, with every
 * timeline buffered (nd_gaps' unordered option).  So a reordered stream
 * gives the bytes of the ordered one, and an ordered one is read once.
 */
struct grun {
	nd_gapsout *out;
	nd_gaps_opts go;
	nd_gaps *g;
	int64_t cur;		/* source of the records being read, or -1 */
	struct gsrc si;
	nd_buf held;		/* its records passed through, lines */
	int64_t late;		/* first source with a span out of order */
	int again;		/* the second reading */
};

static void
flush_source(struct grun *r)
{
	struct sink k = { r->g, r->out, &r->si, r->go.level };
	size_t i = 0;

	while (i < r->held.len) {
		char *nl = memchr(r->held.p + i, '\n', r->held.len - i);

		nd_gapsout_pass(r->out, r->held.p + i, (size_t)(nl - r->held.p) - i);
		i = (size_t)(nl - r->held.p) + 1;
	}
	nd_buf_reset(&r->held);
	nd_gaps_end_source(r->g, one_gap, &k);
	nd_gaps_reset(r->g);
	free(r->si.path);
	r->si.path = NULL;
	r->cur = -1;
}

static void
run_record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	struct grun *r = ctx;
	nd_span_role role;

	/* written by the first reading, or waiting for the second */
	if (r->again ? (int64_t)ev->source < r->late :
	    r->late >= 0 && (int64_t)ev->source >= r->late)
		return;
	/* a source begins (run_end_source wrote the one before) */
	if (r->cur < 0) {
		r->cur = ev->source;
		r->si.path = si != NULL && si->path != NULL ?
		    nd_xstrdup(si->path) : NULL;
		r->si.has_rank = si != NULL && si->has_rank;
		r->si.rank = si != NULL ? si->rank : 0;
	}
	switch (ev->type) {
	case ND_EV_SPAN:
		if (!(ev->has & ND_HAS_TS) || !(ev->has & ND_HAS_DUR))
			return;
		nd_span_role_of(ev, r->go.re, &role);
		if (nd_gaps_add(r->g, ev, &role) != 0) {
			/* this source waits for the second reading */
			r->late = ev->source;
			nd_buf_reset(&r->held);
			nd_gaps_reset(r->g);
			free(r->si.path);
			r->si.path = NULL;
			r->cur = -1;
		}
		break;
	case ND_EV_INSTANT:
	case ND_EV_COUNTER:
	case ND_EV_FLOW:
	case ND_EV_END:
		break;
	default:
		nd_buf_add(&r->held, ev->line, ev->len);
		nd_buf_addc(&r->held, '\n');
	}
}

/* A source ended (nd_run's end_source): its gaps go out. */
static void
run_end_source(struct grun *r)
{
	if (r->cur >= 0)
		flush_source(r);
}

static int
run_end(struct grun *r)
{
	/* nd_run ended the last source before (run_end_source) */
	if (r->again || r->late < 0)
		return ND_ENGINE_OK;
	return ND_ENGINE_AGAIN;
}

/* The second reading: every timeline buffered. */
static void
run_restart(struct grun *r)
{
	nd_gaps_free(r->g);
	r->go.unordered = 1;
	r->g = nd_gaps_new(&r->go);
	r->again = 1;
}

/* ---- the engine ---- */

struct nd_gapsrun {
	nd_gapsout out;
	struct grun r;
	nd_gaps_opts go;
	char *step_regex;
	int partial, summary, merge;
};

static const char *const partial_body[] = { "gap", "gap_pass", "gap_sum" };

static void
eng_start(void *self, nd_out *o)
{
	nd_gapsrun *e = self;

	if (e->merge)
		/* the totals are read (and checked) even when not written */
		start(&e->out, o, e->partial, e->summary, 1);
	else
		nd_gapsout_begin(&e->out, o, e->partial, e->summary, &e->go,
		    e->step_regex);
}

static void
eng_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	run_record(&((nd_gapsrun *)self)->r, ev, si);
}

static void
eng_end_source(void *self)
{
	run_end_source(&((nd_gapsrun *)self)->r);
}

static int
eng_end_input(void *self)
{
	return run_end(&((nd_gapsrun *)self)->r);
}

static void
eng_restart(void *self)
{
	run_restart(&((nd_gapsrun *)self)->r);
}

static void
eng_load(void *self, nd_stream *st, const nd_event *ev)
{
	merge_record(&((nd_gapsrun *)self)->out, st, ev);
}

static void
eng_write(void *self, nd_out *o)
{
	(void)o;
	nd_gapsout_end(&((nd_gapsrun *)self)->out);
}

nd_gapsrun *
nd_gapsrun_new(const nd_gaps_opts *go, const char *step_regex, int partial,
    int summary, int merge)
{
	nd_gapsrun *e = nd_xcalloc(1, sizeof *e);

	e->go = *go;
	e->step_regex = step_regex != NULL ? nd_xstrdup(step_regex) : NULL;
	e->partial = partial;
	e->summary = summary;
	e->merge = merge;
	e->r.out = &e->out;
	e->r.go = *go;
	e->r.cur = e->r.late = -1;
	if (!merge)
		e->r.g = nd_gaps_new(&e->r.go);
	return e;
}

nd_engine
nd_gapsrun_engine(nd_gapsrun *e)
{
	nd_engine eng = {
		.name = "gaps",
		.self = e,
		.partial_type = HEADER,
		.partial_body = partial_body,
		.npartial_body = sizeof partial_body / sizeof *partial_body,
		.record = eng_record,
		.end_source = eng_end_source,
		.end_input = eng_end_input,
		.restart = eng_restart,
		.load = eng_load,
		.write = eng_write,
		.start = eng_start,
	};

	return eng;
}

void
nd_gapsrun_free(nd_gapsrun *e)
{
	if (e == NULL)
		return;
	nd_gaps_free(e->r.g);
	nd_buf_free(&e->r.held);
	free(e->r.si.path);
	free(e->step_regex);
	/* a run that ended on an error never came to nd_gapsout_end */
	nd_gapsum_free(e->out.sum);
	free(e->out.coll.step_regex);
	free(e);
}
