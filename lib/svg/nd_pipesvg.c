/*
 * nd_pipesvg: the SVG schedule chart of a pipeline step (nd_pipe.h): one
 * row a rank (by stage), time across the step window, a rect a block
 * coloured by phase with its micro-batch number when it fits, the rank's
 * idle stretches hatched, its P2P spans as a strip under the row, a time
 * axis, a title with the schedule and the bubble, the slow stage marked.
 * The helpers are nd_svg's, the report's too, so the charts look alike.
 *
 * Size: at most PS_MAXROWS rows, and a row draws at most its share of
 * PS_BUDGET (between PS_MINDRAW and PS_MAXDRAW) of its blocks, of its idle
 * stretches and of its P2P spans, the earliest: a few MB whatever the
 * input (about 8 MB at most); what is left out is said in a note under
 * the chart.
 */
#include "nd_pipe.h"
#include "nd_cli.h"
#include "nd_svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PS_L 150.0		/* left: the row labels */
#define PS_CW 800.0		/* the time axis */
#define PS_R 30.0
#define PS_TOP 58.0		/* title, subtitle and legend */
#define PS_ROW 26.0		/* a row: block, P2P strip, space */
#define PS_BH 16.0		/* a block's height */
#define PS_MAXROWS 128
#define PS_MAXDRAW 4096
#define PS_MINDRAW 128	/* PS_MAXROWS * PS_MINDRAW <= PS_BUDGET */
#define PS_BUDGET 16384

/* Okabe-Ito: told apart with any colour vision, and in grey by their
 * lightness (dark blue, light orange, pale yellow); the text on each. */
static const char *const ps_fill[ND_PIPE_NPHASE] = { "#0072b2",
	"#e69f00", "#f0e442" };
static const char *const ps_ink[ND_PIPE_NPHASE] = { "#fff", "#000",
	"#000" };
static const char *const ps_what[ND_PIPE_NPHASE] = { "forward",
	"backward", "weight gradient" };
#define PS_P2P "#444"
#define PS_SLOW "#d55e00"

struct psc {
	nd_buf *b;
	const nd_pipe_step *st;
	double scale;		/* px a ns */
	size_t cap;		/* drawn a row: blocks, idle, P2P each */
	char pre[40];		/* the ids of the hatching */
};

double
nd_pipe_pct(double f)
{
	return isfinite(f) ? 100 * (round(f * 1e4) / 1e4) : 0;
}

static double
ps_x(const struct psc *c, int64_t t)
{
	return PS_L + (double)t * c->scale;
}

static void
ps_title(struct psc *c)
{
	const nd_pipe_step *st = c->st;
	nd_buf *b = c->b;

	nd_buf_addf(b, "<text class=\"title\" x=\"4\" y=\"16\" font-size=\"13\""
	    " font-weight=\"bold\">Step %lld: schedule %s, p = %d, m = %lld, "
	    "bubble %.1f %%", (long long)st->num,
	    nd_pipe_schedule_name(st->schedule), st->stages,
	    (long long)st->microbatches, nd_pipe_pct(st->bubble_frac));
	if (st->has_ideal)
		nd_buf_addf(b, " (ideal %.1f %%)", nd_pipe_pct(st->ideal_bubble_frac));
	nd_buf_adds(b, "</text>\n<text class=\"subtitle\" x=\"4\" y=\"32\" "
	    "font-size=\"11\">window ");
	nd_fmt_dur_spaced(b, st->window);
	nd_buf_addf(b, ", clock %s", nd_pipe_clock_name(st->clock));
	if (st->slow >= 0 && (size_t)st->slow < st->nranks) {
		const nd_pipe_rank *s = &st->ranks[st->slow];

		nd_buf_addf(b, "; slow stage %d (rank %lld): F+B+W ", s->stage,
		    (long long)s->rank);
		nd_fmt_dur_spaced(b, s->fb_per_mb);
		nd_buf_adds(b, " a micro-batch");
	}
	nd_buf_adds(b, "</text>\n");
}

static void
ps_legend(struct psc *c)
{
	nd_buf *b = c->b;
	double x = 4, y = 50;

	nd_buf_adds(b, "<g class=\"legend\">");
	for (int p = 0; p < ND_PIPE_NPHASE; p++) {
		nd_buf_addf(b, "<rect class=\"key %s\" x=\"%.0f\" y=\"%.0f\" "
		    "width=\"10\" height=\"10\" fill=\"%s\" stroke=\"#555\" "
		    "stroke-width=\"0.5\"/><text x=\"%.0f\" y=\"%.0f\" "
		    "font-size=\"11\">%s %s</text>", nd_pipe_phase_name(p), x,
		    y - 9, ps_fill[p], x + 13, y, nd_pipe_phase_name(p),
		    ps_what[p]);
		x += 13 + nd_svg_text_w(2 + strlen(ps_what[p]), 11) + 8;
	}
	nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\""
	    " fill=\"url(#nd-%s-idle)\" stroke=\"#555\" stroke-width=\"0.5\"/>"
	    "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">idle (bubble)</text>",
	    x, y - 9, c->pre, x + 13, y);
	x += 13 + nd_svg_text_w(13, 11) + 8;
	nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"3\" "
	    "fill=\"" PS_P2P "\"/><text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">"
	    "P2P send/recv</text>", x, y - 5, x + 13, y);
	x += 13 + nd_svg_text_w(13, 11) + 8;
	nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\""
	    " fill=\"none\" stroke=\"" PS_SLOW "\" stroke-width=\"1.5\" "
	    "stroke-dasharray=\"3 2\"/><text x=\"%.0f\" y=\"%.0f\" "
	    "font-size=\"11\">slow stage</text></g>\n", x, y - 9, x + 13, y);
}

/* A rank's row label: "stage S · rank R", the slow one bold. */
static void
ps_label(struct psc *c, const nd_pipe_rank *rk, double y, int slow)
{
	nd_buf_addf(c->b, "<text class=\"rank\" x=\"4\" y=\"%.0f\" "
	    "font-size=\"11\"%s>stage %d \xc2\xb7 rank %lld%s</text>\n",
	    y + PS_BH / 2 + 4, slow ? " font-weight=\"bold\" fill=\""
	    PS_SLOW "\"" : "", rk->stage, (long long)rk->rank,
	    slow ? " (slow)" : "");
}

/* The hover text of a block: phase, micro-batch, start, duration, name. */
static void
ps_block_title(nd_buf *b, const nd_pipe_block *k)
{
	nd_buf_addf(b, "<title>%s%lld: at ", nd_pipe_phase_name(k->phase),
	    (long long)k->mb);
	nd_fmt_dur_spaced(b, k->at);
	nd_buf_adds(b, ", ");
	nd_fmt_dur_spaced(b, k->dur);
	nd_buf_adds(b, ", ");
	nd_svg_text(b, k->name != NULL ? k->name : "?");
	nd_buf_adds(b, "</title>");
}

/* The blocks of a row and their micro-batch numbers where they fit; the
 * number left out. */
static size_t
ps_blocks(struct psc *c, const nd_pipe_rank *rk, double y)
{
	nd_buf *b = c->b;
	size_t n = rk->nblocks < c->cap ? rk->nblocks : c->cap;

	for (size_t i = 0; i < n; i++) {
		const nd_pipe_block *k = &rk->blocks[i];
		int p = k->phase >= 0 && k->phase < ND_PIPE_NPHASE ?
		    k->phase : ND_PIPE_F;
		double x = ps_x(c, k->at), w = (double)k->dur * c->scale;
		char num[32];

		if (w < 0.5)
			w = 0.5;
		nd_buf_addf(b, "<g><rect class=\"blk %s\" x=\"%.2f\" y=\"%.0f\" "
		    "width=\"%.2f\" height=\"%.0f\" fill=\"%s\" "
		    "stroke=\"#fff\" stroke-width=\"0.5\">",
		    nd_pipe_phase_name(p), x, y, w, PS_BH, ps_fill[p]);
		ps_block_title(b, k);
		nd_buf_adds(b, "</rect>");
		snprintf(num, sizeof num, "%lld", (long long)k->mb);
		if (nd_svg_text_w(strlen(num), 10) + 2 <= w)
			nd_buf_addf(b, "<text class=\"mb\" x=\"%.2f\" "
			    "y=\"%.0f\" font-size=\"10\" text-anchor=\"middle\" "
			    "fill=\"%s\" pointer-events=\"none\">%s</text>",
			    x + w / 2, y + PS_BH / 2 + 4, ps_ink[p], num);
		nd_buf_adds(b, "</g>\n");
	}
	return rk->nblocks - n;
}

/* Idle stretches hatched (under the blocks), P2P spans as a strip under
 * the row; the number of either left out. */
static size_t
ps_idle_p2p(struct psc *c, const nd_pipe_rank *rk, double y)
{
	nd_buf *b = c->b;
	size_t ni = rk->nidle < c->cap ? rk->nidle : c->cap;
	size_t np = rk->np2p < c->cap ? rk->np2p : c->cap;

	for (size_t i = 0; i < ni; i++) {
		const nd_iv *v = &rk->idle[i];

		nd_buf_addf(b, "<rect class=\"idle\" x=\"%.2f\" y=\"%.0f\" "
		    "width=\"%.2f\" height=\"%.0f\" fill=\"url(#nd-%s-idle)\">"
		    "<title>idle ", ps_x(c, v->lo), y,
		    (double)(v->hi - v->lo) * c->scale, PS_BH, c->pre);
		nd_fmt_dur_spaced(b, v->hi - v->lo);
		nd_buf_adds(b, "</title></rect>\n");
	}
	for (size_t i = 0; i < np; i++) {
		const nd_iv *v = &rk->p2p[i];
		double w = (double)(v->hi - v->lo) * c->scale;

		nd_buf_addf(b, "<rect class=\"p2p\" x=\"%.2f\" y=\"%.0f\" "
		    "width=\"%.2f\" height=\"3\" fill=\"" PS_P2P "\"><title>"
		    "P2P ", ps_x(c, v->lo), y + PS_BH + 2, w < 0.5 ? 0.5 : w);
		nd_fmt_dur_spaced(b, v->hi - v->lo);
		nd_buf_adds(b, "</title></rect>\n");
	}
	return (rk->nidle - ni) + (rk->np2p - np);
}

static void
ps_axis(struct psc *c, double y)
{
	nd_buf *b = c->b;
	int64_t max = c->st->window > 0 ? c->st->window : 1;
	int64_t tick = nd_svg_tick(max, 8);

	nd_buf_addf(b, "<g class=\"axis\"><line x1=\"%.0f\" y1=\"%.0f\" "
	    "x2=\"%.0f\" y2=\"%.0f\" stroke=\"#555\"/>\n", PS_L, y,
	    PS_L + PS_CW, y);
	for (int64_t t = 0; t <= max; t += tick) {
		double x = ps_x(c, t);

		nd_buf_addf(b, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" "
		    "y2=\"%.0f\" stroke=\"#555\"/><text x=\"%.2f\" y=\"%.0f\" "
		    "font-size=\"10\" text-anchor=\"middle\">", x, y, x, y + 4,
		    x, y + 15);
		nd_svg_axis_dur(b, t, tick, max);
		nd_buf_adds(b, "</text>\n");
		if (t > max - tick)	/* no overflow past max */
			break;
	}
	nd_buf_addf(b, "<text x=\"4\" y=\"%.0f\" font-size=\"10\">time in "
	    "the step window</text></g>\n", y + 15);
}

/* What was left out: ranks, and of the rows drawn, their latest blocks,
 * idle stretches and P2P spans. */
static void
ps_note(struct psc *c, double y, size_t ranks, const size_t lost[2])
{
	nd_buf *b = c->b;

	if (ranks == 0 && lost[0] == 0 && lost[1] == 0)
		return;
	nd_buf_addf(b, "<text class=\"note\" x=\"4\" y=\"%.0f\" "
	    "font-size=\"10\">Not drawn:", y);
	if (ranks > 0)
		nd_buf_addf(b, " %zu rank%s after the first %d;", ranks,
		    ranks == 1 ? "" : "s", PS_MAXROWS);
	if (lost[0] > 0)
		nd_buf_addf(b, " %zu block%s;", lost[0], lost[0] == 1 ? "" : "s");
	if (lost[1] > 0)
		nd_buf_addf(b, " %zu idle stretch%s or P2P span%s;", lost[1],
		    lost[1] == 1 ? "" : "es", lost[1] == 1 ? "" : "s");
	b->len--;	/* the last ';' */
	nd_buf_addf(b, " (a row draws its first %zu of each).</text>\n",
	    c->cap);
}

void
nd_pipe_svg_step(nd_buf *b, const nd_pipe_step *st)
{
	struct psc c;
	size_t rows = st->nranks < PS_MAXROWS ? st->nranks : PS_MAXROWS;
	size_t lost[2] = { 0, 0 };	/* blocks; idle stretches and spans */
	double h = PS_TOP + PS_ROW * (double)rows + 30, w = PS_L + PS_CW + PS_R;

	memset(&c, 0, sizeof c);
	c.b = b;
	c.st = st;
	c.scale = PS_CW / (double)(st->window > 0 ? st->window : 1);
	c.cap = rows > 0 ? PS_BUDGET / rows : PS_MAXDRAW;
	c.cap = c.cap < PS_MINDRAW ? PS_MINDRAW : c.cap > PS_MAXDRAW ?
	    PS_MAXDRAW : c.cap;
	snprintf(c.pre, sizeof c.pre, "pipe%lld", (long long)st->num);
	nd_buf_addf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "class=\"pipeline\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
	    "height=\"%.0f\" role=\"img\" aria-label=\"pipeline schedule of "
	    "step %lld\"><rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#fff\"/>\n", w, h + 16, w, h + 16, (long long)st->num);
	nd_svg_defs(b, c.pre);
	ps_title(&c);
	ps_legend(&c);
	for (size_t i = 0; i < rows; i++) {
		const nd_pipe_rank *rk = &st->ranks[i];
		double y = PS_TOP + PS_ROW * (double)i + 4;
		int slow = st->slow >= 0 && (size_t)st->slow == i;

		nd_buf_addf(b, "<g class=\"row\" data-stage=\"%d\" "
		    "data-rank=\"%lld\">\n", rk->stage, (long long)rk->rank);
		ps_label(&c, rk, y, slow);
		lost[1] += ps_idle_p2p(&c, rk, y);
		lost[0] += ps_blocks(&c, rk, y);
		if (slow)
			nd_buf_addf(b, "<rect class=\"slow\" x=\"%.0f\" "
			    "y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
			    "fill=\"none\" stroke=\"" PS_SLOW "\" "
			    "stroke-width=\"1.5\" stroke-dasharray=\"3 2\"/>\n",
			    PS_L - 2, y - 2, PS_CW + 4, PS_BH + 8);
		nd_buf_adds(b, "</g>\n");
	}
	ps_axis(&c, PS_TOP + PS_ROW * (double)rows + 4);
	ps_note(&c, h + 10, st->nranks - rows, lost);
	nd_buf_adds(b, "</svg>\n");
}
