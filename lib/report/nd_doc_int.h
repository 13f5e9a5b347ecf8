/*
 * nd_doc_int.h: the nodes of an nd_doc, for its two writers (nd_doc.c
 * Markdown, nd_doc_html.c HTML).
 */
#ifndef ND_DOC_INT_H
#define ND_DOC_INT_H

#include "nd_doc.h"

#include <stdint.h>

enum {
	ND_DOC_TITLE, ND_DOC_SECTION, ND_DOC_SUB, ND_DOC_PARA, ND_DOC_ITEM,
	ND_DOC_NOTE, ND_DOC_TABLE, ND_DOC_HEAD, ND_DOC_ROW, ND_DOC_CELL,
	/* from here on, HTML only */
	ND_DOC_HTML_ONLY,
	ND_DOC_HPARA = ND_DOC_HTML_ONLY, ND_DOC_FIGURE, ND_DOC_BOX,
	ND_DOC_BOX_END, ND_DOC_TOC
};

struct nd_doc_node {
	int kind;
	size_t off, len;	/* the text, in d->text */
	int has_full;		/* a cell: its full text, in d->full */
	size_t foff, flen;
	int right;		/* a table: columns aligned right */
	const char *cls, *lead;	/* ND_DOC_HPARA */
	char *label;		/* a note's label, a box's id */
	char id[32];		/* sections (nd_doc_ids) */
};

struct nd_doc {
	struct nd_doc_node *v;
	size_t n, cap;
	size_t cur;		/* the node whose text is being written */
	int figures;
	nd_buf text, full, sink;
};

/* Set the ids of the sections and subsections. */
void nd_doc_ids(nd_doc *d);

#endif
