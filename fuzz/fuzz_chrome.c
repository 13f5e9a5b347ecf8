/*
 * libFuzzer harness: the Chrome JSON ingest engine through its library
 * interface: nd_in over the input's bytes (nd_in_open_mem: gzip sniffing,
 * hashing), nd_chrome, and nd_kineto (items pushed one by one with
 * nd_kineto_feed, then finish and write).
 *
 * An input error is a value: the reader's (nd_chrome_err) or the
 * engine's (nd_kineto_feed returns -1, nd_kineto_err), each a message
 * naming the input and a byte; no exit (nd_die is a bug here), and
 * everything is freed the normal way.  stdout is a memfd: after a
 * conversion every line written must decode as a stream record, meta
 * first, end last (fuzz_stream.h); after an input error nothing may have
 * been written.  The input's last byte chooses --no-args / --no-flows
 * and the budget.
 */
#include "fuzz_stream.h"
#include "ndtrace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int out_fd = -1;

static void
die_is_a_bug(int code)
{
	(void)code;
	abort();	/* the reader and the engine return their errors */
}

static void
setup(void)
{
	out_fd = memfd_create("fuzz-chrome-out", 0);
	if (out_fd < 0 || dup2(out_fd, STDOUT_FILENO) < 0)
		abort();
	nd_die_hook = die_is_a_bug;
}

/* An error value: a message about the input at a byte of it. */
static void
check_err(const nd_err *e)
{
	if (e == NULL || e->code != ND_EXIT_ERROR ||
	    strncmp(e->msg, "fuzz: ", 6) != 0)
		abort();
}

/* One input through the push interface: 0 converted, -1 an input error. */
static int
convert(const uint8_t *data, size_t size, const nd_kineto_opts *o,
    nd_out *out)
{
	nd_in *in = nd_in_open_mem(data, size, "fuzz", 1);
	nd_kineto *k = nd_kineto_new("fuzz", nd_in_name(in), o);
	nd_chrome *ch = nd_chrome_open(in);
	nd_chrome_item it;
	char sha[65];
	int rc = 0;

	while (rc == 0 && nd_chrome_next(ch, &it) != ND_CHROME_END)
		if (nd_kineto_feed(k, ch, &it) != 0) {
			check_err(nd_kineto_err(k));
			rc = -1;
		}
	if (rc == 0 && nd_chrome_err(ch) != NULL) {
		check_err(nd_chrome_err(ch));
		rc = -1;
	}
	if (rc == 0) {
		nd_in_sha256(in, sha);
		nd_kineto_finish(k, sha, nd_chrome_unclosed(ch));
		nd_kineto_write(k, out);
	}
	nd_chrome_close(ch);
	nd_kineto_free(k);
	nd_in_close(in);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nd_kineto_opts o;
	nd_out *out;
	int rc;

	if (out_fd < 0)
		setup();
	if (ftruncate(STDOUT_FILENO, 0) != 0 ||
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
	out = nd_out_open(NULL);
	rc = convert(data, size, &o, out);
	nd_out_close(out);
	if (rc == 0)
		fz_check_stream();
	else if (lseek(STDOUT_FILENO, 0, SEEK_END) != 0)
		abort();	/* an input error: nothing reached the output */
	return 0;
}
