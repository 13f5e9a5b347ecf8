/*
 * libFuzzer harness: the Chrome JSON ingest engine through its library
 * interface: nd_in (gzip sniffing, hashing), nd_chrome, and nd_kineto
 * (items pushed one by one with nd_kineto_feed, then finish and write).
 *
 *  - the input is a memfd opened by its /proc/self/fd path;
 *  - one_thread: every error (nd_die) happens on this thread, where the
 *    hook frees the engine, the reader and the input and longjmps out;
 *  - stdout is another memfd: after a conversion every line written must
 *    decode as a stream record, meta first, end last (fuzz_stream.h);
 *    after an input error nothing may have been written.
 * The input's last byte chooses --no-args / --no-flows and the budget.
 */
#include "fuzz_stream.h"
#include "ndtrace.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static jmp_buf fail;
static nd_in *fz_in;
static nd_chrome *fz_ch;
static nd_kineto *fz_k;

/* What the conversion holds, freed (also from inside nd_die, whose frames
 * are still alive). */
static void
release(void)
{
	nd_kineto_free(fz_k);
	if (fz_ch != NULL)
		nd_chrome_close(fz_ch);
	if (fz_in != NULL)
		nd_in_close(fz_in);
	fz_k = NULL;
	fz_ch = NULL;
	fz_in = NULL;
}

static void
die_hook(int code)
{
	(void)code;
	release();
	longjmp(fail, 1);
}

static int in_fd = -1, out_fd = -1;
static char in_path[64];

static void
setup(void)
{
	in_fd = memfd_create("fuzz-chrome-in", 0);
	out_fd = memfd_create("fuzz-chrome-out", 0);
	if (in_fd < 0 || out_fd < 0 || dup2(out_fd, STDOUT_FILENO) < 0)
		abort();
	snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
}

/* One input through the push interface. */
static void
convert(const nd_kineto_opts *o, nd_out *out)
{
	nd_chrome_item it;
	char sha[65];
	int unclosed;

	fz_in = nd_in_open_hashed(in_path);
	fz_k = nd_kineto_new(in_path, nd_in_name(fz_in), o);
	fz_ch = nd_chrome_open(fz_in);
	while (nd_chrome_next(fz_ch, &it) != ND_CHROME_END)
		nd_kineto_feed(fz_k, fz_ch, &it);
	unclosed = nd_chrome_unclosed(fz_ch);
	nd_chrome_close(fz_ch);
	fz_ch = NULL;
	nd_in_sha256(fz_in, sha);
	nd_kineto_finish(fz_k, sha, unclosed);
	nd_kineto_write(fz_k, out);
	release();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nd_kineto_opts o;
	nd_out *volatile out = NULL;

	if (in_fd < 0)
		setup();
	if (ftruncate(in_fd, 0) != 0 || pwrite(in_fd, data, size, 0) !=
	    (ssize_t)size || ftruncate(STDOUT_FILENO, 0) != 0 ||
	    lseek(STDOUT_FILENO, 0, SEEK_SET) != 0)
		abort();
	memset(&o, 0, sizeof o);
	o.quiet = 1;
	o.one_thread = 1;
	if (size > 0) {
		o.no_args = (data[size - 1] & 1) != 0;
		o.no_flows = (data[size - 1] & 2) != 0;
		/* a budget of 2 records: ordered inputs take the ordered
		 * path (records spooled, then written from the spool),
		 * disorder takes them back into memory */
		o.budget = (data[size - 1] & 4) != 0 ? 2 : 0;
	}
	nd_die_hook = die_hook;
	if (setjmp(fail) == 0) {
		out = nd_out_open(NULL);
		convert(&o, out);
		nd_out_close(out);
		out = NULL;
		fz_check_stream();
	} else {
		/* an input error: nothing reached the output */
		if (lseek(STDOUT_FILENO, 0, SEEK_END) != 0)
			abort();
		if (out != NULL) {
			nd_die_hook = NULL;
			nd_out_close(out);	/* frees it */
		}
	}
	nd_die_hook = NULL;
	return 0;
}
