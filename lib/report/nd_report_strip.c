/*
 * nd_report: the timeline strip of the HTML page (nd_report_int.h says
 * what is collected and what is drawn).
 */
#include "nd_report_int.h"

#include "nd_sort.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sc_name[ND_SVG_NCLASS] = { "compute", "communication",
	"memory", "other", "host" };

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
	size_t lo = nd_lower_bound(d->win, d->nwin, sizeof *d->win,
	    offsetof(struct swin, num), num);

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
			if (d->ops.lost && w->ts < d->ops.lost_end)
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
	int64_t s, e, dur;	/* clipped start and end; the span's duration */
	uint32_t name;
	int cls;
};

static int
sclip_cmp(const void *a, const void *b, void *ctx)
{
	const struct sclip *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	/* by name, not id: ids depend on the order names came in (a merge
	 * of partial results reads them in another) */
	return x->name == y->name ? 0 : strcmp(nd_intern_str(ctx, x->name,
	    NULL), nd_intern_str(ctx, y->name, NULL));
}

/* Kept devices drawn by source, then name (not in the order they came). */
static int
sdev_order(const void *a, const void *b, void *ctx)
{
	const struct sdev *x = a, *y = b;

	(void)ctx;
	return nd_rep_sdev_cmp(x->source, x->key, x->klen, y);
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

/* The spans of g in [ts, te), clipped, by class then start. */
static struct sclip *
strip_clip(const struct strip *s, const struct sring *g, int64_t ts,
    int64_t te, size_t *np)
{
	struct sclip *v = nd_xmalloc((g->n ? g->n : 1) * sizeof *v);
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct sop *o = &g->v[i];

		if (o->ts >= te || o->ts + o->dur <= ts)
			continue;
		v[n].s = o->ts > ts ? o->ts : ts;
		v[n].e = o->ts + o->dur < te ? o->ts + o->dur : te;
		v[n].dur = o->dur;
		v[n].name = o->name;
		v[n].cls = o->cls;
		n++;
	}
	nd_sort(v, n, sizeof *v, sclip_cmp, s->names);
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

		/* one piece: spans less than one pixel apart */
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
		nd_buf_addf(b, "<rect class=\"%s\" x=\"%.2f\" y=\"%.0f\" "
		    "width=\"%.2f\" height=\"%d\" fill=\"%s\"",
		    v[i].cls == ND_SVG_HOST ? "host" : "op", x, y, w < 1 ? 1.0 : w,
		    STRIP_LANE - 1, nd_svg_class_color[v[i].cls]);
		/* a merged piece with idle time inside: lighter */
		if (busy < pe - ps)
			nd_buf_addf(b, " fill-opacity=\"%.2f\"", 0.3 + 0.7 *
			    (double)busy / (double)(pe - ps));
		nd_buf_adds(b, "><title>");
		/* host spans inside another are not kept, so how many a
		 * piece holds depends on the stream's order: never said */
		if (j - i == 1 && v[i].cls != ND_SVG_HOST) {
			nd_svg_text(b, nd_intern_str(s->names, v[i].name,
			    NULL));
			nd_buf_adds(b, ": ");
			nd_fmt_dur_spaced(b, v[i].dur);
		} else {
			if (v[i].cls == ND_SVG_HOST)
				nd_buf_adds(b, "host activity, ");
			else
				nd_buf_addf(b, "%zu %s ops, ", j - i,
				    sc_name[v[i].cls]);
			nd_fmt_dur_spaced(b, busy);
			nd_buf_adds(b, " busy; longest ");
			nd_svg_text(b, nd_intern_str(s->names,
			    v[longest].name, NULL));
			nd_buf_adds(b, " (");
			nd_fmt_dur_spaced(b, v[longest].dur);
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
	int profile;		/* the profile windows, not a step */
	struct swin pw[STRIP_DEVS];
	const struct swin *win[STRIP_DEVS];
	struct sclip *clip[STRIP_DEVS];
	size_t nclip[STRIP_DEVS], rows, small;
	const struct sring *host[STRIP_DEVS];	/* NULL: no host lane */
	size_t host_lost;	/* rows whose host lane lost spans */
	int lane[ND_SVG_HOST], nlanes, has_host;
	double scale, px_ns, rowh;
};

/* The host activity of d's source, when it covers window w whole. */
static const struct sring *
strip_host_of(const struct strip *s, const struct sdev *d,
    const struct swin *w, struct sdraw *sd)
{
	for (size_t k = 0; k < s->nhost; k++) {
		const struct sring *g = &s->host[k].spans;

		if (s->host[k].source != d->source)
			continue;
		if (g->lost && w->ts < g->lost_end) {
			sd->host_lost++;
			return NULL;
		}
		return g;
	}
	return NULL;
}

/* The ops of the windows in sd->win, the lanes and the scale. */
static void
strip_layout(nd_report *r, struct sdraw *sd)
{
	struct strip *s = r->strip;

	for (int c = 0; c < ND_SVG_HOST; c++)
		sd->lane[c] = -1;
	for (size_t i = 0; i < s->ndev; i++) {
		const struct swin *w = sd->win[i];

		sd->clip[i] = NULL;
		sd->nclip[i] = 0;
		sd->host[i] = NULL;
		if (w == NULL)
			continue;
		sd->rows++;
		if (w->dur > sd->maxdur)
			sd->maxdur = w->dur;
		sd->clip[i] = strip_clip(s, &s->dev[i].ops, w->ts,
		    w->ts + w->dur, &sd->nclip[i]);
		for (size_t k = 0; k < sd->nclip[i]; k++)
			sd->lane[sd->clip[i][k].cls] = 0;
		if ((sd->host[i] = strip_host_of(s, &s->dev[i], w, sd)) != NULL)
			sd->has_host = 1;
	}
	for (int c = 0; c < ND_SVG_HOST; c++)
		if (sd->lane[c] == 0)
			sd->lane[c] = sd->nlanes++;
	if (sd->nlanes == 0)
		sd->nlanes = 1;
	if (sd->maxdur <= 0)
		sd->maxdur = 1;
	sd->scale = (double)STRIP_PX / (double)sd->maxdur;
	sd->px_ns = (double)sd->maxdur / STRIP_PX;
	sd->rowh = 18 + (sd->nlanes + sd->has_host) * STRIP_LANE +
	    (sd->has_host ? 2 : 0) + 16;
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
		    "fill=\"url(#nd-st-idle)\" stroke=\"#555\" "
		    "stroke-width=\"0.5\"><title>idle ",
		    STRIP_X0 + (double)(a - w->ts) * sd->scale, top,
		    (double)(e - a) * sd->scale, sd->nlanes * STRIP_LANE);
		nd_fmt_dur_spaced(b, g->dur);
		nd_buf_addf(b, " at ts_ns %lld; payload ", (long long)g->ts);
		nd_svg_text(b, nd_intern_str(s->names, g->payload, NULL));
		nd_buf_adds(b, ", cause ");
		nd_svg_text(b, nd_intern_str(s->names, g->cause, NULL));
		nd_buf_adds(b, "</title></rect>\n");
		ng++;
	}
	*np = ng;
	return gv;
}

/* Of the largest gaps of gv, the STRIP_LABELS first whose labels (their
 * duration, centred on the gap) do not collide, labelled. */
static void
strip_gap_labels(nd_buf *b, const struct sdraw *sd, const struct swin *w,
    struct sgap *gv, size_t ng, double y)
{
	struct nd_svg_label lab[STRIP_LABELS * 4];
	char txt[STRIP_LABELS * 4][32];
	size_t n = 0;
	nd_buf t = ND_BUF_INIT;

	nd_sort(gv, ng, sizeof *gv, sgap_cmp, NULL);
	for (size_t k = 0; k < ng && n < STRIP_LABELS * 4; k++) {
		double x = STRIP_X0 + ((double)(gv[k].ts - w->ts) +
		    (double)gv[k].dur / 2) * sd->scale;

		nd_buf_reset(&t);
		nd_fmt_dur_spaced(&t, gv[k].dur);
		snprintf(txt[n], sizeof txt[n], "%.*s", (int)t.len, t.p);
		lab[n].w = nd_svg_text_w(strlen(txt[n]), 10);
		lab[n].x = x - lab[n].w / 2;
		/* keep inside the strip */
		if (lab[n].x < STRIP_X0)
			lab[n].x = STRIP_X0;
		if (lab[n].x + lab[n].w > STRIP_X0 + STRIP_PX)
			lab[n].x = STRIP_X0 + STRIP_PX - lab[n].w;
		lab[n].pri = (double)(ng - k);
		n++;
	}
	nd_svg_label_fit(lab, n, STRIP_X0, STRIP_X0 + STRIP_PX, STRIP_LABELS);
	for (size_t k = 0; k < n; k++) {
		if (!lab[k].ok)
			continue;
		nd_buf_addf(b, "<text class=\"gap-label\" x=\"%.2f\" "
		    "y=\"%.0f\" font-size=\"10\" fill=\"#333\">%s</text>\n",
		    lab[k].x, y, txt[k]);
	}
	nd_buf_free(&t);
}

/* One kept device with a window: its label, gaps, lanes and host lane. */
static void
strip_row(nd_report *r, nd_buf *b, struct sdraw *sd, size_t i, double y)
{
	const struct sdev *d = &r->strip->dev[i];
	const struct swin *w = sd->win[i];
	struct sgap *gv;
	size_t ng;
	double top = y + 18, hy = top + sd->nlanes * STRIP_LANE + 2;
	char lab[512];

	strip_label(r, d, lab, sizeof lab);
	nd_buf_addf(b, "<g class=\"strip\"><text x=\"%d\" y=\"%.0f\" "
	    "font-size=\"12\">", STRIP_X0, y + 13);
	nd_svg_text(b, lab);
	if (sd->profile)
		nd_buf_adds(b, ": profile window");
	else
		nd_buf_addf(b, ": step %lld", (long long)sd->num);
	nd_buf_addf(b, ", ts_ns %lld, ", (long long)w->ts);
	nd_fmt_dur_spaced(b, w->dur);
	nd_buf_addf(b, "</text>\n<rect x=\"%d\" y=\"%.0f\" "
	    "width=\"%.2f\" height=\"%d\" fill=\"#f4f4f4\"/>\n",
	    STRIP_X0, top, (double)w->dur * sd->scale,
	    sd->nlanes * STRIP_LANE);
	gv = strip_gaps(r, b, sd, i, top, &ng);
	for (int c = 0; c < ND_SVG_HOST; c++) {
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
	if (sd->host[i] != NULL) {
		size_t nh;
		struct sclip *hv = strip_clip(r->strip, sd->host[i], w->ts,
		    w->ts + w->dur, &nh);

		strip_lane(r, b, hv, nh, w->ts, sd->scale, sd->px_ns, hy);
		free(hv);
	}
	strip_gap_labels(b, sd, w, gv, ng, hy + sd->has_host * STRIP_LANE +
	    9);
	nd_buf_adds(b, "</g>\n");
	free(gv);
}

/* The time axis below the rows (at y), then the legend of the lanes. */
static void
strip_axis(nd_buf *b, const struct sdraw *sd, double y)
{
	int64_t tick = nd_svg_tick(sd->maxdur, 10);
	double x = STRIP_X0, ly = y + 40;

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
		nd_svg_axis_dur(b, t, tick, sd->maxdur);
		nd_buf_adds(b, "</text>\n");
	}
	nd_buf_adds(b, "</g>\n<g class=\"legend\">");
	for (int c = 0; c < ND_SVG_NCLASS; c++) {
		if (c < ND_SVG_HOST ? sd->lane[c] < 0 : !sd->has_host)
			continue;
		nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%.0f\" "
		    "y=\"%.0f\" font-size=\"11\">%s</text>\n", x,
		    ly - 9, nd_svg_class_color[c], x + 13, ly,
		    c == ND_SVG_HOST ? "host activity" : sc_name[c]);
		x += 14 + nd_svg_text_w(strlen(c == ND_SVG_HOST ? "host activity" :
		    sc_name[c]), 11) + 12;
	}
	nd_buf_addf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" "
	    "height=\"10\" fill=\"url(#nd-st-idle)\" stroke=\"#555\" "
	    "stroke-width=\"0.5\"/><text x=\"%.0f\" y=\"%.0f\" "
	    "font-size=\"11\">device idle (gap)</text></g>\n", x, ly - 9,
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
	if (sd->profile) {
		nd_buf_adds(b, "</svg><figcaption>Timeline of the profile "
		    "window (no steady steps): on each device from its first "
		    "device op's start to its last one's end");
		ndevs = r->strip->ndev;
	} else {
		nd_buf_addf(b, "</svg><figcaption>Timeline of step %lld, the "
		    "steady step whose time is closest to the steady median (",
		    (long long)sd->num);
		nd_fmt_dur_spaced(b, r->steady.median);
		nd_buf_adds(b, "), on each device from its own start of the "
		    "step");
	}
	nd_buf_addf(b, ": ops by class, one lane a class%s; idle gaps "
	    "(trace-gaps(1), device level) hatched grey, the largest %d whose "
	    "labels fit labelled", sd->has_host ? ", then the host lane (the "
	    "union of the host activity of the device's source)" : "",
	    STRIP_LABELS);
	if (sd->small > 0) {
		nd_buf_addf(b, "; %zu gap%s narrower than one pixel (",
		    sd->small, nd_rep_s(sd->small));
		nd_fmt_dur_spaced(b, (int64_t)(sd->px_ns + 0.5));
		nd_buf_adds(b, "), ");
		nd_fmt_dur_spaced(b, sd->small_ns);
		nd_buf_adds(b, " in all, not drawn");
	}
	nd_buf_adds(b, ".");
	if (sd->host_lost > 0)
		nd_buf_addf(b, " Host lane not drawn on %zu rows: the host "
		    "activity of their source passed the cap of %d spans kept.",
		    sd->host_lost, STRIP_RING);
	if (closest >= 0 && closest != pick)
		nd_buf_addf(b, " The closest, step %lld, lost ops to the cap "
		    "of %d ops kept per device.", (long long)r->cl_num[closest],
		    STRIP_RING);
	if (sd->rows < ndevs)
		nd_buf_addf(b, " Devices drawn: %zu of the %zu with %s "
		    "(of the first %d devices with device ops, those with %s).",
		    sd->rows, ndevs, sd->profile ? "device ops" : "step windows",
		    STRIP_DEVS, sd->profile ? "all their ops kept" : "a window "
		    "of that step");
	nd_buf_adds(b, "</figcaption></figure>\n");
}

/* The windows to draw, in sd: of the representative step, else (no
 * steady steps) the profile windows of the devices whose ops are all kept.
 * Returns 0, or -1 after a note saying why there is no strip. */
static int
strip_windows(nd_report *r, nd_buf *b, struct sdraw *sd, ptrdiff_t *pick,
    ptrdiff_t *closest)
{
	struct strip *s = r->strip;
	int any = 0;

	*pick = *closest = -1;
	if (r->steady.count > 0) {
		for (size_t i = 0; i < s->ndev; i++)
			nd_sort(s->dev[i].win, s->dev[i].nwin,
			    sizeof *s->dev[i].win, swin_cmp, NULL);
		if ((*pick = strip_pick(r, closest)) < 0) {
			nd_buf_addf(b, "<p class=\"note\">No timeline strip: no "
			    "steady step of the first %d devices has all its "
			    "ops among the latest %d kept per device.</p>\n",
			    STRIP_DEVS, STRIP_RING);
			return -1;
		}
		sd->num = r->cl_num[*pick];
		for (size_t i = 0; i < s->ndev; i++)
			sd->win[i] = strip_win_of(&s->dev[i], sd->num);
		return 0;
	}
	sd->profile = 1;
	for (size_t i = 0; i < s->ndev; i++) {
		const struct sring *g = &s->dev[i].ops;
		int64_t lo = 0, hi = 0;

		sd->win[i] = NULL;
		if (g->lost || g->n == 0)
			continue;
		for (size_t k = 0; k < g->n; k++) {
			if (k == 0 || g->v[k].ts < lo)
				lo = g->v[k].ts;
			if (k == 0 || g->v[k].ts + g->v[k].dur > hi)
				hi = g->v[k].ts + g->v[k].dur;
		}
		sd->pw[i].num = -1;
		sd->pw[i].ts = lo;
		sd->pw[i].dur = hi - lo;
		sd->win[i] = &sd->pw[i];
		any = 1;
	}
	if (!any) {
		nd_buf_addf(b, "<p class=\"note\">No timeline strip: no steps, "
		    "and the first %d devices have more than %d device ops "
		    "each.</p>\n", STRIP_DEVS, STRIP_RING);
		return -1;
	}
	return 0;
}

void
nd_rep_svg_strip(nd_report *r, nd_buf *b)
{
	struct strip *s = r->strip;
	struct sdraw sd;
	ptrdiff_t pick, closest;
	double y = 0;

	if (s == NULL || s->ndev == 0)
		return;
	nd_sort(s->dev, s->ndev, sizeof *s->dev, sdev_order, NULL);
	memset(&sd, 0, sizeof sd);
	if (strip_windows(r, b, &sd, &pick, &closest) != 0)
		return;
	strip_layout(r, &sd);
	nd_buf_addf(b, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%.0f\" role=\"img\" aria-label=\"timeline "
	    "of ", STRIP_PX + 2 * STRIP_X0, sd.rowh * (double)sd.rows + 52);
	if (sd.profile)
		nd_buf_adds(b, "the profile window\">");
	else
		nd_buf_addf(b, "step %lld\">", (long long)sd.num);
	nd_buf_adds(b, "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n");
	nd_svg_defs(b, "st");
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
