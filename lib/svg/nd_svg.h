/*
 * nd_svg: what the inline SVG charts share (the report's HTML and
 * trace-pipeline's chart): text escaping, hatchings, axis ticks and
 * labels that do not overlap.
 */
#ifndef ND_SVG_H
#define ND_SVG_H

#include "nd_buf.h"

#include <stddef.h>
#include <stdint.h>

/* The colours of the classes of work, the same in every chart. */
enum { ND_SVG_COMPUTE, ND_SVG_COMM, ND_SVG_MEMORY, ND_SVG_OTHER,
	ND_SVG_HOST, ND_SVG_NCLASS };
extern const char *const nd_svg_class_color[ND_SVG_NCLASS];

/* Text for SVG and HTML: controls as visible escapes, the XML specials
 * escaped, nothing else interpreted. */
void nd_svg_text(nd_buf *b, const char *s);
void nd_svg_textn(nd_buf *b, const char *s, size_t n);

/* The hatchings nd-PREFIX-host and nd-PREFIX-idle of one chart. */
void nd_svg_defs(nd_buf *b, const char *prefix);

/* The width in px of a label of nchars characters. */
double nd_svg_text_w(size_t nchars, double font_size);

/* A tick of 1, 2 or 5 times a power of ten: at most n + 1 ticks to max;
 * the text of the tick t of an axis up to max ("0", "0.5 ms"). */
int64_t nd_svg_tick(int64_t max, int n);
void nd_svg_axis_dur(nd_buf *b, int64_t t, int64_t tick, int64_t max);

/* A label on one line: left edge, width (px); higher pri placed first. */
struct nd_svg_label {
	double x, w, pri;
	int ok;			/* set by nd_svg_label_fit: drawn */
};
size_t nd_svg_label_fit(struct nd_svg_label *v, size_t n, double lo,
    double hi, size_t max);

#endif
