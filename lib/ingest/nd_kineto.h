/*
 * nd_kineto: the Chrome/Perfetto/Kineto trace JSON -> ndtrace stream
 * engine (the rules are in chrome2ndjson(1)).
 *
 * One engine converts one input: nd_kineto_new, then the items of the
 * document pushed in (nd_kineto_read takes every item of an nd_chrome,
 * on a reader thread unless one_thread; nd_kineto_feed takes one), then
 * nd_kineto_finish once the input is read whole (its sha256), then
 * nd_kineto_write (meta, records, end) and nd_kineto_free.  Nothing is
 * written before finish: an input error (a value, nd_err.h: the reader's,
 * nd_chrome_err, or the engine's, nd_kineto_err) leaves nothing of the
 * input on the output.  nd_kineto_convert does all of it for a path ("-"
 * is stdin).
 */
#ifndef ND_KINETO_H
#define ND_KINETO_H

#include "nd_chrome.h"
#include "nd_classify.h"
#include "nd_out.h"

#include <stddef.h>
#include <stdint.h>

typedef struct nd_kineto_opts {
	int has_rank;
	int64_t rank;		/* for inputs without distributedInfo.rank */
	const nd_rules *rules;	/* NULL: nd_rules_default() */
	int quiet;		/* warnings only in the end record */
	int no_args, no_flows;
	size_t budget;		/* records buffered before streaming; 0 default */
	int stats;		/* say on stderr which path was taken */
	int one_thread;		/* no helper threads: errors stay on this one */
} nd_kineto_opts;

typedef struct nd_kineto nd_kineto;

/* arg: the input as given (the meta record's file, a rank in its name);
 * name: the input in messages.  The opts are copied. */
nd_kineto *nd_kineto_new(const char *arg, const char *name,
    const nd_kineto_opts *o);
/* One item of the document; ch gives the byte offsets of errors.  0, or
 * -1 once the engine has met an error (nd_kineto_err): later items are
 * ignored. */
int nd_kineto_feed(nd_kineto *k, nd_chrome *ch, const nd_chrome_item *it);
const nd_err *nd_kineto_err(const nd_kineto *k);
/* Every item of ch, to its end: 0, or -1 with err filled (the engine's
 * error, else ch's). */
int nd_kineto_read(nd_kineto *k, nd_chrome *ch, nd_err *err);
/* The input is read whole: its sha256 (hex) and whether a bare array
 * was left unclosed (nd_kineto_read notes that itself). */
void nd_kineto_finish(nd_kineto *k, const char *sha256, int unclosed);
/* The meta record, the records and the end record, flushed. */
void nd_kineto_write(nd_kineto *k, nd_out *out);
void nd_kineto_free(nd_kineto *k);	/* NULL, or at any point */

/* 0, or -1 with err filled: nothing was written. */
int nd_kineto_convert(const char *path, const nd_kineto_opts *o,
    nd_out *out, nd_err *err);

#endif
