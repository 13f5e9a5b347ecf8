/*
 * nd_check: see nd_check.h.
 */
#include "nd_check.h"
#include "nd_event.h"
#include "nd_hash.h"
#include "nd_in.h"
#include "nd_lines.h"
#include "nd_sum.h"
#include "nd_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nd_check {
	nd_check_fn *fn;
	void *ctx;
	const char *file;
	uint64_t lineno;
	uint64_t problems;
	/* Sources as nd_stream counts them: a new one at each input file and
	 * at each meta that is not the first record of a fresh source. */
	int64_t src;
	int fresh, has_meta;
	uint64_t seen[ND_EV_END + 1];	/* records by type in this source */
	int ended;
	/* Per-timeline order: key (source,pid,tid) -> last ts and dur. */
	nd_intern *tl;
	int64_t *last_ts, *last_dur;
	size_t cap_tl;
	uint64_t records, spans, sources;
	uint64_t durs;		/* the dur_ns so far, up to ND_SUM_MAX */
	int durs_over;
};

static void
problem(nd_check *c, const char *fmt, ...) ND_PRINTF(2, 3);

/* A problem, as a value: counted, and handed to the caller. */
static void
problem(nd_check *c, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	c->problems++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->fn(c->ctx, c->file, c->lineno, msg);
}

static void
new_source(nd_check *c)
{
	c->src++;
	c->sources++;
	c->fresh = 1;
	c->has_meta = 0;
	c->ended = 0;
	memset(c->seen, 0, sizeof c->seen);
}

static int
need_str(nd_check *c, const nd_event *ev, nd_str s, const char *key)
{
	if (s.p == NULL) {
		problem(c, "%.*s record lacks \"%s\" (a string)",
		    (int)ev->type_name.n, ev->type_name.p, key);
		return 0;
	}
	return 1;
}

static int
need_int(nd_check *c, const nd_event *ev, unsigned bit, const char *key)
{
	if (!(ev->has & bit)) {
		problem(c, "%.*s record lacks \"%s\" (an integer)",
		    (int)ev->type_name.n, ev->type_name.p, key);
		return 0;
	}
	return 1;
}

static void
check_meta(nd_check *c, const nd_event *ev)
{
	const nd_jval *v;

	if ((v = nd_event_get(ev, "schema")) == NULL || !nd_jstr_eq(v, ND_SCHEMA))
		problem(c, "meta record: \"schema\" must be \"%s\"", ND_SCHEMA);
	need_str(c, ev, ev->source_path, "source");
	if ((v = nd_event_get(ev, "format")) == NULL || v->type != ND_JSTR)
		problem(c, "meta record lacks \"format\" (a string)");
	need_int(c, ev, ND_HAS_ORIGIN, "origin_ns");
	if ((v = nd_event_get(ev, "producer")) == NULL || v->type != ND_JSTR)
		problem(c, "meta record lacks \"producer\" (a string)");
}

static void
check_count(nd_check *c, const nd_event *ev, const char *key,
    nd_evtype t)
{
	const nd_jval *v = nd_event_get(ev, key);
	int64_t n;

	if (v == NULL)
		return;
	if (nd_json_int(v, &n) != 0 || n < 0) {
		problem(c, "end record: \"%s\" must be a non-negative integer",
		    key);
		return;
	}
	if ((uint64_t)n != c->seen[t])
		problem(c, "end record says %s=%lld but the source has %llu",
		    key, (long long)n, (unsigned long long)c->seen[t]);
}

static void
check_end(nd_check *c, const nd_event *ev)
{
	const nd_jval *v;

	check_count(c, ev, "spans", ND_EV_SPAN);
	check_count(c, ev, "instants", ND_EV_INSTANT);
	check_count(c, ev, "counters", ND_EV_COUNTER);
	check_count(c, ev, "flows", ND_EV_FLOW);
	if ((v = nd_event_get(ev, "skipped")) != NULL && v->type != ND_JOBJ)
		problem(c, "end record: \"skipped\" must be an object");
	if ((v = nd_event_get(ev, "warnings")) != NULL && v->type != ND_JARR)
		problem(c, "end record: \"warnings\" must be an array");
	if ((v = nd_event_get(ev, "suspected_truncation")) != NULL &&
	    v->type != ND_JTRUE && v->type != ND_JFALSE)
		problem(c, "end record: \"suspected_truncation\" must be a boolean");
	if ((v = nd_event_get(ev, "sha256")) != NULL &&
	    (v->type != ND_JSTR || v->len != 66))
		problem(c, "end record: \"sha256\" must be 64 hex digits");
	c->ended = 1;
}

static void
check_order(nd_check *c, const nd_event *ev)
{
	int64_t key[3] = { c->src, ev->pid, ev->tid };
	uint32_t n = nd_intern_count(c->tl);
	uint32_t id = nd_intern_id(c->tl, (const char *)key, sizeof key);

	if (id == n) {
		size_t cap = c->cap_tl;

		nd_grow(&c->last_ts, &cap, (size_t)id + 1, sizeof *c->last_ts);
		cap = c->cap_tl;
		nd_grow(&c->last_dur, &cap, (size_t)id + 1, sizeof *c->last_dur);
		c->cap_tl = cap;
	} else if (nd_span_order(c->last_ts[id], c->last_dur[id], ev->ts_ns,
	    ev->dur_ns) > 0) {
		problem(c, "span out of order on timeline pid %lld tid %lld: "
		    "ts_ns %lld dur_ns %lld after ts_ns %lld dur_ns %lld",
		    (long long)ev->pid, (long long)ev->tid,
		    (long long)ev->ts_ns, (long long)ev->dur_ns,
		    (long long)c->last_ts[id], (long long)c->last_dur[id]);
	}
	c->last_ts[id] = ev->ts_ns;
	c->last_dur[id] = ev->dur_ns;
}

static void
check_record(nd_check *c, nd_event *ev)
{
	int timed = ev->type == ND_EV_SPAN || ev->type == ND_EV_INSTANT ||
	    ev->type == ND_EV_COUNTER || ev->type == ND_EV_FLOW;
	const char *dup;

	if (ev->type == ND_EV_META) {
		if (!c->fresh)
			new_source(c);
		c->has_meta = 1;
		check_meta(c, ev);
	} else if (timed && !c->has_meta && c->fresh)
		problem(c, "%.*s record before any meta record of its source",
		    (int)ev->type_name.n, ev->type_name.p);
	c->fresh = 0;
	if ((dup = nd_event_dup_key(ev)) != NULL)
		problem(c, "%.*s record has \"%s\" twice",
		    (int)ev->type_name.n, ev->type_name.p, dup);
	if (c->ended && ev->type != ND_EV_META && ev->type != ND_EV_OTHER)
		problem(c, "%.*s record after the end record of its source",
		    (int)ev->type_name.n, ev->type_name.p);
	c->seen[ev->type]++;
	if ((ev->has & ND_HAS_DUR) && !c->durs_over &&
	    (c->durs += (uint64_t)ev->dur_ns) > (uint64_t)ND_SUM_MAX) {
		c->durs_over = 1;
		problem(c, "%.*s record: \"dur_ns\" is %lld, and the durations "
		    "of the input add up past 2^60 (36 years in ns)",
		    (int)ev->type_name.n, ev->type_name.p,
		    (long long)ev->dur_ns);
	}
	switch (ev->type) {
	case ND_EV_SPAN:
		c->spans++;
		if (need_int(c, ev, ND_HAS_TS, "ts_ns") &
		    need_int(c, ev, ND_HAS_DUR, "dur_ns") &
		    need_int(c, ev, ND_HAS_PID, "pid") &
		    need_int(c, ev, ND_HAS_TID, "tid"))
			check_order(c, ev);
		need_str(c, ev, ev->name, "name");
		break;
	case ND_EV_INSTANT:
	case ND_EV_FLOW:
		need_int(c, ev, ND_HAS_TS, "ts_ns");
		need_int(c, ev, ND_HAS_PID, "pid");
		need_int(c, ev, ND_HAS_TID, "tid");
		need_str(c, ev, ev->name, "name");
		break;
	case ND_EV_COUNTER:
		need_int(c, ev, ND_HAS_TS, "ts_ns");
		need_int(c, ev, ND_HAS_PID, "pid");
		need_str(c, ev, ev->name, "name");
		if (ev->values.type != ND_JOBJ)
			problem(c, "counter record lacks \"values\" (an object)");
		break;
	case ND_EV_END:
		check_end(c, ev);
		break;
	default:
		break;
	}
}

int
nd_check_file(nd_check *c, const char *path, nd_err *err)
{
	nd_in *in = nd_in_open(path);
	nd_lines *lr = nd_lines_open(in);
	nd_event ev;
	nd_buf scratch = ND_BUF_INIT;
	char *line;
	size_t len;
	int nonl;

	nd_event_init(&ev);
	c->file = nd_in_name(in);
	c->lineno = 0;
	new_source(c);
	while ((line = nd_lines_next(lr, &len, &nonl)) != NULL) {
		nd_everr err;
		int bad = len == 0 ||
		    nd_event_decode(&ev, line, len, &scratch, &err) != 0;

		c->lineno = nd_lines_lineno(lr);
		c->records++;
		if (bad && nd_lines_foreign(lr))
			break;		/* a document to convert */
		if (nonl)
			problem(c, "last line has no final newline");
		if (len == 0) {
			problem(c, "empty line");
			continue;
		}
		if (bad) {
			problem(c, "%s (at byte %zu of the line)", err.msg,
			    err.off + 1);
			continue;
		}
		check_record(c, &ev);
	}
	if (nd_lines_err(lr) != NULL)
		nd_err_copy(err, nd_lines_err(lr));
	nd_event_free(&ev);
	nd_buf_free(&scratch);
	nd_lines_close(lr);
	nd_in_close(in);
	c->file = NULL;		/* the name belonged to in */
	return err->code != 0 ? -1 : 0;
}

nd_check *
nd_check_new(nd_check_fn *fn, void *ctx)
{
	nd_check *c = nd_xcalloc(1, sizeof *c);

	c->fn = fn;
	c->ctx = ctx;
	c->src = -1;
	c->tl = nd_intern_new();
	return c;
}

void
nd_check_end(nd_check *c, nd_check_counts *n)
{
	if (c->records == 0)
		problem(c, "empty input: no records");
	n->records = c->records;
	n->spans = c->spans;
	n->sources = c->sources;
	n->problems = c->problems;
}

void
nd_check_free(nd_check *c)
{
	if (c == NULL)
		return;
	nd_intern_free(c->tl);
	free(c->last_ts);
	free(c->last_dur);
	free(c);
}
