#include "nd_gapsout.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void
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

void
nd_gapsout_gap(nd_gapsout *g, const nd_gap *gap)
{
	if (g->sum != NULL)
		nd_gapsum_add(g->sum, gap);
	commit(g);
}

void
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

void
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

	if (v < 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: \"%s\" must be an integer >= 0",
		    nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), key);
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
		nd_die(ND_EXIT_ERROR, "%s:%llu: \"level\" must be \"device\" "
		    "or \"timeline\"", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st));
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
		nd_die(ND_EXIT_ERROR, "%s:%llu: partial results made with %s "
		    "cannot be merged with those made with %s: make every "
		    "partial with the same options", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), mine.p,
		    first.p);
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
		    p[n - 1] != '}')
			nd_die(ND_EXIT_ERROR, "%s:%llu: gap_pass record not "
			    "as --partial writes it (" PASS_HEAD "RECORD})",
			    nd_stream_file(st),
			    (unsigned long long)nd_stream_lineno(st));
		nd_partial_record("line", p + hl, n - hl - 1,
		    nd_partial_passed, "a record trace-gaps passes through");
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

void
nd_gapsout_merge(nd_gapsout *g, nd_out *o, int partial, int summary,
    char **paths, int n)
{
	static const char *const body[] = { "gap", "gap_pass", "gap_sum" };

	/* the totals are read (and checked) even when not written */
	start(g, o, partial, summary, 1);
	/* every input holds a partial (nd_partial_read) */
	nd_partial_read(paths, n, HEADER, body, sizeof body / sizeof *body,
	    merge_record, g);
}
