/*
 * trace-gaps: idle intervals on device op timelines, each with the op that
 * ends it (marker), the first real work after it (payload) and its likely
 * cause, as "gap" records.  See trace-gaps(1); the engine is lib/nd_gaps.
 */
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_gaps.h"
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
"usage: trace-gaps [-cShuV] [-K dur] [-l level] [-m dur] [-o file] [-x regex] [file ...]\n"
"  -l, --level LEVEL      device (default: idle on every timeline of the\n"
"                         device) or timeline (idle on one timeline)\n"
"  -m, --min DUR          report gaps of at least DUR (default 0; 10us, 1ms)\n"
"  -K, --kernel-wait DUR  shorter gaps have cause kernel_wait (default 30us)\n"
"  -c, --host-context     add the 3 host spans overlapping each gap most\n"
"  -S, --within-steps     keep only the parts of gaps inside step windows\n"
"  -x, --step-regex RE    step windows from spans whose name matches RE\n"
"  -u, --unordered        accept timelines out of start order (more memory)\n"
"  -o, --output FILE      write to FILE (replaced atomically) instead of stdout\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n";

static void
put_op_name(nd_jw *w, const char *key, const nd_gap_op *op)
{
	nd_jw_kcstr(w, key, op->name);
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
		nd_jw_kcstr(&w, "scope", gap->payload.scope);
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
			nd_jw_kcstr(&w, "name", c->name != NULL ? c->name : "");
			if (c->thread != NULL)
				nd_jw_kcstr(&w, "thread", c->thread);
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
	nd_out *o;
	const nd_source_info *si;
	int level;
};

static void
one_gap(void *ctx, const nd_gap *gap)
{
	struct sink *k = ctx;

	write_gap(nd_out_buf(k->o), k->g, gap, k->si, k->level);
	nd_out_commit(k->o);
}

static void
flush_source(nd_gaps *g, nd_stream *st, uint32_t src, nd_out *o, int level)
{
	struct sink k = { g, o, nd_stream_meta(st, src), level };

	nd_gaps_finish(g, one_gap, &k);
	nd_gaps_reset(g);
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
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	nd_gaps_opts go;
	const char *outpath = NULL, *regex = NULL;
	regex_t re;
	nd_gaps *g;
	nd_stream *st;
	nd_out *o;
	nd_event ev;
	int64_t cur = -1;
	int ch;

	nd_init(argv[0]);
	memset(&go, 0, sizeof go);
	go.level = ND_GAP_DEVICE;
	go.kernel_wait_ns = 30000;
	while ((ch = getopt_long(argc, argv, "chK:k:l:m:o:r:SsuVx:", opts, NULL)) != -1)
		switch (ch) {
		case 'c':
			go.host_context = ND_GAP_MAX_CTX;
			break;
		case 'h':
			nd_cli_help(usage_text);
		case 'k':	/* -k is --top elsewhere */
			nd_cli_deprecated("-k", "-K (--kernel-wait)");
			/* FALLTHROUGH */
		case 'K':
			go.kernel_wait_ns = nd_cli_duration("--kernel-wait", optarg);
			break;
		case 'l':
			if (strcmp(optarg, "device") == 0)
				go.level = ND_GAP_DEVICE;
			else if (strcmp(optarg, "timeline") == 0)
				go.level = ND_GAP_TIMELINE;
			else
				nd_die(ND_EXIT_ERROR, "invalid value for --level: "
				    "'%s' (use device or timeline)", optarg);
			break;
		case 'm':
			go.min_ns = nd_cli_duration("--min", optarg);
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'r':	/* -r is --rules elsewhere */
			nd_cli_deprecated("-r", "-x (--step-regex)");
			/* FALLTHROUGH */
		case 'x':
			regex = optarg;
			break;
		case 's':	/* -s is --summary elsewhere */
			nd_cli_deprecated("-s", "-S (--within-steps)");
			/* FALLTHROUGH */
		case 'S':
			go.within_steps = 1;
			break;
		case 'u':
			go.unordered = 1;
			break;
		case 'V':
			nd_cli_version();
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;

	if (regex != NULL) {
		int rc = regcomp(&re, regex, REG_EXTENDED);

		if (rc != 0) {
			char msg[256];

			regerror(rc, &re, msg, sizeof msg);
			nd_die(ND_EXIT_ERROR, "invalid --step-regex '%s': %s",
			    regex, msg);
		}
		go.re = &re;
	}
	g = nd_gaps_new(&go);
	st = nd_stream_open(argv, argc);
	o = nd_out_open(outpath);
	nd_event_init(&ev);
	while (nd_stream_next(st, &ev)) {
		if ((int64_t)ev.source != cur) {
			if (cur >= 0)
				flush_source(g, st, (uint32_t)cur, o, go.level);
			cur = ev.source;
		}
		switch (ev.type) {
		case ND_EV_SPAN: {
			nd_span_role r;

			if (!(ev.has & ND_HAS_TS) || !(ev.has & ND_HAS_DUR))
				break;
			nd_span_role_of(&ev, go.re, &r);
			if (nd_gaps_add(g, &ev, &r) != 0)
				nd_die(ND_EXIT_ERROR, "%s:%llu: span out of order "
				    "on timeline pid %lld tid %lld (ndtrace(7): "
				    "each timeline by start time); use "
				    "--unordered", nd_stream_file(st),
				    (unsigned long long)nd_stream_lineno(st),
				    (long long)ev.pid, (long long)ev.tid);
			break;
		}
		case ND_EV_INSTANT:
		case ND_EV_COUNTER:
		case ND_EV_FLOW:
		case ND_EV_END:
			break;
		default:
			nd_buf_add(nd_out_buf(o), ev.line, ev.len);
			nd_buf_addc(nd_out_buf(o), '\n');
			nd_out_commit(o);
		}
	}
	if (cur >= 0)
		flush_source(g, st, (uint32_t)cur, o, go.level);
	nd_out_close(o);
	nd_stream_close(st);
	nd_event_free(&ev);
	nd_gaps_free(g);
	if (regex != NULL)
		regfree(&re);
	return ND_EXIT_OK;
}
