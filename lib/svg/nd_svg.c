/*
 * nd_svg: what the inline SVG charts share.
 */
#include "nd_svg.h"

#include "nd_cli.h"
#include "nd_sort.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

const char *const nd_svg_class_color[ND_SVG_NCLASS] = { "#4e79a7", "#e15759",
	"#f28e2b", "#bab0ac", "#b07aa1" };

/* text for SVG and HTML: controls as visible escapes (nd_text_visible),
 * then the XML specials escaped, nothing else interpreted; n bytes of s */
void
nd_svg_textn(nd_buf *b, const char *s, size_t n)
{
	nd_buf vis = ND_BUF_INIT;

	nd_text_visible(&vis, s, n);
	s = vis.p != NULL ? vis.p : "";
	n = vis.len;
	for (const char *e = s + n; s < e; s++) {
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
	nd_buf_free(&vis);
}

void
nd_svg_text(nd_buf *b, const char *s)
{
	nd_svg_textn(b, s, strlen(s));
}

/* The hatchings of a chart, ids nd-PREFIX-host (device idle while the host
 * works) and nd-PREFIX-idle (device idle): ids unique in the page. */
void
nd_svg_defs(nd_buf *b, const char *p)
{
	nd_buf_addf(b, "<defs><pattern id=\"nd-%s-host\" width=\"6\" "
	    "height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\""
	    "rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f3e8f0\"/>"
	    "<rect width=\"2\" height=\"6\" fill=\"#b07aa1\"/></pattern>"
	    "<pattern id=\"nd-%s-idle\" width=\"6\" height=\"6\" "
	    "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(-45)\">"
	    "<rect width=\"6\" height=\"6\" fill=\"#fff\"/><rect width=\"2\" "
	    "height=\"6\" fill=\"#777\"/></pattern></defs>\n", p, p);
}

/* The width of a label of nchars characters: the widest digit of the
 * usual sans-serif fonts (DejaVu Sans 0.64 em; "ms" 1.5 em), with a margin. */
double
nd_svg_text_w(size_t nchars, double font_size)
{
	return (double)nchars * font_size * 0.68;
}

/* A tick of 1, 2 or 5 times a power of ten: at most n + 1 ticks to max. */
int64_t
nd_svg_tick(int64_t max, int n)
{
	int64_t tick;

	for (tick = 1; tick * n < max;) {
		if (tick * 2 * n >= max)
			return tick * 2;
		if (tick * 5 * n >= max)
			return tick * 5;
		tick *= 10;
	}
	return tick;
}

/* A value t of a time axis whose ticks are tick apart, up to max: in the
 * unit of max, with the decimals the tick needs ("0", "0.5 ms", "200 ms"). */
void
nd_svg_axis_dur(nd_buf *b, int64_t t, int64_t tick, int64_t max)
{
	static const int64_t div[] = { 1, 1000, 1000000, 1000000000 };
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	int k = 0, dec = 0;

	if (t == 0) {
		nd_buf_adds(b, "0");
		return;
	}
	while (k < 3 && max >= div[k + 1])
		k++;
	for (int64_t d = div[k]; d > tick && d > 1 && dec < 9; d /= 10)
		dec++;
	nd_buf_addf(b, "%.*f %s", dec, (double)t / (double)div[k], unit[k]);
}

static int
lab_cmp(const void *a, const void *b, void *ctx)
{
	const struct nd_svg_label *v = ctx;
	const struct nd_svg_label *x = &v[*(const size_t *)a];
	const struct nd_svg_label *y = &v[*(const size_t *)b];

	if (x->pri != y->pri)
		return x->pri > y->pri ? -1 : 1;
	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Labels on one line: by priority, each is drawn (ok) when it lies in
 * [lo, hi] and keeps 2 px from every label drawn before it, at most max.
 * The drawn are at most (hi - lo) / their narrowest width, so the check
 * costs that much a label. */
size_t
nd_svg_label_fit(struct nd_svg_label *v, size_t n, double lo, double hi,
    size_t max)
{
	size_t *ord = nd_xmalloc((n ? n : 1) * sizeof *ord), *kept;
	size_t nk = 0;

	kept = nd_xmalloc((n ? n : 1) * sizeof *kept);
	for (size_t i = 0; i < n; i++) {
		ord[i] = i;
		v[i].ok = 0;
	}
	nd_sort(ord, n, sizeof *ord, lab_cmp, v);
	for (size_t k = 0; k < n && nk < max; k++) {
		struct nd_svg_label *l = &v[ord[k]];
		int ok = l->x >= lo - 0.01 && l->x + l->w <= hi + 0.01;

		for (size_t j = 0; j < nk && ok; j++) {
			const struct nd_svg_label *o = &v[kept[j]];

			if (l->x < o->x + o->w + 2 && o->x < l->x + l->w + 2)
				ok = 0;
		}
		if (ok) {
			l->ok = 1;
			kept[nk++] = ord[k];
		}
	}
	free(ord);
	free(kept);
	return nk;
}

