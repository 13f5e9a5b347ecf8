/*
 * nd_report: the Pipeline section.  The report feeds nd_pipe (the engine
 * of trace-pipeline(1), default rules) every record; when the input is a
 * pipeline job -- a step where at least two stages have both F and B
 * blocks -- the section shows the typical step of those (nd_pipe_typical):
 * a line with the schedule and the bubble, a table of its ranks, the
 * records of trace-pipeline in the JSON, its schedule chart in the HTML.
 * Other inputs get nothing, in every format.
 */
#include "nd_report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a step is one of a pipeline schedule: two stages or more with
 * F and B blocks. */
static int
is_pipeline(const nd_pipe_step *st)
{
	int n = 0;

	for (size_t i = 0; i < st->nranks; i++) {
		const nd_pipe_rank *rk = &st->ranks[i];
		int has[ND_PIPE_NPHASE] = { 0 };

		for (size_t k = 0; k < rk->nblocks; k++)
			if (rk->blocks[k].phase >= 0 &&
			    rk->blocks[k].phase < ND_PIPE_NPHASE)
				has[rk->blocks[k].phase] = 1;
		n += has[ND_PIPE_F] && has[ND_PIPE_B];
	}
	return n >= 2;
}

void
nd_rep_pipe_model(nd_report *r)
{
	const nd_pipe_step *st, *t;
	nd_pipe_step *v;
	size_t n, k = 0;

	r->pipe_st = NULL;
	r->pipe_nsteps = 0;
	if (r->pipe == NULL)
		return;
	nd_pipe_sources(r->pipe, (uint32_t)r->nsrc);
	n = nd_pipe_finish(r->pipe, &st);
	v = nd_xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++)
		if (is_pipeline(&st[i]))
			v[k++] = st[i];
	/* the copies share the engine's ranks: map the choice back */
	if ((t = nd_pipe_typical(v, k)) != NULL)
		for (size_t i = 0; i < n; i++)
			if (st[i].num == t->num)
				r->pipe_st = &st[i];
	r->pipe_nsteps = k;
	free(v);
}

static void
pipe_line(nd_report *r, nd_buf *b, const nd_pipe_step *st)
{
	nd_buf_addf(b, "Step %lld, the typical of %zu pipeline step%s (median "
	    "window): schedule **%s**, p = %d stages, m = %lld micro-batches, "
	    "window ", (long long)st->num, r->pipe_nsteps,
	    r->pipe_nsteps == 1 ? "" : "s", nd_pipe_schedule_name(st->schedule),
	    st->stages, (long long)st->microbatches);
	nd_fmt_dur_spaced(b, st->window);
	nd_buf_addf(b, " (clock %s). Bubble **%.1f %%** measured",
	    nd_pipe_clock_name(st->clock), nd_pipe_pct(st->bubble_frac));
	if (st->has_ideal)
		nd_buf_addf(b, " vs %.1f %% ideal for this schedule, p and m",
		    nd_pipe_pct(st->ideal_bubble_frac));
	else
		nd_buf_adds(b, " (no ideal for this schedule)");
	if (st->slow >= 0 && (size_t)st->slow < st->nranks) {
		const nd_pipe_rank *s = &st->ranks[st->slow];

		nd_buf_addf(b, "; slow stage **%d** (rank %lld), F+B+W ",
		    s->stage, (long long)s->rank);
		nd_fmt_dur_spaced(b, s->fb_per_mb);
		nd_buf_adds(b, " a micro-batch");
	}
	nd_buf_adds(b, ".");
}

void
nd_rep_pipe_doc(nd_report *r, nd_doc *d)
{
	const nd_pipe_step *st = r->pipe_st;

	if (st == NULL)
		return;
	nd_buf_adds(nd_doc_heading(d, 2), "10 Pipeline");
	pipe_line(r, nd_doc_para(d), st);
	nd_doc_table(d, 1, "stage", "rank", "busy", "bubble", "bubble %",
	    "warm-up", "cool-down", "P2P wait", "micro-batches",
	    "F+B+W per micro-batch", "explained by the slow stage",
	    "explained %", (char *)NULL);
	for (size_t i = 0; i < st->nranks; i++) {
		const nd_pipe_rank *k = &st->ranks[i];

		nd_doc_row(d);
		nd_buf_addf(nd_doc_cell(d), "%d", k->stage);
		nd_buf_addf(nd_doc_cell(d), "%lld", (long long)k->rank);
		nd_fmt_dur_spaced(nd_doc_cell(d), k->busy);
		nd_fmt_dur_spaced(nd_doc_cell(d), k->bubble);
		nd_buf_addf(nd_doc_cell(d), "%.1f %%",
		    nd_pipe_pct(k->bubble_frac));
		nd_fmt_dur_spaced(nd_doc_cell(d), k->warmup);
		nd_fmt_dur_spaced(nd_doc_cell(d), k->cooldown);
		nd_fmt_dur_spaced(nd_doc_cell(d), k->p2p_wait);
		nd_buf_addf(nd_doc_cell(d), "%lld", (long long)k->mb);
		nd_fmt_dur_spaced(nd_doc_cell(d), k->fb_per_mb);
		nd_fmt_dur_spaced(nd_doc_cell(d), k->explained);
		nd_buf_addf(nd_doc_cell(d), "%.1f %%",
		    nd_pipe_pct(k->explained_frac));
	}
	nd_buf_adds(nd_doc_para(d), "Bubble: the rank's idle time in the step "
	    "window (first block start to last block end over the ranks); "
	    "warm-up and cool-down: the idle before its first and after its "
	    "last block; explained by the slow stage: what the slow stage's "
	    "longer F+B+W per micro-batch accounts for. trace-pipeline(1) "
	    "gives every step and block.");
}

/* "pipeline": {"step": the pipe_step record, "ranks": [the pipe_rank
 * records]} of the step shown, as trace-pipeline writes them. */
void
nd_rep_pipe_json(nd_report *r, nd_jw *w)
{
	nd_buf recs = ND_BUF_INIT;
	static const char *const type[2] = { "{\"type\":\"pipe_step\"",
	    "{\"type\":\"pipe_rank\"" };

	if (r->pipe_st == NULL)
		return;
	nd_pipe_write_step(&recs, r->pipe_st);
	nd_jw_key(w, "pipeline");
	nd_jw_obj(w);
	for (int k = 0; k < 2; k++) {
		size_t tl = strlen(type[k]);

		nd_jw_key(w, k == 0 ? "step" : "ranks");
		if (k == 1)
			nd_jw_arr(w);
		for (size_t i = 0; i < recs.len;) {
			const char *s = recs.p + i;
			const char *nl = memchr(s, '\n', recs.len - i);
			size_t n = nl ? (size_t)(nl - s) : recs.len - i;

			i += n + 1;
			if (n > tl && memcmp(s, type[k], tl) == 0)
				nd_jw_raw(w, s, n);
		}
		if (k == 1)
			nd_jw_arr_end(w);
	}
	nd_jw_obj_end(w);
	nd_buf_free(&recs);
}

void
nd_rep_pipe_svg(nd_report *r, nd_buf *b)
{
	if (r->pipe_st == NULL)
		return;
	nd_buf_adds(b, "<figure>");
	nd_pipe_svg_step(b, r->pipe_st);
	nd_buf_adds(b, "<figcaption>The schedule of the step: a row a rank, "
	    "its blocks by phase with their micro-batch numbers, its idle time "
	    "hatched, its P2P send/recv under it; hover a block for its name "
	    "and time</figcaption></figure>\n");
}
