/*
 * libFuzzer harness: the Chrome JSON reader, i.e. chrome2ndjson's whole
 * conversion (nd_in with gzip sniffing, nd_chrome, and the engine in
 * cmd/chrome2ndjson.c, compiled in here with its main renamed).
 *
 * How the program is driven without changing it:
 *  - the input is a memfd opened by its /proc/self/fd path;
 *  - pthread_create is made to fail, so the program takes its one-thread
 *    paths (it has them for when a thread cannot be started) and an input
 *    error (nd_die) happens on this thread, where the hook can longjmp;
 *  - nd_in_open_hashed and nd_chrome_open are wrapped by macros that note
 *    the conversion's state (they are called from convert(), where `s` is
 *    in scope), so the die hook frees it before jumping out;
 *  - stdout is another memfd: after a conversion every line written must
 *    decode as a stream record (nd_event_decode), the first one the meta
 *    record and the last the end record; after an input error nothing may
 *    have been written.  The records are decoded as every stream reader
 *    would (numbers longer than ND_JSON_MAX_NUMBER refused), whatever
 *    nd_chrome allowed in the input.
 * The input's last byte chooses --no-args / --no-flows and the budget.
 */
#include "nd_chrome.h"
#include "nd_event.h"
#include "nd_in.h"
#include "nd_out.h"
#include "nd_util.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct src;
static struct src *fz_src;
static nd_in *fz_in;

static nd_in *
fz_in_open(const char *path, struct src *s)
{
	fz_src = s;
	return fz_in = (nd_in_open_hashed)(path);
}

static int
fz_no_thread(void)
{
	return EAGAIN;
}

#define main chrome2ndjson_main
#define nd_in_open_hashed(path) fz_in_open((path), &s)
#define pthread_create(th, attr, fn, arg) \
	((void)(th), (void)(attr), (void)(fn), (void)(arg), fz_no_thread())
#include "../cmd/chrome2ndjson.c"
#undef main

static jmp_buf fail;

/* Free what the conversion holds, from inside nd_die (its frames are still
 * alive), then jump out. */
static void
die_hook(int code)
{
	(void)code;
	if (fz_src != NULL) {
		if (fz_src->ch != NULL)
			nd_chrome_close(fz_src->ch);
		src_free(fz_src);
		fz_src = NULL;
	}
	if (fz_in != NULL)
		nd_in_close(fz_in);
	fz_in = NULL;
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

static void
check_output(size_t n)
{
	static nd_event ev;
	static nd_buf scratch;
	nd_everr err;
	char *text = malloc(n + 1), *p, *end;
	int first = 1;

	if (pread(STDOUT_FILENO, text, n, 0) != (ssize_t)n)
		abort();
	text[n] = '\0';
	if (n == 0 || text[n - 1] != '\n')
		abort();	/* a conversion writes whole records */
	p = text;
	end = text + n;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		*nl = '\0';
		if (nd_event_decode(&ev, p, (size_t)(nl - p), &scratch,
		    &err) != 0)
			abort();	/* chrome2ndjson wrote an invalid record */
		if (first && ev.type != ND_EV_META)
			abort();
		first = 0;
		p = nl + 1;
		if (p == end && ev.type != ND_EV_END)
			abort();
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct opts o;
	nd_out *volatile out = NULL;
	off_t written;

	if (in_fd < 0)
		setup();
	if (ftruncate(in_fd, 0) != 0 || pwrite(in_fd, data, size, 0) !=
	    (ssize_t)size || ftruncate(STDOUT_FILENO, 0) != 0 ||
	    lseek(STDOUT_FILENO, 0, SEEK_SET) != 0)
		abort();
	memset(&o, 0, sizeof o);
	o.quiet = 1;
	o.rules = nd_rules_default();
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
		convert(in_path, &o, out);
		nd_out_close(out);
		out = NULL;
		fz_src = NULL;
		fz_in = NULL;
		written = lseek(STDOUT_FILENO, 0, SEEK_END);
		nd_json_long_numbers = 0;	/* as a stream reader */
		check_output((size_t)written);
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
