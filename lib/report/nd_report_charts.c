/*
 * nd_report: the figures of the HTML page: the step chart, the time
 * breakdown per device, the regions' icicle, and the summary's bar and
 * findings (the timeline strip is nd_report_strip.c, the pipeline chart
 * nd_report_pipe.c).
 */
#include "nd_report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parts of a breakdown, in the order of trace-steps(1): compute
 * (with overlap), exposed communication, memory, device idle while the
 * host works, device idle while nothing runs. */
enum { BK_COMPUTE, BK_COMM, BK_MEMORY, BK_HOST, BK_IDLE, BK_N };

static const char *const bk_name[BK_N] = { "compute",
	"exposed communication", "memory", "device idle while the host works",
	"device idle, nothing runs" };

static void
bk_parts(const nd_breakdown *bd, int64_t part[BK_N])
{
	part[BK_COMPUTE] = bd->compute_ns;
	part[BK_COMM] = bd->communication_ns;
	part[BK_MEMORY] = bd->memory_ns;
	part[BK_HOST] = bd->host_ns;
	part[BK_IDLE] = bd->idle_ns;
}

static void
bk_fill(nd_buf *b, int c, const char *p)
{
	if (c == BK_HOST)
		nd_buf_addf(b, "url(#nd-%s-host)", p);
	else if (c == BK_IDLE)
		nd_buf_addf(b, "url(#nd-%s-idle)", p);
	else
		nd_buf_adds(b, nd_svg_class_color[c == BK_COMPUTE ? ND_SVG_COMPUTE :
		    c == BK_COMM ? ND_SVG_COMM : ND_SVG_MEMORY]);
}

/* One stacked bar of bd (total ns) at (x, y), w by h: each part with its
 * name, share and time on hover, and its share written in it when that
 * fits. */
static void
bk_bar(nd_buf *b, const nd_breakdown *bd, int64_t total, double x, double y,
    double w, double h, const char *p)
{
	int64_t part[BK_N];

	bk_parts(bd, part);
	for (int c = 0; c < BK_N; c++) {
		double pw = w * (double)part[c] / (double)total;
		char pct[32];

		if (pw <= 0)
			continue;
		nd_buf_addf(b, "<g class=\"part\"><title>%s: %.1f %%, ",
		    bk_name[c], nd_rep_pct(part[c], total));
		nd_fmt_dur_spaced(b, part[c]);
		nd_buf_addf(b, "</title><rect x=\"%.2f\" y=\"%.0f\" "
		    "width=\"%.2f\" height=\"%.0f\" fill=\"", x, y, pw, h);
		bk_fill(b, c, p);
		nd_buf_adds(b, "\"/>");
		snprintf(pct, sizeof pct, "%.0f%%", nd_rep_pct(part[c], total));
		if (pw >= nd_svg_text_w(strlen(pct), 10) + 4 && h >= 12)
			nd_buf_addf(b, "<text x=\"%.2f\" y=\"%.0f\" "
			    "font-size=\"10\" text-anchor=\"middle\" %s>%s"
			    "</text>", x + pw / 2, y + h / 2 + 4, c < BK_HOST ?
			    "fill=\"#fff\"" : "fill=\"#000\" stroke=\"#fff\" "
			    "stroke-width=\"3\" paint-order=\"stroke\"", pct);
		nd_buf_adds(b, "</g>\n");
		x += pw;
	}
}

/* The legend of the breakdown parts from (x, y), wrapped at width w; with
 * bd, each part's share and time. Returns the height used. */
static double
bk_legend(nd_buf *b, double x0, double y, double w, const char *p,
    const nd_breakdown *bd, int64_t total)
{
	int64_t part[BK_N];
	double x = x0, y0 = y;
	nd_buf t = ND_BUF_INIT;

	if (bd != NULL)
		bk_parts(bd, part);
	nd_buf_adds(b, "<g class=\"legend\">");
	for (int c = 0; c < BK_N; c++) {
		double tw;

		nd_buf_reset(&t);
		nd_buf_adds(&t, bk_name[c]);
		if (bd != NULL) {
			nd_buf_addf(&t, " %.1f %% (", nd_rep_pct(part[c],
			    total));
			nd_fmt_dur_spaced(&t, part[c]);
			nd_buf_adds(&t, ")");
		}
		tw = 14 + nd_svg_text_w(t.len, 11) + 8;
		if (x > x0 && x + tw > x0 + w) {
			x = x0;
			y += 16;
		}
		nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
		    "height=\"10\" stroke=\"#555\" stroke-width=\"0.5\" fill=\"",
		    x, y - 9);
		bk_fill(b, c, p);
		nd_buf_addf(b, "\"/><text x=\"%.0f\" y=\"%.0f\" "
		    "font-size=\"11\">%.*s</text>\n", x + 13, y, (int)t.len,
		    t.p);
		x += tw;
	}
	nd_buf_adds(b, "</g>\n");
	nd_buf_free(&t);
	return y - y0 + 16;
}

/* The step chart: one bar a steady step (the first 400), a time axis with
 * ticks, bar values where they fit, step numbers below. */
#define SV_W 720.0
#define SV_L 64.0		/* left margin: the time axis */
#define SV_R 10.0
#define SV_T 28.0		/* top: the axis title and the top value */
#define SV_H 160.0

/* Whether bar i's value label (left x, width lw) stands clear of the other
 * bars: every bar under it is no taller than bar i. */
static int
steps_lab_clear(const nd_report *r, size_t m, size_t i, double bw, double x,
    double lw)
{
	size_t a = (size_t)((x - SV_L) / bw < 0 ? 0 : (x - SV_L) / bw);

	for (size_t k = a; k < m && SV_L + (double)k * bw < x + lw; k++)
		if (r->cl_dur[k] > r->cl_dur[i])
			return 0;
	return 1;
}

static void
steps_value_labels(nd_report *r, nd_buf *b, size_t m, double bw,
    int64_t max)
{
	struct nd_svg_label *lab = nd_xcalloc(m, sizeof *lab);
	nd_buf t = ND_BUF_INIT;

	for (size_t i = 0; i < m; i++) {
		nd_buf_reset(&t);
		nd_fmt_dur_spaced(&t, r->cl_dur[i]);
		lab[i].w = nd_svg_text_w(t.len, 10);
		lab[i].x = SV_L + ((double)i + 0.5) * bw - lab[i].w / 2;
		lab[i].pri = (double)r->cl_dur[i];
		if (!steps_lab_clear(r, m, i, bw, lab[i].x, lab[i].w))
			lab[i].pri = -1;
	}
	nd_svg_label_fit(lab, m, SV_L, SV_W - SV_R, m);
	for (size_t i = 0; i < m; i++) {
		if (!lab[i].ok || lab[i].pri < 0)
			continue;
		nd_buf_addf(b, "<text class=\"value\" x=\"%.2f\" y=\"%.1f\" "
		    "font-size=\"10\">", lab[i].x, SV_T + SV_H - SV_H *
		    (double)r->cl_dur[i] / (double)max - 3);
		nd_fmt_dur_spaced(b, r->cl_dur[i]);
		nd_buf_adds(b, "</text>\n");
	}
	free(lab);
	nd_buf_free(&t);
}

/* Step numbers under the bars: every k-th number (k 1, 2 or 5 times a
 * power of ten, as few as fit), the first and the last first. */
static void
steps_num_labels(nd_report *r, nd_buf *b, size_t m, double bw)
{
	struct nd_svg_label *lab = nd_xcalloc(m, sizeof *lab);
	double wmax = 0;
	int64_t k = 1;
	char t[32];

	for (size_t i = 0; i < m; i++) {
		snprintf(t, sizeof t, "%lld", (long long)r->cl_num[i]);
		lab[i].w = nd_svg_text_w(strlen(t), 10);
		lab[i].x = SV_L + ((double)i + 0.5) * bw - lab[i].w / 2;
		if (lab[i].w > wmax)
			wmax = lab[i].w;
	}
	while ((double)k * bw < wmax + 4 && k < INT64_MAX / 10)
		k = (double)k * 2 * bw >= wmax + 4 ? k * 2 :
		    (double)k * 5 * bw >= wmax + 4 ? k * 5 : k * 10;
	for (size_t i = 0; i < m; i++)
		lab[i].pri = i == 0 || i + 1 == m ? 2 :
		    r->cl_num[i] % k == 0 ? 1 : -1;
	nd_svg_label_fit(lab, m, SV_L - 8, SV_W, m);
	for (size_t i = 0; i < m; i++) {
		double cx = SV_L + ((double)i + 0.5) * bw;

		if (!lab[i].ok || lab[i].pri < 0)
			continue;
		nd_buf_addf(b, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" "
		    "y2=\"%.0f\" stroke=\"#555\"/><text class=\"step\" "
		    "x=\"%.2f\" y=\"%.0f\" font-size=\"10\">%lld</text>\n", cx,
		    SV_T + SV_H, cx, SV_T + SV_H + 3, lab[i].x,
		    SV_T + SV_H + 14, (long long)r->cl_num[i]);
	}
	free(lab);
}

static void
steps_axis(nd_buf *b, int64_t max)
{
	int64_t tick = nd_svg_tick(max, 5);

	nd_buf_adds(b, "<g class=\"axis\"><text x=\"0\" y=\"12\" "
	    "font-size=\"11\">step time</text>\n");
	for (int64_t t = 0; t <= max; t += tick) {
		double y = SV_T + SV_H - SV_H * (double)t / (double)max;

		nd_buf_addf(b, "<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" "
		    "y2=\"%.2f\" stroke=\"#ddd\"/><text x=\"%.0f\" y=\"%.2f\" "
		    "font-size=\"10\" text-anchor=\"end\">", SV_L - 4, y,
		    SV_W - SV_R, y, SV_L - 6, y + 3);
		nd_svg_axis_dur(b, t, tick, max);
		nd_buf_adds(b, "</text>\n");
	}
	nd_buf_addf(b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
	    "stroke=\"#555\"/><line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" "
	    "y2=\"%.0f\" stroke=\"#555\"/></g>\n", SV_L, SV_T, SV_L,
	    SV_T + SV_H, SV_L, SV_T + SV_H, SV_W - SV_R, SV_T + SV_H);
}

void
nd_rep_svg_steps(nd_report *r, nd_buf *b)
{
	size_t n = r->steady.count, m = n > 400 ? 400 : n;
	double bw;
	int64_t max = r->steady.max > 0 ? r->steady.max : 1;
	int heavy = r->cl.nclass == 2;
	char *isheavy;

	if (n == 0)
		return;
	bw = (SV_W - SV_L - SV_R) / (double)m;
	isheavy = nd_xcalloc(m, 1);
	if (heavy)
		for (size_t k = 0; k < r->cl.c[1].n; k++)
			if (r->cl.idx[r->cl.c[1].first + k] < m)
				isheavy[r->cl.idx[r->cl.c[1].first + k]] = 1;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"step "
	    "times\"><rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	    SV_W, SV_T + SV_H + 36);
	steps_axis(b, max);
	for (size_t i = 0; i < m; i++) {
		double bh = SV_H * (double)r->cl_dur[i] / (double)max;

		nd_buf_addf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\" fill=\"%s\"><title>step %lld: ",
		    SV_L + (double)i * bw, SV_T + SV_H - bh,
		    bw > 2 ? bw - 1 : bw, bh, isheavy[i] ? "#e15759" :
		    "#4e79a7", (long long)r->cl_num[i]);
		nd_fmt_dur_spaced(b, r->cl_dur[i]);
		nd_buf_addf(b, "%s</title></rect>\n", heavy ? isheavy[i] ?
		    " (heavy)" : " (light)" : "");
	}
	steps_value_labels(r, b, m, bw, max);
	steps_num_labels(r, b, m, bw);
	nd_buf_addf(b, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">step "
	    "(steady steps %lld to %lld%s)</text></svg><figcaption>Step time "
	    "of each steady step (blue: %s, red: heavy)</figcaption>"
	    "</figure>\n", SV_L, SV_T + SV_H + 30, (long long)r->first_step,
	    (long long)r->last_step, m < n ? "; the first 400 shown" : "",
	    heavy ? "light" : "typical");
	free(isheavy);
}

/* A label of at most fit characters: the tail kept (the distinctive part
 * of a device key), the rest elided; the whole in a <title>. */
static void
svg_label(nd_buf *b, const char *s, size_t fit, double x, double y, int fs)
{
	size_t n = strlen(s);

	nd_buf_addf(b, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"%d\">", x, y,
	    fs);
	if (n <= fit) {
		nd_svg_text(b, s);
	} else {
		const char *t = s + n - (fit - 1);

		/* not inside a UTF-8 sequence */
		while (((unsigned char)*t & 0xc0) == 0x80)
			t++;
		nd_buf_adds(b, "<title>");
		nd_svg_text(b, s);
		nd_buf_adds(b, "</title>\xe2\x80\xa6");
		nd_svg_text(b, t);
	}
	nd_buf_adds(b, "</text>\n");
}

static const char *
window_what(const nd_report *r)
{
	return r->window == RW_PROFILE ? "the profile window of each device "
	    "(first to last device op), as no steps were found" :
	    "the steady steps";
}

void
nd_rep_svg_breakdown(nd_report *r, nd_buf *b)
{
	char lab[512];
	double w = 520, x0 = 200, rowh = 22, y;
	size_t rows = 0;

	for (size_t i = 0; i < r->ndevbd; i++)
		rows += r->devbd[i].total > 0;
	if (rows == 0)
		return;
	y = rowh * (double)rows;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"time "
	    "breakdown\"><rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#fff\"/>\n", x0 + w + 20, y + 70);
	nd_svg_defs(b, "bd");
	rows = 0;
	for (size_t i = 0; i < r->ndevbd; i++) {
		double ry = rowh * (double)rows;

		if (r->devbd[i].total == 0)
			continue;
		svg_label(b, nd_rep_dev_label(r, r->devbd[i].dev, lab,
		    sizeof lab), (size_t)((x0 - 8) / nd_svg_text_w(1, 12)), 0,
		    ry + 15, 12);
		bk_bar(b, &r->devbd[i].bd, r->devbd[i].total, x0, ry + 2, w,
		    rowh - 4, "bd");
		rows++;
	}
	nd_buf_addf(b, "<g class=\"axis\"><line x1=\"%.0f\" y1=\"%.0f\" "
	    "x2=\"%.0f\" y2=\"%.0f\" stroke=\"#555\"/>\n", x0, y + 2, x0 + w,
	    y + 2);
	for (int p = 0; p <= 100; p += 25)
		nd_buf_addf(b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" "
		    "y2=\"%.0f\" stroke=\"#555\"/><text x=\"%.1f\" y=\"%.0f\" "
		    "font-size=\"10\" text-anchor=\"middle\">%d %%</text>\n",
		    x0 + w * p / 100.0, y + 2, x0 + w * p / 100.0, y + 6,
		    x0 + w * p / 100.0, y + 17, p);
	nd_buf_addf(b, "<text x=\"0\" y=\"%.0f\" font-size=\"10\">share of "
	    "the window</text></g>\n", y + 17);
	bk_legend(b, 0, y + 40, x0 + w, "bd", NULL, 0);
	nd_buf_addf(b, "</svg><figcaption>Time breakdown per device over %s; "
	    "hover a part for its time</figcaption></figure>\n",
	    window_what(r));
}

/* An icicle of the named-scope tree: depth down, inclusive time across.
 * Regions come in tree order (parents first, siblings by segment). */
void
nd_rep_svg_regions(nd_report *r, nd_buf *b)
{
	double w = 720, rowh = 22;
	int maxd = 0;
	size_t *ord;
	double *x0, *next;
	nd_buf path = ND_BUF_INIT;

	if (r->nregs == 0 || r->self_total <= 0)
		return;
	ord = nd_xmalloc(r->nregs * sizeof *ord);
	x0 = nd_xcalloc(r->nregs, sizeof *x0);
	next = nd_xcalloc(r->nregs, sizeof *next);
	for (size_t i = 0; i < r->nregs; i++) {
		ord[r->regs[i].rank] = i;
		if (r->regs[i].depth > maxd)
			maxd = r->regs[i].depth;
	}
	if (maxd > 6)
		maxd = 6;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"regions"
	    "\"><rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n", w,
	    rowh * maxd + 4);
	{
		double rootx = 0;

		for (size_t k = 0; k < r->nregs; k++) {
			const struct trow *t = &r->regs[ord[k]];
			uint32_t id = t->id;
			double pw = w * (double)t->self /
			    (double)r->self_total;

			if (t->parent == UINT32_MAX) {
				x0[id] = rootx;
				rootx += pw;
			} else {
				x0[id] = x0[t->parent] + next[t->parent];
				next[t->parent] += pw;
			}
			if (t->depth > maxd || pw < 0.5)
				continue;
			nd_rep_reg_path(r, t, &path);
			/* the title of the group: the rect and its label */
			nd_buf_adds(b, "<g><title>");
			nd_svg_textn(b, path.p, path.len);
			nd_buf_adds(b, ": ");
			nd_fmt_dur_spaced(b, t->self);
			nd_buf_addf(b, "</title><rect x=\"%.2f\" y=\"%.0f\" "
			    "width=\"%.2f\" height=\"%.0f\" fill=\"%s\" "
			    "stroke=\"#fff\"/>", x0[id], rowh * (t->depth - 1),
			    pw, rowh - 2, nd_svg_class_color[(t->depth - 1) % 2 ?
			    ND_SVG_COMPUTE : ND_SVG_MEMORY]);
			if (pw > 40) {
				size_t fit = (size_t)((pw - 6) /
				    nd_svg_text_w(1, 11));

				nd_buf_addf(b, "<text x=\"%.2f\" y=\"%.0f\" "
				    "font-size=\"11\" fill=\"#fff\">", x0[id] + 3,
				    rowh * (t->depth - 1) + 14);
				if (t->seglen <= fit)
					nd_svg_textn(b, t->seg, t->seglen);
				else if (fit > 1) {
					size_t k = fit - 1;

					/* not inside a UTF-8 sequence */
					while (k > 0 && ((unsigned char)t->seg[k] &
					    0xc0) == 0x80)
						k--;
					nd_svg_textn(b, t->seg, k);
					nd_buf_adds(b, "\xe2\x80\xa6");
				}
				nd_buf_adds(b, "</text>");
			}
			nd_buf_adds(b, "</g>\n");
		}
	}
	nd_buf_adds(b, "</svg><figcaption>Regions: the named-scope tree, "
	    "width = inclusive exclusive-time; hover for the path and time"
	    "</figcaption></figure>\n");
	nd_buf_free(&path);
	free(ord);
	free(x0);
	free(next);
}

/* The breakdown of every device summed, one bar and its legend, linked to
 * the section (id, title) that has it per device. */
void
nd_rep_svg_sum(nd_report *r, nd_buf *b, const char *id, const char *title)
{
	nd_buf lg = ND_BUF_INIT;
	double lh;

	lh = bk_legend(&lg, 0, 48, 700, "sum", &r->dbd, r->dbd_total);
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"720\" height=\"%.0f\" role=\"img\" aria-label=\"where "
	    "the time went\"><rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#fff\"/>\n", 40 + lh);
	nd_svg_defs(b, "sum");
	bk_bar(b, &r->dbd, r->dbd_total, 0, 4, 700, 26, "sum");
	nd_buf_add(b, lg.p, lg.len);
	nd_buf_adds(b, "</svg><figcaption>Where the time went: every device "
	    "summed, over ");
	nd_buf_adds(b, window_what(r));
	nd_buf_adds(b, " (");
	nd_fmt_dur_spaced(b, r->dbd_total);
	nd_buf_adds(b, ")");
	if (id != NULL) {
		nd_buf_addf(b, "; per device in <a href=\"#%s\">", id);
		nd_svg_text(b, title);
		nd_buf_adds(b, "</a>");
	}
	nd_buf_adds(b, "</figcaption></figure>\n");
	nd_buf_free(&lg);
}

/* The first three findings, each linked to its subsection (ids). */
void
nd_rep_html_findings(nd_report *r, nd_buf *b, const char *const *ids)
{
	if (r->nfnd == 0)
		return;
	nd_buf_adds(b, "<ol class=\"findings\">\n");
	for (size_t i = 0; i < r->nfnd && i < 3; i++) {
		const struct finding *f = &r->fnd[i];
		const char *id = nd_rep_rules[f->rule].id;

		nd_buf_adds(b, "<li>");
		if (ids[i] != NULL)
			nd_buf_addf(b, "<a href=\"#%s\">", ids[i]);
		nd_buf_addf(b, "<strong>%s</strong>%s: ", id, ids[i] ? "</a>" :
		    "");
		nd_svg_text(b, f->statement ? f->statement : "-");
		nd_buf_adds(b, ".");
		if (f->explains_ns > 0) {
			nd_buf_adds(b, " <span class=\"explains\">Explains ");
			nd_fmt_dur_spaced(b, f->explains_ns);
			nd_buf_addf(b, ", %.1f %% of the window.</span>",
			    f->explains_pct);
		}
		nd_buf_adds(b, "</li>\n");
	}
	nd_buf_addf(b, "</ol>\n%s", r->nfnd > 3 ? "<p class=\"note\">"
	    "More in the findings section.</p>\n" : "");
}
