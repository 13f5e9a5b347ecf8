/*
 * nd_doc: the report's section model, and its Markdown and HTML writers.
 *
 * A document is a sequence of nodes in reading order: a title, sections
 * (level 2) and subsections (level 3) that hold everything up to the next
 * heading of their level or above, paragraphs, list items (a run of items
 * is one list), footnotes, tables (head cells, then rows of cells; a cell
 * may carry the full text of a name it shows shortened), figures (SVG or
 * HTML that only the HTML writer shows), a box (a framed part, the HTML
 * summary), and the place of the table of contents.  The writers render
 * the nodes; neither reads the other's output.
 *
 * Text of a heading, paragraph, item, note or cell is inline text: plain
 * text in which \X is the character X, `...` code, **...** strong and
 * [^label] a footnote reference (the subset of Markdown inline syntax the
 * builder writes; nd_doc_markdown writes it as it is, nd_doc_html
 * converts it).  Inline text holds no NUL (nd_text_visible escapes it).
 *
 * The same document gives the report's JSON (nd_doc_new_json): its data
 * nodes are the members of one JSON object, in order, and the text nodes
 * are built and dropped.
 *
 * Building: each call that opens a node returns the buffer its text is
 * written to; the node's text is what is appended to that buffer until the
 * next node opens (a cell's until the next cell or node).  Section ids: "sN" for a section whose title starts with
 * the number N, else "hK" (the K-th section); "ID-K" for the K-th
 * subsection of section ID.
 */
#ifndef ND_DOC_H
#define ND_DOC_H

#include "nd_buf.h"
#include "nd_json.h"

#include <stddef.h>

typedef struct nd_doc nd_doc;

/* figures: keep the nodes only HTML shows (figures, the box, the table of
 * contents); without, their text goes to a scratch buffer and is lost. */
nd_doc *nd_doc_new(int figures);
void nd_doc_free(nd_doc *d);
int nd_doc_figures(const nd_doc *d);

/* A heading: level 1 the title, 2 a section, 3 a subsection. */
nd_buf *nd_doc_heading(nd_doc *d, int level);
nd_buf *nd_doc_para(nd_doc *d);
/* A paragraph only HTML shows, led by lead in bold, of class cls (either
 * may be NULL). */
nd_buf *nd_doc_para_html(nd_doc *d, const char *cls, const char *lead);
nd_buf *nd_doc_item(nd_doc *d);
/* A footnote: "[^label]: text"; label must be plain. */
nd_buf *nd_doc_note(nd_doc *d, const char *label);

/* A table with the head cells given (plain text), NULL-terminated; right:
 * every column aligned right. */
void nd_doc_table(nd_doc *d, int right, ...);
void nd_doc_row(nd_doc *d);
nd_buf *nd_doc_cell(nd_doc *d);
/* The full text of the name the current cell shows shortened (n bytes, it
 * may hold NUL); HTML shows it on hover. */
void nd_doc_cell_full(nd_doc *d, const char *s, size_t n);

/* A figure: HTML (inline SVG) written as it is, by HTML only. */
nd_buf *nd_doc_figure(nd_doc *d);
/* A box titled title (plain), up to nd_doc_box_end; HTML only. */
void nd_doc_box(nd_doc *d, const char *id, const char *title);
void nd_doc_box_end(nd_doc *d);
/* Where the table of contents goes (HTML only). */
void nd_doc_toc(nd_doc *d);

/* The number of nodes so far: a mark for nd_doc_id and nd_doc_move. */
size_t nd_doc_mark(const nd_doc *d);
/* The id of the section or subsection opened at mark m (the node count
 * before it was opened), or NULL; valid until the next node is added. */
const char *nd_doc_id(nd_doc *d, size_t m);
/* Move the nodes from mark from to the end before the node at mark to. */
void nd_doc_move(nd_doc *d, size_t from, size_t to);

/* The writers: append the document to out; flush, when not NULL, is
 * called with ctx whenever out holds 64 KiB or more (an nd_out commits
 * it), so that the output is never a second copy of the document. */
typedef void nd_doc_flush_fn(void *ctx);
void nd_doc_markdown(nd_doc *d, nd_buf *out, nd_doc_flush_fn *flush,
    void *ctx);
/* A document written as Markdown to out as it is built, each node when
 * the next opens (nd_doc_markdown writes the last): memory for one node,
 * whatever the document's size.  It has no figures, ids or moves. */
nd_doc *nd_doc_new_markdown(nd_buf *out, nd_doc_flush_fn *flush,
    void *ctx);
/* A JSON document, written to out as it is built (flush as for
 * nd_doc_markdown): "{", the members of its data nodes, and "}\n" at
 * nd_doc_json_end.  The members of a data node are those the writer
 * nd_doc_data returns writes until the next node opens (it is inside the
 * object: a key, then its value); in a document that is not JSON,
 * nd_doc_data returns NULL and the text nodes are the document. */
nd_doc *nd_doc_new_json(nd_buf *out, nd_doc_flush_fn *flush, void *ctx);
nd_jw *nd_doc_data(nd_doc *d);
void nd_doc_json_end(nd_doc *d);
/* A page titled title, styled, with its script (sortable and filterable
 * tables, zoomable timelines). */
void nd_doc_html(nd_doc *d, const char *title, nd_buf *out,
    nd_doc_flush_fn *flush, void *ctx);

#endif
