/*
 * nd_stepspart: see nd_stepspart.h and trace-steps(1).
 */
#include "nd_stepspart.h"

#include "nd_json.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

#define LINE "steps_out"
#define SOURCE "steps_source"

void
nd_stepspart_begin(nd_partial_w *pw, nd_out *o, const char *collect)
{
	nd_jw w;

	nd_partial_begin(pw, o, &w, ND_STEPSPART);
	nd_jw_kcstr(&w, "collect", collect);
	nd_jw_obj_end(&w);
	nd_buf_addc(nd_out_buf(o), '\n');
	nd_partial_commit(pw);
}

void
nd_stepspart_line(nd_partial_w *pw, const char *line, size_t len)
{
	nd_buf *b = nd_out_buf(pw->o);
	nd_jw w;

	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", LINE);
	nd_jw_kstr(&w, "line", line, len);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_partial_commit(pw);
}

void
nd_stepspart_end(nd_partial_w *pw, const nd_stepsum *s, uint32_t n,
    nd_stepsum_path_fn *path, void *ctx)
{
	nd_buf *b = nd_out_buf(pw->o);
	nd_jw w;

	for (uint32_t i = 0; i < n; i++) {
		const char *p = path(ctx, i);

		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", SOURCE);
		if (p != NULL)
			nd_jw_kcstr(&w, "path", p);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		nd_partial_commit(pw);
	}
	nd_stepsum_write_partial(s, pw);
	nd_partial_end(pw);
}

/* ---- merge ---- */

/* "collect" in a message: quoted, or "no collection options" (three %s) */
#define SHOWN(c) (c)[0] ? "'" : "", (c)[0] ? (c) : "no collection options", \
	(c)[0] ? "'" : ""

static void
merge_header(nd_stepspart_m *m, nd_stream *st, const nd_event *ev)
{
	/* held by m: reachable for the leak checker if we die */
	char *c = m->hdr = nd_jstr_dup(nd_stream_need(st, ev, "collect",
	    ND_JSTR));

	if (nd_stream_failed(st))
		free(c);
	else if (m->nheaders++ == 0) {
		m->collect = c;
		if (m->pw != NULL)
			nd_stepspart_begin(m->pw, m->o, c);
	} else {
		if (strcmp(c, m->collect) != 0)
			nd_stream_fail(st, "partial results made with %s%s%s "
			    "cannot be merged with results made with %s%s%s: "
			    "give every --partial job the same --per-device, "
			    "--step-regex and --peak-tflops", SHOWN(c),
			    SHOWN(m->collect));
		free(c);
	}
	m->hdr = NULL;
	m->base = m->npath;
	m->src_max = -1;
}

int
nd_stepspart_passes(const nd_event *ev)
{
	return nd_partial_passed(ev) && !nd_str_eq(ev->type_name,
	    "step_summary") && !nd_str_eq(ev->type_name, "step_ranks") &&
	    !nd_str_eq(ev->type_name, "straggler");
}

/* A line as a run writes it, once it is one (nd_partial_record). */
static void
merge_line(nd_stepspart_m *m, nd_stream *st, const nd_event *ev)
{
	nd_buf *b = nd_out_buf(m->o);
	const nd_jval *v = nd_stream_need(st, ev, "line", ND_JSTR);
	size_t at = b->len;

	nd_json_unescape(v, b);
	nd_partial_record("line", b->p + at, b->len - at,
	    nd_stepspart_passes, "a record trace-steps writes for a source");
	if (nd_stream_failed(st)) {
		b->len = at;	/* not written */
		return;
	}
	if (m->pw != NULL) {	/* the record as it was */
		b->len = at;
		nd_buf_add(b, ev->line, ev->len);
		nd_buf_addc(b, '\n');
		nd_partial_commit(m->pw);
		return;
	}
	nd_buf_addc(b, '\n');
	nd_out_commit(m->o);
}

static void
merge_source(nd_stepspart_m *m, const nd_event *ev)
{
	const nd_jval *v = nd_event_get(ev, "path");

	if (m->npath == UINT32_MAX)
		nd_die(ND_EXIT_ERROR, "--merge: more than %u sources",
		    UINT32_MAX - 1);
	nd_grow(&m->path, &m->cappath, (size_t)m->npath + 1, sizeof *m->path);
	m->path[m->npath++] = v != NULL && v->type == ND_JSTR ?
	    nd_jstr_dup(v) : NULL;
}

/* One record of a partial whose framing checked out (nd_partial). */
static void
merge_record(void *ctx, nd_stream *st, const nd_event *ev)
{
	nd_stepspart_m *m = ctx;

	if (nd_str_eq(ev->type_name, ND_STEPSPART))
		merge_header(m, st, ev);
	else if (nd_str_eq(ev->type_name, LINE))
		merge_line(m, st, ev);
	else if (nd_str_eq(ev->type_name, SOURCE))
		merge_source(m, ev);
	else if (m->sum != NULL) {
		int64_t dev = -1;

		(void)nd_stepsum_read_partial(m->sum, st, ev, m->base, 0,
		    &m->src_max, &dev);
		/* trace-steps keeps no devices: none is one of the partial's */
		if (dev >= 0)
			nd_stream_fail(st, "%.*s record of device %lld: a "
			    ND_STEPSPART " has no devices",
			    (int)ev->type_name.n, ev->type_name.p,
			    (long long)dev);
		if (m->src_max >= (int64_t)(m->npath - m->base))
			nd_stream_fail(st, "%.*s record of source %lld: its "
			    "partial has %u " SOURCE " records before it",
			    (int)ev->type_name.n, ev->type_name.p,
			    (long long)m->src_max, m->npath - m->base);
	}
}

const char *const nd_stepspart_body[ND_STEPSPART_NBODY] = {
	LINE, SOURCE, ND_STEPSUM_REC, ND_STEPSUM_DEV
};

void
nd_stepspart_merge_begin(nd_stepspart_m *m, nd_out *o, nd_partial_w *pw,
    nd_stepsum *sum)
{
	memset(m, 0, sizeof *m);
	m->o = o;
	m->pw = pw;
	m->sum = sum;
}

void
nd_stepspart_load(void *m, nd_stream *st, const nd_event *ev)
{
	merge_record(m, st, ev);
}

const char *
nd_stepspart_path(void *ctx, uint32_t source)
{
	const nd_stepspart_m *m = ctx;

	return source < m->npath ? m->path[source] : NULL;
}

void
nd_stepspart_free(nd_stepspart_m *m)
{
	for (uint32_t i = 0; i < m->npath; i++)
		free(m->path[i]);
	free(m->path);
	free(m->collect);
}
