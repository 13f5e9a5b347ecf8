/*
 * topk: the ten ops that take the most exclusive device time in ndtrace
 * streams (files, or stdin), as an aligned table -- trace-topk -k 10
 * --table in thirty lines of a program of its own, linked to libndtrace:
 *
 *	cc -o topk topk.c $(pkg-config --cflags --libs ndtrace)
 *	chrome2ndjson trace.json.gz | ./topk
 */
#include <ndtrace.h>

int
main(int argc, char **argv)
{
	nd_scan_opts so = { ND_TL_DEVICE, ND_NEST_CLIP, 0, NULL };
	nd_run_mode mode = { 0, 0, 0, NULL };	/* read; stdout */
	nd_engine e, *engines[] = { &e };
	nd_top *t;

	nd_init(argv[0]);
	t = nd_top_new(ND_TOP_SELF, 0);
	/* group by name, ten rows and an "other" row, as a table */
	e = nd_top_engine(t, &so, 0, ND_TOP_TABLE, 10, 0);
	nd_run(engines, 1, argv + 1, argc - 1, &mode, NULL);
	nd_top_free(t);
	return ND_EXIT_OK;
}
