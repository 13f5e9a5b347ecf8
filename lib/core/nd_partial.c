#include "nd_partial.h"
#include "nd_in.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The likely cause of a torn or mixed partial, and the fix. */
#define CAUSE "partials written by concurrent jobs to one pipe interleave; " \
	"write one file per job (-o) or use GNU parallel"

static const char nl = '\n';

void
nd_partial_begin(nd_partial_w *pw, nd_out *o, nd_jw *w, const char *type)
{
	nd_buf *b = nd_out_buf(o);

	pw->o = o;
	pw->lines = 0;
	pw->mark = b->len;
	nd_sha256_init(&pw->sha);
	nd_jw_init(w, b);
	nd_jw_obj(w);
	nd_jw_kcstr(w, "type", type);
	nd_jw_kint(w, "version", ND_PARTIAL_VERSION);
}

void
nd_partial_commit(nd_partial_w *pw)
{
	nd_buf *b = nd_out_buf(pw->o);
	const char *p = b->p + pw->mark, *end = b->p + b->len;

	nd_sha256_update(&pw->sha, p, (size_t)(end - p));
	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		pw->lines++;
		p++;
	}
	nd_out_commit(pw->o);
	pw->mark = b->len;	/* 0 after a flush */
}

void
nd_partial_end(nd_partial_w *pw)
{
	nd_buf *b = nd_out_buf(pw->o);
	char hex[65];
	nd_jw w;

	nd_sha256_hex(&pw->sha, hex);
	nd_sha256_free(&pw->sha);
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", ND_PARTIAL_END);
	nd_jw_kuint(&w, "records", pw->lines > 0 ? pw->lines - 1 : 0);
	/* nothing to say, and saying so (nd_partial.h) */
	if (pw->lines <= 1)
		nd_jw_kbool(&w, "empty", 1);
	nd_jw_kcstr(&w, "sha256", hex);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_out_commit(pw->o);
}

/* ---- reading ---- */

typedef struct held {
	size_t off, len;
	uint64_t line;
} held;

typedef struct reader {
	nd_stream *st;
	nd_event ev, rev;	/* read; replayed */
	nd_buf scratch;
	int open;		/* inside a partial */
	uint64_t line;		/* its header's line */
	uint32_t source;	/* its header's source (file) */
	char *file;		/* its header's file */
	nd_sha256 sha;
	nd_buf text;		/* its lines, header included */
	held *lines;
	size_t nlines, caplines;
	char **paths;		/* the inputs */
	int npaths;
	int in;			/* the input being read, -1 before */
	unsigned inparts;	/* partials read in it */
	uint64_t sum;		/* nd_partial_sum */
	nd_event pev;		/* nd_partial_record */
	nd_buf pscratch;
	nd_err err;		/* the first error; reading then stops */
	unsigned count;		/* partials read */
} reader;

/* reachable for the leak checker if we die */
static reader *cur;

static void
hold(reader *r, const nd_event *ev)
{
	held *h;

	nd_sha256_update(&r->sha, ev->line, ev->len);
	nd_sha256_update(&r->sha, &nl, 1);
	nd_grow(&r->lines, &r->caplines, r->nlines + 1, sizeof *r->lines);
	h = &r->lines[r->nlines++];
	h->off = r->text.len;
	h->len = ev->len;
	h->line = nd_stream_lineno(r->st);
	nd_buf_add(&r->text, ev->line, ev->len);
}

static void
cut_short(reader *r)
{
	nd_err_line(&r->err, r->file, r->line, "partial results cut short: no "
	    ND_PARTIAL_END " after this header (a --partial job failed or its "
	    "output was truncated, or " CAUSE ")");
}

/* A partial without records says so (nd_partial.h). */
static void
check_empty(reader *r)
{
	const nd_jval *e = nd_event_get(&r->ev, "empty");
	int empty = e != NULL && e->type == ND_JTRUE;

	if (r->nlines == 1 && !empty)
		nd_err_line(&r->err, r->file, r->line, "partial results empty: "
		    "no records between this header and its " ND_PARTIAL_END
		    ", which does not say \"empty\":true as --partial does for a "
		    "rank without data (a --partial job failed, or the partial "
		    "was edited)");
	if (r->nlines > 1 && e != NULL)
		nd_err_line(&r->err, nd_stream_file(r->st),
		    nd_stream_lineno(r->st), "partial results mixed: "
		    ND_PARTIAL_END " says \"empty\" of the partial begun at line "
		    "%llu, which has %zu records: " CAUSE,
		    (unsigned long long)r->line, r->nlines - 1);
}

/* The trailer: check it, then hand the held lines on. */
static void
close_partial(reader *r, nd_partial_fn fn, void *ctx)
{
	nd_stream *st = r->st;
	const nd_jval *sv = nd_stream_need(st, &r->ev, "sha256", ND_JSTR);
	int64_t want = nd_stream_need_int(st, &r->ev, "records");
	char hex[65];
	nd_everr err;

	nd_sha256_hex(&r->sha, hex);
	nd_sha256_free(&r->sha);
	r->open = 0;
	if (nd_stream_failed(st))
		return;
	if (want < 0 || (uint64_t)want != r->nlines - 1)
		nd_err_line(&r->err, nd_stream_file(st), nd_stream_lineno(st),
		    "partial results mixed: " ND_PARTIAL_END " counts %lld "
		    "records, the partial begun at line %llu has %zu: " CAUSE,
		    (long long)want, (unsigned long long)r->line,
		    r->nlines - 1);
	else if (sv->len != 66 || memcmp(sv->raw + 1, hex, 64) != 0)
		nd_err_line(&r->err, nd_stream_file(st), nd_stream_lineno(st),
		    "partial results mixed: the sha256 of " ND_PARTIAL_END " is "
		    "not that of the partial begun at line %llu: " CAUSE,
		    (unsigned long long)r->line);
	else
		check_empty(r);
	for (size_t i = 0; i < r->nlines && r->err.code == 0; i++) {
		const held *h = &r->lines[i];

		/* decoded once already: it cannot fail */
		if (nd_event_decode(&r->rev, r->text.p + h->off, h->len,
		    &r->scratch, &err) != 0)
			nd_die(ND_EXIT_ERROR, "%s:%llu: %s", nd_stream_file(st),
			    (unsigned long long)h->line, err.msg);
		r->rev.source = r->source;
		nd_stream_set_lineno(st, h->line);
		fn(ctx, st, &r->rev);
		if (nd_stream_failed(st)) {	/* the engine refused it */
			nd_err_copy(&r->err, nd_stream_err(st));
			break;
		}
	}
	nd_stream_set_lineno(st, 0);
	r->nlines = 0;
	nd_buf_reset(&r->text);
	free(r->file);
	r->file = NULL;
}

static int
is_body(const nd_event *ev, const char *const *body, size_t nbody)
{
	for (size_t i = 0; i < nbody; i++)
		if (nd_str_eq(ev->type_name, body[i]))
			return 1;
	return 0;
}

/* The header of a partial, in r->ev. */
static void
open_partial(reader *r, const char *header)
{
	nd_stream *st = r->st;
	const nd_jval *v = nd_event_get(&r->ev, "version");
	int64_t ver;

	if (r->open) {
		nd_err_line(&r->err, nd_stream_file(st), nd_stream_lineno(st),
		    "partial results mixed: a %s header inside the partial "
		    "begun at line %llu: " CAUSE, header,
		    (unsigned long long)r->line);
		return;
	}
	if (v == NULL || v->type != ND_JNUM || nd_json_int(v, &ver) != 0 ||
	    ver != ND_PARTIAL_VERSION) {
		nd_err_line(&r->err, nd_stream_file(st), nd_stream_lineno(st),
		    "%s of another format (version %.*s, not %d): make the "
		    "partial results again with this %s", header,
		    v != NULL ? (int)v->len : 1, v != NULL ? v->raw : "1",
		    ND_PARTIAL_VERSION, nd_progname);
		return;
	}
	r->open = 1;
	r->line = nd_stream_lineno(st);
	r->source = r->ev.source;
	r->file = nd_xstrdup(nd_stream_file(st));
	nd_sha256_init(&r->sha);
	hold(r, &r->ev);
}

/* Inputs r->in (when one) up to, not including, `to` are read: each
 * held a partial. */
static void
inputs_read(reader *r, const char *header, int to)
{
	for (int i = r->in; i < to && r->err.code == 0; i++)
		if (i >= 0 && (i > r->in || r->inparts == 0))
			nd_err_set(&r->err, nd_in_path_name(r->paths[i]),
			    ND_ERR_NONE, ND_ERR_NONE, "%s: no partial results "
			    "in it (no %s header): its --partial job failed, or "
			    "it is not the output of %s --partial",
			    nd_in_path_name(r->paths[i]), header, nd_progname);
	r->in = to;
	r->inparts = 0;
}

/* One record of the inputs: a header, a trailer (the partial goes to fn),
 * a body record held, meta and end between partials skipped. */
static void
read_record(reader *r, const char *header, const char *const *body,
    size_t nbody, nd_partial_fn fn, void *ctx)
{
	nd_stream *st = r->st;
	const nd_event *ev = &r->ev;
	uint64_t line = nd_stream_lineno(st);
	const char *file = nd_stream_file(st);

	/* a partial ends in the file it began in */
	if (r->open && ev->source != r->source)
		cut_short(r);
	else if (nd_stream_input(st) != r->in)
		inputs_read(r, header, nd_stream_input(st));
	if (r->err.code != 0)
		return;
	if (nd_str_eq(ev->type_name, header))
		open_partial(r, header);
	else if (nd_str_eq(ev->type_name, ND_PARTIAL_END)) {
		if (!r->open) {
			nd_err_line(&r->err, file, line, "partial results "
			    "mixed: a " ND_PARTIAL_END " without its %s header: "
			    CAUSE, header);
			return;
		}
		close_partial(r, fn, ctx);
		r->count++;
		r->inparts++;
	} else if (is_body(ev, body, nbody)) {
		if (!r->open)
			nd_err_line(&r->err, file, line, "partial results "
			    "mixed: a %.*s record outside a partial (no %s "
			    "header before it): " CAUSE, (int)ev->type_name.n,
			    ev->type_name.p, header);
		else
			hold(r, ev);
	} else if (r->open)
		nd_err_line(&r->err, file, line, "partial results mixed: a %.*s "
		    "record inside the partial begun at line %llu: " CAUSE,
		    (int)ev->type_name.n, ev->type_name.p,
		    (unsigned long long)r->line);
	else if (ev->type != ND_EV_META && ev->type != ND_EV_END)
		nd_err_line(&r->err, file, line, "--merge reads the output of "
		    "%s --partial, not %.*s records", nd_progname,
		    (int)ev->type_name.n, ev->type_name.p);
}

int64_t
nd_partial_read(char **paths, int n, const char *header,
    const char *const *body, size_t nbody, nd_partial_fn fn, void *ctx,
    nd_err *err)
{
	static char *std_in[] = { "-" };
	reader *r = nd_xcalloc(1, sizeof *r);
	nd_stream *st;
	int64_t count;

	cur = r;
	r->paths = n > 0 ? paths : std_in;
	r->npaths = n > 0 ? n : 1;
	r->in = -1;
	nd_err_clear(&r->err);
	st = r->st = nd_stream_open(paths, n);
	nd_stream_set_hint(st, "a torn partial record", CAUSE);
	nd_event_init(&r->ev);
	nd_event_init(&r->rev);
	nd_event_init(&r->pev);
	while (r->err.code == 0 && nd_stream_next(st, &r->ev))
		read_record(r, header, body, nbody, fn, ctx);
	if (nd_stream_err(st) != NULL)
		nd_err_copy(&r->err, nd_stream_err(st));
	if (r->err.code == 0 && r->open)
		cut_short(r);
	if (r->err.code == 0)
		inputs_read(r, header, r->npaths);
	if (r->open)
		nd_sha256_free(&r->sha);
	nd_err_copy(err, &r->err);
	count = r->err.code != 0 ? -1 : (int64_t)r->count;
	nd_stream_close(st);
	nd_event_free(&r->ev);
	nd_event_free(&r->rev);
	nd_event_free(&r->pev);
	nd_buf_free(&r->scratch);
	nd_buf_free(&r->pscratch);
	nd_buf_free(&r->text);
	free(r->lines);
	free(r->file);
	free(r);
	cur = NULL;
	return count;
}

nd_jw *
nd_partial_rec(nd_partial_w *pw, nd_jw *w, const char *type)
{
	nd_jw_init(w, nd_out_buf(pw->o));
	nd_jw_obj(w);
	nd_jw_kcstr(w, "type", type);
	return w;
}

void
nd_partial_rec_end(nd_partial_w *pw, nd_jw *w)
{
	nd_jw_obj_end(w);
	nd_buf_addc(nd_out_buf(pw->o), '\n');
	nd_partial_commit(pw);
}

/* ---- for the callback ---- */

void
nd_partial_bad(nd_stream *st, const nd_event *ev, const char *key)
{
	nd_stream_fail(st, "%.*s record without a valid \"%s\"",
	    (int)ev->type_name.n, ev->type_name.p, key);
}

int64_t
nd_partial_int(nd_stream *st, const nd_event *ev, const char *key)
{
	const nd_jval *v = nd_event_get(ev, key);
	int64_t x = 0;

	if (v == NULL || nd_json_int(v, &x) != 0) {
		nd_partial_bad(st, ev, key);
		return 0;
	}
	return x;
}

uint64_t
nd_partial_count(nd_stream *st, const nd_event *ev, const char *key)
{
	int64_t x = nd_partial_int(st, ev, key);

	if (x < 0) {
		nd_partial_bad(st, ev, key);
		return 0;
	}
	return (uint64_t)x;
}

int64_t
nd_partial_time(nd_stream *st, const nd_event *ev, const char *key)
{
	const nd_jval *v = nd_event_get(ev, key);
	int64_t x = 0;

	if (v == NULL || nd_json_int64(v, &x) != 0 || x > INT64_MAX / 2 ||
	    x < INT64_MIN / 2) {
		nd_partial_bad(st, ev, key);
		return 0;
	}
	return x;
}

int64_t
nd_partial_isum(nd_stream *st, const nd_event *ev, const char *key)
{
	return nd_partial_sum(key, nd_partial_int(st, ev, key));
}

uint64_t
nd_partial_usum(nd_stream *st, const nd_event *ev, const char *key)
{
	return (uint64_t)nd_partial_sum(key,
	    (int64_t)nd_partial_count(st, ev, key));
}

char *
nd_partial_str(nd_stream *st, const nd_event *ev, const char *key)
{
	const nd_jval *v = nd_event_get(ev, key);

	if (v == NULL || (v->type != ND_JSTR && v->type != ND_JNULL)) {
		nd_partial_bad(st, ev, key);
		return NULL;
	}
	return nd_jstr_dup(v);	/* NULL for null */
}

uint32_t
nd_partial_index(nd_stream *st, const nd_event *ev, const char *key,
    uint32_t base, uint32_t n)
{
	int64_t x = nd_partial_int(st, ev, key);

	if (x < 0 || (uint64_t)x >= n || (uint64_t)x + base > UINT32_MAX) {
		nd_partial_bad(st, ev, key);
		return base;
	}
	return base + (uint32_t)x;
}

int64_t
nd_partial_sum(const char *key, int64_t v)
{
	reader *r = cur;
	uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;

	if (r == NULL)		/* a reader used alone (nd-unit) */
		return v;
	if (a > (uint64_t)ND_PARTIAL_SUM_MAX - r->sum) {
		nd_stream_fail(r->st, "%.*s record: \"%s\" is %lld, and the "
		    "figures the merge adds up pass 2^60 (36 years in ns): "
		    "partial results of no profile (edited, or written by "
		    "another program)", (int)r->rev.type_name.n,
		    r->rev.type_name.p, key, (long long)v);
		return 0;
	}
	r->sum += a;
	return v;
}

uint64_t
nd_partial_records(void)
{
	return cur->nlines - 1;
}

void
nd_partial_record(const char *key, const char *text, size_t len,
    nd_partial_ok_fn *ok, const char *what)
{
	reader *r = cur;
	nd_everr err;
	char why[sizeof err.msg + 64];

	if (memchr(text, '\n', len) != NULL || memchr(text, '\r', len) != NULL)
		snprintf(why, sizeof why, "a line break in it");
	else if (nd_event_decode(&r->pev, text, len, &r->pscratch, &err) != 0)
		snprintf(why, sizeof why, "%s", err.msg);
	else if (!ok(&r->pev))
		snprintf(why, sizeof why, "a %.*s record",
		    (int)r->pev.type_name.n, r->pev.type_name.p);
	else
		return;
	nd_stream_fail(r->st, "%.*s record whose \"%s\" is not %s (%s): "
	    "partial results of no run (edited, or written by another "
	    "program)", (int)r->rev.type_name.n, r->rev.type_name.p, key,
	    what, why);
}

int
nd_partial_passed(const nd_event *rec)
{
	return rec->type == ND_EV_META || rec->type == ND_EV_OTHER;
}

void
nd_partial_check_opts(const nd_partial_opts *o)
{
	if (o->exclusive && o->partial && o->merge)
		nd_die(ND_EXIT_ERROR, "--partial and --merge exclude each "
		    "other");
	if (o->merge && o->collect_given)
		nd_die(ND_EXIT_ERROR, "--merge takes %s from the partial "
		    "results; do not give them again", o->collect);
	if (o->partial && o->output_given)
		nd_die(ND_EXIT_ERROR, "--partial leaves %s to --merge; give "
		    "them there", o->output);
}
