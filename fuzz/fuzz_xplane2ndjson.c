/*
 * libFuzzer harness: the XPlane ingest engine (nd_xpconv) converting one
 * file through its library interface: the decoder as the engine drives
 * it, the validation of every line before anything is written, the
 * metadata, scopes, classes and stats rendering.  fuzz_xplane covers the
 * decoder alone, faster.
 *
 * The input is a memfd opened by its /proc/self/fd path; one_thread keeps
 * rendering and hashing on this thread; stdout is another memfd, whose
 * lines must all decode as stream records, meta first and end last
 * (fuzz_stream.h), and must be empty after an input error ("nothing
 * written before the error").  An input error (nd_die) longjmps out; what
 * the conversion had allocated is freed by fuzz_track.h and its
 * descriptors closed.  A first conversion of a valid profile, untracked,
 * lets libcrypto and the rules table allocate what they keep for the life
 * of the process.  The input's last byte chooses --no-args and
 * --device-only.
 */
#include "fuzz_stream.h"
#include "fuzz_track.h"
#include "ndtrace.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static nd_xpconv_opts opt;
static jmp_buf fail;
static int in_fd = -1, out_fd = -1, first_free_fd;
static char in_path[64];

static void
die_hook(int code)
{
	(void)code;
	longjmp(fail, 1);
}

/* A valid profile: field 1 (a plane) holding id 1 and name "/device:TPU:0",
 * a line with one event of metadata 1, and that metadata. */
static const unsigned char warm[] = {
	0x0a, 0x32,
	0x08, 0x01,
	0x12, 0x0d, '/', 'd', 'e', 'v', 'i', 'c', 'e', ':', 'T', 'P', 'U', ':',
	'0',
	0x1a, 0x11, 0x08, 0x01, 0x12, 0x03, 'O', 'p', 's', 0x18, 0x64,
	0x22, 0x06, 0x08, 0x01, 0x10, 0x0a, 0x18, 0x14,
	0x22, 0x0c, 0x08, 0x01, 0x12, 0x08, 0x08, 0x01, 0x12, 0x04, 'f', 'u',
	's', 'e',
};

static int
convert_one(const uint8_t *data, size_t size, int tracked)
{
	nd_out *volatile out = NULL;
	int died;

	if (ftruncate(in_fd, 0) != 0 || pwrite(in_fd, data, size, 0) !=
	    (ssize_t)size || ftruncate(STDOUT_FILENO, 0) != 0 ||
	    lseek(STDOUT_FILENO, 0, SEEK_SET) != 0)
		abort();
	nd_die_hook = die_hook;
	if (tracked)
		fz_track_start();
	if (setjmp(fail) == 0) {
		out = nd_out_open(NULL);
		nd_xpconv_convert(in_path, &opt, out);
		nd_out_close(out);
		died = 0;
	} else {
		/* an input error: nothing reached the output */
		if (lseek(STDOUT_FILENO, 0, SEEK_END) != 0)
			abort();
		died = 1;
	}
	fz_track_stop(died);	/* frees what the error left */
	nd_die_hook = NULL;
	if (died) {
		for (int fd = first_free_fd; fd < first_free_fd + 64; fd++)
			if (fd != in_fd && fd != out_fd)
				close(fd);
	}
	return died;
}

static void
setup(void)
{
	in_fd = memfd_create("fuzz-xplane-in", 0);
	out_fd = memfd_create("fuzz-xplane-out", 0);
	if (in_fd < 0 || out_fd < 0 || dup2(out_fd, STDOUT_FILENO) < 0)
		abort();
	first_free_fd = dup(0);
	if (first_free_fd < 0)
		abort();
	close(first_free_fd);
	snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
	opt.rules = nd_rules_default();
	opt.one_thread = 1;
	if (convert_one(warm, sizeof warm, 0) != 0)
		abort();	/* the warm-up profile must convert */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (in_fd < 0)
		setup();
	opt.no_args = size > 0 && (data[size - 1] & 1) != 0;
	opt.device_only = size > 0 && (data[size - 1] & 2) != 0;
	if (convert_one(data, size, 1) == 0)
		fz_check_stream();
	return 0;
}
