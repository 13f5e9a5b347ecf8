/*
 * nd_stepsrun: a trace-steps run as a filter engine (nd_stepsrun.h).
 */
#include "nd_stepsrun.h"

#include "nd_cli.h"
#include "nd_drive.h"
#include "nd_partial.h"
#include "nd_stepspart.h"
#include "nd_stepsum.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

/* What a step record says of its source (copied: the stream's is gone
 * when the last source ends). */
struct srcinfo {
	char *path;
	int has_meta, has_rank;
	int64_t origin_ns, rank;
};

struct nd_stepsrun {
	nd_stepsrun_opts o_;
	nd_out *o;
	int partial;		/* lines go to pw (--partial) */
	nd_partial_w pw;
	nd_buf line;		/* a step record being built */
	nd_steps *steps;
	nd_stepsum *sum;	/* the records for -s, -R; NULL: not kept */
	int has_span_rank;
	int64_t span_rank;
	uint64_t spans;		/* spans of the current source */
	int in_source;
	uint32_t cur;
	struct srcinfo *src;	/* by source number */
	size_t nsrc, capsrc;
	uint32_t nsources;	/* of the reading (nd_run_res) */
	nd_stepspart_m m;	/* --merge */
};

static const struct srcinfo *
src_at(const struct nd_stepsrun *r, uint32_t src)
{
	return src < r->nsrc ? &r->src[src] : NULL;
}

static void
src_note(struct nd_stepsrun *r, uint32_t src, const nd_source_info *si)
{
	struct srcinfo *s;

	while (r->nsrc <= src) {
		nd_grow(&r->src, &r->capsrc, r->nsrc + 1, sizeof *r->src);
		memset(&r->src[r->nsrc++], 0, sizeof *r->src);
	}
	s = &r->src[src];
	if (si == NULL || s->path != NULL)
		return;
	s->path = si->path != NULL ? nd_xstrdup(si->path) : NULL;
	s->has_meta = si->has_meta;
	s->has_rank = si->has_rank;
	s->origin_ns = si->origin_ns;
	s->rank = si->rank;
}

static const char *
src_path(void *ctx, uint32_t source)
{
	const struct srcinfo *s = src_at(ctx, source);

	return s != NULL ? s->path : NULL;
}

/* A line of output for the sources (len bytes, no newline). */
static void
emit(struct nd_stepsrun *r, const char *line, size_t len)
{
	nd_buf *b = nd_out_buf(r->o);

	if (r->partial) {
		nd_stepspart_line(&r->pw, line, len);
		return;
	}
	nd_buf_add(b, line, len);
	nd_buf_addc(b, '\n');
	nd_out_commit(r->o);
}

/* A step record for the summary: identity and clock of its source. */
static void
keep_rec(struct nd_stepsrun *r, nd_stepsum_rec *x, uint32_t src)
{
	const struct srcinfo *si = src_at(r, src);

	if (r->sum == NULL)
		return;
	x->source = src;
	x->has_origin = si != NULL && si->has_meta && si->origin_ns != 0;
	x->origin = si != NULL ? si->origin_ns : 0;
	nd_stepsum_add(r->sum, x);
}

/* A step record, or with pw a profile_window record (no steps: not a
 * step, never kept for the summary). */
static void
write_step(struct nd_stepsrun *r, const nd_step *s, const struct srcinfo *si,
    uint32_t src, int pw)
{
	nd_stepsum_rec x;
	nd_stepsum_where wh;

	memset(&wh, 0, sizeof wh);
	wh.path = si != NULL ? si->path : NULL;
	wh.key = nd_steps_device(r->steps, s->dev, &wh.model, &wh.is_dev);
	if (si != NULL && si->has_rank) {
		wh.has_rank = 1;
		wh.rank = si->rank;
	} else if (r->has_span_rank) {
		wh.has_rank = 1;
		wh.rank = r->span_rank;
	}
	nd_buf_reset(&r->line);
	nd_stepsum_step_write(&r->line, s, pw, &wh, &x);
	emit(r, r->line.p, r->line.len);
	if (!pw)
		keep_rec(r, &x, src);
}

static void
flush_source(struct nd_stepsrun *r, uint32_t src)
{
	const nd_step *steps;
	size_t n = nd_steps_end_source(r->steps, &steps);
	const struct srcinfo *si = src_at(r, src);

	for (size_t i = 0; i < n; i++)
		write_step(r, &steps[i], si, src, 0);
	if (n == 0) {
		size_t np = nd_steps_profile(r->steps, &steps);

		for (size_t i = 0; i < np; i++)
			write_step(r, &steps[i], si, src, 1);
	}
	if (n == 0 && r->spans > 0)
		nd_warn("%s: no steps found (no step markers and no step keys "
		    "on device ops; see --step-regex)",
		    si != NULL && si->path != NULL ? si->path : "input");
	r->spans = 0;
	nd_steps_reset(r->steps);
	r->has_span_rank = 0;
}

/* A step record in the input (trace-steps reading its own output): kept
 * for the summary and passed through. */
static void
read_step(struct nd_stepsrun *r, const nd_event *ev)
{
	nd_stepsum_rec x;

	if (nd_stepsum_step_read(ev, &x))
		keep_rec(r, &x, ev->source);
}

/* ---- summary and ranks (nd_stepsum) ---- */

static void
write_summary(struct nd_stepsrun *r, nd_stepsum_path_fn *path, void *ctx)
{
	const nd_stepsum_res *res;

	nd_stepsum_finish(r->sum, r->o_.warmup, r->o_.drop_last);
	res = nd_stepsum_result(r->sum);
	if (r->o_.summary) {
		nd_stepsum_write_summary(nd_out_buf(r->o), r->sum);
		nd_out_commit(r->o);
	}
	if (!r->o_.ranks)
		return;
	for (size_t i = 0; i < res->nrs; i++) {
		nd_stepsum_write_rankstep(nd_out_buf(r->o), r->sum, i, path,
		    ctx);
		nd_out_commit(r->o);
	}
	nd_stepsum_write_straggler(nd_out_buf(r->o), r->sum, path, ctx);
	nd_out_commit(r->o);
}

/* ---- the engine ---- */

/* Every record: spans to the step detection, step records to the summary,
 * the rest passed through. */
static void
eng_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	struct nd_stepsrun *r = self;

	/* a source begins (eng_end_source ended the one before) */
	if (!r->in_source) {
		r->in_source = 1;
		r->cur = ev->source;
		src_note(r, ev->source, si);
	}
	if (ev->type == ND_EV_SPAN) {
		nd_span_role sr;

		if (!(ev->has & ND_HAS_TS) || !(ev->has & ND_HAS_DUR))
			return;
		if (!r->has_span_rank && (ev->has & ND_HAS_RANK)) {
			r->has_span_rank = 1;
			r->span_rank = ev->rank;
		}
		r->spans++;
		nd_span_role_of(ev, r->o_.so.re, &sr);
		nd_steps_add(r->steps, ev, &sr);
		return;
	}
	/* the others are read, or recomputed from the steps */
	if (!nd_stepspart_passes(ev))
		return;
	if (ev->type == ND_EV_META)
		nd_steps_meta(r->steps, ev);
	else if (nd_str_eq(ev->type_name, "step"))
		read_step(r, ev);
	emit(r, ev->line, ev->len);
}

static void
eng_end_source(void *self)
{
	struct nd_stepsrun *r = self;

	if (r->in_source)
		flush_source(r, r->cur);
	r->in_source = 0;
}

/* Every source, those without records too (an empty file): its path for
 * the partial's steps_source records. */
static int
eng_end_input(void *self)
{
	struct nd_stepsrun *r = self;
	nd_stream *st = nd_drive_stream();

	r->nsources = st != NULL ? nd_stream_nsources(st) : 0;
	for (uint32_t i = 0; i < r->nsources; i++)
		src_note(r, i, nd_stream_meta(st, i));
	return ND_ENGINE_OK;
}

static void
eng_load(void *self, nd_stream *st, const nd_event *ev)
{
	nd_stepspart_load(&((struct nd_stepsrun *)self)->m, st, ev);
}

static void
eng_start(void *self, nd_out *o)
{
	struct nd_stepsrun *r = self;

	r->o = o;
	if (r->o_.merge)
		nd_stepspart_merge_begin(&r->m, o, r->partial ? &r->pw : NULL,
		    r->sum);
	else if (r->partial)
		nd_stepspart_begin(&r->pw, o, r->o_.collect);
}

static void
eng_write(void *self, nd_out *o)
{
	struct nd_stepsrun *r = self;
	nd_stepsum_path_fn *path = r->o_.merge ? nd_stepspart_path : src_path;
	void *ctx = r->o_.merge ? (void *)&r->m : (void *)r;
	uint32_t n = r->o_.merge ? r->m.npath : r->nsources;

	(void)o;
	if (r->partial)
		nd_stepspart_end(&r->pw, r->sum, n, path, ctx);
	else if (r->sum != NULL)
		write_summary(r, path, ctx);
}

nd_stepsrun *
nd_stepsrun_new(const nd_stepsrun_opts *o)
{
	struct nd_stepsrun *r = nd_xcalloc(1, sizeof *r);

	r->o_ = *o;
	r->partial = o->partial;
	if (o->summary || o->ranks || o->partial)
		r->sum = nd_stepsum_new();
	if (!o->merge)
		r->steps = nd_steps_new(&r->o_.so);
	return r;
}

nd_engine
nd_stepsrun_engine(nd_stepsrun *r)
{
	nd_engine e = {
		.name = "steps",
		.self = r,
		.partial_type = ND_STEPSPART,
		.partial_body = nd_stepspart_body,
		.npartial_body = ND_STEPSPART_NBODY,
		.record = eng_record,
		.end_source = eng_end_source,
		.end_input = eng_end_input,
		.load = eng_load,
		.write = eng_write,
		.start = eng_start,
	};

	return e;
}

void
nd_stepsrun_free(nd_stepsrun *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nsrc; i++)
		free(r->src[i].path);
	free(r->src);
	if (r->o_.merge)
		nd_stepspart_free(&r->m);
	nd_steps_free(r->steps);
	nd_stepsum_free(r->sum);
	nd_buf_free(&r->line);
	free(r);
}
