/*
 * trace-context: the spans around every span that matches a pattern --
 * before and after it on its timeline, its enclosing spans, and with
 * --overlapping what the device's other timelines and the host did
 * meanwhile -- as a stream (each span once, with a "context" object) or as
 * a listing per match.  grep -C for timelines.  The window logic is
 * lib/engines/nd_context.c; this file matches, writes and prints.
 */
#include "nd_cli.h"
#include "nd_context.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_rx.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-context [-hV] [-A N] [-B N] [-C N] [--regex] [--key KEY] [--max M] [--overlapping] [--lookback N] [--table] [-o FILE] PATTERN [FILE ...]\n"
"  -A, --after-context N   the N spans after each match on its timeline\n"
"                          (default 3)\n"
"  -B, --before-context N  the N spans before each match on its timeline\n"
"                          (default 3)\n"
"  -C, --context N         both of the above\n"
"      --regex             PATTERN is a POSIX extended regular expression\n"
"      --key KEY           match KEY instead of name: any top-level key or\n"
"                          args.X\n"
"      --max M             stop after M matches\n"
"      --overlapping       also the spans of the device's other timelines and\n"
"                          of host timelines that overlap each match\n"
"      --lookback N        with --overlapping, the ended spans each timeline\n"
"                          keeps for later matches (default 1000)\n"
"      --table             a listing per match for people instead of a stream\n"
"  -o, --output FILE       write to FILE (atomically) instead of stdout\n"
"  -h, --help              show this help and exit\n"
"  -V, --version           show the version and exit\n";

enum { OPT_REGEX = 256, OPT_KEY, OPT_MAX, OPT_OVERLAPPING, OPT_LOOKBACK,
	OPT_TABLE };

/* A line of the --table listing. */
struct row {
	uint64_t seq;
	int64_t ts, dur, pid, tid;
	uint32_t tl;
	int role;
	char *name;
	char *where;		/* "process thread" of the timeline, or NULL */
};

struct group {
	int done;
	struct row *rows;
	size_t nrows, caprows;
	struct row m;		/* the match (a copy of its row) */
	uint32_t source;
};

struct prog {
	/* matching */
	const char *pattern;
	size_t patlen;
	int use_re;
	regex_t re;
	const char *key;	/* NULL: name */
	const char *arg;	/* --key args.X: X */
	nd_buf val;		/* decoded value / NUL-terminated copy */

	nd_out *o;
	int table;
	nd_stream *st;		/* the input (held here, not in a local, so */
	nd_context *ctx;		/* an error exit leaves no leak report) */

	/* the current source */
	int has_src;
	uint32_t src;
	nd_buf meta;		/* its meta record, empty if none */
	int meta_written;
	uint64_t src_spans;	/* spans written for it */

	/* writing */
	nd_event wev;
	nd_buf wscratch, extra;

	/* --table */
	struct group **groups;	/* by match id - 1 */
	size_t ngroups, capgroups, gfirst;	/* gfirst: next to print */
	int printed_any;
};

static int
value_matches(struct prog *p, const char *s, size_t n)
{
	if (!p->use_re)
		return n == p->patlen && memcmp(s, p->pattern, n) == 0;
	if (s != p->val.p) {
		nd_buf_reset(&p->val);
		nd_buf_add(&p->val, s, n);
	}
	return nd_rx_exec(&p->re, p->val.p != NULL ? p->val.p : "", 0,
	    NULL) == 0;
}

/* The text of a JSON value for matching: a string's contents, any other
 * value's JSON text; null counts as absent. */
static int
jval_matches(struct prog *p, const nd_jval *v)
{
	if (v->type == ND_JNULL)
		return 0;
	if (v->type != ND_JSTR)
		return value_matches(p, v->raw, v->len);
	if (!v->esc)
		return value_matches(p, nd_jstr_ptr(v), nd_jstr_len(v));
	nd_buf_reset(&p->val);
	nd_json_unescape(v, &p->val);
	return value_matches(p, p->val.p != NULL ? p->val.p : "", p->val.len);
}

static int
span_matches(struct prog *p, const nd_event *ev)
{
	const nd_jval *v;
	nd_jval av;

	if (p->key == NULL)
		return ev->name.p != NULL &&
		    value_matches(p, ev->name.p, ev->name.n);
	if (p->arg != NULL)
		return nd_event_arg(ev, p->arg, &av) && jval_matches(p, &av);
	v = nd_event_get(ev, p->key);
	return v != NULL && jval_matches(p, v);
}

/* --- the stream --- */

static void
drop_member(nd_event *ev, const char *key)
{
	size_t k = 0;

	for (size_t i = 0; i < ev->nmembers; i++)
		if (!nd_jstr_eq(&ev->members[i].key, key))
			ev->members[k++] = ev->members[i];
	ev->nmembers = k;
}

static void
decode_held(struct prog *p, const nd_context_span *s)
{
	nd_everr err;

	/* It was decoded once already: this cannot fail. */
	if (nd_event_decode(&p->wev, s->line, s->len, &p->wscratch, &err) != 0)
		nd_die(ND_EXIT_ERROR, "internal error: %s", err.msg);
}

static void
on_write(void *u, const nd_context_span *s, const nd_context_rel *r)
{
	struct prog *p = u;
	nd_buf *b = nd_out_buf(p->o);

	if (!p->meta_written && p->meta.len > 0) {
		nd_buf_add(b, p->meta.p, p->meta.len);
		nd_buf_addc(b, '\n');
	}
	p->meta_written = 1;
	p->src_spans++;
	decode_held(p, s);
	/* Our own output read back: the new context replaces the old. */
	drop_member(&p->wev, "context");
	nd_buf_reset(&p->extra);
	nd_buf_addf(&p->extra, ",\"context\":{\"match\":%llu,\"role\":\"%s\","
	    "\"offset_ns\":%lld}", (unsigned long long)r->match,
	    nd_context_role_name(r->role), (long long)r->offset_ns);
	p->wev.extra = p->extra.p;
	p->wev.extra_len = p->extra.len;
	nd_event_write(b, &p->wev);
	nd_out_commit(p->o);
}

/* The end record of a source we wrote spans of, with the counts of what we
 * wrote; everything else (events read, skipped, sha256, warnings) still
 * describes the input and is kept. */
static void
write_end(struct prog *p, const nd_event *ev)
{
	nd_buf *b = nd_out_buf(p->o);

	nd_buf_addc(b, '{');
	for (size_t i = 0; i < ev->nmembers; i++) {
		const nd_member *m = &ev->members[i];

		if (i > 0)
			nd_buf_addc(b, ',');
		nd_buf_add(b, m->key.raw, m->key.len);
		nd_buf_addc(b, ':');
		if (nd_jstr_eq(&m->key, "spans"))
			nd_json_put_u64(b, p->src_spans);
		else if (nd_jstr_eq(&m->key, "instants") ||
		    nd_jstr_eq(&m->key, "counters") ||
		    nd_jstr_eq(&m->key, "flows"))
			nd_buf_addc(b, '0');
		else
			nd_buf_add(b, m->val.raw, m->val.len);
	}
	nd_buf_add(b, "}\n", 2);
	nd_out_commit(p->o);
}

/* --- the table --- */

static char *
clean_dup(nd_str s)
{
	char *r;

	if (s.p == NULL)
		return NULL;
	r = nd_xstrndup(s.p, s.n);
	for (size_t i = 0; i < s.n; i++)
		if (r[i] == '\n' || r[i] == '\t' || r[i] == '\r' || r[i] == '\0')
			r[i] = ' ';
	return r;
}

static void
row_fill(struct prog *p, struct row *w, const nd_context_span *s, int role)
{
	nd_buf txt = ND_BUF_INIT;

	decode_held(p, s);
	w->seq = s->seq;
	w->ts = s->ts_ns;
	w->dur = s->dur_ns;
	w->pid = s->pid;
	w->tid = s->tid;
	w->tl = s->timeline;
	w->role = role;
	w->name = clean_dup(p->wev.name.p != NULL ? p->wev.name :
	    ND_STR("(no name)"));
	if (p->wev.process.p != NULL)
		nd_buf_add(&txt, p->wev.process.p, p->wev.process.n);
	if (p->wev.thread.p != NULL) {
		if (txt.len > 0)
			nd_buf_addc(&txt, ' ');
		nd_buf_add(&txt, p->wev.thread.p, p->wev.thread.n);
	}
	w->where = txt.len > 0 ? clean_dup((nd_str){ txt.p, txt.len }) : NULL;
	if (w->where != NULL) {
		size_t n = strlen(w->where);

		while (n > 0 && w->where[n - 1] == ' ')
			w->where[--n] = '\0';
		if (n == 0) {
			free(w->where);
			w->where = NULL;
		}
	}
	nd_buf_free(&txt);
}

static struct group *
group_of(struct prog *p, uint64_t id)
{
	size_t i = (size_t)(id - 1);

	if (i >= p->ngroups) {
		nd_grow(&p->groups, &p->capgroups, i + 1, sizeof *p->groups);
		for (size_t j = p->ngroups; j <= i; j++)
			p->groups[j] = nd_xcalloc(1, sizeof **p->groups);
		p->ngroups = i + 1;
	}
	return p->groups[i];
}

static void
on_relate(void *u, const nd_context_span *s, const nd_context_rel *r)
{
	struct prog *p = u;
	struct group *g = group_of(p, r->match);
	struct row *w;

	nd_grow(&g->rows, &g->caprows, g->nrows + 1, sizeof *g->rows);
	w = &g->rows[g->nrows++];
	row_fill(p, w, s, r->role);
	if (r->role == ND_CTX_MATCH) {
		g->m = *w;
		g->source = s->source;
	}
}

/* Own timeline first (parents, then the rest), then the others by pid and
 * tid; stream order within each. */
static uint32_t sort_tl;

static int
row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int xo = x->tl == sort_tl, yo = y->tl == sort_tl;

	if (xo != yo)
		return yo - xo;
	if (!xo && (x->pid != y->pid || x->tid != y->tid)) {
		if (x->pid != y->pid)
			return x->pid < y->pid ? -1 : 1;
		return x->tid < y->tid ? -1 : 1;
	}
	if (xo && (x->role == ND_CTX_PARENT) != (y->role == ND_CTX_PARENT))
		return x->role == ND_CTX_PARENT ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
put_row(nd_buf *b, const char *role, const char *start, int ws,
    const char *dur, int wd, const char *name)
{
	nd_buf_addf(b, "  %-7s  %*s  %*s", role, ws, start, wd, dur);
	if (name != NULL && *name != '\0')
		nd_buf_addf(b, "  %s", name);
	nd_buf_addc(b, '\n');
}

static void
print_group(struct prog *p, uint64_t id, struct group *g)
{
	nd_buf *b = nd_out_buf(p->o);
	char st[40], du[40];
	int ws = 5, wd = 3;	/* "start", "dur" */
	int64_t reach = 0;
	int have_reach = 0;
	uint32_t cur_tl = UINT32_MAX;

	sort_tl = g->m.tl;
	qsort(g->rows, g->nrows, sizeof *g->rows, row_cmp);
	/* Column widths, gaps included (a gap is never longer than the
	 * window it lies in, so the widest start/dur is a row's). */
	for (size_t i = 0; i < g->nrows; i++) {
		nd_fmt_dur(st, sizeof st, g->rows[i].ts - g->m.ts, 1);
		nd_fmt_dur(du, sizeof du, g->rows[i].dur, 0);
		if ((int)strlen(st) > ws)
			ws = (int)strlen(st);
		if ((int)strlen(du) > wd)
			wd = (int)strlen(du);
	}
	if (p->printed_any)
		nd_buf_addc(b, '\n');
	p->printed_any = 1;
	nd_buf_addf(b, "match %llu: %s (pid %lld tid %lld", (unsigned long long)id,
	    g->m.name, (long long)g->m.pid, (long long)g->m.tid);
	if (g->m.where != NULL)
		nd_buf_addf(b, ", %s", g->m.where);
	nd_buf_addf(b, ", source %u) at ts_ns %lld\n", g->source,
	    (long long)g->m.ts);
	put_row(b, "role", "start", ws, "dur", wd, "name");
	for (size_t i = 0; i < g->nrows; i++) {
		const struct row *w = &g->rows[i];

		if (w->tl != cur_tl) {
			cur_tl = w->tl;
			have_reach = 0;
			if (w->tl != g->m.tl) {
				nd_buf_addf(b, "  -- pid %lld tid %lld",
				    (long long)w->pid, (long long)w->tid);
				if (w->where != NULL)
					nd_buf_addf(b, ", %s", w->where);
				nd_buf_addc(b, '\n');
			}
		}
		if (w->role != ND_CTX_PARENT) {
			/* idle time since the spans listed before on this
			 * timeline ended */
			if (have_reach && w->ts > reach) {
				nd_fmt_dur(st, sizeof st, reach - g->m.ts, 1);
				nd_fmt_dur(du, sizeof du, w->ts - reach, 0);
				put_row(b, "(gap)", st, ws, du, wd, NULL);
			}
			if (!have_reach || w->ts + w->dur > reach)
				reach = w->ts + w->dur;
			have_reach = 1;
		}
		nd_fmt_dur(st, sizeof st, w->ts - g->m.ts, 1);
		nd_fmt_dur(du, sizeof du, w->dur, 0);
		put_row(b, nd_context_role_name(w->role), st, ws, du, wd, w->name);
		nd_out_commit(p->o);
	}
}

static void
group_free(struct group *g)
{
	for (size_t i = 0; i < g->nrows; i++) {
		free(g->rows[i].name);
		free(g->rows[i].where);
	}
	free(g->rows);
	free(g);
}

static void
on_done(void *u, uint64_t id)
{
	struct prog *p = u;

	group_of(p, id)->done = 1;
	while (p->gfirst < p->ngroups && p->groups[p->gfirst]->done) {
		print_group(p, p->gfirst + 1, p->groups[p->gfirst]);
		group_free(p->groups[p->gfirst]);
		p->groups[p->gfirst] = NULL;
		p->gfirst++;
	}
}

/* --- main --- */

static void
need_int(nd_stream *st, const nd_event *ev, unsigned bit, const char *key)
{
	if (!(ev->has & bit))
		nd_die(ND_EXIT_ERROR, "%s:%llu: span record lacks \"%s\" "
		    "(an integer)", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st), key);
}

static void
new_source(struct prog *p, nd_context *c, uint32_t src)
{
	if (p->has_src)
		nd_context_end_source(c);
	p->has_src = 1;
	p->src = src;
	nd_buf_reset(&p->meta);
	p->meta_written = 0;
	p->src_spans = 0;
}

/* The options that are not part of struct prog. */
struct opts {
	int64_t after, before, max, lookback;
	int overlapping;
	const char *out;
};

/* Parse the options and PATTERN into p and o; returns the index in argv
 * of the first FILE. */
static int
parse_args(int argc, char **argv, struct prog *p, struct opts *o)
{
	static const struct option opts[] = {
		{ "after-context", required_argument, NULL, 'A' },
		{ "before-context", required_argument, NULL, 'B' },
		{ "context", required_argument, NULL, 'C' },
		{ "regex", no_argument, NULL, OPT_REGEX },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "max", required_argument, NULL, OPT_MAX },
		{ "overlapping", no_argument, NULL, OPT_OVERLAPPING },
		{ "lookback", required_argument, NULL, OPT_LOOKBACK },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	int64_t both = 3;
	int ch;

	o->after = o->before = -1;
	o->max = 0;
	o->lookback = 1000;
	o->overlapping = 0;
	o->out = NULL;
	while ((ch = getopt_long(argc, argv, "A:B:C:ho:V", opts, NULL)) != -1)
		switch (ch) {
		case 'A':
			o->after = nd_cli_int("--after-context", optarg, 0,
			    INT32_MAX);
			break;
		case 'B':
			o->before = nd_cli_int("--before-context", optarg, 0,
			    INT32_MAX);
			break;
		case 'C':
			both = nd_cli_int("--context", optarg, 0, INT32_MAX);
			break;
		case 'h':
			nd_cli_help(usage_text);
		case 'o':
			o->out = optarg;
			break;
		case 'V':
			nd_cli_version();
		case OPT_REGEX:
			p->use_re = 1;
			break;
		case OPT_KEY:
			if (optarg[0] == '\0' || strcmp(optarg, "args.") == 0)
				nd_die(ND_EXIT_ERROR, "invalid value for --key: "
				    "'%s'", optarg);
			p->key = strcmp(optarg, "name") == 0 ? NULL : optarg;
			if (strncmp(optarg, "args.", 5) == 0)
				p->arg = optarg + 5;
			break;
		case OPT_MAX:
			o->max = nd_cli_int("--max", optarg, 1, INT64_MAX);
			break;
		case OPT_OVERLAPPING:
			o->overlapping = 1;
			break;
		case OPT_LOOKBACK:
			o->lookback = nd_cli_int("--lookback", optarg, 0,
			    INT32_MAX);
			break;
		case OPT_TABLE:
			p->table = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	if (optind >= argc) {
		nd_warn("no PATTERN given");
		nd_cli_usage(usage_text);
	}
	if (o->after < 0)
		o->after = both;
	if (o->before < 0)
		o->before = both;
	p->pattern = argv[optind];
	p->patlen = strlen(argv[optind]);
	if (p->use_re) {
		int rc = regcomp(&p->re, p->pattern, REG_EXTENDED | REG_NOSUB);

		if (rc != 0) {
			char msg[256];

			regerror(rc, &p->re, msg, sizeof msg);
			nd_die(ND_EXIT_ERROR, "--regex '%s': %s", p->pattern, msg);
		}
	}
	return optind + 1;
}

/* Give a span to the context engine, matched or not. */
static void
add_span(struct prog *p, nd_event *ev, int64_t max)
{
	nd_stream *st = p->st;
	nd_context *ctx = p->ctx;
	nd_context_order oe;
	int m;

	need_int(st, ev, ND_HAS_TS, "ts_ns");
	need_int(st, ev, ND_HAS_DUR, "dur_ns");
	need_int(st, ev, ND_HAS_PID, "pid");
	need_int(st, ev, ND_HAS_TID, "tid");
	m = (max == 0 || nd_context_matches(ctx) < (uint64_t)max) &&
	    span_matches(p, ev);
	if (nd_context_add(ctx, ev, m, NULL, &oe) != ND_CTX_OK)
		nd_die(ND_EXIT_ERROR, "%s:%llu: span out of order "
		    "on timeline pid %lld tid %lld: ts_ns %lld "
		    "dur_ns %lld after ts_ns %lld dur_ns %lld "
		    "(each timeline must be in ts_ns order, the "
		    "longer span first on ties)",
		    nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st),
		    (long long)oe.pid, (long long)oe.tid,
		    (long long)oe.ts_ns, (long long)oe.dur_ns,
		    (long long)oe.prev_ts_ns,
		    (long long)oe.prev_dur_ns);
}

static void
prog_free(struct prog *p)
{
	nd_event_free(&p->wev);
	nd_buf_free(&p->wscratch);
	nd_buf_free(&p->extra);
	nd_buf_free(&p->meta);
	nd_buf_free(&p->val);
	for (size_t i = p->gfirst; i < p->ngroups; i++)
		if (p->groups[i] != NULL)
			group_free(p->groups[i]);
	free(p->groups);
	if (p->use_re)
		regfree(&p->re);
}

int
main(int argc, char **argv)
{
	struct prog p;
	struct opts o;
	nd_context_ops ops = { NULL, NULL, NULL };
	nd_event ev;
	int first, rc;

	nd_init(argv[0]);
	memset(&p, 0, sizeof p);
	first = parse_args(argc, argv, &p, &o);
	if (p.table) {
		ops.relate = on_relate;
		ops.done = on_done;
	} else {
		ops.write = on_write;
	}
	p.ctx = nd_context_new(o.before, o.after, o.overlapping, o.lookback, &ops,
	    &p);
	p.st = nd_stream_open(argv + first, argc - first);
	p.o = nd_out_open(o.out);
	nd_event_init(&ev);
	nd_event_init(&p.wev);
	while (nd_stream_next(p.st, &ev)) {
		if (!p.has_src || ev.source != p.src)
			new_source(&p, p.ctx, ev.source);
		switch (ev.type) {
		case ND_EV_META:
			nd_buf_add(&p.meta, ev.line, ev.len);
			break;
		case ND_EV_END:
			nd_context_end_source(p.ctx);
			if (p.meta_written)
				write_end(&p, &ev);
			break;
		case ND_EV_SPAN:
			add_span(&p, &ev, o.max);
			break;
		default:
			/* instants, counters, flows and other records are
			 * not context: not written */
			break;
		}
		/* --max: stop reading once the last match is complete */
		if (o.max > 0 && nd_context_matches(p.ctx) >= (uint64_t)o.max &&
		    nd_context_pending(p.ctx) == 0)
			break;
	}
	nd_context_end_source(p.ctx);
	nd_out_close(p.o);
	if (getenv("ND_CONTEXT_STATS") != NULL)
		fprintf(stderr, "%s: %llu matches, at most %zu spans held\n",
		    nd_progname, (unsigned long long)nd_context_matches(p.ctx),
		    nd_context_held_max(p.ctx));
	rc = nd_context_matches(p.ctx) > 0 ? ND_EXIT_OK : ND_EXIT_FINDING;
	nd_context_free(p.ctx);
	nd_stream_close(p.st);
	nd_event_free(&ev);
	prog_free(&p);
	return rc;
}
