#include "nd_stream.h"
#include "nd_in.h"
#include "nd_lines.h"
#include "nd_sum.h"
#include "nd_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nd_stream {
	char **paths;
	int npaths, cur;
	nd_in *in;
	nd_lines *lr;
	nd_buf scratch;
	int64_t src;		/* current source index, -1 before any */
	int fresh;		/* current source has no record yet */
	/* one allocation each: a record's source stays where it is while
	 * later sources are added (nd_stream_next_kept) */
	nd_source_info **info;
	size_t ninfo, capinfo;
	const char *hint_what, *hint_why;	/* nd_stream_set_hint */
	uint64_t line_at;	/* nd_stream_set_lineno */
	nd_spool *spool;	/* nd_stream_spool_stdin */
	int replay, stdin_opens;
	uint64_t durs;		/* the dur_ns read so far (nd_sum.h) */
	nd_err err;		/* the first error; reading then ends */
};

static char *stdin_path[] = { "-" };

nd_stream *
nd_stream_open(char **paths, int n)
{
	nd_stream *st = nd_xcalloc(1, sizeof *st);

	if (n == 0) {
		paths = stdin_path;
		n = 1;
	}
	st->paths = paths;
	st->npaths = n;
	st->cur = -1;
	st->src = -1;
	nd_err_clear(&st->err);
	nd_sum_begin();
	return st;
}

const nd_err *
nd_stream_err(const nd_stream *st)
{
	return st->err.code != 0 ? &st->err : NULL;
}

static void
new_source(nd_stream *st, const char *file)
{
	nd_source_info *si;

	st->src++;
	st->fresh = 1;
	nd_grow(&st->info, &st->capinfo, (size_t)st->src + 1, sizeof *st->info);
	si = st->info[st->src] = nd_xcalloc(1, sizeof *si);
	si->path = nd_xstrdup(file);
	si->input = st->cur;
	st->ninfo = (size_t)st->src + 1;
}

static void
take_meta(nd_stream *st, const nd_event *ev)
{
	nd_source_info *si = st->info[st->src];
	const nd_jval *f;

	si->has_meta = 1;
	if (ev->has & ND_HAS_ORIGIN)
		si->origin_ns = ev->origin_ns;
	if (ev->has & ND_HAS_RANK) {
		si->has_rank = 1;
		si->rank = ev->rank;
	}
	if (ev->host.p != NULL)
		si->host = nd_xstrndup(ev->host.p, ev->host.n);
	if (ev->source_path.p != NULL) {
		free(si->path);
		si->path = nd_xstrndup(ev->source_path.p, ev->source_path.n);
	}
	if ((f = nd_event_get(ev, "format")) != NULL && f->type == ND_JSTR) {
		nd_buf b = ND_BUF_INIT;

		nd_json_unescape(f, &b);
		si->format = nd_xstrndup(b.p, b.len);
		nd_buf_free(&b);
	}
}

void
nd_stream_spool_stdin(nd_stream *st, nd_spool *sp, int replay)
{
	st->spool = sp;
	st->replay = replay;
}

/* The first "-" is spooled or replayed; a later one reads what the pipe
 * gave after its end: nothing. */
static void
spool_stdin(nd_stream *st)
{
	if (!st->replay)
		nd_in_tee(st->in, st->spool);
	else
		nd_in_replay(st->in, st->spool, st->stdin_opens == 0 ? 0 :
		    nd_spool_size(st->spool));
	st->stdin_opens++;
}

int
nd_stream_next(nd_stream *st, nd_event *ev)
{
	if (!nd_stream_next_kept(st, ev, &st->scratch, NULL, NULL))
		return 0;
	nd_sum_at(st->paths[st->cur], nd_stream_lineno(st));
	return 1;
}

void
nd_stream_at(const nd_stream *st, int input, uint64_t line)
{
	nd_sum_at(st->paths[input], line);
}

/* The durations of the input add up to at most ND_SUM_MAX (nd_sum.h):
 * each is at most 2^53, so the total cannot wrap before the check. */
static int
count_dur(nd_stream *st, const nd_event *ev)
{
	st->durs += (uint64_t)ev->dur_ns;
	if (st->durs > (uint64_t)ND_SUM_MAX)
		return nd_err_line(&st->err, nd_in_name(st->in),
		    nd_lines_lineno(st->lr), "%.*s record: \"dur_ns\" is "
		    "%lld, and the durations of the input add up past 2^60 "
		    "(36 years in ns)", (int)ev->type_name.n, ev->type_name.p,
		    (long long)ev->dur_ns);
	return 0;
}

/* An empty line (err NULL) or one that is not a record: the stream's
 * error; 0 (the end of reading). */
static int
bad_line(nd_stream *st, const nd_everr *err, int nonl)
{
	const char *name = nd_in_name(st->in);
	uint64_t line = nd_lines_lineno(st->lr);
	const char *cut = nonl ? "truncated last line: " : "";

	if (err == NULL && st->hint_what != NULL)
		nd_err_line(&st->err, name, line, "%s (empty line): %s",
		    st->hint_what, st->hint_why);
	else if (err == NULL)
		nd_err_line(&st->err, name, line, "empty line");
	else if (st->hint_what != NULL)
		nd_err_line(&st->err, name, line, "%s (%s%s at byte %zu of the "
		    "line): %s", st->hint_what, cut, err->msg, err->off + 1,
		    st->hint_why);
	else
		nd_err_line(&st->err, name, line, "%s%s (at byte %zu of the "
		    "line)", cut, err->msg, err->off + 1);
	return 0;
}

/* Line lr's error as the stream's: 0 (the end of reading). */
static int
fail_lines(nd_stream *st)
{
	nd_err_copy(&st->err, nd_lines_err(st->lr));
	return 0;
}

int
nd_stream_next_kept(nd_stream *st, nd_event *ev, nd_buf *scratch,
    char *(*keep)(void *ctx, const char *line, size_t len), void *ctx)
{
	if (st->err.code != 0)
		return 0;
	for (;;) {
		char *line;
		size_t len;
		int nonl;
		nd_everr err;
		int bad;

		if (st->lr == NULL) {
			if (st->cur + 1 >= st->npaths)
				return 0;
			st->cur++;
			st->in = nd_in_open(st->paths[st->cur]);
			if (st->spool != NULL &&
			    strcmp(st->paths[st->cur], "-") == 0)
				spool_stdin(st);
			st->lr = nd_lines_open(st->in);
			new_source(st, st->paths[st->cur]);
		}
		line = nd_lines_next(st->lr, &len, &nonl);
		if (line == NULL && nd_lines_err(st->lr) != NULL)
			return fail_lines(st);
		if (line == NULL) {
			nd_lines_close(st->lr);
			nd_in_close(st->in);
			st->lr = NULL;
			st->in = NULL;
			continue;
		}
		/* a document to convert, on line 1? */
		if (len == 0 && nd_lines_foreign(st->lr))
			return fail_lines(st);
		if (len == 0)
			return bad_line(st, NULL, 0);
		if (keep != NULL)
			line = keep(ctx, line, len);
		bad = nd_event_decode(ev, line, len, scratch, &err) != 0;
		if (bad && nd_lines_foreign(st->lr))
			return fail_lines(st);
		if (bad)
			return bad_line(st, &err, nonl);
		if (ev->type == ND_EV_META) {
			if (!st->fresh)
				new_source(st, st->paths[st->cur]);
			take_meta(st, ev);
		}
		if ((ev->has & ND_HAS_DUR) && count_dur(st, ev) != 0)
			return 0;
		st->fresh = 0;
		ev->source = (uint32_t)st->src;
		return 1;
	}
}

const nd_source_info *
nd_stream_meta(const nd_stream *st, uint32_t source)
{
	if (source >= st->ninfo)
		return NULL;
	return st->info[source];
}

uint32_t
nd_stream_nsources(const nd_stream *st)
{
	return (uint32_t)st->ninfo;
}

const char *
nd_stream_file(const nd_stream *st)
{
	if (st->in != NULL)
		return nd_in_name(st->in);
	return st->cur >= 0 && st->cur < st->npaths ? st->paths[st->cur] : "-";
}

uint64_t
nd_stream_lineno(const nd_stream *st)
{
	if (st->line_at != 0)
		return st->line_at;
	return st->lr != NULL ? nd_lines_lineno(st->lr) : 0;
}

int
nd_stream_input(const nd_stream *st)
{
	return st->cur;
}

void
nd_stream_set_hint(nd_stream *st, const char *what, const char *why)
{
	st->hint_what = what;
	st->hint_why = why;
}

void
nd_stream_set_lineno(nd_stream *st, uint64_t line)
{
	st->line_at = line;
	if (line != 0 && st->cur >= 0)
		nd_sum_at(st->paths[st->cur], line);
}

void
nd_stream_close(nd_stream *st)
{
	if (st == NULL)
		return;
	nd_sum_end();
	nd_lines_close(st->lr);
	nd_in_close(st->in);
	for (size_t i = 0; i < st->ninfo; i++) {
		free(st->info[i]->host);
		free(st->info[i]->path);
		free(st->info[i]->format);
		free(st->info[i]);
	}
	free(st->info);
	nd_buf_free(&st->scratch);
	free(st);
}

int
nd_stream_fail(nd_stream *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nd_err_vline(&st->err, nd_stream_file(st), nd_stream_lineno(st), fmt,
	    ap);
	va_end(ap);
	return -1;
}

void
nd_stream_fail_with(nd_stream *st, const nd_err *e)
{
	nd_err_copy(&st->err, e);
}

int
nd_stream_failed(const nd_stream *st)
{
	return st->err.code != 0;
}

const nd_jval *
nd_stream_need(nd_stream *st, const nd_event *ev, const char *key,
    nd_jtype type)
{
	/* after an error: an empty value of the type asked for */
	static const nd_jval empty[] = {
		[ND_JNONE] = { ND_JNONE, "null", 4, 0 },
		[ND_JNULL] = { ND_JNULL, "null", 4, 0 },
		[ND_JFALSE] = { ND_JFALSE, "false", 5, 0 },
		[ND_JTRUE] = { ND_JTRUE, "true", 4, 0 },
		[ND_JNUM] = { ND_JNUM, "0", 1, 0 },
		[ND_JSTR] = { ND_JSTR, "\"\"", 2, 0 },
		[ND_JARR] = { ND_JARR, "[]", 2, 0 },
		[ND_JOBJ] = { ND_JOBJ, "{}", 2, 0 },
	};
	const nd_jval *v = nd_event_get(ev, key);

	if (v != NULL && v->type == type)
		return v;
	nd_stream_fail(st, "%.*s record without a valid \"%s\"",
	    (int)ev->type_name.n, ev->type_name.p, key);
	return &empty[type];
}

int64_t
nd_stream_need_int(nd_stream *st, const nd_event *ev, const char *key)
{
	const nd_jval *v = nd_stream_need(st, ev, key, ND_JNUM);
	int64_t x;

	if (nd_json_int(v, &x) != 0) {
		nd_stream_fail(st, "\"%s\" must be an integer", key);
		return 0;
	}
	return x;
}
