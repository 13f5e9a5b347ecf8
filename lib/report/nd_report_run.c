/*
 * nd_report: trace-report as an engine of nd_run: the records to
 * nd_report_event, a second reading when nd_report_end asks, partials
 * through nd_report_merge, and the report (or a partial) as the answer.
 */
#include "nd_report_int.h"

#include <stdlib.h>

struct nd_report_run {
	nd_report *r;
	int format;
	nd_report_merge *m;
	const char **types;
	size_t ntypes;
	uint32_t sources;
};

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

static void
run_load(void *self, nd_stream *st, const nd_event *ev)
{
	nd_report_run *x = self;

	if (x->m == NULL)
		x->m = nd_report_merge_new(x->r);
	nd_report_merge_load(x->m, st, ev);
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
		nd_report_partial(x->r, o, x->sources);
		break;
	case ND_REPORT_JSON:
		nd_report_json(x->r, nd_out_buf(o));
		break;
	case ND_REPORT_HTML:
		nd_report_write_doc(x->r, 1, o);
		break;
	default:
		nd_report_write_doc(x->r, 0, o);
	}
}

nd_report_run *
nd_report_run_new(nd_report *r, int format)
{
	nd_report_run *x = nd_xcalloc(1, sizeof *x);

	x->r = r;
	x->format = format;
	x->types = nd_report_merge_types(&x->ntypes);
	return x;
}

nd_engine
nd_report_run_engine(nd_report_run *x)
{
	nd_engine e = {
		.name = "report",
		.self = x,
		.partial_type = ND_REPORT_PARTIAL_HEADER,
		.partial_body = x->types,
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
	nd_report_merge_free(x->m);
	free(x->types);
	free(x);
}
