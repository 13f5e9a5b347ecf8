/*
 * trace-pipeline: pipeline-parallel schedules from the ranks' own traces --
 * the forward, backward and weight-gradient blocks of every micro-batch on
 * every stage, the bubbles between them, P2P waits and the slow stage;
 * NDJSON records, a table or an SVG chart; mergeable partial results.  See
 * trace-pipeline(1); the engine is lib/engines/nd_pipe.
 */
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_partial.h"
#include "nd_pipe.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-pipeline [-hV] [-o file] [--table] [--svg] [--step n] [--forward regex] [--backward regex] [--wgrad regex] [--p2p regex] [--partial] [--merge] [file ...]\n"
"      --forward RE       forward blocks: spans whose name matches RE\n"
"      --backward RE      backward blocks (tried before the forward rule)\n"
"      --wgrad RE         weight-gradient blocks (tried first)\n"
"      --p2p RE           point-to-point send/receive spans\n"
"      --step N           only step N (with --svg: its chart instead of the\n"
"                         typical step's)\n"
"      --table            a table for people instead of records\n"
"      --svg              the SVG schedule chart of one step\n"
"      --partial          partial results for --merge (with the rules)\n"
"      --merge            combine partial results (the output of --partial;\n"
"                         with --table, --svg, --step N, or with --partial)\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

enum { OPT_FORWARD = 256, OPT_BACKWARD, OPT_WGRAD, OPT_P2P, OPT_STEP,
	OPT_TABLE, OPT_SVG, OPT_PARTIAL, OPT_MERGE };

#define LINE "pipe_line"

struct args {
	const char *out;
	nd_pipe_opts po;
	int rules;		/* a rule option given */
	int table, svg, partial, merge, has_step;
	int64_t step;
};

struct run {
	const struct args *a;
	nd_pipe *p;
	nd_out *o;
	nd_partial_w pw;
	nd_buf meta;		/* the input's meta lines, each with '\n' */
	char *rules;		/* --merge: of the first header */
	unsigned nheaders;
};

static void
option(struct args *a, int ch)
{
	switch (ch) {
	case 'h':
		nd_cli_help(usage_text);
	case 'o':
		a->out = optarg;
		break;
	case 'V':
		nd_cli_version();
	case OPT_FORWARD:
		a->po.forward = optarg;
		a->rules = 1;
		break;
	case OPT_BACKWARD:
		a->po.backward = optarg;
		a->rules = 1;
		break;
	case OPT_WGRAD:
		a->po.wgrad = optarg;
		a->rules = 1;
		break;
	case OPT_P2P:
		a->po.p2p = optarg;
		a->rules = 1;
		break;
	case OPT_STEP:
		a->step = nd_cli_int("--step", optarg, INT64_MIN / 2,
		    INT64_MAX / 2);
		a->has_step = 1;
		break;
	case OPT_TABLE:
		a->table = 1;
		break;
	case OPT_SVG:
		a->svg = 1;
		break;
	case OPT_PARTIAL:
		a->partial = 1;
		break;
	case OPT_MERGE:
		a->merge = 1;
		break;
	default:
		nd_cli_usage(usage_text);
	}
}

static void
check_modes(const struct args *a)
{
	if (a->table && a->svg)
		nd_die(ND_EXIT_ERROR, "--table and --svg: give one of them");
	nd_partial_opts po = { a->partial, a->merge, 0,
	    "--forward, --backward, --wgrad and --p2p", a->rules,
	    "--table, --svg and --step", a->table || a->svg || a->has_step };

	nd_partial_check_opts(&po);
}

/* A line of a partial being written (an nd_pipe_line_fn). */
static void
part_line(void *ctx, nd_buf *line)
{
	struct run *r = ctx;
	nd_buf *b = nd_out_buf(r->o);

	nd_buf_add(b, line->p, line->len);
	nd_buf_addc(b, '\n');
	nd_partial_commit(&r->pw);
}

static void
write_partial(struct run *r, const char *rules)
{
	nd_buf line = ND_BUF_INIT;
	nd_jw w;
	size_t i = 0;

	nd_partial_begin(&r->pw, r->o, &w, ND_PIPE_PARTIAL);
	nd_jw_kcstr(&w, "rules", rules);
	nd_jw_obj_end(&w);
	nd_buf_addc(nd_out_buf(r->o), '\n');
	nd_partial_commit(&r->pw);
	while (i < r->meta.len) {
		const char *s = r->meta.p + i, *e = memchr(s, '\n',
		    r->meta.len - i);

		nd_buf_reset(&line);
		nd_jw_init(&w, &line);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", LINE);
		nd_jw_kstr(&w, "line", s, (size_t)(e - s));
		nd_jw_obj_end(&w);
		part_line(r, &line);
		i += (size_t)(e - s) + 1;
	}
	nd_buf_free(&line);
	nd_pipe_partial_write(r->p, part_line, r);
	nd_partial_end(&r->pw);
}

/* The answer: the records (meta lines first), the table or the chart. */
static void
write_answer(struct run *r)
{
	const struct args *a = r->a;
	const nd_pipe_step *st, *one = NULL;
	size_t n = nd_pipe_finish(r->p, &st);

	if (n == 0) {
		nd_warn("no forward/backward blocks found: no span name "
		    "matches the rules; see --forward and --backward");
		return;
	}
	for (size_t i = 0; i < n && a->has_step; i++)
		if (st[i].num == a->step)
			one = &st[i];
	if (a->has_step && one == NULL)
		nd_die(ND_EXIT_ERROR, "--step %lld: no such step with forward/"
		    "backward blocks (steps %lld to %lld)", (long long)a->step,
		    (long long)st[0].num, (long long)st[n - 1].num);
	if (a->svg) {
		nd_pipe_svg_step(nd_out_buf(r->o), one != NULL ? one :
		    nd_pipe_typical(st, n));
		nd_out_commit(r->o);
		return;
	}
	if (!a->table) {
		nd_buf_add(nd_out_buf(r->o), r->meta.p, r->meta.len);
		nd_out_commit(r->o);
	}
	for (size_t i = 0; i < n; i++) {
		if (one != NULL && &st[i] != one)
			continue;
		if (a->table) {
			if (one == NULL && i > 0)
				nd_buf_addc(nd_out_buf(r->o), '\n');
			nd_pipe_table_step(nd_out_buf(r->o), &st[i]);
		} else
			nd_pipe_write_step(nd_out_buf(r->o), &st[i]);
		nd_out_commit(r->o);
	}
}

/* The records the answer passes through (an nd_partial_ok_fn). */
static int
is_meta(const nd_event *ev)
{
	return ev->type == ND_EV_META;
}

static void
read_input(struct run *r, char **argv, int argc)
{
	nd_stream *st = nd_stream_open(argv, argc);
	nd_event ev;

	nd_event_init(&ev);
	while (nd_stream_next(st, &ev)) {
		nd_pipe_add(r->p, &ev);
		if (is_meta(&ev)) {
			nd_buf_add(&r->meta, ev.line, ev.len);
			nd_buf_addc(&r->meta, '\n');
		}
	}
	nd_pipe_sources(r->p, nd_stream_nsources(st));
	nd_event_free(&ev);
	nd_stream_close(st);
}

/* One record of a partial whose framing checked out. */
static void
merge_record(void *ctx, nd_stream *st, const nd_event *ev)
{
	struct run *r = ctx;

	if (nd_str_eq(ev->type_name, ND_PIPE_PARTIAL)) {
		char *c = nd_jstr_dup(nd_stream_need(st, ev, "rules",
		    ND_JSTR));

		if (r->nheaders++ == 0)
			r->rules = c;
		else if (strcmp(c, r->rules) != 0) {
			free(c);
			nd_die(ND_EXIT_ERROR, "%s:%llu: partial results made "
			    "with other rules than the first: give every "
			    "--partial job the same --forward, --backward, "
			    "--wgrad and --p2p", nd_stream_file(st),
			    (unsigned long long)nd_stream_lineno(st));
		} else
			free(c);
	} else if (nd_str_eq(ev->type_name, LINE)) {
		size_t at = r->meta.len;

		nd_json_unescape(nd_stream_need(st, ev, "line", ND_JSTR),
		    &r->meta);
		nd_partial_record("line", r->meta.p + at, r->meta.len - at,
		    is_meta, "a meta record");
		nd_buf_addc(&r->meta, '\n');
		return;
	}
	nd_pipe_partial_add(r->p, ev, nd_stream_file(st),
	    nd_stream_lineno(st));
}

static void
run(const struct args *a, char **argv, int argc)
{
	static const char *body[16];
	char err[512];
	struct run r;
	size_t nb = 0;

	memset(&r, 0, sizeof r);
	r.a = a;
	if ((r.p = nd_pipe_new(&a->po, err, sizeof err)) == NULL)
		nd_die(ND_EXIT_ERROR, "%s", err);
	if (a->merge) {
		body[nb++] = LINE;
		for (size_t i = 0; i < nd_pipe_partial_ntypes && nb < 16; i++)
			body[nb++] = nd_pipe_partial_types[i];
		/* every input holds a partial (nd_partial_read) */
		nd_partial_read(argv, argc, ND_PIPE_PARTIAL, body, nb,
		    merge_record, &r);
	} else
		read_input(&r, argv, argc);
	r.o = nd_out_open(a->out);
	if (a->partial)
		write_partial(&r, a->merge ? r.rules : nd_pipe_rules(r.p));
	else
		write_answer(&r);
	nd_out_close(r.o);
	nd_pipe_free(r.p);
	nd_buf_free(&r.meta);
	free(r.rules);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backward", required_argument, NULL, OPT_BACKWARD },
		{ "forward", required_argument, NULL, OPT_FORWARD },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "output", required_argument, NULL, 'o' },
		{ "p2p", required_argument, NULL, OPT_P2P },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "step", required_argument, NULL, OPT_STEP },
		{ "svg", no_argument, NULL, OPT_SVG },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "wgrad", required_argument, NULL, OPT_WGRAD },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct args a;
	int ch;

	nd_init(argv[0]);
	memset(&a, 0, sizeof a);
	while ((ch = getopt_long(argc, argv, "ho:V", opts, NULL)) != -1)
		option(&a, ch);
	argc -= optind;
	argv += optind;
	check_modes(&a);
	run(&a, argv, argc);
	return ND_EXIT_OK;
}
