/*
 * nd_doc_int.h: the nodes of an nd_doc, for its two writers (nd_doc.c
 * Markdown, nd_doc_html.c HTML).
 *
 * A node is 24 bytes whatever its kind, so that a table of a million rows
 * costs its text and little more: the cells of a row (and the head cells
 * of a table) are one node, their texts separated by a NUL byte (inline
 * text has none: nd_text_visible escapes it); the full name of a cell is
 * kept apart, by the offset of the cell's text; what only sections,
 * notes, boxes and HTML paragraphs have is kept apart too (aux).
 */
#ifndef ND_DOC_INT_H
#define ND_DOC_INT_H

#include "nd_doc.h"

#include <stdint.h>

enum {
	ND_DOC_TITLE, ND_DOC_SECTION, ND_DOC_SUB, ND_DOC_PARA, ND_DOC_ITEM,
	ND_DOC_NOTE, ND_DOC_TABLE, ND_DOC_ROW,
	/* from here on, HTML only */
	ND_DOC_HTML_ONLY,
	ND_DOC_HPARA = ND_DOC_HTML_ONLY, ND_DOC_FIGURE, ND_DOC_BOX,
	ND_DOC_BOX_END, ND_DOC_TOC,
	/* JSON only: members of the report's object (nd_doc_data) */
	ND_DOC_DATA
};

#define ND_DOC_NONE UINT32_MAX

struct nd_doc_node {
	size_t off, len;	/* the text, in d->text */
	uint32_t aux;		/* index in d->aux, or ND_DOC_NONE */
	uint8_t kind;
	uint8_t right;		/* a table: columns aligned right */
};

/* What a section, note, box or HTML paragraph has besides its text. */
struct nd_doc_aux {
	const char *cls, *lead;	/* ND_DOC_HPARA */
	char *label;		/* a note's label, a box's id */
	char id[32];		/* sections (nd_doc_ids) */
};

/* The full text of the cell whose text starts at offset cell. */
struct nd_doc_full {
	size_t cell, off, len;	/* off, len: in d->full */
};

struct nd_doc {
	struct nd_doc_node *v;
	size_t n, cap;
	struct nd_doc_aux *aux;
	size_t naux, capaux;
	struct nd_doc_full *fulls;	/* by cell offset, ascending */
	size_t nfulls, capfulls;
	size_t cur;		/* the node whose text is being written */
	size_t ncells;		/* cells of the current row so far */
	size_t cell;		/* the offset of the current cell's text */
	int figures;
	nd_buf text, full, sink;
	/* a streaming document (nd_doc_new_markdown, nd_doc_new_json): its
	 * output (md or js) and what hands it out */
	nd_buf *md;
	nd_doc_flush_fn *out_flush;
	void *out_ctx;
	int md_prev;
	/* a JSON document (nd_doc_new_json): its output, the writer of the
	 * data node being written, and how many nodes had members */
	nd_buf *js;
	nd_jw jw;
	size_t js_n;
};

/* Hand out to flush once it holds 64 KiB or more. */
static inline void
nd_doc_flush(nd_buf *out, nd_doc_flush_fn *flush, void *ctx)
{
	if (flush != NULL && out->len >= 65536)
		flush(ctx);
}

/* Set the ids of the sections and subsections. */
void nd_doc_ids(nd_doc *d);
/* The aux of node x (sections, notes, boxes, HTML paragraphs). */
struct nd_doc_aux *nd_doc_aux_of(const nd_doc *d,
    const struct nd_doc_node *x);

#endif
