/*
 * nd_doc: the section model (nodes in reading order, their text in one
 * buffer) and the Markdown writer.
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
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].label);
	free(d->v);
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

static struct nd_doc_node *
add(nd_doc *d, int kind)
{
	struct nd_doc_node *x;

	close_text(d);
	nd_grow(&d->v, &d->cap, d->n + 1, sizeof *d->v);
	x = &d->v[d->n++];
	memset(x, 0, sizeof *x);
	x->kind = kind;
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
	return add_text(d, level <= 1 ? ND_DOC_TITLE : level == 2 ?
	    ND_DOC_SECTION : ND_DOC_SUB);
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
		d->v[d->n - 1].cls = cls;
		d->v[d->n - 1].lead = lead;
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

	d->v[d->n - 1].label = nd_xstrdup(label);
	return b;
}

void
nd_doc_table(nd_doc *d, int right, ...)
{
	va_list ap;
	const char *h;

	add(d, ND_DOC_TABLE)->right = right;
	va_start(ap, right);
	while ((h = va_arg(ap, const char *)) != NULL) {
		add_text(d, ND_DOC_HEAD);
		nd_buf_adds(&d->text, h);
	}
	va_end(ap);
	close_text(d);
}

void
nd_doc_row(nd_doc *d)
{
	add(d, ND_DOC_ROW);
}

nd_buf *
nd_doc_cell(nd_doc *d)
{
	return add_text(d, ND_DOC_CELL);
}

void
nd_doc_cell_full(nd_doc *d, const char *s, size_t n)
{
	struct nd_doc_node *x;

	if (d->cur == SIZE_MAX || d->v[d->cur].kind != ND_DOC_CELL)
		return;
	x = &d->v[d->cur];
	x->has_full = 1;
	x->foff = d->full.len;
	x->flen = n;
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
		d->v[d->n - 1].label = nd_xstrdup(id);
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
		const char *s = d->text.p + x->off;

		if (x->kind == ND_DOC_SECTION) {
			h2++;
			if (x->len > 0 && s[0] >= '1' && s[0] <= '9')
				snprintf(sec, sizeof sec, "s%d",
				    (int)strtol(s, NULL, 10) % 1000000);
			else
				snprintf(sec, sizeof sec, "h%zu", h2 % 1000000);
			snprintf(x->id, sizeof x->id, "%s", sec);
			k = 0;
		} else if (x->kind == ND_DOC_SUB)
			snprintf(x->id, sizeof x->id, "%s-%zu", sec,
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
	return d->v[m].id;
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

/* Whether node i continues the block before it: a cell or row of a table,
 * an item after an item. */
static int
continues(const nd_doc *d, size_t i, size_t prev)
{
	int k = d->v[i].kind;

	return k == ND_DOC_HEAD || k == ND_DOC_ROW || k == ND_DOC_CELL ||
	    (k == ND_DOC_ITEM && d->v[prev].kind == ND_DOC_ITEM);
}

static void
md_text(const nd_doc *d, const struct nd_doc_node *x, nd_buf *out)
{
	nd_buf_add(out, d->text.p + x->off, x->len);
}

/* The line a table's head ends with. */
static void
md_head_end(const nd_doc *d, size_t t, size_t i, nd_buf *out)
{
	nd_buf_adds(out, "\n|");
	for (size_t j = t + 1; j < i; j++)
		nd_buf_adds(out, d->v[t].right ? "---:|" : "---|");
	nd_buf_adds(out, "\n");
}

void
nd_doc_markdown(nd_doc *d, nd_buf *out)
{
	size_t prev = SIZE_MAX, table = SIZE_MAX;
	int row = 0;

	close_text(d);
	for (size_t i = 0; i < d->n; i++) {
		const struct nd_doc_node *x = &d->v[i];

		if (x->kind >= ND_DOC_HTML_ONLY)
			continue;
		if (row && x->kind != ND_DOC_CELL) {
			nd_buf_adds(out, "\n");
			row = 0;
		}
		if (table != SIZE_MAX && x->kind != ND_DOC_HEAD) {
			md_head_end(d, table, i, out);
			table = SIZE_MAX;
		}
		if (prev != SIZE_MAX && !continues(d, i, prev))
			nd_buf_adds(out, "\n");
		prev = i;
		switch (x->kind) {
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
			nd_buf_addf(out, "[^%s]: ", x->label);
			break;
		case ND_DOC_TABLE:
			table = i;
			nd_buf_adds(out, "|");
			continue;
		case ND_DOC_HEAD:
		case ND_DOC_CELL:
			nd_buf_adds(out, " ");
			md_text(d, x, out);
			nd_buf_adds(out, " |");
			continue;
		case ND_DOC_ROW:
			nd_buf_adds(out, "|");
			row = 1;
			continue;
		default:
			break;
		}
		md_text(d, x, out);
		nd_buf_adds(out, "\n");
	}
	if (row)
		nd_buf_adds(out, "\n");
	if (table != SIZE_MAX)
		md_head_end(d, table, d->n, out);
}
