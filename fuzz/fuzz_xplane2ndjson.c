/*
 * libFuzzer harness: the XPlane ingest engine (nd_xpconv) converting one
 * file through its library interface (nd_xpconv_convert_mem): the decoder
 * as the engine drives it, the validation of every line before anything
 * is written, the metadata, scopes, classes and stats rendering.
 * fuzz_xplane covers the decoder alone, faster.
 *
 * An input error is a value (nd_err): no exit (nd_die is a bug here), and
 * what the conversion allocated is freed by the conversion itself.
 * stdout is a memfd, whose lines must all decode as stream records, meta
 * first and end last (fuzz_stream.h), and which must be empty after an
 * input error ("nothing written before the error").  one_thread keeps
 * rendering and hashing on this thread.  The input's last byte chooses
 * --no-args and --device-only.
 */
#include "fuzz_stream.h"
#include "ndtrace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static nd_xpconv_opts opt;
static int out_fd = -1;

static void
die_is_a_bug(int code)
{
	(void)code;
	abort();	/* the engine returns its input errors */
}

static int
convert_one(const uint8_t *data, size_t size)
{
	nd_out *out;
	nd_err err;
	int rc;

	if (ftruncate(STDOUT_FILENO, 0) != 0 ||
	    lseek(STDOUT_FILENO, 0, SEEK_SET) != 0)
		abort();
	nd_err_clear(&err);
	out = nd_out_open(NULL);
	rc = nd_xpconv_convert_mem(data, size, "fuzz", &opt, out, &err);
	if (rc != 0) {
		/* an input error: named, and nothing reached the output */
		if (err.code != ND_EXIT_ERROR ||
		    strncmp(err.msg, "fuzz: ", 6) != 0 ||
		    lseek(STDOUT_FILENO, 0, SEEK_END) != 0)
			abort();
	}
	nd_out_close(out);
	return rc;
}

static void
setup(void)
{
	out_fd = memfd_create("fuzz-xplane-out", 0);
	if (out_fd < 0 || dup2(out_fd, STDOUT_FILENO) < 0)
		abort();
	nd_die_hook = die_is_a_bug;
	opt.rules = nd_rules_default();
	opt.one_thread = 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (out_fd < 0)
		setup();
	opt.no_args = size > 0 && (data[size - 1] & 1) != 0;
	opt.device_only = size > 0 && (data[size - 1] & 2) != 0;
	if (convert_one(data, size) == 0)
		fz_check_stream();
	return 0;
}
