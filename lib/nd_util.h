/*
 * nd_util: process-wide helpers shared by every ndtrace program.
 *
 * Errors follow err(3): "prog: message" on stderr, one line.  Exit codes are
 * fixed for the whole toolset (ND_EXIT_*).  Allocation failures are fatal:
 * the programs are filters, so there is nothing sensible to do but stop with
 * a clear message (exit 2) and let nd_out remove any half-written -o file.
 *
 * Ownership rule for the whole library: a function that returns a pointer it
 * allocated says "caller frees" in its comment; everything else is borrowed
 * and stays valid until the next call on the same object.
 */
#ifndef ND_UTIL_H
#define ND_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define ND_VERSION "0.1.0"

enum {
	ND_EXIT_OK = 0,		/* success, nothing found */
	ND_EXIT_FINDING = 1,	/* a finding/regression the user asked to detect */
	ND_EXIT_ERROR = 2	/* usage or input error */
};

#if defined(__GNUC__)
#define ND_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define ND_LIKELY(x) __builtin_expect(!!(x), 1)
#define ND_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ND_PRINTF(a, b)
#define ND_LIKELY(x) (x)
#define ND_UNLIKELY(x) (x)
#endif

extern const char *nd_progname;

/* Set nd_progname from argv[0], ignore SIGPIPE (EPIPE is handled where the
 * write fails) and install the cleanup that removes temporary -o files. */
void nd_init(const char *argv0);

/* Called by nd_die before exiting when set: the fuzz harnesses longjmp out
 * of it so that an input error is an outcome, not the end of the process. */
extern void (*nd_die_hook)(int code);

/* "prog: message\n" on stderr, then exit(code).  Runs atexit cleanups. */
_Noreturn void nd_die(int code, const char *fmt, ...) ND_PRINTF(2, 3);
/* Same as nd_die with ": strerror(errno)" appended. */
_Noreturn void nd_die_errno(int code, const char *fmt, ...) ND_PRINTF(2, 3);
void nd_warn(const char *fmt, ...) ND_PRINTF(1, 2);

void *nd_xmalloc(size_t n);
void *nd_xcalloc(size_t n, size_t size);
void *nd_xrealloc(void *p, size_t n);
char *nd_xstrdup(const char *s);
char *nd_xstrndup(const char *s, size_t n);

/* Grow *p (holding *cap elements of size `size`) to hold at least `need`. */
void nd_grow(void *pp, size_t *cap, size_t need, size_t size);

#endif
