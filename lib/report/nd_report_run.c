/*
 * nd_report: trace-report as an engine of nd_run: the records to
 * nd_report_event, a second reading when nd_report_end asks, and the
 * report (or a partial result) as the answer.  A partial result is a
 * header with the collection options, then each part's records in the
 * order of nd_rep_parts (struct rpart); a merge hands each record to the
 * part that owns its type.
 */
#include "nd_report_int.h"

#include "nd_partial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RP_HEADER ND_REPORT_PARTIAL_HEADER
/* The body's format (header key "report"): 2 since the parts write their
 * engines' records. */
#define RP_FORMAT 2

struct nd_report_run {
	nd_report *r;
	int format;
	struct rmerge m;
	const char **types;	/* every body type, and its part and index */
	uint32_t *part, *index;
	size_t ntypes;
	uint32_t sources;	/* of the reading (nd_run_res) */
};

/* --- the partial result --- */

/* The collection options, as text ("" when none): partials merge only
 * when theirs are the same. */
static void
collect_desc(const nd_report_opts *o, nd_buf *b)
{
	if (o->step_regex != NULL) {
		nd_buf_adds(b, "--step-regex '");
		nd_buf_adds(b, o->step_regex);
		nd_buf_adds(b, "'");
	}
	if (o->device != NULL) {
		nd_buf_adds(b, b->len ? " --device '" : "--device '");
		nd_buf_adds(b, o->device);
		nd_buf_adds(b, "'");
	}
	if (o->peak_tflops > 0) {
		nd_buf_adds(b, b->len ? " --peak-tflops " : "--peak-tflops ");
		nd_json_put_double(b, o->peak_tflops);
	}
	if (o->peak_gbps > 0) {
		nd_buf_adds(b, b->len ? " --peak-gbps " : "--peak-gbps ");
		nd_json_put_double(b, o->peak_gbps);
	}
}

static void
write_partial(nd_report *r, nd_out *o, uint32_t sources)
{
	nd_partial_w pw;
	nd_jw w;
	nd_buf d = ND_BUF_INIT;

	/* what nd_report_finish would do first */
	nd_rep_end_source(r);
	r->cur = -1;
	nd_mem_end_source(r->mem);
	r->sources = sources > r->nsrc ? sources : (uint32_t)r->nsrc;
	nd_partial_begin(&pw, o, &w, RP_HEADER);
	nd_jw_kint(&w, "report", RP_FORMAT);
	collect_desc(&r->o, &d);
	nd_jw_kstr(&w, "collect", d.p != NULL ? d.p : "", d.len);
	nd_jw_kuint(&w, "sources", r->sources);
	nd_jw_kbool(&w, "strip", r->o.html);
	nd_buf_free(&d);
	nd_partial_rec_end(&pw, &w);
	for (size_t i = 0; i < nd_rep_nparts; i++)
		if (nd_rep_parts[i]->save != NULL)
			nd_rep_parts[i]->save(r, &pw);
	nd_partial_end(&pw);
}

/* The header of a partial: its format, collection options (those of the
 * first), sources, and the strip when --html asks for it. */
static void
read_header(struct rmerge *m)
{
	nd_report *r = m->r;
	nd_stream *st = m->st;
	char *c = nd_partial_str(st, m->ev, "collect");
	int64_t fmt = nd_partial_int(st, m->ev, "report");
	int64_t n = nd_partial_int(st, m->ev, "sources");
	const nd_jval *v;

	if (nd_stream_failed(st))
		;
	else if (fmt != RP_FORMAT)
		nd_stream_fail(st, RP_HEADER " of another format (report "
		    "%lld, not %d): make the partial results again with this "
		    "%s", (long long)fmt, RP_FORMAT, nd_progname);
	else if (c == NULL || n < 0 || n > INT32_MAX - (int64_t)m->base -
	    (int64_t)m->sources)
		nd_partial_bad(st, m->ev, c == NULL ? "collect" : "sources");
	/* the merge makes room for them: no more than the partial carries,
	 * a pipe_source record each */
	else if ((uint64_t)n > nd_partial_records())
		nd_stream_fail(st, RP_HEADER " of %lld sources, more than "
		    "its partial's %llu records (one a source at least): "
		    "partial results of no run (edited, or written by another "
		    "program)", (long long)n,
		    (unsigned long long)nd_partial_records());
	else if (m->nheaders > 0 && strcmp(c, m->collect) != 0)
		nd_stream_fail(st, "partial results made with %s cannot be "
		    "merged with partial results made with %s",
		    c[0] ? c : "no collection options",
		    m->collect[0] ? m->collect : "no collection options");
	if (nd_stream_failed(st)) {
		free(c);
		return;
	}
	free(m->collect);
	m->collect = c;
	m->nheaders++;
	v = nd_event_get(m->ev, "strip");
	if (r->o.html && (v == NULL || v->type != ND_JTRUE)) {
		nd_stream_fail(st, "partial results made without --html: "
		    "--merge --html needs partials of --partial --html (they "
		    "keep the timeline strip)");
		return;
	}
	m->sdev = NULL;
	m->sring = NULL;
	m->base += m->sources;
	m->sources = (uint32_t)n;
	m->devbase = (uint32_t)r->ndevs;
	m->ndevs = 0;
}

/* Every part's types, own then its engine's, with the part and index
 * they go to. */
static void
list_types(nd_report_run *x)
{
	size_t n = 0;

	for (size_t i = 0; i < nd_rep_nparts; i++)
		n += nd_rep_parts[i]->ntypes + (nd_rep_parts[i]->netypes ?
		    *nd_rep_parts[i]->netypes : 0);
	x->types = nd_xcalloc(n, sizeof *x->types);
	x->part = nd_xcalloc(n, sizeof *x->part);
	x->index = nd_xcalloc(n, sizeof *x->index);
	for (size_t i = 0; i < nd_rep_nparts; i++) {
		const struct rpart *p = nd_rep_parts[i];
		size_t ne = p->netypes ? *p->netypes : 0;

		for (size_t k = 0; k < p->ntypes + ne; k++) {
			x->types[x->ntypes] = k < p->ntypes ? p->types[k] :
			    p->etypes[k - p->ntypes];
			x->part[x->ntypes] = (uint32_t)i;
			x->index[x->ntypes++] = (uint32_t)k;
		}
	}
}

/* --- the engine --- */

static void
run_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	nd_report_run *x = self;

	nd_report_event(x->r, ev, si);
}

static void
run_end_source(void *self)
{
	nd_report_run *x = self;

	nd_report_end_source(x->r);
}

static int
run_end_input(void *self)
{
	nd_report_run *x = self;

	return nd_report_end(x->r) ? ND_ENGINE_AGAIN : ND_ENGINE_OK;
}

static void
run_restart(void *self)
{
	nd_report_run *x = self;

	nd_report_restart(x->r);
}

/* A record of a partial: the header, or one of a part's types (the
 * reader lets no other through). */
static void
run_load(void *self, nd_stream *st, const nd_event *ev)
{
	nd_report_run *x = self;

	x->m.r = x->r;
	x->m.st = st;
	x->m.ev = ev;
	if (nd_str_eq(ev->type_name, RP_HEADER)) {
		read_header(&x->m);
		return;
	}
	for (size_t i = 0; i < x->ntypes; i++)
		if (nd_str_eq(ev->type_name, x->types[i])) {
			nd_rep_parts[x->part[i]]->load(&x->m, x->index[i]);
			return;
		}
}

static void
run_finish(void *self, const nd_run_res *res)
{
	nd_report_run *x = self;

	x->sources = res->sources;
	if (x->format != ND_REPORT_PARTIAL)
		nd_report_finish(x->r);
}

static void
run_write(void *self, nd_out *o)
{
	nd_report_run *x = self;

	switch (x->format) {
	case ND_REPORT_PARTIAL:
		write_partial(x->r, o, x->sources);
		break;
	default:
		nd_report_write(x->r, x->format, o);
	}
}

nd_report_run *
nd_report_run_new(nd_report *r, int format)
{
	nd_report_run *x = nd_xcalloc(1, sizeof *x);

	x->r = r;
	x->format = format;
	list_types(x);
	return x;
}

nd_engine
nd_report_run_engine(nd_report_run *x)
{
	nd_engine e = {
		.name = "report",
		.self = x,
		.partial_type = ND_REPORT_PARTIAL_HEADER,
		.partial_body = (const char *const *)x->types,
		.npartial_body = x->ntypes,
		.record = run_record,
		.end_source = run_end_source,
		.end_input = run_end_input,
		.restart = run_restart,
		.load = run_load,
		.finish = run_finish,
		.write = run_write,
	};

	return e;
}

void
nd_report_run_free(nd_report_run *x)
{
	if (x == NULL)
		return;
	free(x->m.collect);
	free(x->types);
	free(x->part);
	free(x->index);
	free(x);
}
