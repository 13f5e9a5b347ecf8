/*
 * nd_doc: the HTML writer.  One self-contained page: the nodes as HTML, a
 * table of contents, a style and a script; nothing fetched.
 */
#include "nd_doc_int.h"
#include "nd_svg.h"

#include <string.h>

/* Inline text (nd_doc.h) as HTML. */
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

/* Paragraph text: its lines joined by a space. */
static void
h_para(nd_buf *b, const char *s, size_t n)
{
	int any = 0;

	while (n > 0) {
		const char *nl = memchr(s, '\n', n);
		size_t k = nl ? (size_t)(nl - s) : n;

		if (any)
			nd_buf_addc(b, ' ');
		h_esc_inline(b, s, k);
		any = 1;
		k += nl != NULL;
		s += k;
		n -= k;
	}
}

static void
h_text(const nd_doc *d, const struct nd_doc_node *x, nd_buf *b)
{
	h_esc_inline(b, d->text.p + x->off, x->len);
}

/* The table of contents: the box, every section and its subsections. */
static void
h_toc(const nd_doc *d, nd_buf *b)
{
	int sub = 0, any = 0;

	nd_buf_adds(b, "<nav id=\"contents\"><h2>Contents</h2>\n<ul>\n");
	for (size_t i = 0; i < d->n; i++) {
		const struct nd_doc_node *x = &d->v[i];
		const struct nd_doc_aux *a = nd_doc_aux_of(d, x);

		if (x->kind == ND_DOC_BOX) {
			nd_buf_addf(b, "<li><a href=\"#%s\">", a->label);
			h_text(d, x, b);
			nd_buf_adds(b, "</a></li>\n");
			continue;
		}
		if (x->kind == ND_DOC_SECTION) {
			if (any)
				nd_buf_adds(b, sub ? "</ul></li>\n" : "</li>\n");
			sub = 0;
		} else if (x->kind == ND_DOC_SUB) {
			if (!sub)
				nd_buf_adds(b, "<ul>\n");
			sub = 1;
		} else
			continue;
		nd_buf_addf(b, "<li><a href=\"#%s\">", a->id);
		h_text(d, x, b);
		nd_buf_adds(b, x->kind == ND_DOC_SUB ? "</a></li>\n" : "</a>");
		any = 1;
	}
	if (any)
		nd_buf_adds(b, sub ? "</ul></li>\n" : "</li>\n");
	nd_buf_adds(b, "</ul></nav>\n");
}

/* A row of a table (or its head, th): a cell a NUL-separated text, with
 * its full text on hover when it shows a name shortened.  *fp walks
 * d->fulls: rows come in the order of their text, so it only moves on
 * (but for a row placed before where it was written: from the start). */
static void
h_row(const nd_doc *d, const struct nd_doc_node *x, nd_buf *b, size_t *fp)
{
	const char *tag = x->kind == ND_DOC_TABLE ? "th" : "td";
	const char *s = d->text.p + x->off;
	size_t f = *fp > 0 && d->fulls[*fp - 1].cell >= x->off ? 0 : *fp;

	nd_buf_adds(b, "<tr>");
	for (size_t i = 0; i <= x->len;) {
		const char *e = memchr(s + i, '\0', x->len - i);
		size_t k = e != NULL ? (size_t)(e - (s + i)) : x->len - i;

		nd_buf_addf(b, "<%s", tag);
		while (f < d->nfulls && d->fulls[f].cell < x->off + i)
			f++;
		if (f < d->nfulls && d->fulls[f].cell == x->off + i) {
			nd_buf_adds(b, " title=\"");
			nd_svg_textn(b, d->full.p + d->fulls[f].off,
			    d->fulls[f].len);
			nd_buf_adds(b, "\"");
		}
		nd_buf_adds(b, ">");
		h_esc_inline(b, s + i, k);
		nd_buf_addf(b, "</%s>", tag);
		i += k + 1;
	}
	nd_buf_adds(b, "</tr>\n");
	*fp = f;
}

/* Close the table or list that node kind k does not continue. */
static void
h_close(nd_buf *b, int k, int *table, int *list)
{
	if (*table && k != ND_DOC_ROW) {
		nd_buf_adds(b, "</table>\n");
		*table = 0;
	}
	if (*list && k != ND_DOC_ITEM) {
		nd_buf_adds(b, "</ul>\n");
		*list = 0;
	}
}

static void
h_node(const nd_doc *d, const struct nd_doc_node *x, nd_buf *b, int *table,
    int *list, size_t *fp)
{
	const char *s = d->text.p + x->off;
	const struct nd_doc_aux *a = nd_doc_aux_of(d, x);
	int lv = x->kind == ND_DOC_SECTION ? 2 : 3;

	switch (x->kind) {
	case ND_DOC_TITLE:
		nd_buf_adds(b, "<h1>");
		h_text(d, x, b);
		nd_buf_adds(b, "</h1>\n");
		break;
	case ND_DOC_SECTION:
	case ND_DOC_SUB:
		nd_buf_addf(b, "<h%d id=\"%s\">", lv, a->id);
		h_text(d, x, b);
		nd_buf_addf(b, "</h%d>\n", lv);
		break;
	case ND_DOC_PARA:
	case ND_DOC_HPARA:
		nd_buf_adds(b, "<p");
		if (a != NULL && a->cls != NULL)
			nd_buf_addf(b, " class=\"%s\"", a->cls);
		nd_buf_adds(b, ">");
		if (a != NULL && a->lead != NULL)
			nd_buf_addf(b, "<strong>%s</strong> ", a->lead);
		h_para(b, s, x->len);
		nd_buf_adds(b, "</p>\n");
		break;
	case ND_DOC_ITEM:
		if (!*list)
			nd_buf_adds(b, "<ul>\n");
		*list = 1;
		nd_buf_adds(b, "<li>");
		h_text(d, x, b);
		nd_buf_adds(b, "</li>\n");
		break;
	case ND_DOC_NOTE:
		nd_buf_adds(b, "<p class=\"note\"><sup>1</sup> ");
		h_para(b, s, x->len);
		nd_buf_adds(b, "</p>\n");
		break;
	case ND_DOC_TABLE:
		nd_buf_adds(b, "<table>\n");
		*table = 1;
		h_row(d, x, b, fp);
		break;
	case ND_DOC_ROW:
		h_row(d, x, b, fp);
		break;
	case ND_DOC_FIGURE:
		nd_buf_add(b, s, x->len);
		break;
	case ND_DOC_BOX:
		nd_buf_addf(b, "<section id=\"%s\"><h2>", a->label);
		h_text(d, x, b);
		nd_buf_adds(b, "</h2>\n");
		break;
	case ND_DOC_BOX_END:
		nd_buf_adds(b, "</section>\n");
		break;
	case ND_DOC_TOC:
		h_toc(d, b);
		break;
	}
}

void
nd_doc_html(nd_doc *d, const char *title, nd_buf *b, nd_doc_flush_fn *flush,
    void *ctx)
{
	int table = 0, list = 0;
	size_t fp = 0;

	nd_doc_ids(d);
	nd_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\"><title>");
	nd_svg_text(b, title);
	nd_buf_adds(b, "</title>\n");
	nd_buf_adds(b, h_style);
	nd_buf_adds(b, "</head><body>\n");
	for (size_t i = 0; i < d->n; i++) {
		nd_doc_flush(b, flush, ctx);
		h_close(b, d->v[i].kind, &table, &list);
		h_node(d, &d->v[i], b, &table, &list, &fp);
	}
	h_close(b, -1, &table, &list);
	nd_buf_adds(b, h_script);
	nd_buf_adds(b, "</body></html>\n");
}
