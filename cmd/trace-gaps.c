/*
 * trace-gaps: idle intervals on device op timelines, each with the op that
 * ends it (marker), the first real work after it (payload) and its likely
 * cause, as "gap" records.  See trace-gaps(1); the engine is lib/engines/nd_gaps.
 */
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_gaps.h"
#include "nd_gapsout.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_steps.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-gaps [-cShuV] [-K dur] [-l level] [-m dur] [-o file] [-x regex] [--totals] [--partial] [--merge] [file ...]\n"
"  -l, --level LEVEL      device (default: idle on every timeline of the\n"
"                         device) or timeline (idle on one timeline)\n"
"  -m, --min DUR          report gaps of at least DUR (default 0; 10us, 1ms)\n"
"  -K, --kernel-wait DUR  shorter gaps have cause kernel_wait (default 30us)\n"
"  -c, --host-context     add the 3 host spans overlapping each gap most\n"
"  -S, --within-steps     keep only the parts of gaps inside step windows\n"
"  -x, --step-regex RE    step windows from spans whose name matches RE\n"
"  -u, --unordered        accept timelines out of start order (more memory)\n"
"      --totals           add a gap_summary record: totals by cause, payload\n"
"                         and scope\n"
"      --partial          partial results for --merge\n"
"      --merge            combine partial results (the output of --partial)\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

static void
put_op_name(nd_jw *w, const char *key, const nd_gap_op *op)
{
	nd_jw_kstr(w, key, op->name, op->name_n);
}

static void
write_gap(nd_buf *b, const nd_gaps *g, const nd_gap *gap,
    const nd_source_info *si, int level)
{
	nd_gap_where wh;
	nd_jw w;
	int64_t rank;

	nd_gaps_where(g, gap, &wh);
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "gap");
	if (si != NULL && si->path != NULL)
		nd_jw_kcstr(&w, "source", si->path);
	nd_jw_kint(&w, "ts_ns", gap->ts);
	nd_jw_kint(&w, "dur_ns", gap->dur);
	if (wh.has_pid)
		nd_jw_kint(&w, "pid", wh.pid);
	if (wh.has_tid)
		nd_jw_kint(&w, "tid", wh.tid);
	if (wh.process != NULL)
		nd_jw_kcstr(&w, "process", wh.process);
	if (wh.thread != NULL)
		nd_jw_kcstr(&w, "thread", wh.thread);
	if (wh.device != NULL)
		nd_jw_kcstr(&w, "device", wh.device);
	if (si != NULL && si->has_rank)
		nd_jw_kint(&w, "rank", si->rank);
	else if (nd_gaps_rank(g, &rank))
		nd_jw_kint(&w, "rank", rank);
	if (gap->has_wstep)
		nd_jw_kint(&w, "step", gap->wstep);
	else if (gap->payload.has_step)
		nd_jw_kint(&w, "step", gap->payload.step);
	if (gap->payload.scope != NULL)
		nd_jw_kstr(&w, "scope", gap->payload.scope,
		    gap->payload.scope_n);
	nd_jw_kcstr(&w, "level", level == ND_GAP_DEVICE ? "device" : "timeline");
	put_op_name(&w, "before", &gap->before);
	put_op_name(&w, "marker", &gap->marker);
	put_op_name(&w, "payload", &gap->payload);
	nd_jw_kint(&w, "payload_index", gap->payload_index);
	nd_jw_kcstr(&w, "cause", gap->cause);
	if (nd_gaps_fallback(g))
		nd_jw_kbool(&w, "host_timelines", 1);
	if (gap->nctx > 0) {
		nd_jw_key(&w, "host_context");
		nd_jw_arr(&w);
		for (int i = 0; i < gap->nctx; i++) {
			const nd_gap_ctx *c = &gap->ctx[i];

			nd_jw_obj(&w);
			nd_jw_kstr(&w, "name", c->name != NULL ? c->name : "",
			    c->name_n);
			if (c->thread != NULL)
				nd_jw_kstr(&w, "thread", c->thread, c->thread_n);
			nd_jw_kint(&w, "ts_ns", c->ts);
			nd_jw_kint(&w, "dur_ns", c->dur);
			nd_jw_kint(&w, "overlap_ns", c->overlap);
			nd_jw_obj_end(&w);
		}
		nd_jw_arr_end(&w);
	}
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

struct sink {
	nd_gaps *g;
	nd_gapsout *out;
	const nd_source_info *si;
	int level;
};

static void
one_gap(void *ctx, const nd_gap *gap)
{
	struct sink *k = ctx;

	write_gap(nd_out_buf(k->out->o), k->g, gap, k->si, k->level);
	nd_gapsout_gap(k->out, gap);
}

static void
flush_source(nd_gaps *g, nd_stream *st, uint32_t src, nd_gapsout *out,
    int level)
{
	struct sink k = { g, out, nd_stream_meta(st, src), level };

	nd_gaps_finish(g, one_gap, &k);
	nd_gaps_reset(g);
}

enum { OPT_TOTALS = 256, OPT_PARTIAL, OPT_MERGE };

struct args {
	nd_gaps_opts go;
	const char *out, *regex;
	int summary, partial, merge;
	int collopt;		/* a collection option was given */
};

static void
option(struct args *a, int ch)
{
	/* the options that decide the gaps: --merge takes them from the
	 * partial results */
	if (ch < 256 && strchr("cKklmrSsux", ch) != NULL)
		a->collopt = 1;
	switch (ch) {
	case 'c':
		a->go.host_context = ND_GAP_MAX_CTX;
		break;
	case 'h':
		nd_cli_help(usage_text);
	case 'k':	/* -k is --top elsewhere */
		nd_cli_deprecated("-k", "-K (--kernel-wait)");
		/* FALLTHROUGH */
	case 'K':
		a->go.kernel_wait_ns = nd_cli_duration("--kernel-wait", optarg);
		break;
	case 'l':
		if (strcmp(optarg, "device") == 0)
			a->go.level = ND_GAP_DEVICE;
		else if (strcmp(optarg, "timeline") == 0)
			a->go.level = ND_GAP_TIMELINE;
		else
			nd_die(ND_EXIT_ERROR, "invalid value for --level: "
			    "'%s' (use device or timeline)", optarg);
		break;
	case 'm':
		a->go.min_ns = nd_cli_duration("--min", optarg);
		break;
	case 'o':
		a->out = optarg;
		break;
	case 'r':	/* -r is --rules elsewhere */
		nd_cli_deprecated("-r", "-x (--step-regex)");
		/* FALLTHROUGH */
	case 'x':
		a->regex = optarg;
		break;
	case 's':	/* -s is --summary elsewhere */
		nd_cli_deprecated("-s", "-S (--within-steps)");
		/* FALLTHROUGH */
	case 'S':
		a->go.within_steps = 1;
		break;
	case 'u':
		a->go.unordered = 1;
		break;
	case 'V':
		nd_cli_version();
	case OPT_TOTALS:
		a->summary = 1;
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
span(nd_gaps *g, nd_stream *st, const nd_event *ev, const regex_t *re)
{
	nd_span_role r;

	if (!(ev->has & ND_HAS_TS) || !(ev->has & ND_HAS_DUR))
		return;
	nd_span_role_of(ev, re, &r);
	if (nd_gaps_add(g, ev, &r) != 0)
		nd_die(ND_EXIT_ERROR, "%s:%llu: span out of order "
		    "on timeline pid %lld tid %lld (ndtrace(7): "
		    "each timeline by start time); use "
		    "--unordered", nd_stream_file(st),
		    (unsigned long long)nd_stream_lineno(st),
		    (long long)ev->pid, (long long)ev->tid);
}

/* The gaps of every source, in input order, to out. */
static void
run(struct args *a, char **paths, int n, nd_gapsout *out)
{
	nd_gaps *g = nd_gaps_new(&a->go);
	nd_stream *st = nd_stream_open(paths, n);
	nd_event ev;
	int64_t cur = -1;

	nd_event_init(&ev);
	while (nd_stream_next(st, &ev)) {
		if ((int64_t)ev.source != cur) {
			if (cur >= 0)
				flush_source(g, st, (uint32_t)cur, out,
				    a->go.level);
			cur = ev.source;
		}
		switch (ev.type) {
		case ND_EV_SPAN:
			span(g, st, &ev, a->go.re);
			break;
		case ND_EV_INSTANT:
		case ND_EV_COUNTER:
		case ND_EV_FLOW:
		case ND_EV_END:
			break;
		default:
			nd_gapsout_pass(out, ev.line, ev.len);
		}
	}
	if (cur >= 0)
		flush_source(g, st, (uint32_t)cur, out, a->go.level);
	nd_stream_close(st);
	nd_event_free(&ev);
	nd_gaps_free(g);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host-context", no_argument, NULL, 'c' },
		{ "kernel-wait", required_argument, NULL, 'K' },
		{ "level", required_argument, NULL, 'l' },
		{ "min", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "step-regex", required_argument, NULL, 'x' },
		{ "within-steps", no_argument, NULL, 'S' },
		{ "unordered", no_argument, NULL, 'u' },
		{ "totals", no_argument, NULL, OPT_TOTALS },
		{ "partial", no_argument, NULL, OPT_PARTIAL },
		{ "merge", no_argument, NULL, OPT_MERGE },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct args a;
	regex_t re;
	nd_gapsout out;
	nd_out *o;
	int ch;

	nd_init(argv[0]);
	memset(&a, 0, sizeof a);
	a.go.level = ND_GAP_DEVICE;
	a.go.kernel_wait_ns = 30000;
	while ((ch = getopt_long(argc, argv, "chK:k:l:m:o:r:SsuVx:", opts,
	    NULL)) != -1)
		option(&a, ch);
	argc -= optind;
	argv += optind;
	if (a.merge && a.collopt)
		nd_die(ND_EXIT_ERROR, "--merge takes --level, --min, "
		    "--kernel-wait, --host-context, --within-steps, "
		    "--step-regex and --unordered from the partial results; "
		    "do not give them again");
	if (a.regex != NULL) {
		int rc = regcomp(&re, a.regex, REG_EXTENDED);

		if (rc != 0) {
			char msg[256];

			regerror(rc, &re, msg, sizeof msg);
			nd_die(ND_EXIT_ERROR, "invalid --step-regex '%s': %s",
			    a.regex, msg);
		}
		a.go.re = &re;
	}
	o = nd_out_open(a.out);
	if (a.merge)
		nd_gapsout_merge(&out, o, a.partial, a.summary, argv, argc);
	else {
		nd_gapsout_begin(&out, o, a.partial, a.summary, &a.go, a.regex);
		run(&a, argv, argc, &out);
	}
	nd_gapsout_end(&out);
	nd_out_close(o);
	if (a.regex != NULL)
		regfree(&re);
	return ND_EXIT_OK;
}
