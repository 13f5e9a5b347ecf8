/*
 * nd_piperun: a trace-pipeline run as an engine (nd_piperun.h).
 */
#include "nd_piperun.h"

#include "nd_cli.h"
#include "nd_drive.h"
#include "nd_json.h"
#include "nd_partial.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

#define LINE "pipe_line"
#define MAXBODY 16

struct nd_piperun {
	nd_piperun_opts a;
	nd_err err;		/* no answer (eng_error) */
	nd_pipe *p;
	nd_out *o;
	nd_partial_w pw;
	nd_buf meta;		/* the input's meta lines, each with '\n' */
	char *rules;		/* --merge: of the first header */
	unsigned nheaders;
	const char *body[MAXBODY];	/* the record types of a partial */
	size_t nbody;
};

/* A line of a partial being written (an nd_pipe_line_fn). */
static void
part_line(void *ctx, nd_buf *line)
{
	struct nd_piperun *r = ctx;
	nd_buf *b = nd_out_buf(r->o);

	nd_buf_add(b, line->p, line->len);
	nd_buf_addc(b, '\n');
	nd_partial_commit(&r->pw);
}

static void
write_partial(struct nd_piperun *r, const char *rules)
{
	nd_buf line = ND_BUF_INIT;
	nd_jw w;
	size_t i = 0;

	nd_partial_begin(&r->pw, r->o, &w, ND_PIPE_PARTIAL);
	nd_jw_kcstr(&w, "rules", rules);
	nd_jw_obj_end(&w);
	nd_buf_addc(nd_out_buf(r->o), '\n');
	nd_partial_commit(&r->pw);
	while (i < r->meta.len) {
		const char *s = r->meta.p + i, *e = memchr(s, '\n',
		    r->meta.len - i);

		nd_buf_reset(&line);
		nd_jw_init(&w, &line);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", LINE);
		nd_jw_kstr(&w, "line", s, (size_t)(e - s));
		nd_jw_obj_end(&w);
		part_line(r, &line);
		i += (size_t)(e - s) + 1;
	}
	nd_buf_free(&line);
	nd_pipe_partial_write(r->p, part_line, r);
	nd_partial_end(&r->pw);
}

/* The answer: the records (meta lines first), the table or the chart. */
static void
write_answer(struct nd_piperun *r)
{
	const nd_piperun_opts *a = &r->a;
	const nd_pipe_step *st, *one = NULL;
	size_t n = nd_pipe_finish(r->p, &st);

	if (n == 0) {
		nd_warn("no forward/backward blocks found: no span name "
		    "matches the rules; see --forward and --backward");
		return;
	}
	for (size_t i = 0; i < n && a->has_step; i++)
		if (st[i].num == a->step)
			one = &st[i];
	if (a->svg) {
		nd_pipe_svg_step(nd_out_buf(r->o), one != NULL ? one :
		    nd_pipe_typical(st, n));
		nd_out_commit(r->o);
		return;
	}
	if (!a->table) {
		nd_buf_add(nd_out_buf(r->o), r->meta.p, r->meta.len);
		nd_out_commit(r->o);
	}
	for (size_t i = 0; i < n; i++) {
		if (one != NULL && &st[i] != one)
			continue;
		if (a->table) {
			if (one == NULL && i > 0)
				nd_buf_addc(nd_out_buf(r->o), '\n');
			nd_pipe_table_step(nd_out_buf(r->o), &st[i]);
		} else
			nd_pipe_write_step(nd_out_buf(r->o), &st[i]);
		nd_out_commit(r->o);
	}
}

/* The records the answer passes through (an nd_partial_ok_fn). */
static int
is_meta(const nd_event *ev)
{
	return ev->type == ND_EV_META;
}

static void
eng_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	struct nd_piperun *r = self;

	(void)si;
	nd_pipe_add(r->p, ev);
	if (is_meta(ev)) {
		nd_buf_add(&r->meta, ev->line, ev->len);
		nd_buf_addc(&r->meta, '\n');
	}
}

static int
eng_end_input(void *self)
{
	struct nd_piperun *r = self;
	nd_stream *st = nd_drive_stream();

	nd_pipe_sources(r->p, st != NULL ? nd_stream_nsources(st) : 0);
	return ND_ENGINE_OK;
}

/* One record of a partial whose framing checked out. */
static void
eng_load(void *self, nd_stream *st, const nd_event *ev)
{
	struct nd_piperun *r = self;

	if (nd_str_eq(ev->type_name, ND_PIPE_PARTIAL)) {
		char *c = nd_jstr_dup(nd_stream_need(st, ev, "rules",
		    ND_JSTR));

		if (nd_stream_failed(st)) {
			free(c);
			return;
		}
		if (r->nheaders++ == 0)
			r->rules = c;
		else {
			if (strcmp(c, r->rules) != 0)
				nd_stream_fail(st, "partial results made with "
				    "other rules than the first: give every "
				    "--partial job the same --forward, "
				    "--backward, --wgrad and --p2p");
			free(c);
			if (nd_stream_failed(st))
				return;
		}
	} else if (nd_str_eq(ev->type_name, LINE)) {
		size_t at = r->meta.len;

		nd_json_unescape(nd_stream_need(st, ev, "line", ND_JSTR),
		    &r->meta);
		nd_partial_record("line", r->meta.p + at, r->meta.len - at,
		    is_meta, "a meta record");
		if (nd_stream_failed(st))
			r->meta.len = at;
		else
			nd_buf_addc(&r->meta, '\n');
		return;
	}
	{
		nd_err e;

		nd_err_clear(&e);
		if (nd_pipe_partial_add(r->p, ev, nd_stream_file(st),
		    nd_stream_lineno(st), &e) != 0)
			nd_stream_fail_with(st, &e);
	}
}

/* The step --step asks for exists (else the run's error, run_error). */
static void
eng_finish(void *self, const nd_run_res *res)
{
	struct nd_piperun *r = self;
	const nd_pipe_step *st;
	size_t n;

	(void)res;
	if (r->a.partial || !r->a.has_step ||
	    (n = nd_pipe_finish(r->p, &st)) == 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (st[i].num == r->a.step)
			return;
	nd_err_set(&r->err, NULL, ND_ERR_NONE, ND_ERR_NONE, "--step %lld: "
	    "no such step with forward/backward blocks (steps %lld to %lld)",
	    (long long)r->a.step, (long long)st[0].num,
	    (long long)st[n - 1].num);
}

static const nd_err *
eng_error(void *self)
{
	struct nd_piperun *r = self;

	return r->err.code != 0 ? &r->err : NULL;
}

static void
eng_write(void *self, nd_out *o)
{
	struct nd_piperun *r = self;

	r->o = o;
	if (r->a.partial)
		write_partial(r, r->a.merge ? r->rules : nd_pipe_rules(r->p));
	else
		write_answer(r);
}

nd_piperun *
nd_piperun_new(const nd_piperun_opts *o)
{
	struct nd_piperun *r = nd_xcalloc(1, sizeof *r);
	char err[512];

	r->a = *o;
	if ((r->p = nd_pipe_new(&o->po, err, sizeof err)) == NULL) {
		free(r);
		nd_die(ND_EXIT_ERROR, "%s", err);
	}
	r->body[r->nbody++] = LINE;
	for (size_t i = 0; i < nd_pipe_partial_ntypes && r->nbody < MAXBODY;
	    i++)
		r->body[r->nbody++] = nd_pipe_partial_types[i];
	return r;
}

nd_engine
nd_piperun_engine(nd_piperun *r)
{
	nd_engine e = {
		.name = "pipeline",
		.self = r,
		.partial_type = ND_PIPE_PARTIAL,
		.partial_body = r->body,
		.npartial_body = r->nbody,
		.record = eng_record,
		.end_input = eng_end_input,
		.load = eng_load,
		.finish = eng_finish,
		.write = eng_write,
		.error = eng_error,
	};

	return e;
}

void
nd_piperun_free(nd_piperun *r)
{
	if (r == NULL)
		return;
	nd_pipe_free(r->p);
	nd_buf_free(&r->meta);
	free(r->rules);
	free(r);
}
