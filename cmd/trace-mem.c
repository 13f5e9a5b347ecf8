/*
 * trace-mem: memory timelines, peaks and the ops that allocate, from an
 * ndtrace stream ([memory] events, XPlane allocator statistics), from a
 * PyTorch CUDA memory snapshot pickle, or from a PyTorch memory timeline
 * export (HTA's memory_timeline.raw).  See trace-mem(1).
 */
#include "nd_cli.h"
#include "nd_in.h"
#include "nd_mem.h"
#include "nd_out.h"
#include "nd_pickle.h"
#include "nd_stream.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
"usage: trace-mem [-hV] [-k N] [--frames N] [--sort self|total] [--snapshot] [--timeline | --table | --dump] [-o FILE] [FILE ...]\n"
"  -k, --top N          rows of top allocating ops and of largest blocks\n"
"                       (default 10; 0: none)\n"
"      --frames N       stack frames kept per snapshot block (default 5)\n"
"      --sort WHAT      order top ops by self (default) or total bytes\n"
"      --snapshot       read every FILE as a PyTorch memory snapshot\n"
"                       (default: a regular file whose first byte is 0x80)\n"
"      --timeline       also write the timeline as meta and counter records\n"
"      --table          a report for people instead of records\n"
"      --dump           write each snapshot's value as one JSON line\n"
"  -o, --output FILE    write to FILE (atomically) instead of stdout\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n";

enum { OPT_FRAMES = 256, OPT_SORT, OPT_SNAPSHOT, OPT_TIMELINE, OPT_TABLE,
	OPT_DUMP };

static int force_snapshot, dump;

static void
commit(void *ctx)
{
	nd_out_commit(ctx);
}

enum { K_STREAM, K_PICKLE, K_TIMELINE };

/* A snapshot (first byte 0x80), a memory timeline (a JSON array of
 * arrays), or a stream?  Only a regular file (or stdin redirected from one) is sniffed:
 * reading a pipe's first bytes would take them from the stream reader
 * that comes after. */
static int
kind_of(const char *path)
{
	struct stat sb;
	unsigned char c[64];
	size_t n, i = 0;
	nd_in *in;
	int stdin_ = strcmp(path, "-") == 0;
	off_t off = 0;

	if (force_snapshot || dump)
		return K_PICKLE;
	if (stdin_) {
		if (fstat(STDIN_FILENO, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    (off = lseek(STDIN_FILENO, 0, SEEK_CUR)) < 0)
			return K_STREAM;
	} else if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return K_STREAM;
	in = nd_in_open(path);
	n = nd_in_peek(in, c, sizeof c);
	nd_in_close(in);
	if (stdin_ && lseek(STDIN_FILENO, off, SEEK_SET) != off)
		nd_die_errno(ND_EXIT_ERROR, "<stdin>: cannot rewind");
	if (n > 0 && c[0] == 0x80)
		return K_PICKLE;
	/* "[[": both forms of a memory timeline; a Chrome trace's bare array
	 * starts "[{" and goes to the stream reader, which names it */
	for (int open = 0; open < 2; open++, i++) {
		while (i < n && (c[i] == ' ' || c[i] == '\t' ||
		    c[i] == '\n' || c[i] == '\r'))
			i++;
		if (i >= n || c[i] != '[')
			return K_STREAM;
	}
	return K_TIMELINE;
}

/* A PyTorch memory timeline export, read whole. */
static void
timeline(nd_mem *mem, const char *path)
{
	nd_in *in = nd_in_open(path);
	nd_buf data = ND_BUF_INIT;
	nd_memtl tl;
	char msg[512];
	uint64_t off;

	nd_in_slurp(in, &data);
	if (nd_memtl_parse(data.p != NULL ? data.p : "", data.len, &tl, msg,
	    sizeof msg, &off) != 0)
		nd_die(ND_EXIT_ERROR, "%s: byte %llu: %s", nd_in_name(in),
		    (unsigned long long)off + 1, msg);
	nd_mem_timeline(mem, nd_in_name(in), &tl);
	nd_memtl_free(&tl);
	nd_buf_free(&data);
	nd_in_close(in);
}

static void
snapshot(nd_mem *mem, nd_out *out, const char *path)
{
	nd_in *in = nd_in_open(path);
	nd_buf data = ND_BUF_INIT;
	nd_pickle *pk;
	nd_pkerr err;
	char msg[512];

	nd_in_slurp(in, &data);
	pk = nd_pickle_load(data.p != NULL ? data.p : "", data.len, &err);
	if (pk == NULL)
		nd_die(ND_EXIT_ERROR, "%s: byte %llu: %s", nd_in_name(in),
		    (unsigned long long)err.off, err.msg);
	if (dump) {
		nd_buf *b = nd_out_buf(out);

		nd_pk_json(b, nd_pickle_root(pk));
		nd_buf_addc(b, '\n');
		nd_out_commit(out);
	} else if (nd_mem_snapshot(mem, nd_in_name(in), nd_pickle_root(pk),
	    msg, sizeof msg) != 0)
		nd_die(ND_EXIT_ERROR, "%s: %s", nd_in_name(in), msg);
	nd_pickle_free(pk);
	nd_buf_free(&data);
	nd_in_close(in);
}

static void
stream(nd_mem *mem, char **paths, int n)
{
	nd_stream *st = nd_stream_open(paths, n);
	nd_event ev;

	nd_event_init(&ev);
	while (nd_stream_next(st, &ev))
		nd_mem_record(mem, &ev, nd_stream_meta(st, ev.source));
	nd_mem_stream_done(mem);
	nd_event_free(&ev);
	nd_stream_close(st);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'k' },
		{ "frames", required_argument, NULL, OPT_FRAMES },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "snapshot", no_argument, NULL, OPT_SNAPSHOT },
		{ "timeline", no_argument, NULL, OPT_TIMELINE },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "dump", no_argument, NULL, OPT_DUMP },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	static char *stdin_only[] = { "-" };
	nd_mem_opts o;
	const char *outpath = NULL;
	nd_out *out;
	nd_mem *mem;
	int c, i;

	nd_init(argv[0]);
	memset(&o, 0, sizeof o);
	o.top = 10;
	o.frames = 5;
	while ((c = getopt_long(argc, argv, "hk:o:V", opts, NULL)) != -1)
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'k':
			o.top = (int)nd_cli_int("--top", optarg, 0, 1000000);
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'V':
			nd_cli_version();
		case OPT_FRAMES:
			o.frames = (int)nd_cli_int("--frames", optarg, 0, 1000);
			break;
		case OPT_SORT:
			if (strcmp(optarg, "self") == 0)
				o.sort_total = 0;
			else if (strcmp(optarg, "total") == 0)
				o.sort_total = 1;
			else
				nd_die(ND_EXIT_ERROR, "--sort: '%s' is not "
				    "self or total", optarg);
			break;
		case OPT_SNAPSHOT:
			force_snapshot = 1;
			break;
		case OPT_TIMELINE:
			o.timeline = 1;
			break;
		case OPT_TABLE:
			o.table = 1;
			break;
		case OPT_DUMP:
			dump = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;
	if (o.timeline + o.table + dump > 1)
		nd_die(ND_EXIT_ERROR, "--timeline, --table and --dump exclude "
		    "each other");
	if (argc == 0) {
		argc = 1;
		argv = stdin_only;
	}

	out = nd_out_open(outpath);
	mem = nd_mem_new(&o, nd_out_buf(out), commit, out);
	/* Runs of stream files share one reader (sources count across
	 * them); each snapshot is read whole. */
	for (i = 0; i < argc;) {
		int j = i, k = kind_of(argv[i]);

		if (k != K_STREAM) {
			if (k == K_PICKLE)
				snapshot(mem, out, argv[i]);
			else
				timeline(mem, argv[i]);
			i++;
			continue;
		}
		while (j < argc && (j == i || kind_of(argv[j]) == K_STREAM))
			j++;
		stream(mem, argv + i, j - i);
		i = j;
	}
	nd_mem_finish(mem);
	nd_mem_free(mem);
	nd_out_close(out);
	return ND_EXIT_OK;
}
