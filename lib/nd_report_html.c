/*
 * nd_report: the HTML writer: the Markdown converted, plus inline SVG
 * charts and the timeline strip.
 */
#include "nd_report_int.h"

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
		else
			nd_buf_addc(b, c);
	}
	if (code)
		nd_buf_adds(b, "</code>");
	if (strong)
		nd_buf_adds(b, "</strong>");
}

static void
h_row(nd_buf *b, const char *s, size_t n, const char *cell)
{
	size_t i = 1, start = 1;

	nd_buf_adds(b, "<tr>");
	for (; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] != '|')
			continue;
		nd_buf_addf(b, "<%s>", cell);
		while (start < i && s[start] == ' ')
			start++;
		h_esc_inline(b, s + start, i > start && s[i - 1] == ' ' ?
		    i - start - 1 : i - start);
		nd_buf_addf(b, "</%s>", cell);
		start = i + 1;
	}
	nd_buf_adds(b, "</tr>\n");
}

static const char *const cat_color[] = { "#4e79a7", "#e15759", "#f28e2b",
	"#b07aa1", "#bab0ac" };
static const char *const cat_name[] = { "compute", "exposed communication",
	"memory", "host", "idle" };

static void
svg_steps(nd_report *r, nd_buf *b)
{
	size_t n = r->steady.count, m = n > 400 ? 400 : n;
	double w = 720, h = 160, bw;
	int64_t max = r->steady.max > 0 ? r->steady.max : 1;

	if (n == 0)
		return;
	bw = w / (double)m;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"step "
	    "times\"><rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	    w, h + 20);
	for (size_t i = 0; i < m; i++) {
		int heavy = 0;
		double bh = h * (double)r->cl_dur[i] / (double)max;

		if (r->cl.nclass == 2)
			for (size_t k = 0; k < r->cl.c[1].n; k++)
				if (r->cl.idx[r->cl.c[1].first + k] == i)
					heavy = 1;
		nd_buf_addf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\" fill=\"%s\"><title>step %lld: %.3f ms"
		    "</title></rect>\n", (double)i * bw, h - bh,
		    bw > 2 ? bw - 1 : bw, bh, heavy ? "#e15759" : "#4e79a7",
		    (long long)r->cl_num[i], (double)r->cl_dur[i] / 1e6);
	}
	nd_buf_addf(b, "<text x=\"0\" y=\"%.0f\" font-size=\"12\">steady steps "
	    "%lld to %lld; max %.3f ms%s</text></svg><figcaption>Step time "
	    "(blue: %s, red: heavy)</figcaption></figure>\n", h + 16,
	    (long long)r->first_step, (long long)r->last_step,
	    (double)max / 1e6, m < n ? " (first 400 shown)" : "",
	    r->cl.nclass == 2 ? "light" : "typical");
}

static void
svg_breakdown(nd_report *r, nd_buf *b)
{
	char lab[512];
	double w = 520, x0 = 200, rowh = 22;
	size_t rows = 0;

	for (size_t i = 0; i < r->ndevbd; i++)
		rows += r->devbd[i].total > 0;
	if (rows == 0)
		return;
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"time "
	    "breakdown\"><rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#fff\"/>\n", x0 + w + 10, rowh * (double)(rows + 1) + 10);
	rows = 0;
	for (size_t i = 0; i < r->ndevbd; i++) {
		const nd_breakdown *bd = &r->devbd[i].bd;
		int64_t part[5] = { bd->compute_ns, bd->communication_ns,
		    bd->memory_ns, bd->host_ns, bd->idle_ns };
		double x = x0, y = rowh * (double)rows;

		if (r->devbd[i].total == 0)
			continue;
		nd_buf_addf(b, "<text x=\"0\" y=\"%.0f\" font-size=\"12\">",
		    y + 15);
		h_esc_inline(b, nd_rep_dev_label(r, r->devbd[i].dev, lab,
		    sizeof lab), strlen(nd_rep_dev_label(r, r->devbd[i].dev,
		    lab, sizeof lab)));
		nd_buf_adds(b, "</text>\n");
		for (int c = 0; c < 5; c++) {
			double pw = w * (double)part[c] /
			    (double)r->devbd[i].total;

			if (pw <= 0)
				continue;
			nd_buf_addf(b, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
			    "height=\"%.0f\" fill=\"%s\"><title>%s %.1f %%"
			    "</title></rect>\n", x, y + 2, pw, rowh - 4,
			    cat_color[c], cat_name[c],
			    nd_rep_pct(part[c], r->devbd[i].total));
			x += pw;
		}
		rows++;
	}
	{
		double x = 0, y = rowh * (double)rows + 16;

		for (int c = 0; c < 5; c++) {
			nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
			    "height=\"10\" fill=\"%s\"/><text x=\"%.0f\" "
			    "y=\"%.0f\" font-size=\"11\">%s</text>\n", x, y - 9,
			    cat_color[c], x + 13, y, cat_name[c]);
			x += 14 + 7 * (double)strlen(cat_name[c]) + 12;
		}
	}
	nd_buf_adds(b, "</svg><figcaption>Time breakdown per device, steady "
	    "steps</figcaption></figure>\n");
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
			nd_buf_addf(b, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
			    "height=\"%.0f\" fill=\"%s\" stroke=\"#fff\">"
			    "<title>", x0[id], rowh * (t->depth - 1), pw,
			    rowh - 2, cat_color[(t->depth - 1) % 2 ? 0 : 2]);
			h_esc_inline(b, path.p, path.len);
			nd_buf_addf(b, ": %.3f ms</title></rect>\n",
			    (double)t->self / 1e6);
			if (pw > 60) {
				size_t fit = (size_t)(pw / 7);

				nd_buf_addf(b, "<text x=\"%.2f\" y=\"%.0f\" "
				    "font-size=\"11\" fill=\"#fff\">", x0[id] + 3,
				    rowh * (t->depth - 1) + 14);
				h_esc_inline(b, t->seg, t->seglen < fit ?
				    t->seglen : fit);
				nd_buf_adds(b, "</text>\n");
			}
		}
	}
	nd_buf_adds(b, "</svg><figcaption>Regions: the named-scope tree, "
	    "width = inclusive exclusive-time</figcaption></figure>\n");
	nd_buf_free(&path);
	free(ord);
	free(x0);
	free(next);
}

static const char *const sc_name[SC_N] = { "compute", "communication",
	"memory", "other" };
static const char *const sc_color[SC_N] = { "#4e79a7", "#e15759",
	"#f28e2b", "#bab0ac" };

/* text for SVG: the XML specials escaped, nothing else interpreted */
static void
h_text(nd_buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '<')
			nd_buf_adds(b, "&lt;");
		else if (*s == '>')
			nd_buf_adds(b, "&gt;");
		else if (*s == '&')
			nd_buf_adds(b, "&amp;");
		else if (*s == '"')
			nd_buf_adds(b, "&quot;");
		else
			nd_buf_addc(b, *s);
	}
}

static int
swin_cmp(const void *a, const void *b, void *ctx)
{
	const struct swin *x = a, *y = b;

	(void)ctx;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The first window of step num on d, or NULL (d->win sorted). */
static const struct swin *
strip_win_of(const struct sdev *d, int64_t num)
{
	size_t lo = 0, hi = d->nwin;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->win[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nwin && d->win[lo].num == num ? &d->win[lo] : NULL;
}

static int
rep_cmp(const void *a, const void *b, void *ctx)
{
	const nd_report *r = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int64_t di = r->cl_dur[i] - r->steady.median;
	int64_t dj = r->cl_dur[j] - r->steady.median;

	if (di < 0)
		di = -di;
	if (dj < 0)
		dj = -dj;
	if (di != dj)
		return di < dj ? -1 : 1;
	if (r->cl_num[i] != r->cl_num[j])
		return r->cl_num[i] < r->cl_num[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The representative step (index into cl_num), or -1; *closest: the steady
 * step closest to the median with a window on a kept device, or -1. */
static ptrdiff_t
strip_pick(nd_report *r, ptrdiff_t *closest)
{
	struct strip *s = r->strip;
	size_t n = r->steady.count, *idx;
	ptrdiff_t pick = -1;

	*closest = -1;
	if (n == 0)
		return -1;
	idx = nd_xmalloc(n * sizeof *idx);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	nd_sort(idx, n, sizeof *idx, rep_cmp, r);
	for (size_t k = 0; k < n && pick < 0; k++) {
		int has = 0, ok = 1;

		for (size_t i = 0; i < s->ndev; i++) {
			const struct sdev *d = &s->dev[i];
			const struct swin *w = strip_win_of(d, r->cl_num[idx[k]]);

			if (w == NULL)
				continue;
			has = 1;
			if (d->lost && w->ts < d->lost_end)
				ok = 0;
		}
		if (has && *closest < 0)
			*closest = (ptrdiff_t)idx[k];
		if (has && ok)
			pick = (ptrdiff_t)idx[k];
	}
	free(idx);
	return pick;
}

struct sclip {
	int64_t s, e, dur;	/* clipped start and end; the op's duration */
	uint32_t name;
	int cls;
};

static int
sclip_cmp(const void *a, const void *b, void *ctx)
{
	const struct sclip *x = a, *y = b;

	(void)ctx;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int
sgap_cmp(const void *a, const void *b, void *ctx)
{
	const struct sgap *x = a, *y = b;

	(void)ctx;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The ops of d in [ts, te), clipped, by class then start. */
static struct sclip *
strip_clip(const struct sdev *d, int64_t ts, int64_t te, size_t *np)
{
	struct sclip *v = nd_xmalloc((d->n ? d->n : 1) * sizeof *v);
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++) {
		const struct sop *o = &d->ring[i];

		if (o->ts >= te || o->ts + o->dur <= ts)
			continue;
		v[n].s = o->ts > ts ? o->ts : ts;
		v[n].e = o->ts + o->dur < te ? o->ts + o->dur : te;
		v[n].dur = o->dur;
		v[n].name = o->name;
		v[n].cls = o->cls;
		n++;
	}
	nd_sort(v, n, sizeof *v, sclip_cmp, NULL);
	*np = n;
	return v;
}

static void
strip_lane(nd_report *r, nd_buf *b, const struct sclip *v, size_t n,
    int64_t ts, double scale, double px_ns, double y)
{
	struct strip *s = r->strip;

	for (size_t i = 0; i < n;) {
		int64_t ps = v[i].s, pe = v[i].e, busy = 0, cur = v[i].s;
		size_t j = i, longest = i;
		double x, w;

		/* one piece: ops less than one pixel apart */
		for (; j < n && (double)(v[j].s - pe) < px_ns; j++) {
			int64_t a = v[j].s > cur ? v[j].s : cur;

			if (v[j].e > a)
				busy += v[j].e - a;
			if (v[j].e > cur)
				cur = v[j].e;
			if (v[j].e > pe)
				pe = v[j].e;
			if (v[j].dur > v[longest].dur)
				longest = j;
		}
		x = STRIP_X0 + (double)(ps - ts) * scale;
		w = (double)(pe - ps) * scale;
		nd_buf_addf(b, "<rect class=\"op\" x=\"%.2f\" y=\"%.0f\" "
		    "width=\"%.2f\" height=\"%d\" fill=\"%s\"",
		    x, y, w < 1 ? 1.0 : w, STRIP_LANE - 1,
		    sc_color[v[i].cls]);
		/* a merged piece with idle time inside: lighter */
		if (busy < pe - ps)
			nd_buf_addf(b, " fill-opacity=\"%.2f\"", 0.3 + 0.7 *
			    (double)busy / (double)(pe - ps));
		nd_buf_adds(b, "><title>");
		if (j - i == 1) {
			h_text(b, nd_intern_str(s->names, v[i].name, NULL));
			nd_buf_adds(b, ": ");
			nd_rep_put_dur(b, v[i].dur);
		} else {
			nd_buf_addf(b, "%zu %s ops, ", j - i,
			    sc_name[v[i].cls]);
			nd_rep_put_dur(b, busy);
			nd_buf_adds(b, " busy; longest ");
			h_text(b, nd_intern_str(s->names, v[longest].name,
			    NULL));
			nd_buf_adds(b, " (");
			nd_rep_put_dur(b, v[longest].dur);
			nd_buf_adds(b, ")");
		}
		nd_buf_adds(b, "</title></rect>\n");
		i = j;
	}
}

static void
strip_label(const nd_report *r, const struct sdev *d, char *buf, size_t n)
{
	if (r->nsrc <= 1)
		snprintf(buf, n, "%s", d->key);
	else if (d->source < r->nsrc && r->src[d->source].has_rank)
		snprintf(buf, n, "rank %lld %s",
		    (long long)r->src[d->source].rank, d->key);
	else
		snprintf(buf, n, "source %u %s", d->source, d->key);
}

/* What the strip of one step draws: the window of each kept device, its
 * ops clipped, the lanes, the scale; and the gaps too narrow to draw. */
struct sdraw {
	int64_t num, maxdur, small_ns;
	const struct swin *win[STRIP_DEVS];
	struct sclip *clip[STRIP_DEVS];
	size_t nclip[STRIP_DEVS], rows, small;
	int lane[SC_N], nlanes;
	double scale, px_ns, rowh;
};

/* The windows of step num, their ops, the lanes and the scale. */
static void
strip_layout(nd_report *r, struct sdraw *sd)
{
	struct strip *s = r->strip;

	for (int c = 0; c < SC_N; c++)
		sd->lane[c] = -1;
	for (size_t i = 0; i < s->ndev; i++) {
		const struct swin *w = strip_win_of(&s->dev[i], sd->num);

		sd->win[i] = w;
		sd->clip[i] = NULL;
		sd->nclip[i] = 0;
		if (w == NULL)
			continue;
		sd->rows++;
		if (w->dur > sd->maxdur)
			sd->maxdur = w->dur;
		sd->clip[i] = strip_clip(&s->dev[i], w->ts, w->ts + w->dur,
		    &sd->nclip[i]);
		for (size_t k = 0; k < sd->nclip[i]; k++)
			sd->lane[sd->clip[i][k].cls] = 0;
	}
	for (int c = 0; c < SC_N; c++)
		if (sd->lane[c] == 0)
			sd->lane[c] = sd->nlanes++;
	if (sd->nlanes == 0)
		sd->nlanes = 1;
	if (sd->maxdur <= 0)
		sd->maxdur = 1;
	sd->scale = (double)STRIP_PX / (double)sd->maxdur;
	sd->px_ns = (double)sd->maxdur / STRIP_PX;
	sd->rowh = 18 + sd->nlanes * STRIP_LANE + 16;
}

/* The gaps of device i's window, clipped, of at least a pixel; returns
 * them (*np of them), clipped, for the labels. */
static struct sgap *
strip_gaps(nd_report *r, nd_buf *b, struct sdraw *sd, size_t i, double top,
    size_t *np)
{
	struct strip *s = r->strip;
	const struct sdev *d = &s->dev[i];
	const struct swin *w = sd->win[i];
	int64_t te = w->ts + w->dur;
	struct sgap *gv = nd_xmalloc((d->ngaps ? d->ngaps : 1) * sizeof *gv);
	size_t ng = 0;

	for (size_t k = 0; k < d->ngaps; k++) {
		const struct sgap *g = &d->gaps[k];
		int64_t a = g->ts > w->ts ? g->ts : w->ts;
		int64_t e = g->ts + g->dur < te ? g->ts + g->dur : te;

		if (e <= a)
			continue;
		if ((double)(e - a) < sd->px_ns) {
			sd->small++;
			sd->small_ns += e - a;
			continue;
		}
		gv[ng] = *g;
		gv[ng].ts = a;
		gv[ng].dur = e - a;
		nd_buf_addf(b, "<rect class=\"gap\" x=\"%.2f\" "
		    "y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
		    "fill=\"url(#nd-gap)\" stroke=\"#d62728\" "
		    "stroke-width=\"0.5\"><title>idle ",
		    STRIP_X0 + (double)(a - w->ts) * sd->scale, top,
		    (double)(e - a) * sd->scale, sd->nlanes * STRIP_LANE);
		nd_rep_put_dur(b, g->dur);
		nd_buf_addf(b, " at ts_ns %lld; payload ", (long long)g->ts);
		h_text(b, nd_intern_str(s->names, g->payload, NULL));
		nd_buf_adds(b, ", cause ");
		h_text(b, nd_intern_str(s->names, g->cause, NULL));
		nd_buf_adds(b, "</title></rect>\n");
		ng++;
	}
	*np = ng;
	return gv;
}

/* The STRIP_LABELS largest gaps of gv, labelled with their duration. */
static void
strip_gap_labels(nd_buf *b, const struct sdraw *sd, const struct swin *w,
    struct sgap *gv, size_t ng, double top)
{
	nd_sort(gv, ng, sizeof *gv, sgap_cmp, NULL);
	for (size_t k = 0; k < ng && k < STRIP_LABELS; k++) {
		double x = STRIP_X0 + ((double)(gv[k].ts - w->ts) +
		    (double)gv[k].dur / 2) * sd->scale;

		nd_buf_addf(b, "<text class=\"gap-label\" x=\"%.2f\" "
		    "y=\"%.0f\" font-size=\"10\" fill=\"#b00\" "
		    "text-anchor=\"%s\">", x,
		    top + sd->nlanes * STRIP_LANE + 11,
		    x < STRIP_X0 + 30 ? "start" :
		    x > STRIP_X0 + STRIP_PX - 30 ? "end" : "middle");
		nd_rep_put_dur(b, gv[k].dur);
		nd_buf_adds(b, "</text>\n");
	}
}

/* One kept device with a window of the step: its label, gaps and lanes. */
static void
strip_row(nd_report *r, nd_buf *b, struct sdraw *sd, size_t i, double y)
{
	const struct sdev *d = &r->strip->dev[i];
	const struct swin *w = sd->win[i];
	struct sgap *gv;
	size_t ng;
	double top = y + 18;
	char lab[512];

	strip_label(r, d, lab, sizeof lab);
	nd_buf_addf(b, "<g class=\"strip\"><text x=\"%d\" y=\"%.0f\" "
	    "font-size=\"12\">", STRIP_X0, y + 13);
	h_text(b, lab);
	nd_buf_addf(b, ": step %lld, ts_ns %lld, ", (long long)sd->num,
	    (long long)w->ts);
	nd_rep_put_dur(b, w->dur);
	nd_buf_addf(b, "</text>\n<rect x=\"%d\" y=\"%.0f\" "
	    "width=\"%.2f\" height=\"%d\" fill=\"#f4f4f4\"/>\n",
	    STRIP_X0, top, (double)w->dur * sd->scale,
	    sd->nlanes * STRIP_LANE);
	gv = strip_gaps(r, b, sd, i, top, &ng);
	for (int c = 0; c < SC_N; c++) {
		size_t k0 = 0, k1;

		if (sd->lane[c] < 0)
			continue;
		while (k0 < sd->nclip[i] && sd->clip[i][k0].cls != c)
			k0++;
		for (k1 = k0; k1 < sd->nclip[i] && sd->clip[i][k1].cls == c;)
			k1++;
		strip_lane(r, b, sd->clip[i] + k0, k1 - k0, w->ts, sd->scale,
		    sd->px_ns, top + sd->lane[c] * STRIP_LANE);
	}
	strip_gap_labels(b, sd, w, gv, ng, top);
	nd_buf_adds(b, "</g>\n");
	free(gv);
}

/* The time axis below the rows (at y), then the legend of the lanes. */
static void
strip_axis(nd_buf *b, const struct sdraw *sd, double y)
{
	int64_t tick;
	double x = STRIP_X0, ly = y + 40;

	/* a tick every 1, 2 or 5 times a power of ten ns, at most 11 */
	for (tick = 1; tick * 10 < sd->maxdur;) {
		if (tick * 20 >= sd->maxdur) {
			tick *= 2;
			break;
		}
		if (tick * 50 >= sd->maxdur) {
			tick *= 5;
			break;
		}
		tick *= 10;
	}
	nd_buf_addf(b, "<g class=\"axis\"><line x1=\"%d\" y1=\"%.0f\" "
	    "x2=\"%d\" y2=\"%.0f\" stroke=\"#555\"/>\n", STRIP_X0, y + 4,
	    STRIP_X0 + STRIP_PX, y + 4);
	for (int64_t t = 0; t <= sd->maxdur; t += tick) {
		double tx = STRIP_X0 + (double)t * sd->scale;

		nd_buf_addf(b, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" "
		    "y2=\"%.0f\" stroke=\"#555\"/><text x=\"%.2f\" y=\"%.0f\" "
		    "font-size=\"10\" text-anchor=\"%s\">", tx, y + 4, tx,
		    y + 8, tx, y + 18, t == 0 ? "start" :
		    tx > STRIP_X0 + STRIP_PX - 20 ? "end" : "middle");
		nd_rep_put_dur(b, t);
		nd_buf_adds(b, "</text>\n");
	}
	nd_buf_adds(b, "</g>\n");
	for (int c = 0; c < SC_N; c++) {
		if (sd->lane[c] < 0)
			continue;
		nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%.0f\" "
		    "y=\"%.0f\" font-size=\"11\">%s</text>\n", x,
		    ly - 9, sc_color[c], x + 13, ly, sc_name[c]);
		x += 14 + 7 * (double)strlen(sc_name[c]) + 12;
	}
	nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
	    "height=\"10\" fill=\"url(#nd-gap)\"/><text x=\"%.0f\" "
	    "y=\"%.0f\" font-size=\"11\">idle gap</text>\n", x, ly - 9,
	    x + 13, ly);
}

/* The caption: which step, why, and what is not drawn. */
static void
strip_caption(nd_report *r, nd_buf *b, const struct sdraw *sd,
    ptrdiff_t pick, ptrdiff_t closest)
{
	size_t ndevs = 0;

	for (size_t i = 0; i < r->ndevs; i++)
		ndevs += strcmp(r->devs[i].key, "host") != 0;
	nd_buf_addf(b, "</svg><figcaption>Timeline of step %lld, the steady "
	    "step whose time is closest to the steady median (",
	    (long long)sd->num);
	nd_rep_put_dur(b, r->steady.median);
	nd_buf_addf(b, "), on each device from its own start of the step: "
	    "ops by class, one lane a class; idle gaps (trace-gaps(1), device "
	    "level) hatched red, the %d largest labelled", STRIP_LABELS);
	if (sd->small > 0) {
		nd_buf_addf(b, "; %zu gaps narrower than one pixel (%.0f ns), ",
		    sd->small, sd->px_ns);
		nd_rep_put_dur(b, sd->small_ns);
		nd_buf_adds(b, " in all, not drawn");
	}
	nd_buf_adds(b, ".");
	if (closest >= 0 && closest != pick)
		nd_buf_addf(b, " The closest, step %lld, lost ops to the cap "
		    "of %d ops kept per device.", (long long)r->cl_num[closest],
		    STRIP_RING);
	if (sd->rows < ndevs)
		nd_buf_addf(b, " Devices drawn: %zu of the %zu with step "
		    "windows (of the first %d devices with device ops, those "
		    "with a window of step %lld).", sd->rows, ndevs, STRIP_DEVS,
		    (long long)sd->num);
	nd_buf_adds(b, "</figcaption></figure>\n");
}

static void
svg_strip(nd_report *r, nd_buf *b)
{
	struct strip *s = r->strip;
	struct sdraw sd;
	ptrdiff_t pick, closest;
	double y = 0;

	if (s == NULL || s->ndev == 0)
		return;
	if (r->steady.count == 0) {
		nd_buf_adds(b, "<p class=\"note\">No timeline strip: no "
		    "steps.</p>\n");
		return;
	}
	for (size_t i = 0; i < s->ndev; i++)
		nd_sort(s->dev[i].win, s->dev[i].nwin, sizeof *s->dev[i].win,
		    swin_cmp, NULL);
	if ((pick = strip_pick(r, &closest)) < 0) {
		nd_buf_addf(b, "<p class=\"note\">No timeline strip: no steady "
		    "step of the first %d devices has all its ops among the "
		    "latest %d kept per device.</p>\n", STRIP_DEVS, STRIP_RING);
		return;
	}
	memset(&sd, 0, sizeof sd);
	sd.num = r->cl_num[pick];
	strip_layout(r, &sd);
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%.0f\" role=\"img\" aria-label=\"timeline "
	    "of step %lld\"><rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#fff\"/>\n<defs><pattern id=\"nd-gap\" width=\"6\" "
	    "height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\""
	    "rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fdd\"/>"
	    "<rect width=\"3\" height=\"6\" fill=\"#d62728\"/></pattern>"
	    "</defs>\n", STRIP_PX + 2 * STRIP_X0,
	    sd.rowh * (double)sd.rows + 52, (long long)sd.num);
	for (size_t i = 0; i < s->ndev; i++) {
		if (sd.win[i] == NULL)
			continue;
		strip_row(r, b, &sd, i, y);
		y += sd.rowh;
	}
	strip_axis(b, &sd, y);
	strip_caption(r, b, &sd, pick, closest);
	for (size_t i = 0; i < s->ndev; i++)
		free(sd.clip[i]);
}

static void
h_chart(nd_report *r, nd_buf *b, int section)
{
	if (section == 3)
		svg_steps(r, b);
	else if (section == 4)
		svg_breakdown(r, b);
	else if (section == 6)
		svg_strip(r, b);
	else if (section == 7)
		svg_regions(r, b);
}

void
nd_report_html(nd_report *r, nd_buf *b)
{
	nd_buf md = { 0 };
	size_t i = 0;
	int in_table = 0, in_list = 0, in_p = 0, section = 0;

	nd_report_markdown(r, &md);
	nd_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\"><title>Trace report</title>\n<style>\n"
	    "body{font:14px/1.4 sans-serif;margin:2em auto;max-width:1100px;"
	    "color:#222;padding:0 1em}\n"
	    "table{border-collapse:collapse;margin:.5em 0}\n"
	    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
	    "vertical-align:top}\nth{background:#f0f0f0}\n"
	    "td{max-width:40em;overflow-wrap:anywhere}\n"
	    "code{background:#f4f4f4}\nfigure{margin:1em 0}\n"
	    "figcaption{font-size:12px;color:#555}\n.note{font-size:12px;"
	    "color:#555}\nh2{border-bottom:1px solid #ddd;margin-top:1.5em}\n"
	    "</style></head><body>\n");
	while (i < md.len) {
		char *nl = memchr(md.p + i, '\n', md.len - i);
		size_t n = nl ? (size_t)(nl - (md.p + i)) : md.len - i;
		const char *s = md.p + i;

		i += n + 1;
		if (in_table && (n == 0 || s[0] != '|')) {
			nd_buf_adds(b, "</table>\n");
			in_table = 0;
		}
		if (in_list && (n < 2 || s[0] != '-' || s[1] != ' ')) {
			nd_buf_adds(b, "</ul>\n");
			in_list = 0;
		}
		if (in_p && (n == 0 || s[0] == '#' || s[0] == '|')) {
			nd_buf_adds(b, "</p>\n");
			in_p = 0;
		}
		if (n == 0)
			continue;
		if (n > 3 && memcmp(s, "## ", 3) == 0) {
			if (section > 0)
				h_chart(r, b, section);
			section = s[3] - '0';
			nd_buf_addf(b, "<h2 id=\"s%d\">", section);
			h_esc_inline(b, s + 3, n - 3);
			nd_buf_adds(b, "</h2>\n");
		} else if (n > 4 && memcmp(s, "### ", 4) == 0) {
			nd_buf_adds(b, "<h3>");
			h_esc_inline(b, s + 4, n - 4);
			nd_buf_adds(b, "</h3>\n");
		} else if (n > 2 && memcmp(s, "# ", 2) == 0) {
			nd_buf_adds(b, "<h1>");
			h_esc_inline(b, s + 2, n - 2);
			nd_buf_adds(b, "</h1>\n");
		} else if (s[0] == '|') {
			if (!in_table) {
				nd_buf_adds(b, "<table>\n");
				h_row(b, s, n, "th");
				in_table = 1;
			} else if (n > 3 && memcmp(s, "|---", 4) == 0)
				continue;
			else
				h_row(b, s, n, "td");
		} else if (n > 1 && s[0] == '-' && s[1] == ' ') {
			if (!in_list)
				nd_buf_adds(b, "<ul>\n");
			in_list = 1;
			nd_buf_adds(b, "<li>");
			h_esc_inline(b, s + 2, n - 2);
			nd_buf_adds(b, "</li>\n");
		} else if (n > 2 && memcmp(s, "[^", 2) == 0) {
			const char *c = memchr(s, ':', n);
			size_t k = c ? (size_t)(c - s) + 1 : 0;

			nd_buf_adds(b, "<p class=\"note\"><sup>1</sup>");
			h_esc_inline(b, s + k, n - k);
			nd_buf_adds(b, "</p>\n");
		} else {
			nd_buf_adds(b, in_p ? " " : "<p>");
			in_p = 1;
			h_esc_inline(b, s, n);
		}
	}
	if (in_table)
		nd_buf_adds(b, "</table>\n");
	if (in_list)
		nd_buf_adds(b, "</ul>\n");
	if (in_p)
		nd_buf_adds(b, "</p>\n");
	if (section > 0)
		h_chart(r, b, section);
	nd_buf_adds(b, "</body></html>\n");
	nd_buf_free(&md);
}
