/*
 * nd_report: the HTML writer: the Markdown converted, plus inline SVG
 * charts and the timeline strip.
 */
#include "nd_report_int.h"
#include "nd_cli.h"

#include "nd_name.h"
#include "nd_sort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- HTML: the Markdown converted, plus inline SVG charts --- */

static void
h_esc_inline(nd_buf *b, const char *s, size_t n)
{
	int code = 0, strong = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 1 < n) {
			c = s[++i];
			if (c == '<')
				nd_buf_adds(b, "&lt;");
			else if (c == '>')
				nd_buf_adds(b, "&gt;");
			else if (c == '&')
				nd_buf_adds(b, "&amp;");
			else
				nd_buf_addc(b, c);
			continue;
		}
		if (c == '`') {
			nd_buf_adds(b, code ? "</code>" : "<code>");
			code = !code;
		} else if (c == '*' && i + 1 < n && s[i + 1] == '*') {
			nd_buf_adds(b, strong ? "</strong>" : "<strong>");
			strong = !strong;
			i++;
		} else if (c == '[' && i + 1 < n && s[i + 1] == '^') {
			while (i < n && s[i] != ']')
				i++;
			nd_buf_adds(b, "<sup>1</sup>");
		} else if (c == '<')
			nd_buf_adds(b, "&lt;");
		else if (c == '>')
			nd_buf_adds(b, "&gt;");
		else if (c == '&')	/* the Markdown holds no entities */
			nd_buf_adds(b, "&amp;");
		else
			nd_buf_addc(b, c);
	}
	if (code)
		nd_buf_adds(b, "</code>");
	if (strong)
		nd_buf_adds(b, "</strong>");
}

/* The full names of the names the tables show shortened (nd_name_short),
 * by their short form, for a title on hover; a short form of two names
 * gets none. */
struct hfull {
	nd_intern *shorts;
	const char **full;	/* by id in shorts; NULL: ambiguous */
	size_t cap;
	nd_buf t;
};

static void
full_add(struct hfull *f, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	uint32_t id, cnt;

	if (n <= ND_NAME_WIDTH)	/* bytes >= code points: shown whole */
		return;
	nd_buf_reset(&f->t);
	nd_name_short(s, n, ND_NAME_WIDTH, &f->t);
	if (f->t.len == n && memcmp(f->t.p, s, n) == 0)
		return;
	cnt = nd_intern_count(f->shorts);
	id = nd_intern_id(f->shorts, f->t.p, f->t.len);
	if (id == cnt) {
		nd_grow(&f->full, &f->cap, (size_t)id + 1, sizeof *f->full);
		f->full[id] = s;
	} else if (f->full[id] != NULL && strcmp(f->full[id], s) != 0)
		f->full[id] = NULL;
}

static void
full_init(struct hfull *f, const nd_report *r)
{
	const struct trow *t[] = { r->ops, r->fams, r->colls, r->regs };
	const size_t nt[] = { r->nops, r->nfams, r->ncolls, r->nregs };

	memset(f, 0, sizeof *f);
	f->shorts = nd_intern_new();
	for (size_t k = 0; k < 4; k++)
		for (size_t i = 0; i < nt[k]; i++)
			full_add(f, t[k][i].key);
	for (uint32_t i = 0; r->names && i < nd_intern_count(r->names); i++)
		full_add(f, nd_intern_str(r->names, i, NULL));
}

static void
full_free(struct hfull *f)
{
	nd_intern_free(f->shorts);
	free(f->full);
	nd_buf_free(&f->t);
}

/* The full name of the cell text s[0..n) (Markdown-escaped), or NULL. */
static const char *
full_of(struct hfull *f, const char *s, size_t n)
{
	uint32_t id;

	if (f == NULL || n < 3 || memmem(s, n, "\xe2\x80\xa6", 3) == NULL)
		return NULL;
	nd_buf_reset(&f->t);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		nd_buf_addc(&f->t, s[i]);
	}
	id = nd_intern_find(f->shorts, f->t.p, f->t.len);
	return id == UINT32_MAX ? NULL : f->full[id];
}

static void
h_row(nd_buf *b, const char *s, size_t n, const char *cell,
    struct hfull *f)
{
	size_t i = 1, start = 1;

	nd_buf_adds(b, "<tr>");
	for (; i < n; i++) {
		const char *full;
		size_t len;

		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] != '|')
			continue;
		while (start < i && s[start] == ' ')
			start++;
		len = i > start && s[i - 1] == ' ' ? i - start - 1 : i - start;
		nd_buf_addf(b, "<%s", cell);
		if ((full = full_of(f, s + start, len)) != NULL) {
			nd_buf_adds(b, " title=\"");
			nd_svg_text(b, full);
			nd_buf_adds(b, "\"");
		}
		nd_buf_adds(b, ">");
		h_esc_inline(b, s + start, len);
		nd_buf_addf(b, "</%s>", cell);
		start = i + 1;
	}
	nd_buf_adds(b, "</tr>\n");
}

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

static void
svg_steps(nd_report *r, nd_buf *b)
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

static void
svg_breakdown(nd_report *r, nd_buf *b)
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
static void
svg_regions(nd_report *r, nd_buf *b)
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

/* --- the page: a summary, a table of contents, the Markdown converted --- */

/* A heading of the Markdown (level 2 or 3): its text and its id. */
struct hhead {
	int level;
	const char *s;
	size_t n;
	char id[32];
};

/* The headings of md; h2 ids "sN" by their number, h3 "sN-K". */
static struct hhead *
md_heads(const nd_buf *md, size_t *np)
{
	struct hhead *h = NULL;
	size_t n = 0, cap = 0, i = 0, k = 0, h2 = 0;
	char sec[16] = "s0";

	while (i < md->len) {
		const char *s = md->p + i, *nl = memchr(s, '\n', md->len - i);
		size_t len = nl ? (size_t)(nl - s) : md->len - i;
		int lv = len > 3 && memcmp(s, "## ", 3) == 0 ? 2 :
		    len > 4 && memcmp(s, "### ", 4) == 0 ? 3 : 0;

		i += len + 1;
		if (lv == 0)
			continue;
		nd_grow(&h, &cap, n + 1, sizeof *h);
		h[n].level = lv;
		h[n].s = s + lv + 1;
		h[n].n = len - (size_t)lv - 1;
		if (lv == 2) {
			h2++;
			if (h[n].n > 0 && h[n].s[0] >= '1' && h[n].s[0] <= '9')
				snprintf(sec, sizeof sec, "s%d",
				    (int)strtol(h[n].s, NULL, 10) % 1000000);
			else
				snprintf(sec, sizeof sec, "h%zu", h2 % 1000000);
			snprintf(h[n].id, sizeof h[n].id, "%s", sec);
			k = 0;
		} else
			snprintf(h[n].id, sizeof h[n].id, "%s-%zu", sec,
			    ++k % 1000000);
		n++;
	}
	*np = n;
	return h;
}

/* The h2 whose title (after its number) starts with t, or NULL. */
static const struct hhead *
head_of(const struct hhead *h, size_t n, const char *t)
{
	size_t tl = strlen(t);

	for (size_t i = 0; i < n; i++) {
		const char *s = h[i].s, *e = s + h[i].n;

		if (h[i].level != 2)
			continue;
		while (s < e && *s >= '0' && *s <= '9')
			s++;
		while (s < e && *s == ' ')
			s++;
		if ((size_t)(e - s) >= tl && memcmp(s, t, tl) == 0)
			return &h[i];
	}
	return NULL;
}

/* The first paragraph under heading hd (not a table, list or heading),
 * converted; 0 when there is none. */
static int
head_para(nd_buf *b, const nd_buf *md, const struct hhead *hd)
{
	const char *s, *e = md->p + md->len;
	int any = 0;

	if (hd == NULL)
		return 0;
	s = memchr(hd->s, '\n', (size_t)(e - hd->s));
	while (s != NULL && s < e && *s == '\n')
		s++;
	if (s == NULL || s >= e || *s == '#' || *s == '|' || *s == '[' ||
	    (*s == '-' && s + 1 < e && s[1] == ' '))
		return 0;
	while (s < e && *s != '\n') {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(e - s);

		if (any)
			nd_buf_addc(b, ' ');
		h_esc_inline(b, s, n);
		any = 1;
		s += n + (nl != NULL);
	}
	return any;
}

/* The breakdown of every device summed, one bar and its legend. */
static void
sum_bar(nd_report *r, nd_buf *b, const struct hhead *bdh)
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
	if (bdh != NULL) {
		nd_buf_addf(b, "; per device in <a href=\"#%s\">", bdh->id);
		h_esc_inline(b, bdh->s, bdh->n);
		nd_buf_adds(b, "</a>");
	}
	nd_buf_adds(b, "</figcaption></figure>\n");
	nd_buf_free(&lg);
}

/* The summary: the verdict, the top findings, the steps, the breakdown. */
static void
h_summary(nd_report *r, nd_buf *b, const nd_buf *md, const struct hhead *h,
    size_t nh)
{
	const struct hhead *fh = head_of(h, nh, "Findings");

	nd_buf_adds(b, "<section id=\"summary\"><h2>Summary</h2>\n<p "
	    "class=\"verdict\"><strong>Verdict:</strong> ");
	if (!head_para(b, md, fh)) {
		if (r->nfnd > 0)
			nd_buf_addf(b, "%zu finding%s.", r->nfnd,
			    r->nfnd > 1 ? "s" : "");
		else
			nd_buf_adds(b, "no findings.");
	}
	nd_buf_adds(b, "</p>\n");
	if (r->nfnd > 0)
		nd_buf_adds(b, "<ol class=\"findings\">\n");
	for (size_t i = 0; i < r->nfnd && i < 3; i++) {
		const struct finding *f = &r->fnd[i];
		const char *id = nd_rep_rules[f->rule].id;
		const struct hhead *x = NULL;

		for (size_t k = fh ? (size_t)(fh - h) + 1 : nh; k < nh &&
		    h[k].level == 3 && x == NULL; k++)
			if (h[k].n == strlen(id) && memcmp(h[k].s, id,
			    h[k].n) == 0)
				x = &h[k];
		nd_buf_adds(b, "<li>");
		if (x != NULL)
			nd_buf_addf(b, "<a href=\"#%s\">", x->id);
		nd_buf_addf(b, "<strong>%s</strong>%s: ", id, x ? "</a>" : "");
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
	if (r->nfnd > 0)
		nd_buf_addf(b, "</ol>\n%s", r->nfnd > 3 ? "<p class=\"note\">"
		    "More in the findings section.</p>\n" : "");
	nd_buf_adds(b, "<p><strong>Steps:</strong> ");
	if (!head_para(b, md, head_of(h, nh, "Steps")))
		nd_buf_adds(b, "-");
	nd_buf_adds(b, "</p>\n");
	if (r->dbd_total > 0)
		sum_bar(r, b, head_of(h, nh, "Time breakdown"));
	else
		nd_buf_addf(b, "<p><strong>Time breakdown:</strong> none: %s."
		    "</p>\n", r->has_device ? "no steady steps" :
		    "no device ops");
	nd_buf_adds(b, "</section>\n");
}

/* The table of contents: every h2, and the h3 under it. */
static void
h_toc(nd_report *r, nd_buf *b, const struct hhead *h, size_t nh)
{
	int sub = 0;

	nd_buf_adds(b, "<nav id=\"contents\"><h2>Contents</h2>\n<ul>\n");
	if (!nd_rep_is_comparison(r))
		nd_buf_adds(b, "<li><a href=\"#summary\">Summary</a></li>\n");
	for (size_t i = 0; i < nh; i++) {
		if (h[i].level == 2) {
			if (i > 0)
				nd_buf_adds(b, sub ? "</ul></li>\n" : "</li>\n");
			sub = 0;
		} else if (!sub) {
			nd_buf_adds(b, "<ul>\n");
			sub = 1;
		}
		nd_buf_addf(b, "%s<a href=\"#%s\">", h[i].level == 3 ? "<li>" :
		    "<li>", h[i].id);
		h_esc_inline(b, h[i].s, h[i].n);
		nd_buf_adds(b, h[i].level == 3 ? "</a></li>\n" : "</a>");
	}
	if (nh > 0)
		nd_buf_adds(b, sub ? "</ul></li>\n" : "</li>\n");
	nd_buf_adds(b, "</ul></nav>\n");
}

static void
h_chart(nd_report *r, nd_buf *b, const struct hhead *sec,
    const struct hhead *h, size_t nh)
{
	if (sec == NULL || nd_rep_is_comparison(r))
		return;
	if (sec == head_of(h, nh, "Steps"))
		svg_steps(r, b);
	else if (sec == head_of(h, nh, "Time breakdown"))
		svg_breakdown(r, b);
	else if (sec == head_of(h, nh, "Idle gaps"))
		nd_rep_svg_strip(r, b);
	else if (sec == head_of(h, nh, "Regions"))
		svg_regions(r, b);
	else if (sec == head_of(h, nh, "Pipeline"))
		nd_rep_pipe_svg(r, b);
}

static const char h_style[] = "<style>\n"
    "body{font:14px/1.4 sans-serif;margin:2em auto;max-width:1100px;"
    "color:#222;padding:0 1em}\n"
    "table{border-collapse:collapse;margin:.5em 0}\n"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
    "vertical-align:top}\nth{background:#f0f0f0}\n"
    "td{max-width:40em;overflow-wrap:anywhere}\n"
    "code{background:#f4f4f4}\nfigure{margin:1em 0}\n"
    "figcaption{font-size:12px;color:#555}\n.note{font-size:12px;"
    "color:#555}\nh2{border-bottom:1px solid #ddd;margin-top:1.5em}\n"
    "#summary{background:#f8f8f8;border:1px solid #ddd;padding:0 1em}\n"
    "#summary h2{border:0}\n#contents ul{margin:0}\n"
    ".explains{color:#555;white-space:nowrap}\n"
    "th.nd-sort{cursor:pointer}\n"
    "th[aria-sort=ascending]::after{content:\" \\25B4\"}\n"
    "th[aria-sort=descending]::after{content:\" \\25BE\"}\n"
    "input.nd-filter{display:block;margin:.5em 0 0;font:inherit}\n"
    "</style>";

/* The page's one script: sortable and filterable tables, zoomable
 * timelines.  Inline: the page stays one file that fetches nothing. */
static const char h_script[] = "<script id=\"nd-ui\">\n"
    "(function () {\n"
    "\"use strict\";\n"
    "/* Tables: a click (or Enter) on a heading sorts by that column, numbers by\n"
    " * value (durations by their unit), text by code point; a box above a\n"
    " * table of more than two rows keeps the rows holding its text.  Charts of\n"
    " * a timeline: the wheel, + and - zoom around the pointer, 0 resets. */\n"
    "var unit = { ns: 1, us: 1e3, \"\\u00b5s\": 1e3, ms: 1e6, s: 1e9 };\n"
    "function value(t) {\n"
    "  var m = /^\\s*([+-]?[0-9][0-9,]*(?:\\.[0-9]+)?)\\s*(ns|us|\\u00b5s|ms|s)?\\b/.exec(t);\n"
    "  return m ? parseFloat(m[1].replace(/,/g, \"\")) * (unit[m[2]] || 1) : NaN;\n"
    "}\n"
    "function body(tb) { return [].slice.call(tb.rows, 1); }\n"
    "function sort(tb, col, th) {\n"
    "  var rows = body(tb), num = rows.every(function (r) {\n"
    "    var c = r.cells[col];\n"
    "    return !c || c.textContent.trim() === \"\" || !isNaN(value(c.textContent));\n"
    "  });\n"
    "  var dir = th.getAttribute(\"aria-sort\") === (num ? \"descending\" : \"ascending\") ? -1 : 1;\n"
    "  if (num) dir = -dir;\n"
    "  rows.sort(function (a, b) {\n"
    "    var x = a.cells[col] ? a.cells[col].textContent : \"\";\n"
    "    var y = b.cells[col] ? b.cells[col].textContent : \"\";\n"
    "    if (num) return dir * ((value(x) || 0) - (value(y) || 0));\n"
    "    return dir * (x < y ? -1 : x > y ? 1 : 0);\n"
    "  });\n"
    "  [].forEach.call(tb.rows[0].cells, function (h) { h.removeAttribute(\"aria-sort\"); });\n"
    "  th.setAttribute(\"aria-sort\", dir > 0 ? \"ascending\" : \"descending\");\n"
    "  rows.forEach(function (r) { r.parentNode.appendChild(r); });\n"
    "}\n"
    "function filter(tb, q) {\n"
    "  q = q.toLowerCase();\n"
    "  body(tb).forEach(function (r) {\n"
    "    var t = r.textContent;\n"
    "    [].forEach.call(r.cells, function (c) { t += \" \" + (c.title || \"\"); });\n"
    "    r.style.display = t.toLowerCase().indexOf(q) >= 0 ? \"\" : \"none\";\n"
    "  });\n"
    "}\n"
    "[].forEach.call(document.querySelectorAll(\"table\"), function (tb) {\n"
    "  if (tb.rows.length < 2) return;\n"
    "  [].forEach.call(tb.rows[0].cells, function (th, col) {\n"
    "    th.tabIndex = 0;\n"
    "    th.className = \"nd-sort\";\n"
    "    th.title = \"sort by \" + th.textContent;\n"
    "    th.addEventListener(\"click\", function () { sort(tb, col, th); });\n"
    "    th.addEventListener(\"keydown\", function (e) {\n"
    "      if (e.key === \"Enter\") sort(tb, col, th);\n"
    "    });\n"
    "  });\n"
    "  if (tb.rows.length > 3) {\n"
    "    var f = document.createElement(\"input\");\n"
    "    f.type = \"search\";\n"
    "    f.className = \"nd-filter\";\n"
    "    f.placeholder = \"filter rows\";\n"
    "    f.setAttribute(\"aria-label\", \"filter the rows of the next table\");\n"
    "    f.addEventListener(\"input\", function () { filter(tb, f.value); });\n"
    "    tb.parentNode.insertBefore(f, tb);\n"
    "  }\n"
    "});\n"
    "[].forEach.call(document.querySelectorAll('svg[aria-label^=\"timeline\"]'), function (sv) {\n"
    "  var W = +sv.getAttribute(\"width\"), H = +sv.getAttribute(\"height\");\n"
    "  var v = { x: 0, y: 0, w: W, h: H };\n"
    "  function set() { sv.setAttribute(\"viewBox\", v.x + \" \" + v.y + \" \" + v.w + \" \" + v.h); }\n"
    "  function zoom(k, fx, fy) {\n"
    "    var w = Math.min(W, Math.max(W / 64, v.w / k)), h = w * H / W;\n"
    "    v.x = Math.min(W - w, Math.max(0, v.x + (v.w - w) * fx));\n"
    "    v.y = Math.min(H - h, Math.max(0, v.y + (v.h - h) * fy));\n"
    "    v.w = w; v.h = h; set();\n"
    "  }\n"
    "  set();\n"
    "  sv.tabIndex = 0;\n"
    "  sv.addEventListener(\"wheel\", function (e) {\n"
    "    var r = sv.getBoundingClientRect();\n"
    "    e.preventDefault();\n"
    "    zoom(e.deltaY < 0 ? 1.25 : 0.8, (e.clientX - r.left) / r.width,\n"
    "        (e.clientY - r.top) / r.height);\n"
    "  });\n"
    "  sv.addEventListener(\"keydown\", function (e) {\n"
    "    if (e.key === \"+\" || e.key === \"=\") zoom(1.25, 0.5, 0.5);\n"
    "    else if (e.key === \"-\") zoom(0.8, 0.5, 0.5);\n"
    "    else if (e.key === \"0\") { v = { x: 0, y: 0, w: W, h: H }; set(); }\n"
    "  });\n"
    "  sv.addEventListener(\"dblclick\", function () { v = { x: 0, y: 0, w: W, h: H }; set(); });\n"
    "});\n"
    "})();\n"
    "</script>\n";

struct hconv {
	int in_table, in_list, in_p;
	struct hfull full;
	size_t head;		/* the next heading of h */
	const struct hhead *sec;	/* the current h2 */
};

/* Close what a line s (n bytes) ends: a table, a list, a paragraph. */
static void
h_close(nd_buf *b, struct hconv *c, const char *s, size_t n)
{
	if (c->in_table && (n == 0 || s[0] != '|')) {
		nd_buf_adds(b, "</table>\n");
		c->in_table = 0;
	}
	if (c->in_list && (n < 2 || s[0] != '-' || s[1] != ' ')) {
		nd_buf_adds(b, "</ul>\n");
		c->in_list = 0;
	}
	if (c->in_p && (n == 0 || s[0] == '#' || s[0] == '|')) {
		nd_buf_adds(b, "</p>\n");
		c->in_p = 0;
	}
}

/* One line of the Markdown (not a heading). */
static void
h_line(nd_buf *b, struct hconv *c, const char *s, size_t n)
{
	if (s[0] == '|') {
		if (!c->in_table) {
			nd_buf_adds(b, "<table>\n");
			h_row(b, s, n, "th", NULL);
			c->in_table = 1;
		} else if (!(n > 3 && memcmp(s, "|---", 4) == 0))
			h_row(b, s, n, "td", &c->full);
	} else if (n > 1 && s[0] == '-' && s[1] == ' ') {
		if (!c->in_list)
			nd_buf_adds(b, "<ul>\n");
		c->in_list = 1;
		nd_buf_adds(b, "<li>");
		h_esc_inline(b, s + 2, n - 2);
		nd_buf_adds(b, "</li>\n");
	} else if (n > 2 && memcmp(s, "[^", 2) == 0) {
		const char *k = memchr(s, ':', n);
		size_t j = k ? (size_t)(k - s) + 1 : 0;

		nd_buf_adds(b, "<p class=\"note\"><sup>1</sup>");
		h_esc_inline(b, s + j, n - j);
		nd_buf_adds(b, "</p>\n");
	} else {
		nd_buf_adds(b, c->in_p ? " " : "<p>");
		c->in_p = 1;
		h_esc_inline(b, s, n);
	}
}

void
nd_report_html(nd_report *r, nd_buf *b)
{
	nd_buf md = ND_BUF_INIT;
	struct hconv c;
	struct hhead *h;
	size_t nh, i = 0;

	memset(&c, 0, sizeof c);
	nd_report_markdown(r, &md);
	full_init(&c.full, r);
	h = md_heads(&md, &nh);
	nd_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\"><title>Trace report</title>\n");
	nd_buf_adds(b, h_style);
	nd_buf_adds(b, "</head><body>\n");
	while (i < md.len) {
		char *nl = memchr(md.p + i, '\n', md.len - i);
		size_t n = nl ? (size_t)(nl - (md.p + i)) : md.len - i;
		const char *s = md.p + i;
		int lv = n > 3 && memcmp(s, "## ", 3) == 0 ? 2 :
		    n > 4 && memcmp(s, "### ", 4) == 0 ? 3 : 0;

		i += n + 1;
		h_close(b, &c, s, n);
		if (n == 0)
			continue;
		if (lv > 0 && c.head < nh) {
			const struct hhead *x = &h[c.head++];

			if (lv == 2) {
				h_chart(r, b, c.sec, h, nh);
				c.sec = x;
			}
			nd_buf_addf(b, "<h%d id=\"%s\">", lv, x->id);
			h_esc_inline(b, x->s, x->n);
			nd_buf_addf(b, "</h%d>\n", lv);
		} else if (n > 2 && memcmp(s, "# ", 2) == 0) {
			nd_buf_adds(b, "<h1>");
			h_esc_inline(b, s + 2, n - 2);
			nd_buf_adds(b, "</h1>\n");
			if (!nd_rep_is_comparison(r))
				h_summary(r, b, &md, h, nh);
			h_toc(r, b, h, nh);
		} else
			h_line(b, &c, s, n);
	}
	h_close(b, &c, "", 0);
	h_chart(r, b, c.sec, h, nh);
	nd_buf_adds(b, h_script);
	nd_buf_adds(b, "</body></html>\n");
	free(h);
	full_free(&c.full);
	nd_buf_free(&md);
}
