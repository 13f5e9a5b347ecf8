/*
 * nd_memrun: see nd_memrun.h.
 */
#include "nd_memrun.h"
#include "nd_in.h"
#include "nd_pickle.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct nd_memrun {
	nd_memrun_opts o;
	nd_out *out;
	nd_mem *mem;
	nd_err err;		/* the first error of an input it read */
};

static void
commit(void *ctx)
{
	nd_out_commit(ctx);
}

enum { K_STREAM, K_PICKLE, K_TIMELINE };

/* A snapshot (first byte 0x80), a memory timeline (a JSON array of
 * arrays), or a stream?  Only a regular file (or stdin redirected from
 * one) is sniffed: reading a pipe's first bytes would take them from the
 * stream reader that comes after. */
static int
kind_of(nd_memrun *x, const char *path)
{
	struct stat sb;
	unsigned char c[64];
	size_t n, i = 0;
	nd_in *in;
	int stdin_ = strcmp(path, "-") == 0;
	off_t off = 0;

	if (x->o.snapshot || x->o.dump)
		return K_PICKLE;
	if (stdin_) {
		if (fstat(STDIN_FILENO, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    (off = lseek(STDIN_FILENO, 0, SEEK_CUR)) < 0)
			return K_STREAM;
	} else if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return K_STREAM;
	in = nd_in_open(path);
	n = nd_in_peek(in, c, sizeof c);
	if (nd_in_err(in) != NULL) {
		/* the run's error (eng_error), which the driver asks next */
		nd_err_copy(&x->err, nd_in_err(in));
		nd_in_close(in);
		return K_PICKLE;
	}
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

/* The input read whole into data: 0, or -1 with the run's error. */
static int
slurp(nd_memrun *x, nd_in *in, nd_buf *data)
{
	nd_in_slurp(in, data);
	if (nd_in_err(in) == NULL)
		return 0;
	nd_err_copy(&x->err, nd_in_err(in));
	return -1;
}

/* A PyTorch memory timeline export, read whole. */
static void
timeline(nd_memrun *x, const char *path)
{
	nd_in *in = nd_in_open(path);
	nd_buf data = ND_BUF_INIT;
	nd_memtl tl;
	char msg[512];
	uint64_t off;

	if (slurp(x, in, &data) != 0)
		;
	else if (nd_memtl_parse(data.p != NULL ? data.p : "", data.len, &tl,
	    msg, sizeof msg, &off) != 0)
		nd_err_byte(&x->err, nd_in_name(in), off + 1, "%s", msg);
	else {
		nd_mem_timeline(x->mem, nd_in_name(in), &tl);
		nd_memtl_free(&tl);
	}
	nd_buf_free(&data);
	nd_in_close(in);
}

static void
snapshot(nd_memrun *x, const char *path)
{
	nd_in *in = nd_in_open(path);
	nd_buf data = ND_BUF_INIT;
	nd_pickle *pk = NULL;
	nd_pkerr err;
	char msg[512];

	if (slurp(x, in, &data) != 0)
		;
	else if ((pk = nd_pickle_load(data.p != NULL ? data.p : "", data.len,
	    &err)) == NULL)
		nd_err_byte(&x->err, nd_in_name(in), err.off, "%s", err.msg);
	else if (x->o.dump) {
		nd_buf *b = nd_out_buf(x->out);

		nd_pk_json(b, nd_pickle_root(pk));
		nd_buf_addc(b, '\n');
		nd_out_commit(x->out);
	} else if (nd_mem_snapshot(x->mem, nd_in_name(in), nd_pickle_root(pk),
	    msg, sizeof msg) != 0)
		nd_err_set(&x->err, nd_in_name(in), ND_ERR_NONE, ND_ERR_NONE,
		    "%s: %s", nd_in_name(in), msg);
	nd_pickle_free(pk);
	nd_buf_free(&data);
	nd_in_close(in);
}

static void
eng_start(void *self, nd_out *o)
{
	nd_memrun *x = self;

	x->out = o;
	x->mem = nd_mem_new(&x->o.mem, nd_out_buf(o), commit, o);
}

static void
eng_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	nd_memrun *x = self;

	nd_mem_record(x->mem, ev, si);
}

static void
eng_end_source(void *self)
{
	nd_memrun *x = self;

	nd_mem_end_source(x->mem);
}

static int
eng_foreign(void *self, const char *path)
{
	return kind_of(self, path) != K_STREAM;
}

static void
eng_read_foreign(void *self, const char *path)
{
	nd_memrun *x = self;

	if (kind_of(x, path) == K_PICKLE)
		snapshot(x, path);
	else
		timeline(x, path);
}

static const nd_err *
eng_error(void *self)
{
	nd_memrun *x = self;

	return x->err.code != 0 ? &x->err : NULL;
}

static void
eng_finish(void *self, const nd_run_res *res)
{
	nd_memrun *x = self;

	(void)res;
	nd_mem_finish(x->mem);
}

nd_memrun *
nd_memrun_new(const nd_memrun_opts *o)
{
	nd_memrun *x = nd_xcalloc(1, sizeof *x);

	x->o = *o;
	return x;
}

nd_engine
nd_memrun_engine(nd_memrun *x)
{
	nd_engine e = {
		.name = "mem",
		.self = x,
		.record = eng_record,
		.end_source = eng_end_source,
		.finish = eng_finish,
		.start = eng_start,
		.foreign = eng_foreign,
		.read_foreign = eng_read_foreign,
		.error = eng_error,
	};

	return e;
}

void
nd_memrun_free(nd_memrun *x)
{
	if (x == NULL)
		return;
	nd_mem_free(x->mem);
	free(x);
}
