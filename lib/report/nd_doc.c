/*
 * nd_doc: the section model (nodes in reading order, their text in one
 * buffer), the Markdown writer and the JSON one.
 */
#include "nd_doc_int.h"
#include "nd_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

nd_doc *
nd_doc_new(int figures)
{
	nd_doc *d = nd_xcalloc(1, sizeof *d);

	d->figures = figures;
	d->cur = SIZE_MAX;
	return d;
}

void
nd_doc_free(nd_doc *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->naux; i++)
		free(d->aux[i].label);
	free(d->aux);
	free(d->v);
	free(d->fulls);
	nd_buf_free(&d->text);
	nd_buf_free(&d->full);
	nd_buf_free(&d->sink);
	free(d);
}

int
nd_doc_figures(const nd_doc *d)
{
	return d->figures;
}

/* The text of the node being written ends where the buffer ends now. */
static void
close_text(nd_doc *d)
{
	if (d->cur != SIZE_MAX)
		d->v[d->cur].len = d->text.len - d->v[d->cur].off;
	d->cur = SIZE_MAX;
}

static void stream(nd_doc *d);

static struct nd_doc_node *
add(nd_doc *d, int kind)
{
	struct nd_doc_node *x;

	close_text(d);
	stream(d);
	nd_grow(&d->v, &d->cap, d->n + 1, sizeof *d->v);
	x = &d->v[d->n++];
	memset(x, 0, sizeof *x);
	x->kind = (uint8_t)kind;
	x->aux = ND_DOC_NONE;
	x->off = d->text.len;
	return x;
}

/* A node whose text follows. */
static nd_buf *
add_text(nd_doc *d, int kind)
{
	add(d, kind);
	d->cur = d->n - 1;
	return &d->text;
}

/* The aux of the node just added. */
static struct nd_doc_aux *
new_aux(nd_doc *d)
{
	struct nd_doc_aux *a;

	nd_grow(&d->aux, &d->capaux, d->naux + 1, sizeof *d->aux);
	a = &d->aux[d->naux];
	memset(a, 0, sizeof *a);
	d->v[d->n - 1].aux = (uint32_t)d->naux++;
	return a;
}

struct nd_doc_aux *
nd_doc_aux_of(const nd_doc *d, const struct nd_doc_node *x)
{
	return x->aux == ND_DOC_NONE ? NULL : &d->aux[x->aux];
}

/* A node only HTML shows: none without figures, its text lost. */
static nd_buf *
add_html(nd_doc *d, int kind)
{
	if (!d->figures) {
		close_text(d);
		nd_buf_reset(&d->sink);
		return &d->sink;
	}
	return add_text(d, kind);
}

nd_buf *
nd_doc_heading(nd_doc *d, int level)
{
	nd_buf *b = add_text(d, level <= 1 ? ND_DOC_TITLE : level == 2 ?
	    ND_DOC_SECTION : ND_DOC_SUB);

	if (level > 1)
		(void)new_aux(d);
	return b;
}

nd_buf *
nd_doc_para(nd_doc *d)
{
	return add_text(d, ND_DOC_PARA);
}

nd_buf *
nd_doc_para_html(nd_doc *d, const char *cls, const char *lead)
{
	nd_buf *b = add_html(d, ND_DOC_HPARA);

	if (b == &d->text) {
		struct nd_doc_aux *a = new_aux(d);

		a->cls = cls;
		a->lead = lead;
	}
	return b;
}

nd_buf *
nd_doc_item(nd_doc *d)
{
	return add_text(d, ND_DOC_ITEM);
}

nd_buf *
nd_doc_note(nd_doc *d, const char *label)
{
	nd_buf *b = add_text(d, ND_DOC_NOTE);

	new_aux(d)->label = nd_xstrdup(label);
	return b;
}

void
nd_doc_table(nd_doc *d, int right, ...)
{
	va_list ap;
	const char *h;
	int first = 1;

	(void)add_text(d, ND_DOC_TABLE);
	d->v[d->n - 1].right = right != 0;
	va_start(ap, right);
	while ((h = va_arg(ap, const char *)) != NULL) {
		if (!first)
			nd_buf_addc(&d->text, '\0');
		nd_buf_adds(&d->text, h);
		first = 0;
	}
	va_end(ap);
	close_text(d);
}

void
nd_doc_row(nd_doc *d)
{
	add_text(d, ND_DOC_ROW);
	d->ncells = 0;
}

nd_buf *
nd_doc_cell(nd_doc *d)
{
	if (d->cur == SIZE_MAX || d->v[d->cur].kind != ND_DOC_ROW)
		nd_doc_row(d);
	if (d->ncells++ > 0)
		nd_buf_addc(&d->text, '\0');
	d->cell = d->text.len;
	return &d->text;
}

void
nd_doc_cell_full(nd_doc *d, const char *s, size_t n)
{
	struct nd_doc_full *f;

	if (d->cur == SIZE_MAX || d->v[d->cur].kind != ND_DOC_ROW ||
	    d->ncells == 0)
		return;
	nd_grow(&d->fulls, &d->capfulls, d->nfulls + 1, sizeof *d->fulls);
	f = &d->fulls[d->nfulls++];
	f->cell = d->cell;
	f->off = d->full.len;
	f->len = n;
	nd_buf_add(&d->full, s, n);
}

nd_buf *
nd_doc_figure(nd_doc *d)
{
	return add_html(d, ND_DOC_FIGURE);
}

void
nd_doc_box(nd_doc *d, const char *id, const char *title)
{
	nd_buf *b = add_html(d, ND_DOC_BOX);

	nd_buf_adds(b, title);
	if (b == &d->text)
		new_aux(d)->label = nd_xstrdup(id);
	close_text(d);
}

void
nd_doc_box_end(nd_doc *d)
{
	add_html(d, ND_DOC_BOX_END);
	close_text(d);
}

void
nd_doc_toc(nd_doc *d)
{
	add_html(d, ND_DOC_TOC);
	close_text(d);
}

size_t
nd_doc_mark(const nd_doc *d)
{
	return d->n;
}

/* Ids of the sections and subsections, in reading order. */
void
nd_doc_ids(nd_doc *d)
{
	char sec[16] = "s0";
	size_t h2 = 0, k = 0;

	close_text(d);
	for (size_t i = 0; i < d->n; i++) {
		struct nd_doc_node *x = &d->v[i];
		struct nd_doc_aux *a = nd_doc_aux_of(d, x);
		const char *s = d->text.p + x->off;

		if (x->kind == ND_DOC_SECTION) {
			h2++;
			if (x->len > 0 && s[0] >= '1' && s[0] <= '9')
				snprintf(sec, sizeof sec, "s%d",
				    (int)strtol(s, NULL, 10) % 1000000);
			else
				snprintf(sec, sizeof sec, "h%zu", h2 % 1000000);
			snprintf(a->id, sizeof a->id, "%s", sec);
			k = 0;
		} else if (x->kind == ND_DOC_SUB)
			snprintf(a->id, sizeof a->id, "%s-%zu", sec,
			    ++k % 1000000);
	}
}

const char *
nd_doc_id(nd_doc *d, size_t m)
{
	if (m >= d->n || (d->v[m].kind != ND_DOC_SECTION &&
	    d->v[m].kind != ND_DOC_SUB))
		return NULL;
	nd_doc_ids(d);
	return nd_doc_aux_of(d, &d->v[m])->id;
}

void
nd_doc_move(nd_doc *d, size_t from, size_t to)
{
	struct nd_doc_node *t;
	size_t k;

	close_text(d);
	if (from > d->n || to >= from)
		return;
	k = d->n - from;
	t = nd_xcalloc(k + 1, sizeof *t);
	memcpy(t, d->v + from, k * sizeof *t);
	memmove(d->v + to + k, d->v + to, (from - to) * sizeof *t);
	memcpy(d->v + to, t, k * sizeof *t);
	free(t);
}

/* --- Markdown --- */

/* The cells of a row or a table's head (NUL-separated) as Markdown. */
static void
md_cells(const char *s, size_t n, nd_buf *out)
{
	nd_buf_adds(out, "|");
	for (size_t i = 0; i <= n;) {
		const char *e = memchr(s + i, '\0', n - i);
		size_t k = e != NULL ? (size_t)(e - (s + i)) : n - i;

		nd_buf_adds(out, " ");
		nd_buf_add(out, s + i, k);
		nd_buf_adds(out, " |");
		i += k + 1;
	}
	nd_buf_adds(out, "\n");
}

/* The line under a table's head: one "---|" a column. */
static void
md_rule(const struct nd_doc_node *x, const char *s, nd_buf *out)
{
	size_t cols = 1;

	for (size_t i = 0; i < x->len; i++)
		cols += s[i] == '\0';
	nd_buf_adds(out, "|");
	for (size_t i = 0; i < cols; i++)
		nd_buf_adds(out, x->right ? "---:|" : "---|");
	nd_buf_adds(out, "\n");
}

/* One node as Markdown; *prev: the kind of the node written before, -1
 * for none. */
static void
md_node(const nd_doc *d, const struct nd_doc_node *x, nd_buf *out, int *prev)
{
	const struct nd_doc_aux *a = nd_doc_aux_of(d, x);
	const char *s = d->text.p != NULL ? d->text.p + x->off : "";

	if (x->kind >= ND_DOC_HTML_ONLY)
		return;
	/* blocks apart by a blank line; rows and items run on */
	if (*prev >= 0 && !(x->kind == ND_DOC_ROW ||
	    (x->kind == ND_DOC_ITEM && *prev == ND_DOC_ITEM)))
		nd_buf_adds(out, "\n");
	*prev = x->kind;
	switch (x->kind) {
	case ND_DOC_TABLE:
		md_cells(s, x->len, out);
		md_rule(x, s, out);
		return;
	case ND_DOC_ROW:
		md_cells(s, x->len, out);
		return;
	case ND_DOC_TITLE:
		nd_buf_adds(out, "# ");
		break;
	case ND_DOC_SECTION:
		nd_buf_adds(out, "## ");
		break;
	case ND_DOC_SUB:
		nd_buf_adds(out, "### ");
		break;
	case ND_DOC_ITEM:
		nd_buf_adds(out, "- ");
		break;
	case ND_DOC_NOTE:
		nd_buf_addf(out, "[^%s]: ", a->label);
		break;
	default:
		break;
	}
	nd_buf_add(out, s, x->len);
	nd_buf_adds(out, "\n");
}

/* The members of a JSON document's data node, after those before. */
static void
json_node(nd_doc *d, const struct nd_doc_node *x)
{
	if (x->kind != ND_DOC_DATA || x->len == 0)
		return;
	if (d->js_n++ > 0)
		nd_buf_addc(d->js, ',');
	nd_buf_add(d->js, d->text.p + x->off, x->len);
}

/* A streaming document (Markdown or JSON): each node written as the next
 * one opens, then dropped. */
static void
stream(nd_doc *d)
{
	nd_buf *out = d->md != NULL ? d->md : d->js;

	if (out == NULL || d->n == 0)
		return;
	for (size_t i = 0; i < d->n; i++)
		if (d->md != NULL)
			md_node(d, &d->v[i], d->md, &d->md_prev);
		else
			json_node(d, &d->v[i]);
	for (size_t i = 0; i < d->naux; i++)
		free(d->aux[i].label);
	d->n = d->naux = d->nfulls = 0;
	nd_buf_reset(&d->text);
	nd_buf_reset(&d->full);
	nd_doc_flush(out, d->out_flush, d->out_ctx);
}

nd_doc *
nd_doc_new_markdown(nd_buf *out, nd_doc_flush_fn *flush, void *ctx)
{
	nd_doc *d = nd_doc_new(0);

	d->md = out;
	d->out_flush = flush;
	d->out_ctx = ctx;
	d->md_prev = -1;
	return d;
}

void
nd_doc_markdown(nd_doc *d, nd_buf *out, nd_doc_flush_fn *flush, void *ctx)
{
	int prev = -1;

	close_text(d);
	if (d->md != NULL) {	/* the rest of a streaming document */
		stream(d);
		return;
	}
	for (size_t i = 0; i < d->n; i++) {
		nd_doc_flush(out, flush, ctx);
		md_node(d, &d->v[i], out, &prev);
	}
}

/* --- JSON --- */

nd_doc *
nd_doc_new_json(nd_buf *out, nd_doc_flush_fn *flush, void *ctx)
{
	nd_doc *d = nd_doc_new(0);

	d->js = out;
	d->out_flush = flush;
	d->out_ctx = ctx;
	nd_buf_addc(out, '{');
	return d;
}

nd_jw *
nd_doc_data(nd_doc *d)
{
	if (d->js == NULL)
		return NULL;
	(void)add_text(d, ND_DOC_DATA);
	/* inside the object: the node's text starts after its '{' */
	nd_jw_init(&d->jw, &d->text);
	nd_jw_obj(&d->jw);
	d->v[d->n - 1].off = d->text.len;
	return &d->jw;
}

void
nd_doc_json_end(nd_doc *d)
{
	close_text(d);
	stream(d);
	nd_buf_adds(d->js, "}\n");
}
