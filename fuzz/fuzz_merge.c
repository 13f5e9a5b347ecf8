/*
 * libFuzzer harness: --merge's reading of partial results, which are
 * untrusted input: nd_partial_read (the framing: header, records, trailer
 * with its count and sha256) handing each record to an engine's load,
 * then the engine's finish and write.  The input's first byte chooses
 * the engine ('R' trace-regions', 'G' trace-gaps', 'S' trace-steps', 'P'
 * trace-report's, 'L' trace-pipeline's, else trace-topk's; in lower case the same with each trailer's count and
 * sha256 made right, so that mutated records reach the loads); the rest
 * is the file.
 * Every refusal is an error value (nd_partial_read returns -1 with a
 * "FILE:LINE: ..." or "FILE: ..." message): no exit (nd_die is a bug
 * here), and the engine is freed the normal way.  What a merge writes
 * goes to a memfd on stdout.
 */
#include "ndtrace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char path[] = "/tmp/fuzz-merge-XXXXXX";
static int in_fd = -1;

static void
die_is_a_bug(int code)
{
	(void)code;
	abort();	/* the reader and the loads return their errors */
}

static void
remove_input(void)
{
	unlink(path);
}

/* The partials are a file: nd_partial_read reads paths, as --merge does. */
static void
setup(void)
{
	int out = memfd_create("fuzz-merge-out", 0);

	if ((in_fd = mkstemp(path)) < 0 || out < 0 ||
	    dup2(out, STDOUT_FILENO) < 0)
		abort();
	atexit(remove_input);
	nd_die_hook = die_is_a_bug;
}

static void
load(void *ctx, nd_stream *st, const nd_event *ev)
{
	nd_engine *e = ctx;

	e->load(e->self, st, ev);
}

/* e over the file: its answer, or the error checked.  A filter (start)
 * writes as it reads. */
static void
merge(nd_engine *e)
{
	char *paths[] = { path };
	nd_run_res res = { .passes = 1, .merged = 1 };
	nd_err err;
	nd_out *o;
	int64_t n;

	if (ftruncate(STDOUT_FILENO, 0) != 0 ||
	    lseek(STDOUT_FILENO, 0, SEEK_SET) != 0)
		abort();
	o = nd_out_open(NULL);
	if (e->start != NULL)
		e->start(e->self, o);
	nd_err_clear(&err);
	n = nd_partial_read(paths, 1, e->partial_type, e->partial_body,
	    e->npartial_body, load, e, &err);
	if (n < 0) {
		if (err.code != ND_EXIT_ERROR ||
		    strncmp(err.msg, path, strlen(path)) != 0)
			abort();	/* named by its file */
	} else {
		if (e->finish != NULL)
			e->finish(e->self, &res);
		if (e->write != NULL)
			e->write(e->self, o);
	}
	nd_out_close(o);
}

/* The text with each partial_end line made to hold the count and the
 * sha256 of the lines since the last header before it (a line holding
 * "_partial\""), so that mutated records reach the loads: a mutation
 * would almost never keep the trailer's sha256 right. */
static void
frame(const uint8_t *p, size_t n, nd_buf *out)
{
	size_t i = 0, nrec = 0;
	int open = 0;
	nd_sha256 h;

	while (i < n) {
		const uint8_t *nl = memchr(p + i, '\n', n - i);
		size_t end = nl != NULL ? (size_t)(nl - p) : n;
		size_t len = end - i;
		int header = memmem(p + i, len, "_partial\"", 9) != NULL;
		int trailer = memmem(p + i, len, "\"partial_end\"", 13) != NULL;

		if (trailer && open) {
			char hex[65];

			nd_sha256_hex(&h, hex);
			nd_sha256_free(&h);
			nd_buf_addf(out, "{\"type\":\"partial_end\",\"records\":"
			    "%zu,\"sha256\":\"%s\"}\n", nrec, hex);
			open = 0;
		} else {
			if (header) {
				if (open)
					nd_sha256_free(&h);
				nd_sha256_init(&h);
				open = 1;
				nrec = 0;
			} else if (open)
				nrec++;
			if (open) {
				nd_sha256_update(&h, p + i, len);
				nd_sha256_update(&h, "\n", 1);
			}
			nd_buf_add(out, p + i, len);
			if (nl != NULL)
				nd_buf_addc(out, '\n');
		}
		i = end + 1;
	}
	if (open)
		nd_sha256_free(&h);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nd_scan_opts so = { ND_TL_DEVICE, ND_NEST_CLIP, 0, NULL };
	nd_engine e;
	nd_buf text = ND_BUF_INIT;
	const void *body = data + 1;
	size_t n = size - 1;

	if (size == 0)
		return 0;
	if (in_fd < 0)
		setup();
	/* lower case: the trailers made right (frame) */
	if (data[0] >= 'a' && data[0] <= 'z') {
		frame(data + 1, size - 1, &text);
		body = text.p != NULL ? text.p : "";
		n = text.len;
	}
	if (ftruncate(in_fd, 0) != 0 ||
	    pwrite(in_fd, body, n, 0) != (ssize_t)n)
		abort();
	nd_buf_free(&text);
	switch (data[0]) {
	case 'R':
	case 'r': {
		nd_regions_opts ro = { ND_REG_JSON, 0, 1, 0, 0, 0 };
		nd_regions *r = nd_regions_new(&ro);

		e = nd_regions_engine(r, &so, 1);
		merge(&e);
		nd_regions_free(r);
		break;
	}
	case 'G':
	case 'g': {
		nd_gaps_opts go;
		nd_gapsrun *g;

		memset(&go, 0, sizeof go);
		go.level = ND_GAP_DEVICE;
		go.kernel_wait_ns = 30000;
		g = nd_gapsrun_new(&go, NULL, 0, 1, 1);
		e = nd_gapsrun_engine(g);
		merge(&e);
		nd_gapsrun_free(g);
		break;
	}
	case 'S':
	case 's': {
		nd_stepsrun_opts sro;
		nd_stepsrun *r;

		memset(&sro, 0, sizeof sro);
		sro.warmup = 1;
		sro.so.flops = 1;
		sro.merge = sro.summary = sro.ranks = 1;
		sro.collect = "";
		r = nd_stepsrun_new(&sro);
		e = nd_stepsrun_engine(r);
		merge(&e);
		nd_stepsrun_free(r);
		break;
	}
	case 'P':
	case 'p': {
		nd_report_opts ro;
		nd_report *r;
		nd_report_run *x;

		memset(&ro, 0, sizeof ro);
		ro.top = 10;
		ro.warmup = 1;
		r = nd_report_new(&ro);
		x = nd_report_run_new(r, ND_REPORT_MARKDOWN);
		e = nd_report_run_engine(x);
		merge(&e);
		nd_report_run_free(x);
		nd_report_free(r);
		break;
	}
	case 'L':
	case 'l': {
		nd_piperun_opts po;
		nd_piperun *r;

		memset(&po, 0, sizeof po);
		po.table = po.merge = 1;
		r = nd_piperun_new(&po);
		e = nd_piperun_engine(r);
		merge(&e);
		nd_piperun_free(r);
		break;
	}
	default: {
		nd_top *t = nd_top_new(ND_TOP_SELF, 0);

		e = nd_top_engine(t, &so, 1, ND_TOP_JSON, 20, 0);
		merge(&e);
		nd_top_free(t);
	}
	}
	return 0;
}
